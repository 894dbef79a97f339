import { simpleParser, type ParsedMail } from 'mailparser';
import EmailReplyParser from 'email-reply-parser';

/**
 * What the inbox watcher reads of one INBOX message, in two steps so a hostile message costs little (docs/email.md
 * "Watching the inbox"). Pure: no database, no network.
 *
 * 1. `parseHead`: only the header fields in HEADER_FIELDS (IMAP `BODY.PEEK[HEADER.FIELDS (…)]`): the ids that thread
 *    it, the sender, the subject, whether it is a delivery report or an auto-reply, whether it asks to unsubscribe
 *    (and the tokens it carries), and the Authentication-Results the receiving provider added.
 * 2. `parseBody`: the message itself (at most OUTREACH_INBOX_MAX_MESSAGE_BYTES of it), read only for a message that
 *    matched a lead or is a delivery report: the new text of a reply, or the status and the returned Message-ID of a
 *    report.
 *
 * Either throws on a message it cannot read (mailparser refuses more than 1,000 MIME parts, or a header block over
 * 1 MB); the watcher records such a message as `unparseable` and moves on.
 */

/** The header fields the watcher fetches first; everything it decides before reading a body comes from these. */
export const HEADER_FIELDS = [
  'from',
  'to',
  'cc',
  'delivered-to',
  'x-original-to',
  'subject',
  'date',
  'message-id',
  'in-reply-to',
  'references',
  'content-type',
  'auto-submitted',
  'x-autoreply',
  'x-autorespond',
  'x-autoresponse',
  'precedence',
  'authentication-results',
] as const;

/** A Message-ID longer than this is not one anybody's mail system made: it is ignored (and never stored). */
const MAX_ID_LENGTH = 500;
/** Ids taken from In-Reply-To and from References (the newest). */
const MAX_IDS = 50;
const MAX_SUBJECT = 998;
/** The body text a reply is read from: its first this many characters. */
export const TEXT_SCAN_CHARS = 100_000;
/**
 * email-reply-parser's quote-header patterns backtrack polynomially (`[\s\S]+?` across lines): on crafted text it took
 * 25 ms for 2,048 characters, 290 ms for 4,096 and 8 s for 64 KB on the test machine. It reads at most this much;
 * a longer new text is cut at the quoted thread by `quoteStart` (linear) alone.
 */
export const REPLY_PARSER_CHARS = 2_048;
/** Of a delivery report's parts (and of its text), the first this many characters are searched. */
const REPORT_SCAN_CHARS = 65_536;

export interface InboundHead {
  /** Message-IDs in angle-bracket-free, lower-case form. */
  messageId: string | null;
  inReplyTo: string[];
  /** Newest last, as in the header. */
  references: string[];
  /** The sender's address, lower case. */
  from: string | null;
  subject: string;
  date: Date | null;
  /** A delivery report: `multipart/report; report-type=delivery-status`, or a mailer-daemon sender with a bounce subject. */
  report: boolean;
  /** An abuse complaint's shape: `multipart/report; report-type=feedback-report` (ARF, arf.ts reads it). */
  complaint: boolean;
  /** `Auto-Submitted` other than `no`, `X-Autoreply`, `X-Autorespond`, `Precedence: auto_reply`, or an auto-reply subject. */
  autoReply: boolean;
  /** The subject starts with "unsubscribe" (the List-Unsubscribe mailto's; `Re:`/`Fwd:` prefixes allowed). */
  asksUnsubscribe: boolean;
  /** What may be an unsubscribe token (unsubscribe-token.ts), from the subject or a plus address; the watcher checks it. */
  unsubscribeTokens: string[];
  /** Every Authentication-Results header, top (the last hop, the receiving provider's) first. */
  authResults: string[];
}

export interface InboundReport {
  kind: 'bounce' | 'delayed';
  /** The RFC 3463 status (`5.1.1`), null when the report names none. */
  status: string | null;
  /** The Message-ID of the returned message (its `text/rfc822-headers` or `message/rfc822` part, or the text). */
  originalMessageId: string | null;
}

export interface InboundBody {
  /** A reply: the new text, quoted thread and signature removed (null for a report). */
  text: string | null;
  report: InboundReport | null;
}

/** `<abc@host>` → `abc@host`; ids compare without brackets and case-insensitively. */
export function normalizeMessageId(id: string): string {
  return id.trim().replace(/^<|>$/g, '').trim().toLowerCase();
}

const noNul = (s: string) => s.replace(/\0/g, '');

function idsOf(value: unknown): string[] {
  const all = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  const out: string[] = [];
  for (const v of all) for (const m of String(v).match(/<[^<>\s]+>|[^<>\s,]+@[^<>\s,]+/g) ?? []) out.push(normalizeMessageId(noNul(m)));
  return [...new Set(out)].filter((id) => id.length > 0 && id.length <= MAX_ID_LENGTH);
}

function headerText(mail: ParsedMail, name: string): string | null {
  const v = mail.headers.get(name);
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return typeof v[0] === 'string' ? v[0] : null;
  if (typeof v === 'object' && 'value' in v) return typeof v.value === 'string' ? v.value : null;
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;
}

/** Every instance of a header, unfolded, top first (mailparser keeps only one in `headers` for most names). */
function headerValues(mail: ParsedMail, name: string): string[] {
  return (mail.headerLines ?? [])
    .filter((h) => h.key === name)
    .map((h) =>
      h.line
        .replace(/\r?\n[ \t]+/g, ' ')
        .replace(/^[^:]*:\s*/, '')
        .trim(),
    );
}

const OOO_SUBJECT =
  /^\s*(out of (the )?office|automatic reply|auto(matic)?[- ]?reply|auto:|autoreply|abwesenheit|réponse automatique|respuesta automática|risposta automatica|afwezig|on vacation|away from (the )?office)/i;
const BOUNCE_SUBJECT =
  /(undeliver(ed|able)|delivery (status notification|has failed|failure|failed)|returned mail|mail delivery (failed|failure|subsystem)|failure notice|non[- ]?delivery|could not be delivered|delivery incomplete)/i;
const DELAY_SUBJECT = /(delay(ed)?|warning: could not send|delivery incomplete|will retry)/i;
const DAEMON_FROM = /^(mailer-daemon|postmaster|mail-daemon|mail delivery subsystem)@|^mailer-daemon$/i;
const UNSUBSCRIBE_SUBJECT = /^\s*((re|fwd?|aw|wg|tr)\s*:\s*)*unsubscribe\b/i;
/** A 64-character base64url run on its own: the shape of an unsubscribe token. */
const TOKEN_RE = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{64}(?![A-Za-z0-9_-])/g;

function contentTypeOf(mail: ParsedMail): { value: string; params: Record<string, string> } {
  const v = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | string | undefined;
  if (!v) return { value: '', params: {} };
  if (typeof v === 'string') return { value: v.toLowerCase(), params: {} };
  return { value: (v.value ?? '').toLowerCase(), params: Object.fromEntries(Object.entries(v.params ?? {}).map(([k, x]) => [k.toLowerCase(), String(x)])) };
}

const isFeedbackReport = (mail: ParsedMail) => {
  const ct = contentTypeOf(mail);
  return ct.value === 'multipart/report' && (ct.params['report-type'] ?? '').toLowerCase() === 'feedback-report';
};

const isDsn = (mail: ParsedMail) => {
  const ct = contentTypeOf(mail);
  return ct.value === 'multipart/report' && (ct.params['report-type'] ?? '').toLowerCase() === 'delivery-status';
};

function isAutoReply(mail: ParsedMail, subject: string): boolean {
  const autoSubmitted = headerText(mail, 'auto-submitted');
  if (autoSubmitted && autoSubmitted.trim().toLowerCase() !== 'no') return true;
  if (headerText(mail, 'x-autoreply') || headerText(mail, 'x-autorespond') || headerText(mail, 'x-autoresponse')) return true;
  if (headerText(mail, 'precedence')?.trim().toLowerCase() === 'auto_reply') return true;
  return OOO_SUBJECT.test(subject);
}

/** The header fields of one message (step 1). Throws on a block mailparser refuses. */
export async function parseHead(block: Buffer | string): Promise<InboundHead> {
  const mail = await simpleParser(block, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  const from = mail.from?.value?.[0]?.address ? noNul(mail.from.value[0].address.toLowerCase()) : null;
  const subject = noNul(mail.subject ?? '').slice(0, MAX_SUBJECT);
  const messageId = mail.messageId ? (idsOf(mail.messageId)[0] ?? null) : null;
  return {
    messageId,
    inReplyTo: idsOf(mail.inReplyTo).slice(0, MAX_IDS),
    references: idsOf(mail.references).slice(-MAX_IDS),
    from,
    subject,
    date: mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date : null,
    report: isDsn(mail) || (!!from && DAEMON_FROM.test(from) && BOUNCE_SUBJECT.test(subject)),
    complaint: isFeedbackReport(mail),
    autoReply: isAutoReply(mail, subject),
    asksUnsubscribe: UNSUBSCRIBE_SUBJECT.test(subject),
    // Case matters in a token, so a plus address is read from the header text as written.
    unsubscribeTokens: [...new Set([...(subject.match(TOKEN_RE) ?? []), ...plusAddressTokens(mail)])].slice(0, 4),
    authResults: headerValues(mail, 'authentication-results').map((v) => v.slice(0, 4096)),
  };
}

/** `dana+<token>@acme.example` in To, Cc, Delivered-To or X-Original-To, case kept. */
function plusAddressTokens(mail: ParsedMail): string[] {
  const out: string[] = [];
  for (const name of ['to', 'cc', 'delivered-to', 'x-original-to'])
    for (const v of headerValues(mail, name)) for (const m of v.slice(0, 4096).matchAll(/\+([A-Za-z0-9_-]{64})@/g)) out.push(m[1]);
  return out;
}

/** The per-recipient fields of a delivery-status body (RFC 3464) that matter here: the status and the action. */
function dsnFields(text: string): { status: string | null; action: string | null } {
  const unfolded = text.slice(0, REPORT_SCAN_CHARS).replace(/\r?\n[ \t]+/g, ' ');
  const field = (name: string) => unfolded.match(new RegExp(`^${name}:[ \\t]*([^\\r\\n]+)$`, 'im'))?.[1].trim() ?? null;
  return { status: field('Status')?.match(/\d\.\d{1,3}\.\d{1,3}/)?.[0] ?? null, action: field('Action')?.toLowerCase() ?? null };
}

function originalMessageIdIn(text: string): string | null {
  const m = text
    .slice(0, REPORT_SCAN_CHARS)
    .replace(/\r?\n[ \t]+/g, ' ')
    .match(/^Message-ID:[ \t]*(<[^<>\s]{1,500}>)/im);
  return m ? (idsOf(m[1])[0] ?? null) : null;
}

function attachmentText(a: { content: Buffer | string }): string {
  return Buffer.isBuffer(a.content) ? a.content.subarray(0, REPORT_SCAN_CHARS * 4).toString('utf8') : String(a.content).slice(0, REPORT_SCAN_CHARS);
}

/**
 * A delivery report's status and the Message-ID it returns. Who bounced is never read from it: the watcher takes
 * the recipient of the message of ours it names (docs/email.md).
 */
function readReport(mail: ParsedMail, subject: string): InboundReport {
  let status: string | null = null;
  let action: string | null = null;
  let original: string | null = null;
  for (const a of mail.attachments ?? []) {
    const type = (a.contentType ?? '').toLowerCase();
    if (type === 'message/delivery-status' || type === 'message/global-delivery-status') ({ status, action } = dsnFields(attachmentText(a)));
    else if (type === 'message/rfc822' || type === 'text/rfc822-headers' || type === 'message/global-headers')
      original ??= originalMessageIdIn(attachmentText(a));
  }
  const body = (mail.text ?? '').slice(0, REPORT_SCAN_CHARS);
  if (!status) {
    // A typical mailer-daemon text: the status and the returned headers are somewhere in the body.
    const fromBody = dsnFields(body);
    status = fromBody.status ?? body.match(/\b([45]\.\d{1,3}\.\d{1,3})\b/)?.[1] ?? null;
    action ??= fromBody.action;
  }
  original ??= originalMessageIdIn(body);
  const soft = status ? status.startsWith('4') : action === 'delayed' || DELAY_SUBJECT.test(subject);
  return { kind: soft ? 'delayed' : 'bounce', status, originalMessageId: original };
}

/** A line where the quoted thread starts, found in linear time: `>` lines, "On … wrote:", Outlook's separators. */
function quoteStart(line: string, next: string | undefined): boolean {
  if (/^\s*>/.test(line)) return true;
  if (line.length > 400) return false;
  if (/^\s*-{2,}\s*(original message|forwarded message|message d'origine|ursprüngliche nachricht)\s*-{2,}\s*$/i.test(line)) return true;
  if (/^\s*On\s[^\n]{1,380}\swrote:?\s*$/.test(line)) return true;
  if (/^_{20,}\s*$/.test(line) && next !== undefined && /^\s*(From|De|Von|Van|Da)\s?:/i.test(next)) return true;
  return /^\s*(From|De|Von|Van|Da)\s?:\s*\S/i.test(line) && next !== undefined && /^\s*(Sent|Date|Envoyé|Gesendet|Verzonden|Enviado|Inviato)\s?:/i.test(next);
}

/**
 * The new text of a reply: the quoted thread ("On … wrote:", "> …", Outlook's "From:/Sent:" block) and, for a short
 * reply, the signature removed; the whole text if that leaves nothing. Reads at most TEXT_SCAN_CHARS characters and
 * hands email-reply-parser at most REPLY_PARSER_CHARS, so its cost is bounded whatever the text.
 */
export function visibleReplyText(text: string): string {
  const scanned = text.slice(0, TEXT_SCAN_CHARS).replace(/\r\n?/g, '\n');
  const trimmed = scanned.trim();
  if (!trimmed) return '';
  const lines = scanned.split('\n');
  let cut = lines.length;
  for (let i = 0; i < lines.length; i++) {
    if (quoteStart(lines[i], lines[i + 1])) {
      cut = i;
      break;
    }
  }
  const head = lines.slice(0, cut).join('\n').trim();
  // The parser sees the new text and the first quoted line, as it would see the whole message, when that is short.
  const forParser = lines.slice(0, Math.min(lines.length, cut + 2)).join('\n');
  if (forParser.length <= REPLY_PARSER_CHARS) {
    try {
      const visible = new EmailReplyParser().parseReply(forParser).trim();
      if (visible) return visible;
    } catch {
      /* the linear cut below */
    }
  }
  return head || trimmed;
}

/**
 * The body of a message that matched a lead or is a delivery report (step 2): `source` is the message, or its first
 * OUTREACH_INBOX_MAX_MESSAGE_BYTES. HTML is never rendered to text by mailparser (its converter is slow on large
 * markup): tags are stripped in linear time instead, from a bounded prefix.
 */
export async function parseBody(source: Buffer, head: InboundHead): Promise<InboundBody> {
  const mail = await simpleParser(source, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  if (head.report) return { text: null, report: readReport(mail, head.subject) };
  const html = typeof mail.html === 'string' ? mail.html.slice(0, TEXT_SCAN_CHARS * 4) : '';
  const raw =
    mail.text?.slice(0, TEXT_SCAN_CHARS) ??
    html
      .replace(/<(style|script)[^<>]*>[^<]*<\/\1>/gi, ' ')
      .replace(/<[^<>]*>/g, ' ')
      .replace(/&nbsp;/g, ' ')
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/[ \t]+/g, ' ');
  return { text: noNul(visibleReplyText(raw)), report: null };
}

/**
 * Whether the receiving provider says the message failed DMARC: an Authentication-Results header whose authserv-id is
 * one of `trusted` (null stands for Microsoft 365's form, which carries no authserv-id and starts with `spf=`) with
 * `dmarc=fail`. Only a failure is believed: a header claiming a pass proves nothing, since anyone can write one.
 */
export function dmarcFailed(authResults: string[], trusted: (string | null)[]): boolean {
  if (trusted.length === 0) return false;
  const ids = new Set(trusted.map((t) => (t === null ? null : t.trim().toLowerCase())));
  for (const value of authResults) {
    // Comments first: "dmarc=pass (p=NONE)" must not hide a result, nor a comment fake one.
    const text = value.replace(/\([^()]*\)/g, ' ').trim();
    const first = text.split(';', 1)[0].trim();
    // The authserv-id is the first token (before an optional version); Microsoft 365 starts with a result instead.
    const authserv = /^[a-z0-9-]+(\.[a-z0-9-]+)*\s*=/i.test(first) ? null : (first.split(/\s+/)[0] ?? '').toLowerCase();
    if (!ids.has(authserv)) continue;
    if (/(^|[;\s])dmarc\s*=\s*fail\b/i.test(text)) return true;
  }
  return false;
}

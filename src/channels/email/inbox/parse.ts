import { simpleParser, type ParsedMail } from 'mailparser';
import { autoReplySubject } from '../../../domain/classify.js';
import { normalizeMessageId } from './message-id.js';
import { replyTextOf } from './reply-text.js';

export { normalizeMessageId } from './message-id.js';

export { TEXT_SCAN_CHARS, visibleReplyText } from './reply-text.js';

/**
 * What the inbox watcher reads of one INBOX message, in two steps so a hostile message costs little (docs/email.md
 * "Watching the inbox"). Pure: no database, no network.
 *
 * 1. `parseHead`: only the header fields in HEADER_FIELDS (IMAP `BODY.PEEK[HEADER.FIELDS (…)]`): the ids that thread
 *    it, the sender, the subject, whether it is a delivery report or an auto-reply, whether it asks to unsubscribe
 *    (and the tokens it carries), and the Authentication-Results the receiving provider added.
 * 2. `parseMessage`: the message itself (at most OUTREACH_INBOX_MAX_MESSAGE_BYTES of it), read only for a message
 *    that matched a lead or may be a report (decide.ts): reports.ts reads a report from it, reply-text.ts a reply's own
 *    words.
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
  'x-autoresponder',
  'x-auto-response-suppress',
  'precedence',
  'return-path',
  'x-failed-recipients',
  'authentication-results',
] as const;

/** A Message-ID longer than this is not one anybody's mail system made: it is ignored (and never stored). */
const MAX_ID_LENGTH = 500;
/** Ids taken from In-Reply-To and from References (the newest). */
const MAX_IDS = 50;
const MAX_SUBJECT = 998;
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
  /** The sender's display name ("Mail Delivery System", "MAILER-DAEMON"), at most 200 characters. */
  fromName: string | null;
  /** Return-Path without brackets: '' for the null sender `<>`, null when the message has none. */
  returnPath: string | null;
  /** The top-level Content-Type (lower case) and its report-type parameter. */
  contentType: string;
  reportType: string | null;
  /** X-Failed-Recipients is present (Exim and others write it on a bounce). */
  failedRecipients: boolean;
  /** A delivery report by its type: `multipart/report; report-type=delivery-status` (others: reports.ts mayBeReport). */
  report: boolean;
  /** An abuse complaint's shape: `multipart/report; report-type=feedback-report` (ARF, arf.ts reads it). */
  complaint: boolean;
  /** An automatic message by its headers or a localized auto-reply subject (see `autoReplyBy`). */
  autoReply: boolean;
  /** What made it one: the header (`auto-submitted`, `x-autoreply`, …) or `subject:<language>`; null for none. */
  autoReplyBy: string | null;
  /** The Auto-Submitted value, lower case (RFC 3834: `auto-replied`, `auto-generated`, `auto-notified`). */
  autoSubmitted: string | null;
  /** The subject starts with "unsubscribe" (the List-Unsubscribe mailto's; `Re:`/`Fwd:` prefixes allowed). */
  asksUnsubscribe: boolean;
  /** What may be an unsubscribe token (unsubscribe-token.ts), from the subject or a plus address; the watcher checks it. */
  unsubscribeTokens: string[];
  /** Every Authentication-Results header, top (the last hop, the receiving provider's) first. */
  authResults: string[];
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

/**
 * Whether a message is automatic, and by what (RFC 3834 and what real servers write instead): `Auto-Submitted` other
 * than `no`; `X-Autoreply`, `X-Autorespond`, `X-Autoresponse`, `X-Autoresponder` (any value); `Precedence: auto_reply`;
 * `X-Auto-Response-Suppress: All` (Exchange writes it on its automatic replies; Outlook people's mail never carries
 * `All`); else a localized auto-reply subject (domain/classify.ts autoReplySubject, 14 languages).
 */
function autoReplyOf(mail: ParsedMail, subject: string): string | null {
  const autoSubmitted = headerText(mail, 'auto-submitted');
  if (autoSubmitted && autoSubmitted.trim().toLowerCase() !== 'no') return 'auto-submitted';
  for (const name of ['x-autoreply', 'x-autorespond', 'x-autoresponse', 'x-autoresponder']) if (headerText(mail, name) !== null) return name;
  if (headerText(mail, 'precedence')?.trim().toLowerCase() === 'auto_reply') return 'precedence';
  if (/^\s*all\s*$/i.test(headerText(mail, 'x-auto-response-suppress') ?? '')) return 'x-auto-response-suppress';
  const bySubject = autoReplySubject(subject);
  return bySubject ? `subject:${bySubject.language ?? 'any'}` : null;
}

/** The header fields of one message (step 1). Throws on a block mailparser refuses. */
export async function parseHead(block: Buffer | string): Promise<InboundHead> {
  const mail = await simpleParser(block, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  const from = mail.from?.value?.[0]?.address ? noNul(mail.from.value[0].address.toLowerCase()) : null;
  const subject = noNul(mail.subject ?? '').slice(0, MAX_SUBJECT);
  const messageId = mail.messageId ? (idsOf(mail.messageId)[0] ?? null) : null;
  const ct = contentTypeOf(mail);
  const autoReplyBy = autoReplyOf(mail, subject);
  const returnPath = headerText(mail, 'return-path');
  return {
    messageId,
    inReplyTo: idsOf(mail.inReplyTo).slice(0, MAX_IDS),
    references: idsOf(mail.references).slice(-MAX_IDS),
    from,
    fromName: mail.from?.value?.[0]?.name ? noNul(mail.from.value[0].name).slice(0, 200) : null,
    returnPath: returnPath === null ? null : noNul(returnPath).trim().replace(/^<|>$/g, '').trim().toLowerCase().slice(0, 500),
    contentType: ct.value,
    reportType: ct.params['report-type']?.toLowerCase() ?? null,
    failedRecipients: headerText(mail, 'x-failed-recipients') !== null,
    subject,
    date: mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date : null,
    report: isDsn(mail),
    complaint: isFeedbackReport(mail),
    autoReply: autoReplyBy !== null,
    autoReplyBy,
    autoSubmitted: headerText(mail, 'auto-submitted')?.trim().toLowerCase().slice(0, 100) ?? null,
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

/**
 * The message itself (step 2), parsed once: `source` is the message, or its first OUTREACH_INBOX_MAX_MESSAGE_BYTES.
 * mailparser renders no HTML (its converter is slow on large markup): reply-text.ts converts a bounded prefix with
 * html-to-text instead. Throws on a message mailparser refuses.
 */
export async function parseMessage(source: Buffer): Promise<ParsedMail> {
  return simpleParser(source, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
}

/** A reply's own words (reply-text.ts): its text part, or its HTML made text, without the quoted thread. */
export function replyWords(mail: ParsedMail): string {
  const html = typeof mail.html === 'string' ? mail.html : null;
  return noNul(replyTextOf({ text: mail.text ?? null, html }).text);
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

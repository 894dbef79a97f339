import { simpleParser, type ParsedMail } from 'mailparser';
import EmailReplyParser from 'email-reply-parser';

/**
 * What the inbox watcher needs from one INBOX message, read from its raw RFC 5322 text. Pure: no database, no
 * network. The rules, most decisive first (docs/email.md "How inbox mail is classified"):
 *  1. bounce: a DSN (`multipart/report; report-type=delivery-status`) or a typical mailer-daemon message.
 *     A 5.x.x status (or a failure without any status) is `bounce`; a 4.x.x status is `delayed`.
 *  2. unsubscribe: the List-Unsubscribe mailto: a subject that starts with "unsubscribe".
 *  3. out_of_office: `Auto-Submitted` (other than `no`), `X-Autoreply`, `X-Autorespond`, `Precedence: auto_reply`,
 *     or a typical auto-reply subject.
 *  4. reply: anything else; its text has the quoted thread and signature removed.
 */
export type InboundKind = 'bounce' | 'delayed' | 'unsubscribe' | 'out_of_office' | 'reply';

export interface ParsedInbound {
  kind: InboundKind;
  /** Message-IDs in angle-bracket-free, lower-case form. */
  messageId: string | null;
  inReplyTo: string[];
  references: string[];
  /** The sender's address, lower case. */
  from: string | null;
  subject: string;
  date: Date | null;
  /** reply / out_of_office: the new text, quoted thread removed. */
  text: string | null;
  /** bounce / delayed: who bounced, the status, and the Message-ID of our message that bounced. */
  bounce: { recipient: string | null; status: string | null; originalMessageId: string | null } | null;
}

/** `<abc@host>` → `abc@host`; ids compare without brackets and case-insensitively on the host part. */
export function normalizeMessageId(id: string): string {
  return id.trim().replace(/^<|>$/g, '').trim().toLowerCase();
}

function idsOf(value: unknown): string[] {
  const all = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  const out: string[] = [];
  for (const v of all) for (const m of String(v).match(/<[^<>\s]+>|[^<>\s,]+@[^<>\s,]+/g) ?? []) out.push(normalizeMessageId(m));
  return [...new Set(out)].filter(Boolean);
}

function headerText(mail: ParsedMail, name: string): string | null {
  const v = mail.headers.get(name);
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && 'value' in v) return typeof v.value === 'string' ? v.value : null;
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;
}

const OOO_SUBJECT =
  /^\s*(out of (the )?office|automatic reply|auto(matic)?[- ]?reply|auto:|autoreply|abwesenheit|réponse automatique|respuesta automática|risposta automatica|afwezig|on vacation|away from (the )?office)/i;
const BOUNCE_SUBJECT =
  /(undeliver(ed|able)|delivery (status notification|has failed|failure|failed)|returned mail|mail delivery (failed|failure|subsystem)|failure notice|non[- ]?delivery|could not be delivered|delivery incomplete)/i;
const DELAY_SUBJECT = /(delay(ed)?|warning: could not send|delivery incomplete|will retry)/i;
const DAEMON_FROM = /^(mailer-daemon|postmaster|mail-daemon|mail delivery subsystem)@|^mailer-daemon$/i;

function isAutoReply(mail: ParsedMail): boolean {
  const autoSubmitted = headerText(mail, 'auto-submitted');
  if (autoSubmitted && autoSubmitted.trim().toLowerCase() !== 'no') return true;
  if (headerText(mail, 'x-autoreply') || headerText(mail, 'x-autorespond') || headerText(mail, 'x-autoresponse')) return true;
  const precedence = headerText(mail, 'precedence')?.trim().toLowerCase();
  if (precedence === 'auto_reply') return true;
  return OOO_SUBJECT.test(mail.subject ?? '');
}

function contentTypeOf(mail: ParsedMail): { value: string; params: Record<string, string> } {
  const v = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | string | undefined;
  if (!v) return { value: '', params: {} };
  if (typeof v === 'string') return { value: v.toLowerCase(), params: {} };
  return { value: (v.value ?? '').toLowerCase(), params: Object.fromEntries(Object.entries(v.params ?? {}).map(([k, x]) => [k.toLowerCase(), String(x)])) };
}

/** The per-recipient fields of a delivery-status body (RFC 3464). */
function dsnFields(text: string): { recipient: string | null; status: string | null; action: string | null } {
  const unfolded = text.replace(/\r?\n[ \t]+/g, ' ');
  const field = (name: string) => unfolded.match(new RegExp(`^${name}:\\s*(.+)$`, 'im'))?.[1].trim() ?? null;
  const finalRecipient = field('Final-Recipient') ?? field('Original-Recipient');
  const recipient = finalRecipient ? (finalRecipient.split(';').pop() ?? '').trim().replace(/^<|>$/g, '').toLowerCase() || null : null;
  const status = field('Status')?.match(/\d\.\d{1,3}\.\d{1,3}/)?.[0] ?? null;
  return { recipient, status, action: field('Action')?.toLowerCase() ?? null };
}

function originalMessageIdIn(text: string): string | null {
  const m = text.replace(/\r?\n[ \t]+/g, ' ').match(/^Message-ID:\s*(<[^>\s]+>)/im);
  return m ? normalizeMessageId(m[1]) : null;
}

function attachmentText(a: { content: Buffer | string }): string {
  return Buffer.isBuffer(a.content) ? a.content.toString('utf8') : String(a.content);
}

function readBounce(mail: ParsedMail, from: string | null): ParsedInbound['bounce'] & { kind: 'bounce' | 'delayed' } {
  const ct = contentTypeOf(mail);
  const isDsn = ct.value === 'multipart/report' && (ct.params['report-type'] ?? '').toLowerCase() === 'delivery-status';
  let recipient: string | null = null;
  let status: string | null = null;
  let action: string | null = null;
  let original: string | null = null;
  for (const a of mail.attachments ?? []) {
    const type = (a.contentType ?? '').toLowerCase();
    const text = attachmentText(a);
    if (type === 'message/delivery-status' || type === 'message/global-delivery-status') ({ recipient, status, action } = dsnFields(text));
    else if (type === 'message/rfc822' || type === 'text/rfc822-headers' || type === 'message/global-headers') original ??= originalMessageIdIn(text);
  }
  const body = mail.text ?? '';
  if (!isDsn || !status) {
    // A typical mailer-daemon text: the status and the returned headers are somewhere in the body.
    const fromBody = dsnFields(body);
    recipient ??= fromBody.recipient;
    status ??= fromBody.status ?? body.match(/\b([45]\.\d{1,3}\.\d{1,3})\b/)?.[1] ?? null;
    action ??= fromBody.action;
  }
  original ??= originalMessageIdIn(body);
  if (!recipient) {
    const addresses = (body.match(/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g) ?? []).map((x) => x.toLowerCase()).filter((x) => x !== from);
    recipient = addresses[0] ?? null;
  }
  const soft = status ? status.startsWith('4') : action === 'delayed' || DELAY_SUBJECT.test(mail.subject ?? '');
  return { kind: soft ? 'delayed' : 'bounce', recipient, status, originalMessageId: original };
}

function looksLikeBounce(mail: ParsedMail, from: string | null): boolean {
  const ct = contentTypeOf(mail);
  if (ct.value === 'multipart/report' && (ct.params['report-type'] ?? '').toLowerCase() === 'delivery-status') return true;
  return !!from && DAEMON_FROM.test(from) && BOUNCE_SUBJECT.test(mail.subject ?? '');
}

/** The new text of a reply: quoted thread ("On … wrote:", "> …") and signature removed; the whole text if that leaves nothing. */
export function visibleReplyText(text: string): string {
  const trimmed = text.replace(/\r\n/g, '\n').trim();
  if (!trimmed) return '';
  try {
    const visible = new EmailReplyParser().parseReply(trimmed).trim();
    return visible || trimmed;
  } catch {
    return trimmed;
  }
}

export async function parseInbound(raw: Buffer | string): Promise<ParsedInbound> {
  const mail = await simpleParser(raw, { skipHtmlToText: false, skipTextToHtml: true, skipImageLinks: true });
  const from = mail.from?.value?.[0]?.address?.toLowerCase() ?? null;
  const subject = mail.subject ?? '';
  const base = {
    messageId: mail.messageId ? normalizeMessageId(mail.messageId) : null,
    inReplyTo: idsOf(mail.inReplyTo),
    references: idsOf(mail.references),
    from,
    subject,
    date: mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date : null,
  };
  if (looksLikeBounce(mail, from)) {
    const { kind, ...bounce } = readBounce(mail, from);
    return { ...base, kind, text: null, bounce };
  }
  if (/^\s*unsubscribe\b/i.test(subject)) return { ...base, kind: 'unsubscribe', text: null, bounce: null };
  const text = visibleReplyText(mail.text ?? (typeof mail.html === 'string' ? mail.html.replace(/<[^>]+>/g, ' ') : ''));
  if (isAutoReply(mail)) return { ...base, kind: 'out_of_office', text, bounce: null };
  return { ...base, kind: 'reply', text, bounce: null };
}

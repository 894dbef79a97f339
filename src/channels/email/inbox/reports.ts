import type { ParsedMail } from 'mailparser';
import { emailKey } from '../../../domain/identity.js';
import { readFeedbackReport } from './arf.js';
import {
  FEEDBACK_TYPE_RULES,
  JMRP_MARKER_HEADER,
  JMRP_SENDER_DOMAINS,
  JMRP_SUBJECT,
  LANGUAGE_RULES,
  MAIL_SYSTEM_RULES,
  REASON_RULES,
  REPORT_AUTO_SUBMITTED,
  REPORT_PART_TYPES,
  REPORT_SENDER_LOCALPARTS,
  REPORT_SENDER_NAMES,
  RETURNED_PART_TYPES,
  STATUS_PART_TYPES,
  type BounceReason,
} from './report-rules.js';

export type { BounceReason } from './report-rules.js';

// Delivery reports and complaints, however their mail system writes them (issue 38 §1–§2). Pure: no database, no
// network. The rules are data in report-rules.ts. Everything here is linear in the bounded input: the source is cut
// to REPORT_SCAN_BYTES, split at MIME boundaries with indexOf, searched with `includes` and regexes without nested
// quantifiers; each message is read alone.

/** Of a message's source, at most this many bytes are read; of its text, at most PHRASE_SCAN_CHARS are searched. */
export const REPORT_SCAN_BYTES = 262_144;
const PHRASE_SCAN_CHARS = 65_536;
const MAX_ID_LENGTH = 500;
const MAX_PARTS = 200;
const MAX_DEPTH = 6;
const MAX_DIAGNOSTIC = 500;

export interface ReportHints {
  /** Sender address, lower case; null when the From has no address (`MAILER-DAEMON <>`). */
  from: string | null;
  /** Display name ("Mail Delivery System", "MAILER-DAEMON"). */
  fromName: string | null;
  /** Return-Path value without brackets; '' for `<>`; null when absent. */
  returnPath: string | null;
  subject: string;
  autoSubmitted: string | null;
  /** X-Failed-Recipients present. */
  failedRecipients: boolean;
  /** Top-level, lower case, e.g. 'multipart/report'. */
  contentType: string;
  /** Its report-type parameter. */
  reportType: string | null;
  /** MIME types of all parts from the IMAP body structure, lower case (may be empty when unknown). */
  partTypes: string[];
}

export type ReportVerdict =
  | {
      kind: 'bounce';
      severity: 'hard' | 'soft';
      status: string | null;
      action: string | null;
      reason: BounceReason;
      diagnostic: string | null;
      originalMessageId: string | null;
      evidence: string;
    }
  | { kind: 'delayed'; status: string | null; action: string | null; originalMessageId: string | null; evidence: string }
  | { kind: 'delivered'; status: string | null; action: string | null; originalMessageId: string | null; evidence: string }
  | { kind: 'complaint'; format: 'arf' | 'jmrp'; feedbackType: string; optOut: boolean; originalMessageId: string | null; evidence: string };

// ---------------------------------------------------------------------------------------------------------------
// Small linear helpers

const lower = (s: string | null | undefined) => (s ?? '').toLowerCase();

function firstOf(text: string, phrases: readonly string[]): string | null {
  for (const p of phrases) if (text.includes(p)) return p;
  return null;
}

/** `<abc@host>`, `abc@host`, `&lt;abc@host&gt;` → `abc@host` (lower case); null when it is not an id. */
function idFrom(value: string): string | null {
  const v = value.replace(/&lt;/gi, '<').replace(/&gt;/gi, '>').trim();
  const open = v.indexOf('<');
  let id: string;
  if (open >= 0) {
    const close = v.indexOf('>', open + 1);
    if (close < 0) return null;
    id = v.slice(open + 1, close);
  } else id = v.split(/[\s;,]/, 1)[0] ?? '';
  id = id.trim().toLowerCase();
  if (!id || id.length > MAX_ID_LENGTH || !id.includes('@') || /[\s<>]/.test(id)) return null;
  return id;
}

/**
 * One header block: unfolded, lower-case name → first value. Lenient as mail systems are: a line with no colon
 * continues the field before it (a `boundary=` written on a line of its own).
 */
function headerFields(block: string): Map<string, string> {
  const out = new Map<string, string>();
  let last: string | null = null;
  for (const line of block.split('\n')) {
    const i = line.indexOf(':');
    const continued = line.startsWith(' ') || line.startsWith('\t') || i <= 0 || i > 100 || /\s/.test(line.slice(0, i).trim());
    if (continued) {
      if (last !== null && out.get(last) !== undefined && line.trim()) out.set(last, `${out.get(last)} ${line.trim()}`.slice(0, 4096));
      continue;
    }
    const name = line.slice(0, i).trim().toLowerCase();
    if (out.has(name)) {
      last = null;
      continue;
    }
    out.set(name, line.slice(i + 1).trim());
    last = name;
  }
  return out;
}

/** Splits at the first blank line: the header block and what follows (text already has `\n` line ends). */
function splitHead(text: string): [string, string] {
  if (text.startsWith('\n')) return ['', text.slice(1)];
  const i = text.indexOf('\n\n');
  return i < 0 ? [text, ''] : [text.slice(0, i), text.slice(i + 2)];
}

function paramOf(value: string, name: string): string | null {
  const lowerValue = value.toLowerCase();
  let from = 0;
  for (;;) {
    const i = lowerValue.indexOf(name, from);
    if (i < 0) return null;
    from = i + name.length;
    const before = lowerValue[i - 1];
    if (i > 0 && before !== ';' && before !== ' ' && before !== '\t') continue;
    let j = from;
    while (value[j] === ' ' || value[j] === '\t') j++;
    if (value[j] !== '=') continue;
    j++;
    while (value[j] === ' ' || value[j] === '\t') j++;
    if (value[j] === '"') {
      const end = value.indexOf('"', j + 1);
      return end < 0 ? null : value.slice(j + 1, end);
    }
    const m = /^[^\s;]{1,200}/.exec(value.slice(j, j + 201));
    return m ? m[0] : null;
  }
}

function decodeBody(body: string, encoding: string | undefined): string {
  const enc = lower(encoding).trim();
  if (enc === 'base64')
    return Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64')
      .toString('latin1')
      .replace(/\r\n?/g, '\n');
  if (enc === 'quoted-printable') return body.replace(/=\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return body;
}

// ---------------------------------------------------------------------------------------------------------------
// MIME: the parts of the bounded source, whatever their disposition (mailparser inlines an `inline` message/rfc822
// or delivery-status into the text and drops the returned headers; this walk keeps them).

export interface MimeLeaf {
  /** Lower case, e.g. 'message/delivery-status'. */
  type: string;
  /** The part's own header fields. */
  headers: Map<string, string>;
  /** The decoded body as latin1 text with `\n` line ends (for a message/rfc822 part, the whole returned message). */
  body: string;
}

export interface MimeWalk {
  headers: Map<string, string>;
  /** Every part's type, multiparts included, in order (the IMAP body structure's view). */
  types: string[];
  leaves: MimeLeaf[];
  /** The bounded source after the top header block, as latin1 with `\n` line ends. */
  rest: string;
}

/** The parts of a message, from at most REPORT_SCAN_BYTES of its source, in linear time per nesting level. */
export function walkMime(source: Buffer | string): MimeWalk {
  const raw = typeof source === 'string' ? source.slice(0, REPORT_SCAN_BYTES) : source.subarray(0, REPORT_SCAN_BYTES).toString('latin1');
  const text = raw.replace(/\r\n?/g, '\n');
  const [head, body] = splitHead(text);
  const headers = headerFields(head);
  const out: MimeWalk = { headers, types: [], leaves: [], rest: body };
  walkPart(headers, body, 0, out);
  return out;
}

function walkPart(headers: Map<string, string>, body: string, depth: number, out: MimeWalk): void {
  if (out.types.length >= MAX_PARTS) return;
  const contentType = headers.get('content-type') ?? 'text/plain';
  const type = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase() || 'text/plain';
  out.types.push(type);
  const boundary = type.startsWith('multipart/') ? paramOf(contentType, 'boundary') : null;
  if (!boundary || depth >= MAX_DEPTH) {
    out.leaves.push({ type, headers, body: type.startsWith('multipart/') ? body : decodeBody(body, headers.get('content-transfer-encoding')) });
    return;
  }
  const delimiter = `\n--${boundary}`;
  const all = `\n${body}`;
  let at = all.indexOf(delimiter);
  while (at >= 0 && out.types.length < MAX_PARTS) {
    const start = at + delimiter.length;
    if (all.startsWith('--', start)) return;
    const lineEnd = all.indexOf('\n', start);
    if (lineEnd < 0) return;
    const next = all.indexOf(delimiter, lineEnd);
    const part = all.slice(lineEnd + 1, next < 0 ? all.length : next);
    const [partHead, partBody] = splitHead(part);
    walkPart(headerFields(partHead), partBody, depth + 1, out);
    at = next;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Hints

/** The hints from a parsed message and its source (for tests and scripts; the watcher fills them from IMAP). */
export function reportHintsOf(mail: ParsedMail, source: Buffer): ReportHints {
  const walk = walkMime(source);
  const first = mail.from?.value?.[0];
  const returnPathLine = (mail.headerLines ?? []).find((l) => l.key === 'return-path');
  const rp = returnPathLine ? returnPathLine.line.replace(/^[^:]*:/, '').trim() : null;
  const ct = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | string | undefined;
  const ctValue = typeof ct === 'string' ? ct : (ct?.value ?? 'text/plain');
  const reportType = typeof ct === 'object' && ct?.params ? (Object.entries(ct.params).find(([k]) => k.toLowerCase() === 'report-type')?.[1] ?? null) : null;
  const auto = mail.headers.get('auto-submitted');
  return {
    from: first?.address ? first.address.toLowerCase() : null,
    fromName: first?.name ? first.name : null,
    returnPath: rp === null ? null : rp.replace(/^<|>$/g, '').trim().toLowerCase(),
    subject: mail.subject ?? '',
    autoSubmitted: typeof auto === 'string' ? auto : null,
    failedRecipients: mail.headers.has('x-failed-recipients'),
    contentType: ctValue.toLowerCase(),
    reportType: reportType ? reportType.toLowerCase() : null,
    partTypes: walk.types,
  };
}

function isDaemonSender(h: ReportHints): string | null {
  if (h.from !== null) {
    const local = h.from.split('@', 1)[0];
    if (REPORT_SENDER_LOCALPARTS.includes(local)) return `sender ${local}`;
  } else if (h.fromName === null || h.fromName.trim() !== '') {
    return 'sender without address';
  }
  const name = lower(h.fromName).replace(/["']/g, '').trim();
  if (name && REPORT_SENDER_NAMES.includes(name)) return `sender name "${name}"`;
  return null;
}

function isJmrpSender(h: ReportHints): boolean {
  const domain = h.from?.split('@')[1] ?? '';
  return domain.split('.').some((label) => JMRP_SENDER_DOMAINS.includes(label));
}

function subjectPhrase(subject: string): string | null {
  const s = lower(subject).slice(0, 998);
  for (const rule of LANGUAGE_RULES) {
    const p = firstOf(s, rule.failure) ?? firstOf(s, rule.delay);
    if (p) return `${rule.language}: ${p}`;
  }
  return null;
}

/**
 * Header/structure-only test: whether the body is worth reading as a possible report. False negatives lose bounces;
 * false positives cost one bounded body fetch. A message threaded to one of ours has its body read anyway: pass it to
 * readReport whatever this says (a gateway's bounce written as a "Re:", k06, shows nothing here).
 */
export function mayBeReport(h: ReportHints): boolean {
  if (h.contentType === 'multipart/report') return true;
  if (h.partTypes.some((t) => REPORT_PART_TYPES.includes(t))) return true;
  if (isDaemonSender(h)) return true;
  if (h.returnPath === '' || h.failedRecipients) return true;
  if (REPORT_AUTO_SUBMITTED.includes(lower(h.autoSubmitted).split(/[;(\s]/, 1)[0])) return true;
  if (lower(h.subject).includes(JMRP_SUBJECT) || (isJmrpSender(h) && h.from?.startsWith('staff@'))) return true;
  return subjectPhrase(h.subject) !== null;
}

// ---------------------------------------------------------------------------------------------------------------
// The returned message's Message-ID

function messageIdOfBlock(block: string): string | null {
  const fields = headerFields(splitHead(block)[0]);
  const v = fields.get('message-id');
  return v ? idFrom(v) : null;
}

/** `Message-ID:` lines anywhere in a text (pasted headers), first that is not `own`; a folded value is read too. */
function messageIdLines(text: string, own: string | null): string | null {
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\n', at);
    const line = text.slice(at, end < 0 ? text.length : end);
    at = end < 0 ? text.length : end + 1;
    const trimmed = line.length > 1000 ? '' : line.replace(/^[ \t>]{0,8}/, '');
    if (trimmed.length < 11 || trimmed.slice(0, 11).toLowerCase() !== 'message-id:') continue;
    let value = trimmed.slice(11).trim();
    if (!value) {
      const nextEnd = text.indexOf('\n', at);
      value = text.slice(at, nextEnd < 0 ? Math.min(text.length, at + 1000) : Math.min(nextEnd, at + 1000)).trim();
    }
    const id = idFrom(value);
    if (id && id !== own) return id;
  }
  return null;
}

function originalMessageId(walk: MimeWalk, mail: ParsedMail, own: string | null): string | null {
  for (const leaf of walk.leaves) {
    if (!RETURNED_PART_TYPES.includes(leaf.type)) continue;
    const id = messageIdOfBlock(leaf.body);
    if (id && id !== own) return id;
  }
  // Pasted after "Message headers follow" / "This is a copy of the message", in any text part (decoded).
  for (const leaf of walk.leaves) {
    if (STATUS_PART_TYPES.includes(leaf.type) || leaf.type === 'message/feedback-report') continue;
    const id = messageIdLines(leaf.body, own);
    if (id) return id;
  }
  for (const a of mail.attachments ?? []) {
    if (!RETURNED_PART_TYPES.includes(lower(a.contentType))) continue;
    const id = messageIdOfBlock(a.content.subarray(0, REPORT_SCAN_BYTES).toString('latin1').replace(/\r\n?/g, '\n'));
    if (id && id !== own) return id;
  }
  // MIME the walk could not follow (a boundary that changes, a broken fold): the raw text after the top header block.
  return messageIdLines(walk.rest, own);
}

/** The id a threaded report answers (a gateway's "Re:"): the last resort for a bounce with no returned headers. */
function threadedId(mail: ParsedMail, own: string | null): string | null {
  const raw: unknown = mail.inReplyTo;
  const v: unknown = Array.isArray(raw) ? (raw as unknown[])[0] : raw;
  const id = typeof v === 'string' ? idFrom(v) : null;
  return id && id !== own ? id : null;
}

// ---------------------------------------------------------------------------------------------------------------
// RFC 3464 per-recipient fields

interface RecipientBlock {
  action: string | null;
  status: string | null;
  diagnostic: string | null;
}

const STATUS_RE = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/;

function statusIn(value: string | undefined | null): string | null {
  if (!value) return null;
  const m = STATUS_RE.exec(value.slice(0, 2000));
  return m ? `${m[1]}.${m[2]}.${m[3]}` : null;
}

/** The per-recipient blocks of a delivery-status body (the first, per-message block has none of these fields). */
function recipientBlocks(body: string): RecipientBlock[] {
  const out: RecipientBlock[] = [];
  for (const block of body.slice(0, REPORT_SCAN_BYTES).split(/\n[ \t]*\n/)) {
    const f = headerFields(block);
    const action =
      f
        .get('action')
        ?.toLowerCase()
        .split(/[\s;(]/, 1)[0] ?? null;
    const status = statusIn(f.get('status'));
    if (action === null && status === null) continue;
    const diagnostic = f.get('diagnostic-code')?.slice(0, MAX_DIAGNOSTIC) ?? null;
    out.push({ action, status: status ?? statusIn(diagnostic), diagnostic });
  }
  return out;
}

type Kind = 'bounce' | 'delayed' | 'delivered';

function kindOf(b: RecipientBlock): Kind | null {
  switch (b.action) {
    case 'failed':
    case 'undeliverable': // Postfix's address verification (`sendmail -bv`)
      return 'bounce';
    case 'delayed':
      return 'delayed';
    case 'delivered':
    case 'relayed':
    case 'expanded':
    case 'deliverable':
      return 'delivered';
    default:
      // No (or an unknown) action: the status class says what it can.
      if (!b.status) return null;
      return b.status.startsWith('5') ? 'bounce' : b.status.startsWith('4') ? 'delayed' : 'delivered';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Reason and severity

function reasonOf(text: string, status: string | null): { reason: BounceReason; rule: (typeof REASON_RULES)[number] | null } {
  const t = lower(text).slice(0, PHRASE_SCAN_CHARS);
  for (const rule of REASON_RULES) if (firstOf(t, rule.phrases)) return { reason: rule.reason, rule };
  if (status) {
    const detail = status.slice(2);
    for (const rule of REASON_RULES) if (rule.statuses.includes(detail)) return { reason: rule.reason, rule };
  }
  return { reason: 'other', rule: null };
}

/** An SMTP reply code (`550`, `452-`) at a line start or after a space or quote: the first one in the text. */
const SMTP_CODE_RE = /(?:^|[\s'"(:[])([45][0-5]\d)(?=[\s\-'"]|$)/m;

function severityOf(rule: (typeof REASON_RULES)[number] | null, status: string | null, smtpCode: string | null, text: string): 'hard' | 'soft' {
  if (rule?.severity === 'hard' || rule?.severity === 'soft') return rule.severity;
  const cls = status?.[0] ?? smtpCode?.[0] ?? null;
  if (cls === '4') return 'soft';
  if (cls === '5') return 'hard';
  return lower(text).includes('temporar') && !lower(text).includes('permanent') ? 'soft' : 'hard';
}

const SEVERITY_ORDER: Record<string, number> = { 'bounce:hard': 4, 'bounce:soft': 3, delayed: 2, delivered: 1 };

// ---------------------------------------------------------------------------------------------------------------
// readReport

const stripTags = (html: string) =>
  html
    .slice(0, PHRASE_SCAN_CHARS * 4)
    .replace(/<[^<>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');

/** A leaf's text in its charset when that is UTF-8, else as latin1 (enough for ASCII phrases and codes). */
function leafText(leaf: MimeLeaf): string {
  const charset = lower(paramOf(leaf.headers.get('content-type') ?? '', 'charset'));
  return charset === 'utf-8' || charset === 'utf8' ? Buffer.from(leaf.body, 'latin1').toString('utf8') : leaf.body;
}

/** The report's words: mailparser's text (decoded in any charset), else the text parts the MIME walk found. */
function textOf(mail: ParsedMail, walk: MimeWalk): string {
  if (typeof mail.text === 'string' && mail.text.trim()) return mail.text.slice(0, PHRASE_SCAN_CHARS);
  if (typeof mail.html === 'string' && mail.html.trim()) return stripTags(mail.html).slice(0, PHRASE_SCAN_CHARS);
  const texts = walk.leaves.filter((l) => l.type === 'text/plain' || l.type.startsWith('multipart/'));
  const html = walk.leaves.filter((l) => l.type === 'text/html');
  const joined = texts.length ? texts.map(leafText).join('\n') : html.map((l) => stripTags(leafText(l))).join('\n');
  return joined.slice(0, PHRASE_SCAN_CHARS);
}

/** The text up to where the returned message starts: the report's own words (case kept). */
function noticeOf(text: string): string {
  const t = lower(text);
  let cut = t.length;
  for (const sys of MAIL_SYSTEM_RULES)
    for (const marker of sys.returned) {
      const i = t.indexOf(marker);
      if (i >= 0 && i < cut) cut = i;
    }
  return text.slice(0, cut);
}

interface TextEvidence {
  failure: string | null;
  delay: string | null;
  smtpCode: string | null;
  status: string | null;
  reasonPhrase: string | null;
}

function textEvidence(original: string, subject: string): TextEvidence {
  const notice = lower(original);
  const both = `${lower(subject)}\n${notice}`;
  let failure: string | null = null;
  let delay: string | null = null;
  for (const sys of MAIL_SYSTEM_RULES) {
    failure ??= firstOf(notice, sys.failure) ? `${sys.system}: ${firstOf(notice, sys.failure)}` : null;
    if (sys.delay) delay ??= firstOf(notice, sys.delay) ? `${sys.system}: ${firstOf(notice, sys.delay)}` : null;
  }
  for (const lang of LANGUAGE_RULES) {
    failure ??= firstOf(both, lang.failure) ? `${lang.language}: ${firstOf(both, lang.failure)}` : null;
    delay ??= firstOf(both, lang.delay) ? `${lang.language}: ${firstOf(both, lang.delay)}` : null;
  }
  let reasonPhrase: string | null = null;
  for (const rule of REASON_RULES) {
    if (rule.reason !== 'user_unknown' && rule.reason !== 'host_unknown' && rule.reason !== 'mailbox_full') continue;
    reasonPhrase ??= firstOf(notice, rule.phrases);
  }
  const code = SMTP_CODE_RE.exec(notice);
  const status = statusIn(notice.match(/\b[45]\.\d{1,3}\.\d{1,3}\b/)?.[0]);
  return { failure, delay, smtpCode: code ? code[1] : null, status, reasonPhrase };
}

/** Phrases that make a text final even when it also speaks of retrying. */
const FINAL_PHRASES = [
  'permanent error',
  'failed permanently',
  'permanent failure',
  'giving up',
  'will be deleted from queue',
  'retry timeout exceeded',
  'message expired',
];

/**
 * Whether a message is a delivery report or a complaint, and what it says.
 *
 * `mail` is mailparser's simpleParser result of the (bounded) source, parsed with { skipHtmlToText: true,
 * skipTextToHtml: true, skipImageLinks: true }; `source` the raw bytes (read linearly for the parts mailparser
 * inlines). `sentTo` is the address our message went to when the message is threaded to one of ours (null
 * otherwise): a message FROM that very address is a person, and text alone never makes it a bounce.
 *
 * - A DSN (any `message/delivery-status` part, whatever its disposition): per recipient block, `Action: failed` is a
 *   bounce whatever the status class (hard or soft by REASON_RULES), `delayed` is delayed, `delivered`, `relayed`
 *   and `expanded` are `delivered` (never a failure); with several recipients the most severe block wins.
 * - A complaint: ARF (`Feedback-Type: abuse`/`fraud` → optOut false; `opt-out`/`opt-out-list` → optOut true), or
 *   Microsoft's JMRP layout (feedbackType 'abuse'). `not-spam`, `virus`, `other` (and any other type) are returned as
 *   complaints too, with their feedbackType: the caller ignores those (FEEDBACK_TYPE_RULES says which count).
 * - A plain-text bounce: a report sender (MAILER-DAEMON, postmaster, `<>` …), a null Return-Path, X-Failed-Recipients
 *   or a returned-message part, with a failure phrase (per mail system or language) or an SMTP error; or, from any
 *   sender but `sentTo`, an SMTP reply code with a failure or reason phrase (a gateway's "Re:").
 *
 * The returned message's id comes from its part (attached or inline), its pasted headers, and for a threaded bounce
 * with neither, from In-Reply-To; never the report's own Message-ID. The recipient is never read from the report.
 * Returns null when the message is not a report (a reply, an auto-reply, other mail).
 */
export function readReport(mail: ParsedMail, source: Buffer, h: ReportHints & { sentTo: string | null }): ReportVerdict | null {
  const walk = walkMime(source);
  const own = mail.messageId ? idFrom(mail.messageId) : null;
  const fromPerson = h.sentTo !== null && h.from !== null && emailKey(h.from) === emailKey(h.sentTo);

  // Complaints.
  const isArf =
    (h.contentType === 'multipart/report' && lower(h.reportType) === 'feedback-report') || walk.leaves.some((l) => l.type === 'message/feedback-report');
  if (isArf) {
    const arf = readFeedbackReport(source);
    const feedbackType = arf.feedbackType ?? 'other';
    return {
      kind: 'complaint',
      format: 'arf',
      feedbackType,
      optOut: FEEDBACK_TYPE_RULES[feedbackType]?.optOut ?? false,
      originalMessageId: arf.originalMessageId ?? originalMessageId(walk, mail, own),
      evidence: `arf: feedback-type ${feedbackType}`,
    };
  }
  const jmrpPart = walk.leaves.find((l) => RETURNED_PART_TYPES.includes(l.type) && headerFields(splitHead(l.body)[0]).has(JMRP_MARKER_HEADER));
  if (jmrpPart && (isJmrpSender(h) || lower(h.subject).includes(JMRP_SUBJECT))) {
    return {
      kind: 'complaint',
      format: 'jmrp',
      feedbackType: 'abuse',
      optOut: false,
      originalMessageId: messageIdOfBlock(jmrpPart.body) ?? originalMessageId(walk, mail, own),
      evidence: `jmrp: ${JMRP_MARKER_HEADER} from ${h.from ?? '?'}`,
    };
  }

  // RFC 3464 delivery-status parts.
  // Diagnostics may be UTF-8 (message/global-delivery-status is, RFC 6533); invalid bytes become U+FFFD.
  const blocks = walk.leaves.filter((l) => STATUS_PART_TYPES.includes(l.type)).flatMap((l) => recipientBlocks(Buffer.from(l.body, 'latin1').toString('utf8')));
  const text = textOf(mail, walk);
  const notice = noticeOf(text);
  let worst: { kind: Kind; block: RecipientBlock; severity: 'hard' | 'soft' | null; reason: BounceReason } | null = null;
  for (const block of blocks) {
    const kind = kindOf(block);
    if (!kind) continue;
    let severity: 'hard' | 'soft' | null = null;
    let reason: BounceReason = 'other';
    if (kind === 'bounce') {
      const r = reasonOf(block.diagnostic ?? (blocks.length === 1 ? notice : ''), block.status);
      reason = r.reason;
      severity = severityOf(r.rule, block.status, null, block.diagnostic ?? '');
    }
    const rank = SEVERITY_ORDER[kind === 'bounce' ? `bounce:${severity}` : kind];
    if (!worst || rank > SEVERITY_ORDER[worst.kind === 'bounce' ? `bounce:${worst.severity}` : worst.kind]) worst = { kind, block, severity, reason };
  }
  if (worst) {
    const { block } = worst;
    const evidence = `dsn: action ${block.action ?? '-'}, status ${block.status ?? '-'}${blocks.length > 1 ? ` (most severe of ${blocks.length})` : ''}`;
    const id = originalMessageId(walk, mail, own);
    if (worst.kind === 'bounce')
      return {
        kind: 'bounce',
        severity: worst.severity ?? 'hard',
        status: block.status,
        action: block.action,
        reason: worst.reason,
        diagnostic: block.diagnostic,
        originalMessageId: id ?? threadedId(mail, own),
        evidence,
      };
    return { kind: worst.kind, status: block.status, action: block.action, originalMessageId: id, evidence };
  }

  // Not standard: who sent it, its structure, what it says.
  if (fromPerson) return null;
  const ev = textEvidence(notice, h.subject);
  const sender = isDaemonSender(h) ?? (h.returnPath === '' ? 'null return-path' : null);
  const structure = h.contentType === 'multipart/report' || walk.leaves.some((l) => RETURNED_PART_TYPES.includes(l.type)) ? 'returned part' : null;
  const smtpError = ev.smtpCode !== null || ev.status !== null;
  const words = ev.failure ?? ev.delay ?? (ev.reasonPhrase ? `reason: ${ev.reasonPhrase}` : null);
  const daemon = isDaemonSender(h);
  const id = originalMessageId(walk, mail, own);
  let why: string | null = null;
  if (h.failedRecipients) why = 'x-failed-recipients';
  else if (sender && (words || smtpError)) why = `${sender}; ${words ?? `smtp ${ev.smtpCode ?? ev.status}`}`;
  else if (daemon && (structure || id)) why = `${daemon}; ${structure ?? 'returned headers'}`;
  else if (structure && (ev.failure || (words && smtpError))) why = `${structure}; ${words}${smtpError ? `; smtp ${ev.smtpCode ?? ev.status}` : ''}`;
  else if (smtpError && (ev.failure || ev.reasonPhrase) && ev.smtpCode?.startsWith('5'))
    why = `smtp ${ev.smtpCode}; ${ev.failure ?? `reason: ${ev.reasonPhrase}`}`;
  if (!why) return null;

  const originalId = id ?? threadedId(mail, own);
  const bodyFields = recipientBlocks(notice);
  const action = bodyFields.find((b) => b.action)?.action ?? null;
  const status = bodyFields.find((b) => b.status)?.status ?? ev.status;
  const final = firstOf(lower(notice), FINAL_PHRASES);
  if (action === 'delayed' || (action !== 'failed' && ev.delay !== null && !final))
    return { kind: 'delayed', status, action, originalMessageId: originalId, evidence: `${why}; delay: ${ev.delay ?? action}` };
  const { reason, rule } = reasonOf(notice, status);
  const diagnosticLine = diagnosticIn(notice, ev.smtpCode);
  return {
    kind: 'bounce',
    severity: severityOf(rule, status, ev.smtpCode, notice),
    status,
    action,
    reason,
    diagnostic: diagnosticLine,
    originalMessageId: originalId,
    evidence: why,
  };
}

/** The line of the notice with the SMTP code (or the first status code), as the diagnostic. */
function diagnosticIn(notice: string, code: string | null): string | null {
  const i = code ? notice.search(new RegExp(`(?:^|[\\s'"(:[])${code}(?=[\\s\\-'"]|$)`, 'm')) : notice.search(STATUS_RE);
  if (i < 0) return null;
  const start = notice.lastIndexOf('\n', i) + 1;
  const end = notice.indexOf('\n', i);
  return (
    notice
      .slice(start, end < 0 ? undefined : end)
      .trim()
      .slice(0, MAX_DIAGNOSTIC) || null
  );
}

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
import {
  PHRASE_SCAN_CHARS,
  REPORT_SCAN_BYTES,
  firstOf,
  headerFields,
  idFrom,
  leafText,
  lower,
  splitHead,
  stripTags,
  walkMime,
  type MimeWalk,
} from './report-mime.js';
import {
  SEVERITY_ORDER,
  SMTP_CODE_RE,
  diagnosticIn,
  kindOf,
  reasonOf,
  recipientBlocks,
  severityOf,
  statusIn,
  type Kind,
  type RecipientBlock,
} from './report-dsn.js';

export type { BounceReason } from './report-rules.js';
export { REPORT_SCAN_BYTES, walkMime, type MimeLeaf, type MimeWalk } from './report-mime.js';

// Delivery reports and complaints, however their mail system writes them (issue 38 §1–§2). Pure: no database, no
// network. The rules are data in report-rules.ts; the MIME walk is report-mime.ts, the RFC 3464 fields report-dsn.ts,
// ARF complaints arf.ts. Everything here is linear in the bounded input: the source is cut
// to REPORT_SCAN_BYTES, split at MIME boundaries with indexOf, searched with `includes` and regexes without nested
// quantifiers; each message is read alone.

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
// readReport

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

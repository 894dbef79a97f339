import { normalizeMessageId } from './message-id.js';
import { FEEDBACK_TYPE_RULES } from './report-rules.js';

// Abuse complaints: feedback reports in the Abuse Reporting Format (ARF, RFC 5965) that mailbox providers' feedback
// loops (Microsoft JMRP/SNDS, Yahoo's Complaint Feedback Loop) send when a recipient marks a message as spam. Pure:
// no database, no network. The watcher believes one only when the returned message's Message-ID is one we sent.

/** Of a report, at most this many characters are read (the three parts come first; the original's body is not needed). */
const ARF_SCAN_CHARS = 262_144;
const MAX_ID_LENGTH = 500;

/**
 * The feedback types that are complaints: `abuse`, `fraud`, and a recipient's `opt-out` / `opt-out-list` (RFC 6650);
 * `not-spam`, `virus`, `other` and `auth-failure` change nothing (report-rules.ts FEEDBACK_TYPE_RULES).
 */
export const COMPLAINT_FEEDBACK_TYPES: ReadonlySet<string> = new Set(
  Object.entries(FEEDBACK_TYPE_RULES)
    .filter(([, rule]) => rule.complaint)
    .map(([type]) => type),
);

export interface FeedbackReport {
  /** `Feedback-Type` of the `message/feedback-report` part, lower case; null when the report has none. */
  feedbackType: string | null;
  /** The returned message's Message-ID (its `message/rfc822` or `text/rfc822-headers` part), bracket-free, lower case. */
  originalMessageId: string | null;
}

/** The parts that carry the returned message or its header block (`text/rfc822-header` as some reporters spell it). */
const RETURNED_TYPES: ReadonlySet<string> = new Set([
  'message/rfc822',
  'text/rfc822-headers',
  'text/rfc822-header',
  'message/global-headers',
  'message/global',
]);

/** `multipart/report; report-type=feedback-report`, from a Content-Type value and its parameters. */
export function isFeedbackReportType(value: string | undefined, reportType: string | undefined): boolean {
  return (value ?? '').toLowerCase() === 'multipart/report' && (reportType ?? '').trim().toLowerCase() === 'feedback-report';
}

/** One header block: unfolded, `name` → first value (lower-case names). */
function headerFields(block: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    if (!out.has(name)) out.set(name, line.slice(i + 1).trim());
  }
  return out;
}

/** Splits at the first blank line: the header block and what follows. */
function splitHead(text: string): [string, string] {
  const m = /\r?\n\r?\n/.exec(text);
  return m ? [text.slice(0, m.index), text.slice(m.index + m[0].length)] : [text, ''];
}

function decoded(body: string, encoding: string | undefined): string {
  if ((encoding ?? '').trim().toLowerCase() !== 'base64') return body;
  return Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64').toString('latin1');
}

/**
 * Reads a feedback report from the message source: the feedback type, and the Message-ID of the message it
 * returns. Linear in the (bounded) source: the top-level parts are split at the boundary, nothing is rendered. Who
 * complained is never read from it (`Original-Rcpt-To` is often redacted, and could name anyone): the watcher takes
 * the recipient of the message of ours it names.
 */
export function readFeedbackReport(source: Buffer | string): FeedbackReport {
  const text = (typeof source === 'string' ? source : source.toString('latin1')).slice(0, ARF_SCAN_CHARS);
  const [head, body] = splitHead(text);
  const contentType = headerFields(head).get('content-type') ?? '';
  const boundary = /boundary\s*=\s*(?:"([^"]{1,200})"|([^\s;]{1,200}))/i.exec(contentType);
  const out: FeedbackReport = { feedbackType: null, originalMessageId: null };
  if (!boundary) return out;
  const parts = body.split(`--${boundary[1] ?? boundary[2]}`).slice(1);
  for (const part of parts) {
    if (part.startsWith('--')) break;
    const [partHead, partBody] = splitHead(part.replace(/^[ \t]*\r?\n/, ''));
    const fields = headerFields(partHead);
    const type = (fields.get('content-type') ?? 'text/plain').split(';')[0].trim().toLowerCase();
    const content = decoded(partBody, fields.get('content-transfer-encoding'));
    if (type === 'message/feedback-report' && out.feedbackType === null) {
      out.feedbackType = headerFields(content).get('feedback-type')?.toLowerCase().split(/[\s;]/)[0] ?? null;
    } else if (RETURNED_TYPES.has(type) && out.originalMessageId === null) {
      // Bracketed as RFC 5322 wants; some reporters (arf-12 in Sisimai's corpus) write the id bare.
      const value = headerFields(splitHead(content)[0]).get('message-id') ?? '';
      const id = /<[^<>\s]{1,500}>/.exec(value)?.[0] ?? /^[^<>\s@]{1,250}@[^<>\s@]{1,250}$/.exec(value.trim())?.[0];
      const normalized = id ? normalizeMessageId(id) : '';
      if (normalized && normalized.length <= MAX_ID_LENGTH) out.originalMessageId = normalized;
    }
  }
  return out;
}

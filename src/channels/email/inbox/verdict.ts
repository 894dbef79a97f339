import type { ReplyVerdict } from '../../../domain/classify.js';
import type { ReportVerdict } from './reports.js';

// What the inbox watcher decided about one INBOX message (docs/email.md "The inbound record"): decide.ts makes it
// from the message and our records without writing anything; apply.ts carries it out through one table, and the
// message's inbound record keeps it. Pure types and the record's vocabulary.

/** The stored verdicts (email_inbound_seen.verdict); GET /v1/mailboxes/{id}/inbound filters by these. */
export const INBOUND_VERDICTS = [
  'reply',
  'out_of_office',
  'left_company',
  'unsubscribe',
  'bounce',
  'delayed',
  'delivery_report',
  'complaint',
  'unmatched',
  'ignored',
  'duplicate',
  'unparseable',
] as const;
export type InboundVerdict = (typeof INBOUND_VERDICTS)[number];

/** The verdict a message's record is claimed with: a kind of Verdict, as INBOUND_VERDICTS names it. */
export const storedVerdict = (kind: Verdict['kind']): InboundVerdict => (kind === 'meeting_response' ? 'reply' : kind);

/** How a message was tied to us: the message of ours it names, the lead, and the address that message went to. */
export interface Tie {
  leadId: string;
  /** Our Message-ID as stored (`<…>`) that it answers or returns; null when tied by token or address only. */
  ourMessageId: string | null;
  /** The mailbox that sent that message of ours, when known. */
  mailboxId: string | null;
  /** The address our message went to (our record), else the lead's. */
  sentTo: string | null;
  by: 'thread' | 'returned_message' | 'token' | 'address';
}

export type Verdict =
  /** A person's reply (or a reply that reads as automatic text), classified once; the engine applies it. */
  | { kind: 'reply' | 'out_of_office' | 'left_company'; tie: Tie; text: string; classification: ReplyVerdict; tiedToOurMessage: boolean; reason: string }
  /** The List-Unsubscribe mailto with a valid token, or an ARF `Feedback-Type: opt-out`. */
  | { kind: 'unsubscribe'; tie: Tie; reason: 'mailto_token' | 'feedback_opt_out' }
  | { kind: 'bounce' | 'delayed' | 'delivery_report'; tie: Tie | null; report: Exclude<ReportVerdict, { kind: 'complaint' }>; reason: string }
  | { kind: 'complaint'; tie: Tie; report: Extract<ReportVerdict, { kind: 'complaint' }>; reason: string }
  /**
   * An iTIP REPLY to a calendar invitation (calendar-reply.ts), tied to us (or not) by its UID alone when applied. Its
   * record says `reply` (the person's answer; reason `ical_reply:<answer>`, effect `meeting_response:<answer>`), or
   * `ignored` when the UID is none of ours; it never becomes a pending reply.
   */
  | { kind: 'meeting_response'; answer: { uid: string; attendees: { address: string; response: 'accepted' | 'declined' | 'tentative' }[] }; reason: string }
  /** Nothing applied: not tied to us, not believed, or not readable. */
  | { kind: 'unmatched' | 'ignored' | 'unparseable'; reason: string; tie?: Tie | null; report?: ReportVerdict; classification?: ReplyVerdict };

/** A reply's excerpt: at most this many characters of the person's own words (encrypted; the console shows it). */
export const EXCERPT_CHARS = 280;

/** What the record keeps of a verdict besides its kind: the tie, the label, the report's facts (no message text). */
export function recordFields(v: Verdict): {
  leadId: string | null;
  tiedMessageId: string | null;
  label: string | null;
  confidence: number | null;
  needsReview: boolean;
  detail: Record<string, unknown>;
} {
  const tie = 'tie' in v ? (v.tie ?? null) : null;
  const classification = 'classification' in v ? (v.classification ?? null) : null;
  const report = 'report' in v ? (v.report ?? null) : null;
  const detail: Record<string, unknown> = {};
  if (tie) detail.tiedBy = tie.by;
  if (classification) {
    detail.evidence = classification.evidence.slice(0, 3).map((e) => ({ rule: e.rule, language: e.language }));
    if (classification.language) detail.language = classification.language;
  }
  if (report) {
    detail.report = report.kind;
    if ('status' in report) detail.status = report.status;
    if ('action' in report) detail.action = report.action;
    if (report.kind === 'bounce') Object.assign(detail, { severity: report.severity, bounceReason: report.reason });
    if (report.kind === 'complaint') Object.assign(detail, { format: report.format, feedbackType: report.feedbackType });
    detail.rule = report.evidence;
  }
  return {
    leadId: tie?.leadId ?? null,
    tiedMessageId: tie?.ourMessageId ?? null,
    label: classification?.label ?? null,
    confidence: classification ? Math.round(classification.confidence * 1000) / 1000 : null,
    needsReview: classification?.needsReview ?? false,
    detail,
  };
}

import { sql, type Insertable, type RawBuilder } from 'kysely';
import type { Database } from '../db/database.js';
import type { DB } from '../db/schema.js';
import type { SuppressedAddressesTable } from '../db/schema-delivery.js';
import { newId } from '../lib/ids.js';
import type { IdentityChannel } from './identity.js';
import type { ActivityOutcome } from './vocabulary.js';

// The activity ledger (SPEC.md "Activity entry"; GET /activity): append-only, one row per thing that happened to a
// lead or an account. This file is its one writer: every entry is a LedgerEntry, whose `detail` shape is fixed by its
// `action`, and appendLedger is the only insert into `activity` in src/ (ESLint's house/ledger-owner holds it). On the
// wire `detail` stays what the spec says it is, a string: the JSON of the entry's detail object, keys in the order the
// caller wrote them. Two callers need another form of the same insert, both here: a public-data read's entry is written
// in the same statement as its energy debit (appendLedgerSql, used by modules/energy chargeEnergy), and the world
// loader inserts the entries a world file lists as they are written there (appendSeededLedger).

/**
 * The ledger action one attempt of a sequence step is written under (engine/steps.ts activityActionOf): `invite` for a
 * connect, `message` then `followup` for messages, the engaged action for an engage step (`like`, `comment`,
 * `endorse`, `view_profile`), `email_sent`, `x_dm`, `x_follow`, `x_like`, and `error` for a step kind it does not know.
 */
export type StepAction =
  'invite' | 'message' | 'followup' | 'like' | 'comment' | 'endorse' | 'view_profile' | 'email_sent' | 'x_dm' | 'x_follow' | 'x_like' | 'error';

/**
 * A step's entry (engine/outcomes.ts; engine/tasks.ts for a person's answer to an uncertain send). `step` is the
 * step's index in its sequence, `kind` its step kind, `channel` its channel; `variant` the A/B variant sent.
 * - sent (`ok`): `{step, kind, channel, variant?, noteOmitted?}`, then a StepNote; its units are what the send cost.
 *   `noteOmitted`: a LinkedIn invitation went without its note (`linkedin_note_limit`, docs/linkedin.md).
 * - failed: the same, then `reason` (the driver's error, `rate_limited`, `interrupted`, `uncertain_delivery`),
 *   `attempt` (tries so far, waits included), and `final: true` or the `retryAt` timestamp; `confirmed: 'not_sent'`
 *   when a crashed send's driver said it never left.
 * - skipped: `{step, kind, reason}` (`missing_email`, `missing_x_user_id`, `empty_message`, `identity_opted_out`,
 *   `task_skipped`, a template's `missing_template_value`, `unknown_placeholder` or `broken_placeholder` with its
 *   `field`, `token` and `in: 'subject'`).
 * - a person's answer to an uncertain send: `{step, kind, channel, recovered, by, taskId, reason?, final?}`.
 */
export interface StepDetail extends StepNote {
  step: number | null;
  kind?: string;
  channel?: string;
  variant?: string;
  reason?: string;
  field?: string;
  token?: string;
  in?: 'subject';
  attempt?: number;
  final?: boolean;
  retryAt?: string;
  confirmed?: 'not_sent';
  noteOmitted?: string;
}

/**
 * What a step's entry adds about how it was done: by a person through a task (`via: 'task'`, the task's id, who), or
 * recovered after a crash (`confirmed_sent`: the driver found it sent; `marked_sent`/`sent_anyway`: a person's answer
 * to an uncertain send).
 */
export interface StepNote {
  via?: 'task';
  taskId?: string;
  by?: string;
  recovered?: 'confirmed_sent' | 'marked_sent' | 'sent_anyway';
}

/**
 * A delivery report on an e-mail we sent (channels/email/inbox/apply.ts), a failed `email_sent`: a bounce is `final`
 * with its `severity` and `bounceReason`; a delay is a note (`final: false`). `status` is the report's RFC 3463 code.
 */
export interface DeliveryReportDetail {
  channel: 'email';
  reason: 'bounced' | 'delayed';
  status: string | null;
  final: boolean;
  severity?: string;
  bounceReason?: string;
}

/**
 * A reply found by the engine (engine/observe.ts): its channel, classification and reply id, then what it did: an
 * auto-reply snoozes the lead until `resumeAt`; a leaver notice stops the lane (`stopped`, `replacementNamed` when it
 * names someone); a verdict below the confidence floor waits for a person (`needsReview`, `confidence`).
 */
export interface ReplyDetectedDetail extends ReplyDetectedNote {
  channel: string;
  classification: string;
  replyId: string;
}

/** What a `reply_detected` entry adds after `{channel, classification, replyId}`. */
export interface ReplyDetectedNote {
  resumeAt?: string;
  stopped?: 'left_company';
  replacementNamed?: boolean;
  needsReview?: boolean;
  confidence?: number;
}

/** An answer to a channel's invitation the engine observed: `accepted` (a LinkedIn invite), `x_follow_back` (an X follow). */
export interface ObservationDetail {
  channel: string;
}

/**
 * What every entry of a reply decision (modules/replies/replies.decisions.ts, POST /replies/{id}/decide) starts with:
 * the reply, the decision, who took it, and `via` where it was taken when it has no API form (the console's "Mark
 * handled").
 */
export interface ReplyDecisionDetail {
  replyId: string;
  decision: string;
  by: string;
  via?: string;
}

/**
 * An answer sent to the prospect (`reply_sent`, `meeting_invited`): sent (`externalId`; `edited` for a send with the
 * caller's text; `recovered: 'confirmed_sent'` when an earlier try had reached the platform), refused by the channel
 * (`error`, `retryable`), or done by a person through a task (`via: 'task'`, `taskId`). A sent answer costs one unit.
 */
export type ReplyMessageDetail = ReplyDecisionDetail &
  (
    | {
        channel: string;
        externalId: string | null;
        edited?: boolean;
        recovered?: 'confirmed_sent';
        /** An `invite` with a time: the iCalendar UID of the invitation sent, and when the meeting starts (docs/meetings.md). */
        invitationUid?: string;
        meetingAt?: string;
      }
    | { channel: string; error: string; retryable?: boolean }
    | { via: 'task'; taskId: string; channel: string }
  );

/**
 * A `manual_override`: a person's or a rule's change to a lead's or a mailbox's course, named by `op`.
 * - `opt_out` (domain/opt-out.ts): the entry point's note, then `via` (OptOutVia), `channel` when known, `permanent`.
 * - `stop` (POST /x/leads/{id}/stop): every lane of the identity, naming the lead asked about.
 * - `suppression_removed` (domain/suppression.ts): on the lead that caused the suppression.
 * - `merge`, `not_same_person` (modules/leads/leads.twins.ts): one entry on each lead of the pair.
 * - `mailbox_paused`, `mailbox_resumed` (channels/email): on the mailbox's account, no lead; a guard's pause says why
 *   (`reason` `bounces` or `complaints`, `detail` in words), a person's says `manual` and `by`.
 */
export type ManualOverrideDetail =
  | (OptOutNote & { op: 'opt_out'; via: string; channel?: string; permanent: true })
  | { op: 'stop'; scope: 'lead_automation'; requestedLeadId: string }
  | { op: 'suppression_removed'; channel: 'email'; reason: SuppressedAddressesTable['reason']; by: string }
  | {
      op: 'merge';
      role: 'survivor' | 'merged';
      survivorId: string;
      mergedLeadId: string;
      sharedChannels: IdentityChannel[];
      tookFields?: string[];
      stopped?: boolean;
      by: string;
    }
  | { op: 'not_same_person'; otherLeadId: string; sharedChannels: IdentityChannel[]; by: string }
  | MailboxOpDetail;

/** A mailbox's pause or resume (`manual_override` on its account, no lead). */
export type MailboxOpDetail =
  | { op: 'mailbox_paused'; channel: 'email'; mailboxId: string; address: string; reason: string; detail?: string; by?: string }
  | { op: 'mailbox_resumed'; channel: 'email'; mailboxId: string; address: string; pausedReason: string; by: string };

/**
 * What the entry point of an opt-out puts first in each of its entries: a reply decision's `{replyId, decision, by}`,
 * a reply asking to stop `{replyId}`, the console's `{by}`, a merge's `{by, survivorId, mergedLeadId}`, a spam
 * complaint's `{feedbackType}`.
 */
export interface OptOutNote {
  replyId?: string;
  decision?: string;
  by?: string;
  survivorId?: string;
  mergedLeadId?: string;
  feedbackType?: string;
}

/** A public-data read's debit (`resolve`, `enrich`; units: the energy it cost), written by the energy charge. */
export interface PublicDataReadDetail {
  provider: 'publicdata';
  read: string;
}

/**
 * What every meeting entry (`meeting_booked`, `meeting_synced`, `meeting_no_show`; modules/meetings, docs/meetings.md)
 * of a booking tool, our iCalendar invitation or a person says: where it came from (`source`: `calendly`, `cal`,
 * `ical` or `person`), the booking (`bookingUid`, absent for a person's record of a meeting made elsewhere) and who
 * (`by`: the tool, or the person's label).
 */
export interface MeetingDetail {
  source: 'calendly' | 'cal' | 'ical' | 'person';
  bookingUid?: string;
  by: string;
}

/** A booking: when it starts, how it was tied to the lead, the person's lanes it stopped and replies it closed. */
export type MeetingBookedDetail = MeetingDetail & {
  startsAt: string | null;
  matchedBy?: 'ref' | 'email' | 'uid' | 'lead';
  stoppedLeadIds: string[];
  closedReplyIds: string[];
};

/**
 * A later change of a meeting (`meeting_synced`; `meeting_no_show` for a no-show): `change` says which (a reschedule,
 * a cancellation, a no-show or its withdrawal, the tool's "ended", a person's `outcome` with an optional `note`, the
 * invitee's `response` to our invitation), with the outcome or response it set.
 */
export type MeetingSyncDetail = MeetingDetail & {
  change: 'rescheduled' | 'cancelled' | 'no_show' | 'no_show_cleared' | 'ended' | 'outcome' | 'response';
  outcome?: string | null;
  response?: string;
  note?: string;
  startsAt?: string | null;
  previousBookingUid?: string;
};

/** Each action's `detail` shape. */
export interface LedgerDetails {
  invite: StepDetail;
  message: StepDetail;
  followup: StepDetail;
  like: StepDetail;
  comment: StepDetail;
  endorse: StepDetail;
  view_profile: StepDetail;
  email_sent: StepDetail | DeliveryReportDetail;
  x_dm: StepDetail;
  x_follow: StepDetail;
  x_like: StepDetail;
  error: StepDetail;
  accepted: ObservationDetail;
  x_follow_back: ObservationDetail;
  reply_detected: ReplyDetectedDetail;
  reply_sent: ReplyMessageDetail;
  meeting_invited: ReplyMessageDetail;
  reply_snoozed: ReplyDecisionDetail & { days: number | null; until: string };
  sequence_started: ReplyDecisionDetail & { sequenceId: string; previousSequenceId: string | null };
  meeting_booked: ReplyDecisionDetail | MeetingBookedDetail;
  meeting_synced: MeetingSyncDetail;
  meeting_no_show: MeetingSyncDetail;
  reply_dismissed: ReplyDecisionDetail;
  manual_override: ManualOverrideDetail;
  resolve: PublicDataReadDetail;
  enrich: PublicDataReadDetail;
}

export type LedgerAction = keyof LedgerDetails;

/** The `detail` of an entry of `action`. */
export type LedgerDetail<A extends LedgerAction> = LedgerDetails[A];

/**
 * One ledger entry. `at` is the row's `created_at` (when it happened, which may be earlier than now: an observed
 * reply's time); `leadId` is null for an entry about an account alone (a mailbox's pause); `accountId` is the
 * messaging account (`onb_` id) or null (X steps, which go through the Play's X account); `units` is what it cost
 * (energy or a send), 0 when omitted.
 */
export type LedgerEntry = {
  [A in LedgerAction]: {
    id: string;
    workspaceId: string;
    leadId: string | null;
    accountId: string | null;
    at: Date;
    action: A;
    outcome: ActivityOutcome;
    units?: number;
    detail: LedgerDetails[A];
  };
}[LedgerAction];

/**
 * A `manual_override` entry (outcome `ok`, no units) with a fresh id: about the lead `leadId` on its account, or,
 * with `leadId` null, about the account alone (a mailbox's pause).
 */
export function manualOverrideEntry(p: {
  workspaceId: string;
  at: Date;
  accountId: string | null;
  leadId: string | null;
  detail: ManualOverrideDetail;
}): LedgerEntry {
  return { id: newId(), action: 'manual_override', outcome: 'ok', ...p };
}

/** Rows a statement: a pass's batch stays well under PostgreSQL's 65,535 bind parameters (9 a row). */
const ROWS_PER_STATEMENT = 1000;

/**
 * Appends entries to the ledger in the caller's transaction, a thousand rows a statement, in the order given; nothing
 * for none. `detail` is stored as JSON.stringify of the entry's detail (the spec's string).
 */
export async function appendLedger(trx: Database, entries: readonly LedgerEntry[]): Promise<void> {
  const rows = entries.map((e) => ({
    id: e.id,
    workspace_id: e.workspaceId,
    created_at: e.at,
    action: e.action,
    outcome: e.outcome,
    units: e.units ?? 0,
    detail: JSON.stringify(e.detail),
    account_id: e.accountId,
    lead_id: e.leadId,
  }));
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT)
    await trx
      .insertInto('activity')
      .values(rows.slice(i, i + ROWS_PER_STATEMENT))
      .execute();
}

/**
 * The insert of `entry` as an SQL fragment, for a statement that decides in SQL whether the entry happens: one row
 * per row of `from` (a CTE of the same statement, e.g. `charged c`), its workspace id read from `workspaceIdColumn`
 * (e.g. `c.id`). The energy charge uses it so its ledger row exists exactly when the debit did. `from` and
 * `workspaceIdColumn` are the caller's own constant SQL text, never input.
 */
export function appendLedgerSql<A extends LedgerAction>(
  entry: Omit<Extract<LedgerEntry, { action: A }>, 'workspaceId'>,
  from: string,
  workspaceIdColumn: string,
): RawBuilder<unknown> {
  return sql`INSERT INTO activity (id, workspace_id, created_at, action, outcome, units, detail, account_id, lead_id)
      SELECT ${entry.id}::uuid, ${sql.raw(workspaceIdColumn)}, ${entry.at.toISOString()}::timestamptz, ${entry.action}::text, ${entry.outcome}::text,
        ${entry.units ?? 0}::int, ${JSON.stringify(entry.detail)}::text, ${entry.accountId}::text, ${entry.leadId}::uuid
      FROM ${sql.raw(from)}`;
}

/**
 * The entries a world file lists (SPEC.md world file `activity`; modules/world), inserted as the file wrote them:
 * their `detail` is the file's own string, kept byte for byte. A thousand rows a statement.
 */
export async function appendSeededLedger(trx: Database, rows: readonly Insertable<DB['activity']>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT)
    await trx
      .insertInto('activity')
      .values(rows.slice(i, i + ROWS_PER_STATEMENT))
      .execute();
}

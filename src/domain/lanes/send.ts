import { sql } from 'kysely';
import type { Selectable } from 'kysely';
import type { Database } from '../../db/database.js';
import type { LeadsTable } from '../../db/schema.js';
import { UNCERTAIN_DELIVERY } from '../tasks.js';

// The lane transitions of the engine's step pass: the claim marks a step in flight, moves what must wait, holds a lane
// for an acceptance or a person's task, and the record applies each step's outcome (src/engine/claim.ts, record.ts).

type Lead = Selectable<LeadsTable>;

/** A lead row's columns as they travel in a jsonb batch: timestamps as ISO strings. */
type OnTheWire<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };

/** New values for a lead after one step attempt (engine/outcomes.ts); milestones only fill when still empty. */
export type StepRecord = OnTheWire<
  Pick<
    Lead,
    | 'id'
    | 'stage'
    | 'current_step'
    | 'next_action_at'
    | 'automation_stopped'
    | 'invited_at'
    | 'messaged_at'
    | 'followed_at'
    | 'last_error'
    | 'step_attempts'
    | 'step_waits'
    | 'observe_next_at'
    | 'observe_until'
    | 'last_message_channel'
    | 'last_activity_at'
    | 'waiting_for'
    | 'branch_at'
    | 'branch_allowed'
  >
> & {
  /** The in-flight mark this record belongs to: its key and claim time. A worker whose claim was superseded
   * (lease expired, lead re-claimed under the same key) matches nothing, so its late result changes nothing. */
  expect_key: string | null;
  expect_at: string | null;
};

/** What a transition answers about a lead it changed: the fields of its webhook event (domain/lead-views.ts). */
export type LaneLead = Pick<Lead, 'id' | 'person' | 'company' | 'title' | 'email' | 'linkedin_url' | 'account_id' | 'sequence_id' | 'stage'>;

/**
 * What `advance` answers about a lead it moved: its event's fields, and where it now stands with the facts a branch
 * is decided from (domain/branches.ts BranchFacts), as of this update: a lead that arrived at a branching step is
 * decided in the same transaction (engine/record.ts). `running_revision` is its sequence's revision when the sequence
 * runs (active, that revision approved), else null.
 */
export type AdvancedLead = LaneLead &
  Pick<
    Lead,
    | 'current_step'
    | 'automation_stopped'
    | 'waiting_for'
    | 'branch_at'
    | 'branch_allowed'
    | 'connected_at'
    | 'followed_back_at'
    | 'meeting_booked_at'
    | 'last_error'
    | 'custom'
    | 'username'
    | 'x_user_id'
    | 'time_zone'
  > & { running_revision: number | null };

/**
 * Marks claimed steps in flight: their idempotency key, step and claim time, the A/B arm drawn (a lane keeps the arm
 * it already has), and `release`, the pacing reservation the claim holds for the send (engine/pacing.ts
 * PacingRelease, stored as jsonb for crash recovery). One statement for the batch.
 */
export async function markInflight(
  trx: Database,
  rows: { id: string; key: string; step: number; variant_key: string | null; release: unknown }[],
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await sql`UPDATE leads l SET inflight_key = v.key, inflight_step = v.step, inflight_at = ${now.toISOString()}::timestamptz,
      inflight_release = v.release, variant_key = COALESCE(v.variant_key, l.variant_key), updated_at = ${now.toISOString()}::timestamptz
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(id uuid, key text, step int, variant_key text, release jsonb)
    WHERE l.id = v.id`.execute(trx);
}

/** Due steps that wait (pacing, sending hours, energy) move to the time they can run (`at`: ISO 8601). */
export async function reschedule(trx: Database, rows: { id: string; at: string }[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`UPDATE leads l SET next_action_at = v.at
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(id uuid, at timestamptz)
    WHERE l.id = v.id`.execute(trx);
}

/** A message step after a pending invite waits for the acceptance instead of a time (markAccepted makes it due). */
export async function waitForAccept(trx: Database, ids: string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await sql`UPDATE leads SET waiting_for = 'accept', next_action_at = NULL, updated_at = ${now.toISOString()}::timestamptz
    WHERE id IN (${sql.join(ids.map((id) => sql`${id}::uuid`))})`.execute(trx);
}

/** Leads whose step became a task: nothing is due until the task is done or skipped (docs/tasks.md). */
export async function holdForTask(trx: Database, leadIds: string[], now: Date): Promise<void> {
  if (leadIds.length === 0) return;
  await sql`UPDATE leads SET waiting_for = 'task', next_action_at = NULL, updated_at = ${now.toISOString()}::timestamptz
    WHERE id IN (${sql.join(leadIds.map((id) => sql`${id}::uuid`))})`.execute(trx);
}

/**
 * Applies step outcomes (the lane advances, retries, waits, fails or ends), but only to leads still holding the
 * in-flight key the caller claimed (a lead reclaimed by another worker after its lease is that worker's to record).
 * What happened meanwhile wins: a stop keeps automation stopped, a detected reply keeps the lead frozen in `replied`.
 * The in-flight mark is cleared, and `waiting_for` is the record's (null, or `branch` for a branching step left).
 * Answers the leads it changed.
 */
export async function advance(trx: Database, records: StepRecord[], now: Date): Promise<AdvancedLead[]> {
  if (records.length === 0) return [];
  const { rows } = await sql<AdvancedLead>`
    UPDATE leads l SET
      stage = CASE WHEN l.replied_at IS NOT NULL THEN l.stage ELSE v.stage END,
      current_step = v.current_step,
      -- A reply or stop recorded while the send was in flight set automation_stopped, which wins. A replied lead whose
      -- follow-up sequence was started (reply decision) runs again: its earlier reply must not stop the new lane.
      next_action_at = CASE WHEN l.automation_stopped THEN NULL ELSE v.next_action_at END,
      automation_stopped = l.automation_stopped OR v.automation_stopped,
      invited_at = COALESCE(l.invited_at, v.invited_at),
      messaged_at = COALESCE(l.messaged_at, v.messaged_at),
      followed_at = COALESCE(l.followed_at, v.followed_at),
      -- An uncertain send's error sticks while a person has not answered its task (docs/tasks.md): later steps' errors
      -- (or none) do not hide it. The tasks service clears it once the last such task is answered.
      last_error = CASE
        WHEN l.last_error = ${UNCERTAIN_DELIVERY}
          AND EXISTS (SELECT 1 FROM tasks t WHERE t.lead_id = l.id AND t.status = 'open' AND t.source = 'uncertain') THEN l.last_error
        ELSE COALESCE(v.last_error, l.last_error) END,
      step_attempts = v.step_attempts,
      step_waits = v.step_waits,
      -- A branching step left: the lead waits at it for its edges (domain/branches.ts); otherwise no wait remains. A lane
      -- stopped while the send was in flight (a Stop, an answer) is not put at a branch: nothing may release it later.
      waiting_for = CASE WHEN l.automation_stopped THEN NULL ELSE v.waiting_for END,
      branch_at = CASE WHEN l.automation_stopped THEN NULL ELSE v.branch_at END,
      branch_allowed = CASE WHEN l.automation_stopped THEN NULL ELSE v.branch_allowed END,
      observe_next_at = CASE WHEN l.automation_stopped AND l.replied_at IS NOT NULL THEN NULL ELSE COALESCE(l.observe_next_at, v.observe_next_at) END,
      observe_until = GREATEST(l.observe_until, v.observe_until),
      last_message_channel = COALESCE(v.last_message_channel, l.last_message_channel),
      last_activity_at = COALESCE(v.last_activity_at, l.last_activity_at),
      inflight_key = NULL, inflight_step = NULL, inflight_at = NULL, inflight_release = NULL,
      updated_at = ${now.toISOString()}::timestamptz
    FROM jsonb_to_recordset(${JSON.stringify(records)}::jsonb) AS v(
      id uuid, expect_key text, expect_at timestamptz, stage text, current_step int, next_action_at timestamptz, automation_stopped boolean,
      invited_at timestamptz, messaged_at timestamptz, followed_at timestamptz, last_error text, step_attempts int, step_waits int,
      observe_next_at timestamptz, observe_until timestamptz, last_message_channel text, last_activity_at timestamptz,
      waiting_for text, branch_at timestamptz, branch_allowed boolean)
    WHERE l.id = v.id AND l.inflight_key IS NOT DISTINCT FROM v.expect_key AND l.inflight_at IS NOT DISTINCT FROM v.expect_at
    RETURNING l.id, l.person, l.company, l.title, l.email, l.linkedin_url, l.account_id, l.sequence_id, l.stage,
      l.current_step, l.automation_stopped, l.waiting_for, l.branch_at, l.branch_allowed, l.connected_at, l.followed_back_at,
      l.meeting_booked_at, l.last_error, l.custom, l.username, l.x_user_id, l.time_zone,
      (SELECT s.revision FROM sequences s
        WHERE s.id = l.sequence_id AND s.status = 'active' AND s.approved_revision = s.revision) AS running_revision`.execute(trx);
  return rows;
}

import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { LeadRecord, RecordedLead } from './rows.js';
import { UNCERTAIN_DELIVERY } from '../../domain/tasks.js';

/**
 * Applies step outcomes, but only to leads still holding the in-flight key the caller claimed (a lead
 * reclaimed by another worker after its lease is that worker's to record). What happened meanwhile wins:
 * a stop keeps automation stopped, a detected reply keeps the lead frozen in `replied`.
 */
export async function recordLeads(trx: Database, records: LeadRecord[], now: Date): Promise<RecordedLead[]> {
  if (records.length === 0) return [];
  const { rows } = await sql<RecordedLead>`
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
      waiting_for = NULL,
      observe_next_at = CASE WHEN l.automation_stopped AND l.replied_at IS NOT NULL THEN NULL ELSE COALESCE(l.observe_next_at, v.observe_next_at) END,
      observe_until = GREATEST(l.observe_until, v.observe_until),
      last_message_channel = COALESCE(v.last_message_channel, l.last_message_channel),
      last_activity_at = COALESCE(v.last_activity_at, l.last_activity_at),
      inflight_key = NULL, inflight_step = NULL, inflight_at = NULL, inflight_release = NULL,
      updated_at = ${now.toISOString()}::timestamptz
    FROM jsonb_to_recordset(${JSON.stringify(records)}::jsonb) AS v(
      id uuid, expect_key text, expect_at timestamptz, stage text, current_step int, next_action_at timestamptz, automation_stopped boolean,
      invited_at timestamptz, messaged_at timestamptz, followed_at timestamptz, last_error text, step_attempts int, step_waits int,
      observe_next_at timestamptz, observe_until timestamptz, last_message_channel text, last_activity_at timestamptz)
    WHERE l.id = v.id AND l.inflight_key IS NOT DISTINCT FROM v.expect_key AND l.inflight_at IS NOT DISTINCT FROM v.expect_at
    RETURNING l.id, l.person, l.company, l.title, l.email, l.linkedin_url, l.account_id, l.sequence_id, l.stage`.execute(trx);
  return rows;
}

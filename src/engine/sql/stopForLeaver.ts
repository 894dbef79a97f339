import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { FROZEN_BY_ANSWER } from './frozenByAnswer.js';

/**
 * A leaver notice ("no longer with the company"): the lane stops for good, never snoozed and resumed. The lead fails
 * with `last_error = 'left_company'` (its sequence cannot reach the person there any more). False when the lead was
 * already past it (frozen by an answer, or a later reply on record).
 */
export async function stopForLeaver(trx: Database, p: { leadId: string; at: Date; now: Date }): Promise<boolean> {
  const at = p.at.toISOString();
  const { rows } = await sql<{ id: string }>`
    UPDATE leads l SET stage = 'failed', last_error = 'left_company', automation_stopped = true, next_action_at = NULL,
      waiting_for = NULL, observe_next_at = NULL, snoozed_until = NULL,
      last_activity_at = GREATEST(COALESCE(l.last_activity_at, ${at}::timestamptz), ${at}::timestamptz),
      updated_at = ${p.now.toISOString()}::timestamptz
    WHERE l.id = ${p.leadId}::uuid AND NOT ${FROZEN_BY_ANSWER}
      AND NOT EXISTS (SELECT 1 FROM replies r WHERE r.workspace_id = l.workspace_id AND r.lead_id = l.id AND r.replied_at >= ${at}::timestamptz)
    RETURNING l.id`.execute(trx);
  return rows.length > 0;
}

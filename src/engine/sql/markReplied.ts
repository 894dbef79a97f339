import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { FROZEN_BY_ANSWER } from './frozenByAnswer.js';
import type { RecordedLead } from './rows.js';

/**
 * Freezes the lead: its sequence stops for good, `replied` is its stage. (A reply that asks to stop is an opt-out too,
 * written by domain/opt-out.ts, never here.)
 */
export async function markReplied(
  trx: Database,
  p: { leadId: string; at: Date; now: Date; sentiment: string },
): Promise<(RecordedLead & { workspace_booking_link: string | null }) | undefined> {
  const at = p.at.toISOString();
  const { rows } = await sql<RecordedLead & { workspace_booking_link: string | null }>`
    UPDATE leads l SET replied_at = COALESCE(l.replied_at, ${at}::timestamptz), stage = 'replied', automation_stopped = true, next_action_at = NULL,
      waiting_for = NULL, observe_next_at = NULL, reply_sentiment = ${p.sentiment},
      last_activity_at = ${at}::timestamptz, updated_at = ${p.now.toISOString()}::timestamptz
    FROM workspaces w
    WHERE l.id = ${p.leadId}::uuid AND w.id = l.workspace_id AND NOT ${FROZEN_BY_ANSWER}
      AND NOT EXISTS (SELECT 1 FROM replies r WHERE r.workspace_id = l.workspace_id AND r.lead_id = l.id AND r.replied_at >= ${at}::timestamptz)
    RETURNING l.id, l.person, l.company, l.title, l.email, l.linkedin_url, l.account_id, l.sequence_id, l.stage, w.booking_link AS workspace_booking_link`.execute(
    trx,
  );
  return rows[0];
}

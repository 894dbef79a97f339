import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { RecordedLead } from './rows.js';

/** The invite was accepted: a message step waiting for it is due at once. */
export async function markAccepted(trx: Database, leadId: string, at: Date, now: Date): Promise<RecordedLead | undefined> {
  const { rows } = await sql<RecordedLead>`
    UPDATE leads SET connected_at = ${at.toISOString()}::timestamptz,
      stage = CASE WHEN stage IN ('queued', 'resolving', 'invited') THEN 'accepted' ELSE stage END,
      next_action_at = CASE WHEN waiting_for = 'accept' AND NOT automation_stopped THEN ${now.toISOString()}::timestamptz ELSE next_action_at END,
      waiting_for = CASE WHEN waiting_for = 'accept' THEN NULL ELSE waiting_for END, last_activity_at = ${at.toISOString()}::timestamptz, updated_at = ${now.toISOString()}::timestamptz
    WHERE id = ${leadId}::uuid AND connected_at IS NULL
    RETURNING id, person, company, title, email, linkedin_url, account_id, sequence_id, stage`.execute(trx);
  return rows[0];
}

import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { RecordedLead } from './rows.js';

export async function markFollowedBack(trx: Database, leadId: string, at: Date, now: Date): Promise<RecordedLead | undefined> {
  const { rows } = await sql<RecordedLead>`
    UPDATE leads SET followed_back_at = ${at.toISOString()}::timestamptz,
      stage = CASE WHEN stage IN ('queued', 'resolving', 'invited') THEN 'accepted' ELSE stage END,
      last_activity_at = ${at.toISOString()}::timestamptz, updated_at = ${now.toISOString()}::timestamptz
    WHERE id = ${leadId}::uuid AND followed_back_at IS NULL
    RETURNING id, person, company, title, email, linkedin_url, account_id, sequence_id, stage`.execute(trx);
  return rows[0];
}

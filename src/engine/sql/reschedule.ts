import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/** Due steps that wait (pacing, sending hours, energy) move to the time they can run. */
export async function reschedule(trx: Database, rows: { id: string; at: string }[]) {
  if (rows.length === 0) return;
  await sql`UPDATE leads l SET next_action_at = v.at
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(id uuid, at timestamptz)
    WHERE l.id = v.id`.execute(trx);
}

import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/** A message step after a pending invite waits for the acceptance instead of a time (markAccepted makes it due). */
export async function setWaitingForAccept(trx: Database, ids: string[], now: Date) {
  if (ids.length === 0) return;
  await sql`UPDATE leads SET waiting_for = 'accept', next_action_at = NULL, updated_at = ${now.toISOString()}::timestamptz
    WHERE id IN (${sql.join(ids.map((id) => sql`${id}::uuid`))})`.execute(trx);
}

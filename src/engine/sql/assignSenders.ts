import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { ClaimedRow } from './rows.js';

/**
 * Keeps the sender the claim gave a lead without one (domain/claim-layout.ts): the workspace's only LinkedIn account as
 * the lead's `account_id`, its only platform account (X) as its `account_user_id`. Written only where still empty, so a sender a
 * person chose meanwhile stays. One statement for the batch.
 */
export async function assignSenders(trx: Database, rows: ClaimedRow[]): Promise<void> {
  const given = rows
    .filter((r) => (r.account_assigned && r.account_id) || (r.account_user_assigned && r.x_account_user_id))
    .map((r) => ({ id: r.id, account_id: r.account_assigned ? r.account_id : null, user_id: r.account_user_assigned ? r.x_account_user_id : null }));
  if (given.length === 0) return;
  await sql`UPDATE leads l SET account_id = COALESCE(l.account_id, g.account_id), account_user_id = COALESCE(l.account_user_id, g.user_id)
    FROM jsonb_to_recordset(${JSON.stringify(given)}::jsonb) AS g(id uuid, account_id text, user_id text)
    WHERE l.id = g.id`.execute(trx);
}

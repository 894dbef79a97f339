import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { AccountDayKey } from './lockAccountDays.js';

/** Takes reservations back off the counters (never below zero); rows in key order, the order the claim locks them. */
export async function releaseAccountDays(trx: Database, rows: (AccountDayKey & { invites: number; messages: number; actions: number })[]) {
  if (rows.length === 0) return;
  await sql`UPDATE engine_account_days d SET invites = GREATEST(0, d.invites - v.invites), messages = GREATEST(0, d.messages - v.messages),
      actions = GREATEST(0, d.actions - v.actions)
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(workspace_id uuid, account_id text, local_day date, invites int, messages int, actions int)
    WHERE d.workspace_id = v.workspace_id AND d.account_id = v.account_id AND d.local_day = v.local_day`.execute(trx);
}

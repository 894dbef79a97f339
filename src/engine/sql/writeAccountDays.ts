import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { AccountDayKey } from './lockAccountDays.js';

/** The counters after a claim's reservations (rows locked by lockAccountDays in the same transaction). */
export async function writeAccountDays(
  trx: Database,
  rows: (AccountDayKey & { invites: number; messages: number; actions: number; last_action_at: string | null })[],
) {
  if (rows.length === 0) return;
  await sql`UPDATE engine_account_days d SET invites = v.invites, messages = v.messages, actions = v.actions, last_action_at = v.last_action_at
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS v(workspace_id uuid, account_id text, local_day date, invites int, messages int, actions int, last_action_at timestamptz)
    WHERE d.workspace_id = v.workspace_id AND d.account_id = v.account_id AND d.local_day = v.local_day`.execute(trx);
}

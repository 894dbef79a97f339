import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

export interface AccountDayKey {
  workspace_id: string;
  account_id: string;
  local_day: string;
}

export interface AccountDayCounters {
  account_id: string;
  invites: number;
  messages: number;
  actions: number;
  last_action_at: Date | null;
}

/**
 * Creates the counter rows that do not exist yet and locks them all, in key order: the same order in every
 * worker, so concurrent claims queue per account instead of deadlocking.
 */
export async function lockAccountDays(trx: Database, keys: AccountDayKey[]): Promise<AccountDayCounters[]> {
  const json = JSON.stringify(keys);
  await sql`INSERT INTO engine_account_days (workspace_id, account_id, local_day)
    SELECT v.workspace_id, v.account_id, v.local_day FROM jsonb_to_recordset(${json}::jsonb) AS v(workspace_id uuid, account_id text, local_day date)
    ON CONFLICT DO NOTHING`.execute(trx);
  const { rows } = await sql<AccountDayCounters>`
    SELECT d.account_id, d.invites, d.messages, d.actions, d.last_action_at FROM engine_account_days d
    JOIN jsonb_to_recordset(${json}::jsonb) AS v(workspace_id uuid, account_id text, local_day date)
      ON d.workspace_id = v.workspace_id AND d.account_id = v.account_id AND d.local_day = v.local_day
    ORDER BY d.workspace_id, d.account_id, d.local_day
    FOR UPDATE OF d`.execute(trx);
  return rows;
}

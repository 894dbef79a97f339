import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/** Today's sent counts of these accounts (each on its own local day), keyed `account|day`; a day with none is absent. */
export async function readAccountDayCounters(db: Database, workspaceId: string, days: { accountId: string; day: string }[]) {
  if (days.length === 0) return new Map<string, { invites: number; messages: number }>();
  const { rows } = await sql<{ account_id: string; local_day: string; invites: number; messages: number }>`
    SELECT account_id, local_day::text AS local_day, invites, messages FROM engine_account_days
    WHERE workspace_id = ${workspaceId}::uuid
      AND (account_id, local_day) IN (${sql.join(days.map((d) => sql`(${d.accountId}, ${d.day}::date)`))})`.execute(db);
  return new Map(rows.map((r) => [`${r.account_id}|${r.local_day}`, { invites: Number(r.invites), messages: Number(r.messages) }]));
}

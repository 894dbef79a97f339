import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { newId } from '../../src/lib/ids.js';
import { databaseMigrated } from '../helpers/migrated-database.js';

// Migration 0042: the LinkedIn gateway's budgets (a week's invitations, a UTC day's messages) were rows of scope
// `account` with windows that scope does not have; they move to scope `linkedin_gateway`, counts kept. The engine's
// own account rows (local days) stay where they are.

describe('migration 0042_gateway_budget_scope', () => {
  it("moves the gateway's rows to their own scope with their counts, and leaves the engine's account rows", { timeout: 120_000 }, async () => {
    const { handle, drop } = await databaseMigrated('0042_gateway_budget_scope', 'before');
    const db = handle.db;
    try {
      const ws = newId();
      await sql`INSERT INTO workspaces (id, name) VALUES (${ws}, 'Old Co')`.execute(db);
      const rows: [string, string, string, number][] = [
        ['invites', 'rolling_week', '2026-11-24', 12],
        ['messages', 'utc_day', '2026-11-24', 30],
        ['invites', 'local_day', '2026-11-24', 4],
        ['actions', 'local_day', '2026-11-24', 34],
      ];
      for (const [budget, window, day, used] of rows)
        await sql`INSERT INTO send_budgets (workspace_id, scope, scope_id, budget, window_kind, window_start, used)
          VALUES (${ws}, 'account', 'acc_1', ${budget}, ${window}, ${day}, ${used})`.execute(db);
      await migrateToLatest(db);
      const { rows: after } = await sql<{ scope: string; budget: string; window_kind: string; used: number }>`
        SELECT scope, budget, window_kind, used FROM send_budgets WHERE workspace_id = ${ws} ORDER BY scope, budget, window_kind`.execute(db);
      expect(after.map((r) => `${r.scope}/${r.budget}/${r.window_kind}=${r.used}`)).toEqual([
        'account/actions/local_day=34',
        'account/invites/local_day=4',
        'linkedin_gateway/invites/rolling_week=12',
        'linkedin_gateway/messages/utc_day=30',
      ]);
    } finally {
      await handle.close();
      await drop();
    }
  });
});

import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { newId } from '../../src/lib/ids.js';
import { databaseMigrated } from '../helpers/migrated-database.js';

// Migration 0045: a LinkedIn gateway account belongs to one messaging account in the installation. Where two
// workspaces had linked the same gateway account, the oldest link stays, the others are unlinked and marked
// `gateway_account_in_use`, and a unique index keeps it so.

describe('migration 0045_gateway_account_unique', () => {
  it('keeps the oldest link of a gateway account, unlinks the others with the reason, and refuses a new duplicate', { timeout: 120_000 }, async () => {
    const { handle, drop } = await databaseMigrated('0045_gateway_account_unique', 'before');
    const db = handle.db;
    try {
      const [a, b] = [newId(), newId()];
      for (const [ws, name] of [
        [a, 'First Co'],
        [b, 'Second Co'],
      ])
        await sql`INSERT INTO workspaces (id, name) VALUES (${ws}, ${name})`.execute(db);
      const rows: [string, string, string, string | null][] = [
        ['onb_00000000-0000-4000-8000-000000000001', a, '2026-01-01T00:00:00Z', 'gw_shared'],
        ['onb_00000000-0000-4000-8000-000000000002', b, '2026-02-01T00:00:00Z', 'gw_shared'],
        ['onb_00000000-0000-4000-8000-000000000003', b, '2026-03-01T00:00:00Z', 'gw_own'],
        ['onb_00000000-0000-4000-8000-000000000004', a, '2026-04-01T00:00:00Z', null],
      ];
      for (const [id, ws, at, gid] of rows)
        await sql`INSERT INTO messaging_accounts (id, workspace_id, name, mode, created_at, linkedin_delivery, linkedin_gateway_account_id)
          VALUES (${id}, ${ws}, ${id}, 'linkedin', ${at}, 'gateway', ${gid})`.execute(db);
      await migrateToLatest(db);
      const { rows: after } = await sql<{ id: string; gid: string | null; error: string | null }>`
        SELECT id, linkedin_gateway_account_id AS gid, linkedin_gateway_error AS error FROM messaging_accounts ORDER BY id`.execute(db);
      expect(after.map((r) => [r.id.slice(-1), r.gid, r.error])).toEqual([
        ['1', 'gw_shared', null],
        ['2', null, 'gateway_account_in_use'],
        ['3', 'gw_own', null],
        ['4', null, null],
      ]);
      await expect(sql`UPDATE messaging_accounts SET linkedin_gateway_account_id = 'gw_own' WHERE id = ${rows[3][0]}`.execute(db)).rejects.toMatchObject({
        code: '23505',
      });
    } finally {
      await handle.close();
      await drop();
    }
  });
});

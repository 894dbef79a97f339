import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { newId } from '../../src/lib/ids.js';
import { databaseMigrated } from '../helpers/migrated-database.js';

// Migration 0041: X's pending connects (x_oauth_states) become the shared oauth_states in place, and the mailbox's
// (mailbox_oauth_states) move in beside them, so a person half-way through either connect during the upgrade can
// finish it. Their columns keep their values; `flow` says whose a row is; the mailbox's own fields go to `details`.

describe('migration 0041_oauth_states', () => {
  it('keeps every pending connect of both flows, with its verifier, redirect, session and times', { timeout: 120_000 }, async () => {
    const { handle, drop } = await databaseMigrated('0041_oauth_states', 'before');
    const db = handle.db;
    try {
      const ws = newId();
      const created = '2026-11-29T10:00:00.000Z';
      const expires = '2026-11-29T10:10:00.000Z';
      await sql`INSERT INTO workspaces (id, name) VALUES (${ws}, 'Old Co')`.execute(db);
      await sql`INSERT INTO x_oauth_states (state, workspace_id, code_verifier, redirect_uri, session_id_hash, created_at, expires_at)
        VALUES ('x-state', ${ws}, 'enc:x', 'https://outreach.example/x/callback', 'sess-1', ${created}, ${expires})`.execute(db);
      await sql`INSERT INTO mailbox_oauth_states (state, workspace_id, provider, account_id, code_verifier, redirect_uri, smtp_url, imap_url,
          session_id_hash, created_at, expires_at)
        VALUES ('mb-state', ${ws}, 'google', 'onb_1', 'enc:mb', 'https://outreach.example/mailboxes/callback', NULL, 'imaps://imap.example:993',
          NULL, ${created}, ${expires})`.execute(db);
      await migrateToLatest(db);
      const { rows } = await sql<Record<string, unknown>>`
        SELECT state, workspace_id, flow, code_verifier, redirect_uri, session_id_hash, details, created_at, expires_at
        FROM oauth_states ORDER BY state`.execute(db);
      const at = (r: Record<string, unknown>, k: string) => new Date(r[k] as string).toISOString();
      expect(rows.map((r) => ({ ...r, created_at: at(r, 'created_at'), expires_at: at(r, 'expires_at') }))).toEqual([
        {
          state: 'mb-state',
          workspace_id: ws,
          flow: 'mailbox',
          code_verifier: 'enc:mb',
          redirect_uri: 'https://outreach.example/mailboxes/callback',
          session_id_hash: null,
          details: { provider: 'google', accountId: 'onb_1', smtpUrl: null, imapUrl: 'imaps://imap.example:993' },
          created_at: created,
          expires_at: expires,
        },
        {
          state: 'x-state',
          workspace_id: ws,
          flow: 'x',
          code_verifier: 'enc:x',
          redirect_uri: 'https://outreach.example/x/callback',
          session_id_hash: 'sess-1',
          details: {},
          created_at: created,
          expires_at: expires,
        },
      ]);
      const { rows: tables } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name IN ('x_oauth_states', 'mailbox_oauth_states')`.execute(db);
      expect(tables[0].n).toBe(0);
      // A state is single use and the workspace's: the key and the cascade came along.
      await expect(
        sql`INSERT INTO oauth_states (state, workspace_id, flow, code_verifier, redirect_uri, details, expires_at)
        VALUES ('x-state', ${ws}, 'x', 'v', 'r', '{}', now())`.execute(db),
      ).rejects.toThrow();
      await sql`DELETE FROM workspaces WHERE id = ${ws}`.execute(db);
      const { rows: left } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM oauth_states`.execute(db);
      expect(left[0].n).toBe(0);
    } finally {
      await handle.close();
      await drop();
    }
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { startServer } from '../../src/server.js';
import { insertActivity } from '../helpers/factories.js';
import { createTestDatabase, dbEngine } from '../helpers/test-database.js';
import { quietServerEnv } from '../helpers/server-env.js';

// The server schedules the activity retention job itself (on start, then hourly): entries older than
// OUTREACH_ACTIVITY_RETENTION_DAYS go without anyone running a command; younger ones stay.
it('a starting server prunes ledger entries past OUTREACH_ACTIVITY_RETENTION_DAYS and keeps the rest', { timeout: 120_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-retention-'));
  const pg = dbEngine() === 'postgres' ? await createTestDatabase() : null;
  const env = quietServerEnv(dataDir, pg?.url, { OUTREACH_ACTIVITY_RETENTION_DAYS: 30 });
  const boot = () => startServer(loadConfig({}, env as never), { print: () => undefined });
  try {
    const first = await boot();
    const ws = await first.services.workspaces.createWorkspace({ name: 'retention' });
    const day = 86_400_000;
    const old = await insertActivity(first.handle.db, ws.id, { action: 'invite', createdAt: new Date(Date.now() - 40 * day) });
    const recent = await insertActivity(first.handle.db, ws.id, { action: 'invite', createdAt: new Date(Date.now() - 20 * day) });
    await first.stop();

    const second = await boot();
    try {
      const ids = async () => (await second.handle.db.selectFrom('activity').select('id').where('workspace_id', '=', ws.id).execute()).map((r) => r.id);
      await expect.poll(ids, { timeout: 30_000 }).toEqual([recent]);
      expect(await ids()).not.toContain(old);
    } finally {
      await second.stop();
    }
  } finally {
    await pg?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockWorkspaceEnergy } from '../../src/engine/sql/index.js';
import { newId } from '../../src/lib/ids.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { dbEngine } from '../helpers/test-database.js';

// The engine's energy lock must not wait for a transaction that merely inserted a row referencing the workspace
// (its foreign-key check holds KEY SHARE on the workspace row until commit). With FOR UPDATE it did: a recording
// transaction holding KEY SHARE while it waited on a pacing counter the claim held was a deadlock (seen once on
// PostgreSQL in world.demo.test.ts). Two connections are needed, so this runs on PostgreSQL only.
describe.runIf(dbEngine() === 'postgres')('the workspace energy lock and foreign-key checks', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t?.close());

  it('an uncommitted activity entry of the workspace does not block the engine’s energy lock', async () => {
    const { workspaceId } = await createWorkspaceWithKey(t, 'Energy lock');
    let releaseRecorder!: () => void;
    const recorderMayCommit = new Promise<void>((resolve) => (releaseRecorder = resolve));
    let recorderInserted!: () => void;
    const inserted = new Promise<void>((resolve) => (recorderInserted = resolve));
    // The "recorder": inserts a ledger entry (KEY SHARE on the workspace row) and stays open.
    const recorder = t.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('activity')
        .values({ id: newId(), workspace_id: workspaceId, action: 'email_sent', outcome: 'ok', created_at: new Date() })
        .execute();
      recorderInserted();
      await recorderMayCommit;
    });
    await inserted;
    try {
      const locked = await t.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL lock_timeout = '2s'`.execute(trx);
        return lockWorkspaceEnergy(trx, [workspaceId]);
      });
      expect(locked.map((w) => w.id)).toEqual([workspaceId]);
    } finally {
      releaseRecorder();
      await recorder;
    }
  });
});

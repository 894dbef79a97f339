import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSandboxProvider } from '../../src/providers/publicdata/index.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertPlay, insertXAccount } from '../helpers/seq-fixtures.js';
import { ENGINE_ENV, eventsOf } from './helpers.js';

const T0 = new Date('2026-11-02T09:00:00.000Z');
const world = {
  users: [
    { xUserId: '1001', username: 'alice', name: 'Alice' },
    { xUserId: '1002', username: 'bob', name: 'Bob' },
    { xUserId: '1003', username: 'carol', name: 'Carol' },
  ],
  follows: [
    { follower: '1001', followed: '2001' },
    { follower: '1002', followed: '2001' },
  ],
};
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { ...ENGINE_ENV, OUTREACH_DISCOVERY_INTERVAL: 3600 }, now: T0.toISOString(), publicData: createSandboxProvider(world) });
});
afterAll(async () => t?.close());

it('saves new followers of a followers Play as proposed candidates in a discovery batch and emits x.followed once each', async () => {
  const { workspaceId: ws } = await createWorkspaceWithKey(t, 'Discovery');
  await insertXAccount(t.db, ws, { userId: '2001', handle: 'acme_hq' });
  const playId = await insertPlay(t.db, ws, { accountUserId: '2001' });
  const s1 = await t.services.engine.runPass({ now: T0 });
  expect(s1.discovered).toBe(2);
  // Not due again within the interval, and already-known followers are not new on the next run.
  expect((await t.services.engine.runPass({ now: new Date(T0.getTime() + 60_000) })).discovered).toBe(0);
  world.follows.push({ follower: '1003', followed: '2001' });
  await t.services.publicData.refreshWorld();
  const s3 = await t.services.engine.runPass({ now: new Date(T0.getTime() + 2 * 3_600_000) });
  expect(s3.discovered).toBe(1);

  const candidates = await t.db.selectFrom('candidates').select(['x_user_id', 'status', 'username', 'batch_id']).where('play_id', '=', playId).orderBy('x_user_id').execute();
  expect(candidates.map((c) => [c.x_user_id, c.status, c.username])).toEqual([['1001', 'proposed', 'alice'], ['1002', 'proposed', 'bob'], ['1003', 'proposed', 'carol']]);
  const batches = await t.db.selectFrom('candidate_batches').select(['id', 'source']).where('play_id', '=', playId).execute();
  expect(batches.map((b) => b.source)).toEqual(['discovery', 'discovery']);
  const events = (await eventsOf(t.db, ws)).filter((e) => e.event === 'x.followed');
  expect(events.map((e) => e.data.follower.xUserId).sort()).toEqual(['1001', '1002', '1003']);
  expect(events[0].data).toMatchObject({ accountUserId: '2001', accountHandle: 'acme_hq', playId, source: 'discovery' });
  // Each snapshot read was charged as a public-data read.
  const charges = await t.db.selectFrom('activity').select(['action', 'units']).where('workspace_id', '=', ws).where('action', '=', 'enrich').execute();
  expect(charges).toHaveLength(2);
});

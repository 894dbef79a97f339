import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSandboxProvider } from '../../src/providers/publicdata/index.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertPlay, insertSequence, insertXAccount } from '../helpers/factories.js';
import { activityOf, ENGINE_ENV, eventsOf, step, steps } from './helpers.js';

const T0 = new Date('2026-11-02T09:00:00.000Z');
// Passes of the autopilot tests run days after the service clock (T0): what is stamped with the pass time is
// told apart from what the clock would have stamped. Each test has its own day, so no test's due leads are another's.
const day = (n: number) => new Date(T0.getTime() + n * 86_400_000 + 3_600_000);
const world = {
  users: [
    { xUserId: '1001', username: 'alice', name: 'Alice' },
    { xUserId: '1002', username: 'bob', name: 'Bob' },
    { xUserId: '1003', username: 'carol', name: 'Carol' },
    { xUserId: '4001', username: 'dora', name: 'Dora' },
    { xUserId: '4002', username: 'erin', name: 'Erin' },
    { xUserId: '4011', username: 'finn', name: 'Finn' },
    { xUserId: '4012', username: 'gus', name: 'Gus' },
    { xUserId: '4021', username: 'hana', name: 'Hana' },
    { xUserId: '4031', username: 'ivan', name: 'Ivan' },
    { xUserId: '4041', username: 'jane', name: 'Jane' },
    { xUserId: '4051', username: 'kai', name: 'Kai' },
  ],
  follows: [
    { follower: '1001', followed: '2001' },
    { follower: '1002', followed: '2001' },
    // Autopilot, active approved sequence.
    { follower: '4001', followed: '3001' },
    { follower: '4002', followed: '3001' },
    // Autopilot; 4011 already has a lead in the workspace.
    { follower: '4011', followed: '3002' },
    { follower: '4012', followed: '3002' },
    // Autopilot with an archived sequence; autopilot whose account is not connected.
    { follower: '4021', followed: '3003' },
    { follower: '4031', followed: '3004' },
    // Manual Play with a sequence.
    { follower: '4041', followed: '3005' },
    // Autopilot with a paused sequence.
    { follower: '4051', followed: '3006' },
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
  const playId = (await insertPlay(t.db, ws, { accountUserId: '2001' })).id;
  const s1 = await t.services.engine.runPass({ now: T0 });
  expect(s1.discovered).toBe(2);
  // Not due again within the interval, and already-known followers are not new on the next run.
  expect((await t.services.engine.runPass({ now: new Date(T0.getTime() + 60_000) })).discovered).toBe(0);
  world.follows.push({ follower: '1003', followed: '2001' });
  await t.services.publicData.refreshWorld();
  const s3 = await t.services.engine.runPass({ now: new Date(T0.getTime() + 2 * 3_600_000) });
  expect(s3.discovered).toBe(1);

  const candidates = await t.db
    .selectFrom('candidates')
    .select(['x_user_id', 'status', 'username', 'batch_id'])
    .where('play_id', '=', playId)
    .orderBy('x_user_id')
    .execute();
  expect(candidates.map((c) => [c.x_user_id, c.status, c.username])).toEqual([
    ['1001', 'proposed', 'alice'],
    ['1002', 'proposed', 'bob'],
    ['1003', 'proposed', 'carol'],
  ]);
  const batches = await t.db.selectFrom('candidate_batches').select(['id', 'source']).where('play_id', '=', playId).execute();
  expect(batches.map((b) => b.source)).toEqual(['discovery', 'discovery']);
  const events = (await eventsOf(t.db, ws)).filter((e) => e.event === 'x.followed');
  expect(events.map((e) => e.data.follower.xUserId).sort()).toEqual(['1001', '1002', '1003']);
  expect(events[0].data).toMatchObject({ accountUserId: '2001', accountHandle: 'acme_hq', playId, source: 'discovery' });
  // Each snapshot read was charged as a public-data read.
  const charges = await t.db.selectFrom('activity').select(['action', 'units']).where('workspace_id', '=', ws).where('action', '=', 'enrich').execute();
  expect(charges).toHaveLength(2);
});

const xDmSequence = { channels: ['x'], steps: steps(step('x_dm', { message: 'hi there' })) };

async function candidatesOf(playId: string) {
  return t.db
    .selectFrom('candidates')
    .select(['id', 'x_user_id', 'status', 'review_decision', 'reviewed_at', 'reviewed_by'])
    .where('play_id', '=', playId)
    .orderBy('x_user_id')
    .execute();
}

async function leadsOfWorkspace(ws: string) {
  return t.db
    .selectFrom('leads')
    .select(['id', 'x_user_id', 'username', 'person', 'sequence_id', 'play_id', 'candidate_id', 'account_user_id', 'stage', 'current_step', 'next_action_at'])
    .where('workspace_id', '=', ws)
    .orderBy('x_user_id')
    .execute();
}

async function followedEvents(ws: string) {
  return (await eventsOf(t.db, ws)).filter((e) => e.event === 'x.followed').sort((a, b) => a.data.follower.xUserId.localeCompare(b.data.follower.xUserId));
}

it('an autopilot Play enrolls what it discovers into its sequence, and the engine then contacts them', async () => {
  const now = day(3);
  const { workspaceId: ws } = await createWorkspaceWithKey(t, 'Autopilot');
  await insertXAccount(t.db, ws, { userId: '3001', handle: 'auto_hq' });
  const seq = await insertSequence(t.db, ws, xDmSequence);
  const playId = (await insertPlay(t.db, ws, { accountUserId: '3001', sequenceId: seq, autopilot: true })).id;

  expect((await t.services.engine.runPass({ now })).discovered).toBe(2);

  const candidates = await candidatesOf(playId);
  expect(candidates.map((c) => [c.x_user_id, c.status, c.review_decision, c.reviewed_by, c.reviewed_at?.toISOString()])).toEqual([
    ['4001', 'approved', 'good_fit', 'autopilot', now.toISOString()],
    ['4002', 'approved', 'good_fit', 'autopilot', now.toISOString()],
  ]);
  const leads = await leadsOfWorkspace(ws);
  expect(leads).toHaveLength(2);
  leads.forEach((l, i) => {
    expect(l).toMatchObject({ sequence_id: seq, play_id: playId, candidate_id: candidates[i].id, account_user_id: '3001', stage: 'queued', current_step: 0 });
    expect(l.next_action_at?.toISOString()).toBe(now.toISOString());
  });
  expect(leads.map((l) => [l.x_user_id, l.username, l.person])).toEqual([
    ['4001', 'dora', 'Dora'],
    ['4002', 'erin', 'Erin'],
  ]);

  const events = await followedEvents(ws);
  expect(events.map((e) => [e.data.follower.xUserId, e.data.enrolled, e.data.leadId, e.data.candidateId])).toEqual(
    leads.map((l) => [l.x_user_id, true, l.id, l.candidate_id]),
  );
  expect(events[0].data).toMatchObject({ accountUserId: '3001', accountHandle: 'auto_hq', playId, source: 'discovery' });

  // The snapshot read is charged at the pass time, not at the service clock's.
  expect(t.clock.now().getTime()).not.toBe(now.getTime());
  const charges = await t.db.selectFrom('activity').select(['created_at']).where('workspace_id', '=', ws).where('action', '=', 'enrich').execute();
  expect(charges.map((c) => c.created_at.toISOString())).toEqual([now.toISOString()]);

  // Discovery runs last in a pass; the next pass sends step 0 to both.
  await t.services.engine.runPass({ now: new Date(now.getTime() + 60_000) });
  for (const l of leads) {
    expect((await activityOf(t.db, l.id)).map((a) => [a.action, a.outcome])).toEqual([['x_dm', 'ok']]);
  }
  expect((await leadsOfWorkspace(ws)).map((l) => l.stage)).toEqual(['messaged', 'messaged']);
});

it('an autopilot Play marks a follower who already has a lead good fit and keeps that lead as it is', async () => {
  const now = day(4);
  const { workspaceId: ws } = await createWorkspaceWithKey(t, 'Autopilot existing');
  await insertXAccount(t.db, ws, { userId: '3002', handle: 'auto_two' });
  const seq = await insertSequence(t.db, ws, xDmSequence);
  const otherSeq = await insertSequence(t.db, ws, xDmSequence);
  const existing = await insertLead(t.db, ws, { x_user_id: '4011', username: 'finn', sequence_id: otherSeq, stage: 'replied', current_step: 1 });
  const playId = (await insertPlay(t.db, ws, { accountUserId: '3002', sequenceId: seq, autopilot: true })).id;

  expect((await t.services.engine.runPass({ now })).discovered).toBe(2);

  expect((await candidatesOf(playId)).map((c) => [c.x_user_id, c.status, c.reviewed_by])).toEqual([
    ['4011', 'approved', 'autopilot'],
    ['4012', 'approved', 'autopilot'],
  ]);
  const leads = await leadsOfWorkspace(ws);
  expect(leads.map((l) => [l.x_user_id, l.sequence_id, l.play_id, l.stage, l.current_step])).toEqual([
    ['4011', otherSeq, null, 'replied', 1],
    ['4012', seq, playId, 'queued', 0],
  ]);
  expect(leads[0].id).toBe(existing);
  const events = await followedEvents(ws);
  expect(events.map((e) => [e.data.follower.xUserId, e.data.enrolled, e.data.leadId])).toEqual([
    ['4011', true, existing],
    ['4012', true, leads[1].id],
  ]);
});

it('an autopilot Play whose sequence is archived, or whose account is not connected, only proposes', async () => {
  const now = day(5);
  const { workspaceId: ws } = await createWorkspaceWithKey(t, 'Autopilot gated');
  await insertXAccount(t.db, ws, { userId: '3003', handle: 'auto_three' });
  const archived = await insertSequence(t.db, ws, { ...xDmSequence, status: 'archived' });
  const active = await insertSequence(t.db, ws, xDmSequence);
  const archivedPlay = (await insertPlay(t.db, ws, { accountUserId: '3003', sequenceId: archived, autopilot: true })).id;
  // No x_accounts row for 3004: discovery still reads its followers, but there is no connected sender to enroll with.
  const unconnectedPlay = (await insertPlay(t.db, ws, { accountUserId: '3004', sequenceId: active, autopilot: true })).id;

  expect((await t.services.engine.runPass({ now })).discovered).toBe(2);

  for (const [playId, xUserId] of [
    [archivedPlay, '4021'],
    [unconnectedPlay, '4031'],
  ]) {
    expect((await candidatesOf(playId)).map((c) => [c.x_user_id, c.status, c.review_decision, c.reviewed_by])).toEqual([[xUserId, 'proposed', null, null]]);
  }
  expect(await leadsOfWorkspace(ws)).toEqual([]);
  const events = await followedEvents(ws);
  expect(events.map((e) => [e.data.follower.xUserId, e.data.enrolled, e.data.leadId])).toEqual([
    ['4021', false, null],
    ['4031', false, null],
  ]);
});

it('a manual Play with a sequence still only proposes', async () => {
  const now = day(6);
  const { workspaceId: ws } = await createWorkspaceWithKey(t, 'Manual');
  await insertXAccount(t.db, ws, { userId: '3005', handle: 'manual_hq' });
  const seq = await insertSequence(t.db, ws, xDmSequence);
  const playId = (await insertPlay(t.db, ws, { accountUserId: '3005', sequenceId: seq })).id;

  expect((await t.services.engine.runPass({ now })).discovered).toBe(1);

  expect((await candidatesOf(playId)).map((c) => [c.x_user_id, c.status, c.review_decision])).toEqual([['4041', 'proposed', null]]);
  expect(await leadsOfWorkspace(ws)).toEqual([]);
  const events = await followedEvents(ws);
  expect(events.map((e) => e.data)).toEqual([
    {
      accountUserId: '3005',
      accountHandle: 'manual_hq',
      follower: { xUserId: '4041', username: 'jane', name: 'Jane' },
      playId,
      candidateId: (await candidatesOf(playId))[0].id,
      source: 'discovery',
      checkedAt: expect.any(String),
      enrolled: false,
      leadId: null,
    },
  ]);
});

it('an autopilot Play with a paused sequence queues its leads, which wait for the sequence', async () => {
  const now = day(7);
  const { workspaceId: ws } = await createWorkspaceWithKey(t, 'Autopilot paused');
  await insertXAccount(t.db, ws, { userId: '3006', handle: 'auto_paused' });
  const seq = await insertSequence(t.db, ws, { ...xDmSequence, status: 'paused' });
  const playId = (await insertPlay(t.db, ws, { accountUserId: '3006', sequenceId: seq, autopilot: true })).id;

  await t.services.engine.runPass({ now });
  const [lead] = await leadsOfWorkspace(ws);
  expect(lead).toMatchObject({ x_user_id: '4051', sequence_id: seq, play_id: playId, stage: 'queued', current_step: 0 });
  await t.services.engine.runPass({ now: new Date(now.getTime() + 60_000) });
  expect(await activityOf(t.db, lead.id)).toEqual([]);

  await t.db.updateTable('sequences').set({ status: 'active' }).where('id', '=', seq).execute();
  await t.services.engine.runPass({ now: new Date(now.getTime() + 120_000) });
  expect((await activityOf(t.db, lead.id)).map((a) => [a.action, a.outcome])).toEqual([['x_dm', 'ok']]);
});

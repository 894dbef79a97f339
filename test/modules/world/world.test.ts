import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepRow } from '../../helpers/factories.js';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import { createTextCipher } from '../../../src/lib/crypto.js';
import {
  ADMIN,
  u,
  ACME,
  BETA,
  SEQ1,
  SEQ2,
  PLAY,
  C1,
  C2,
  C3,
  L1,
  L1_SANDBOX,
  L2,
  R1,
  R2,
  A1,
  A2,
  A3,
  ACC,
  KEY,
  KEY_B,
  smallWorld,
  rowCounts,
  seed,
  listWorkspaces,
} from '../../helpers/world-fixtures.js';

describe('POST /admin/v1/seed loads a valid world', () => {
  let t: TestApp;
  let body: any;
  const cipher = createTextCipher(randomBytes(32));
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN }, cipher });
    const res = await seed(t, smallWorld());
    expect(res.statusCode, res.body).toBe(200);
    body = res.json();
  });
  afterAll(async () => t?.close());

  it('answers the contract result: workspaces in file order with their keys, and counts of created objects', () => {
    expect(body).toEqual({
      workspaces: [
        { id: ACME, name: 'Acme', status: 'created', apiKeys: [KEY] },
        { id: BETA, name: 'Beta', status: 'created', apiKeys: [KEY_B] },
      ],
      counts: { sequences: 2, plays: 1, candidates: 3, leads: 2, replies: 2, activity: 3 },
    });
  });

  it('the keys authenticate, and the Team owner lists its client with the role from the file', async () => {
    const res = await listWorkspaces(t, KEY);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      workspaces: [
        { id: ACME, name: 'Acme', role: 'owner' },
        { id: BETA, name: 'Beta', role: 'admin' },
      ],
    });
    expect((await listWorkspaces(t, KEY_B)).json()).toEqual({ workspaces: [{ id: BETA, name: 'Beta', role: 'owner' }] });
    expect((await listWorkspaces(t, KEY, { 'x-workspace-client': BETA })).statusCode).toBe(200);
  });

  it('stores settings, billing and energy on the workspace, and keys only as hashes', async () => {
    const ws = await t.db.selectFrom('workspaces').selectAll().where('id', '=', ACME).executeTakeFirstOrThrow();
    expect(ws).toMatchObject({
      x_channel_enabled: false,
      booking_link: 'https://cal.example/acme/intro',
      follow_up_sequence_id: SEQ2,
      billing_plan: 'scale',
      billing_status: 'past_due',
      energy_balance: 5,
      energy_daily_refill: 50,
    });
    const beta = await t.db.selectFrom('workspaces').selectAll().where('id', '=', BETA).executeTakeFirstOrThrow();
    expect(beta).toMatchObject({ x_channel_enabled: true, booking_link: null, billing_plan: 'growth', billing_status: 'active', energy_balance: 1000 });
    const keys = await t.db.selectFrom('api_keys').select(['key_hash', 'prefix']).execute();
    expect(keys.every((k) => /^[0-9a-f]{64}$/.test(k.key_hash) && k.key_hash !== KEY)).toBe(true);
    const xa = await t.db.selectFrom('x_accounts').selectAll().execute();
    expect(xa).toEqual([expect.objectContaining({ workspace_id: ACME, user_id: '2001', handle: 'acme_hq' })]);
  });

  it('fills sequence defaults: approvedAt at seeding time, step index and null/[] fields, channels from the steps', async () => {
    const s = await t.db.selectFrom('sequences').selectAll().where('id', '=', SEQ1).executeTakeFirstOrThrow();
    expect(s.approved_at?.toISOString()).toBe(t.clock.now().toISOString());
    expect(s.channels).toEqual(['linkedin']);
    expect(s.steps).toEqual([
      { index: 0, kind: 'connect', delayDays: 0, subject: null, message: 'Hi {{firstName}}', actions: [], variants: null, tool: null },
      // stepRow spells out the defaults the seeding must fill: delayDays 0, null subject/message/tool, [] actions.
      stepRow({
        index: 1,
        kind: 'message',
        delayDays: 2,
        variants: [
          { key: 'A', weight: 50, messageTmpl: 'a' },
          { key: 'B', weight: 50, messageTmpl: 'b' },
        ],
      }),
    ]);
    const draft = await t.db.selectFrom('sequences').selectAll().where('id', '=', SEQ2).executeTakeFirstOrThrow();
    expect(draft).toMatchObject({ status: 'draft', revision: 1, approved_revision: null, approved_at: null, channels: [], steps: [] });
  });

  it("puts a Play's candidates in one seed batch, with review fields and the status implied by a review", async () => {
    const batches = await t.db.selectFrom('candidate_batches').selectAll().execute();
    expect(batches).toEqual([expect.objectContaining({ play_id: PLAY, workspace_id: ACME, source: 'seed', request_id: null })]);
    const rows = await t.db.selectFrom('candidates').selectAll().orderBy('id').execute();
    expect(rows.map((c) => [c.id, c.status, c.review_decision, c.reviewed_by, c.batch_id])).toEqual([
      [C1, 'approved', 'good_fit', 'dana', batches[0].id],
      [C2, 'proposed', null, null, batches[0].id],
      [C3, 'rejected', 'not_a_good_fit', null, batches[0].id],
    ]);
    expect(rows[0].reviewed_at?.toISOString()).toBe('2026-11-20T10:00:00.000Z');
    expect(rows[2].reviewed_at?.toISOString()).toBe(t.clock.now().toISOString());
    // Absent script fields stay absent: the sandbox reads null as "never".
    expect(rows[1]).toMatchObject({ username: 'bob_x' });
    expect(rows[1].sandbox).toEqual({ followsBackAfterHours: null, replyAfterHours: 3, replyText: 'hi' });
  });

  it('maps lead fields to columns, links a Play lead to its candidate, and treats sequenceDone as automationStopped', async () => {
    const l1 = await t.db.selectFrom('leads').selectAll().where('id', '=', L1).executeTakeFirstOrThrow();
    expect(l1).toMatchObject({
      workspace_id: ACME,
      person: 'Bob B.',
      linkedin_url: 'https://www.linkedin.com/in/bob',
      account_id: ACC,
      sequence_id: SEQ1,
      stage: 'replied',
      current_step: 1,
      automation_stopped: false,
      candidate_id: null,
    });
    expect(l1.sandbox).toEqual(L1_SANDBOX);
    expect(l1.created_at.toISOString()).toBe('2026-11-01T09:00:00.000Z');
    expect(l1.replied_at?.toISOString()).toBe('2026-11-05T10:00:00.000Z');
    expect(l1.last_activity_at?.toISOString()).toBe('2026-11-05T10:00:00.000Z');
    const l2 = await t.db.selectFrom('leads').selectAll().where('id', '=', L2).executeTakeFirstOrThrow();
    expect(l2).toMatchObject({
      x_user_id: '1001',
      username: 'alice',
      account_user_id: '2001',
      play_id: PLAY,
      candidate_id: C1,
      automation_stopped: true,
      stage: 'messaged',
    });
    expect(l2.created_at.toISOString()).toBe(t.clock.now().toISOString());
  });

  it('stores replies as pending with their text encrypted at rest, and activity with default outcome and units', async () => {
    const replies = await t.db.selectFrom('replies').selectAll().orderBy('id').execute();
    expect(replies[0].their_message).toMatch(/^v1:/);
    expect(replies.some((r) => JSON.stringify(r).includes('Tuesday?'))).toBe(false);
    const readable = replies.map((r) => ({ ...r, their_message: cipher.decrypt(r.their_message), draft: cipher.decrypt(r.draft) }));
    expect(readable.map((r) => [r.id, r.channel, r.classification, r.their_message, r.draft, r.state, r.replied_at.toISOString()])).toEqual([
      [R1, 'linkedin', 'meeting_intent', 'Tuesday?', 'Sure, here is my calendar', 'pending', '2026-11-05T10:00:00.000Z'],
      [R2, 'x', 'other', 'hi there', null, 'pending', '2026-11-12T10:00:00.000Z'],
    ]);
    const activity = await t.db.selectFrom('activity').selectAll().orderBy('id').execute();
    expect(activity.map((a) => [a.id, a.action, a.outcome, a.units, a.detail, a.account_id, a.lead_id])).toEqual([
      [A1, 'invite', 'ok', 1, '', ACC, L1],
      [A2, 'reply_detected', 'ok', 0, '', null, L1],
      [A3, 'x_dm', 'failed', 0, '', null, L2],
    ]);
  });

  it('loads the simulated public data with handles normalized', async () => {
    expect(await t.db.selectFrom('publicdata_users').selectAll().orderBy('x_user_id').execute()).toEqual([
      { x_user_id: '1001', username: 'alice', name: 'Alice A.' },
      { x_user_id: '2001', username: 'acme_hq', name: 'Acme' },
    ]);
    expect(await t.db.selectFrom('publicdata_follows').selectAll().execute()).toEqual([{ follower: '1001', followed: '2001' }]);
    expect(await t.db.selectFrom('publicdata_unavailable').selectAll().execute()).toEqual([{ handle: 'ghost' }]);
  });

  it('re-seeding the same file changes nothing: every workspace is existing, counts are 0, keys are reported again', async () => {
    const before = await rowCounts(t);
    const res = await seed(t, smallWorld());
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      workspaces: [
        { id: ACME, name: 'Acme', status: 'existing', apiKeys: [KEY] },
        { id: BETA, name: 'Beta', status: 'existing', apiKeys: [KEY_B] },
      ],
      counts: { sequences: 0, plays: 0, candidates: 0, leads: 0, replies: 0, activity: 0 },
    });
    expect(await rowCounts(t)).toEqual(before);
  });

  it('an existing workspace keeps its saved fields but gains the children that do not exist yet', async () => {
    const world = smallWorld();
    const acme = world.workspaces[0];
    acme.name = 'Acme renamed';
    acme.billing = { plan: 'starter' };
    acme.leads.push({ person: 'New Person', account: ACC, sequenceId: SEQ1 });
    // Without an id, a candidate of a saved Play is the saved candidate for the same person.
    acme.plays[0].candidates.push({ xUserId: '1001' }, { xUserId: '1004', username: 'dave' });
    acme.plays[0].candidates.splice(0, 1);
    acme.replies.push({ leadId: L1, theirMessage: 'one more thing' });
    const res = await seed(t, world);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().workspaces[0]).toEqual({ id: ACME, name: 'Acme', status: 'existing', apiKeys: [KEY] });
    expect(res.json().counts).toEqual({ sequences: 0, plays: 0, candidates: 1, leads: 1, replies: 1, activity: 0 });
    const ws = await t.db.selectFrom('workspaces').select(['name', 'billing_plan']).where('id', '=', ACME).executeTakeFirstOrThrow();
    expect(ws).toEqual({ name: 'Acme', billing_plan: 'scale' });
    expect(await t.db.selectFrom('candidate_batches').select('id').execute()).toHaveLength(2);
    // Without repliedAt, a reply takes its lead's repliedAt from the file.
    const reply = await t.db.selectFrom('replies').selectAll().where('id', 'not in', [R1, R2]).executeTakeFirstOrThrow();
    expect(cipher.decrypt(reply.their_message)).toBe('one more thing');
    expect(reply.replied_at.toISOString()).toBe('2026-11-05T10:00:00.000Z');
  });

  it('a key without a literal secret is generated, shown in the result, and works', async () => {
    const res = await seed(t, { workspaces: [{ id: BETA, name: 'Beta', apiKeys: [{}, { key: KEY_B }] }] });
    expect(res.statusCode, res.body).toBe(200);
    const [generated, literal] = res.json().workspaces[0].apiKeys;
    expect(generated).toMatch(/^ows_[A-Za-z0-9_-]{43}$/);
    expect(literal).toBe(KEY_B);
    expect((await listWorkspaces(t, generated)).json().workspaces[0].id).toBe(BETA);
  });

  it('a revoked or expired key from the file does not authenticate', async () => {
    const revoked = 'ows_test_revoked_key_000000000000000000000';
    const expired = 'ows_test_expired_key_000000000000000000000';
    const res = await seed(t, {
      workspaces: [
        {
          name: 'Gamma',
          apiKeys: [
            { key: revoked, revoked: true },
            { key: expired, expiresAt: '2026-01-01T00:00:00Z' },
          ],
        },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().workspaces[0]).toMatchObject({ name: 'Gamma', status: 'created', apiKeys: [revoked, expired] });
    expect((await listWorkspaces(t, revoked)).statusCode).toBe(401);
    expect((await listWorkspaces(t, expired)).statusCode).toBe(401);
  });

  it('409 when a literal key or an explicit id already belongs to another workspace, and nothing is written', async () => {
    const before = await rowCounts(t);
    const stolenKey = await seed(t, { workspaces: [{ name: 'Thief', apiKeys: [{ key: KEY }] }] });
    expect(stolenKey.statusCode).toBe(409);
    expect(stolenKey.json()).toMatchObject({ ok: false, error: 'world_conflict', path: '/workspaces/0/apiKeys/0/key' });
    expect(stolenKey.body).not.toContain(KEY);
    const stolenSeq = await seed(t, { workspaces: [{ id: BETA, name: 'Beta', sequences: [{ id: SEQ1 }] }] });
    expect(stolenSeq.statusCode).toBe(409);
    expect(stolenSeq.json()).toMatchObject({ error: 'world_conflict', path: '/workspaces/0/sequences/0/id' });
    const otherPlay = await seed(t, { workspaces: [{ id: ACME, name: 'Acme', plays: [{ id: u(21), candidates: [{ id: C1, xUserId: '1001' }] }] }] });
    expect(otherPlay.statusCode).toBe(409);
    expect(otherPlay.json().path).toBe('/workspaces/0/plays/0/candidates/0/id');
    const sameIdentity = await seed(t, { workspaces: [{ id: ACME, name: 'Acme', plays: [{ id: PLAY, candidates: [{ id: u(39), xUserId: '1002' }] }] }] });
    expect(sameIdentity.statusCode).toBe(409);
    expect(sameIdentity.json()).toMatchObject({ path: '/workspaces/0/plays/0/candidates/0/xUserId', message: expect.stringContaining(C2) });
    expect(await rowCounts(t)).toEqual(before);
  });
});

import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/helpers/build-test-app.js';
import { AppError } from '../../app/errors.js';
import { createTextCipher } from '../../lib/crypto.js';
import { DEMO_WORLD_PATH } from '../../server.js';

const ADMIN = 'test-admin-token-0123456789';
const admin = { authorization: `Bearer ${ADMIN}` };
const u = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const ACME = u(1);
const BETA = u(2);
const SEQ1 = u(10);
const SEQ2 = u(11);
const PLAY = u(20);
const C1 = u(30);
const C2 = u(31);
const C3 = u(32);
const L1 = u(40);
const L2 = u(41);
const R1 = u(50);
const R2 = u(51);
const A1 = u(60);
const A2 = u(61);
const A3 = u(62);
const ACC = `onb_${u(70)}`;
const ACC_B = `onb_${u(71)}`;
const KEY = 'ows_test_acme_literal_key_0123456789abcdef';
const KEY_B = 'ows_test_beta_literal_key_0123456789abcdef';

/** A small world that names every kind of object, all with explicit ids and literal keys. */
function smallWorld(): any {
  return {
    publicData: {
      users: [
        { xUserId: '1001', username: 'alice', name: 'Alice A.' },
        { xUserId: '2001', username: 'acme_hq', name: 'Acme' },
      ],
      follows: [{ follower: '1001', followed: '2001' }],
      unavailable: ['@Ghost'],
    },
    workspaces: [
      {
        id: ACME,
        name: 'Acme',
        apiKeys: [{ key: KEY }],
        clients: [{ workspaceId: BETA, role: 'admin' }],
        settings: { xChannelEnabled: false, bookingLink: 'https://cal.example/acme/intro', followUpSequenceId: SEQ2 },
        billing: { plan: 'scale', status: 'past_due' },
        energy: { balance: 5, dailyRefill: 50 },
        xAccounts: [{ userId: '2001', handle: '@acme_hq' }],
        messagingAccounts: [{ id: ACC, name: 'Dana (LinkedIn)', timeZone: 'Europe/Paris', accountScore: 80, relationsCount: 1200 }],
        sequences: [
          {
            id: SEQ1,
            name: 'Founders',
            status: 'active',
            revision: 3,
            approvedRevision: 3,
            steps: [
              { kind: 'connect', delayDays: 0, message: 'Hi {{firstName}}' },
              { kind: 'message', delayDays: 2, variants: [{ key: 'A', weight: 50, messageTmpl: 'a' }, { key: 'B', weight: 50, messageTmpl: 'b' }] },
            ],
          },
          { id: SEQ2, name: 'Nurture', status: 'draft' },
        ],
        plays: [
          {
            id: PLAY,
            name: 'Followers of acme_hq',
            status: 'active',
            sequenceId: SEQ1,
            accountUserId: '2001',
            candidates: [
              { id: C1, xUserId: '1001', username: 'alice', name: 'Alice', status: 'approved', review: { decision: 'good_fit', reviewedAt: '2026-11-20T10:00:00Z', by: 'dana' } },
              { id: C2, xUserId: '1002', username: '@bob_x', sandbox: { followsBackAfterHours: null, replyAfterHours: 3, replyText: 'hi' } },
              { id: C3, xUserId: '1003', review: { decision: 'not_a_good_fit' } },
            ],
          },
        ],
        leads: [
          {
            id: L1,
            person: 'Bob B.',
            company: 'Initech',
            title: 'CTO',
            email: 'bob@initech.example',
            linkedinUrl: 'https://www.linkedin.com/in/bob',
            account: ACC,
            sequenceId: SEQ1,
            stage: 'replied',
            currentStep: 1,
            createdAt: '2026-11-01T09:00:00Z',
            invitedAt: '2026-11-01T10:00:00Z',
            connectedAt: '2026-11-02T10:00:00Z',
            messagedAt: '2026-11-04T10:00:00Z',
            repliedAt: '2026-11-05T10:00:00Z',
            sandbox: {
              acceptsInviteAfterHours: 3, replyAfterHours: 20, replyText: 'Sounds good', laterReplies: [{ afterHours: 90, text: 'Following up myself' }],
              failWith: { error: 'x_dm_forbidden', kinds: ['x_dm'] }, rateLimited: 1, retryAfterSeconds: 60,
            },
          },
          {
            id: L2,
            xUserId: '1001',
            username: 'alice',
            accountUserId: '2001',
            playId: PLAY,
            sequenceId: SEQ1,
            stage: 'messaged',
            sequenceDone: true,
            followedAt: '2026-11-10T10:00:00Z',
            messagedAt: '2026-11-11T10:00:00Z',
          },
        ],
        replies: [
          { id: R1, leadId: L1, classification: 'meeting_intent', theirMessage: 'Tuesday?', draft: 'Sure, here is my calendar' },
          { id: R2, leadId: L2, channel: 'x', theirMessage: 'hi there', repliedAt: '2026-11-12T10:00:00Z' },
        ],
        activity: [
          { id: A1, action: 'invite', account: ACC, leadId: L1, createdAt: '2026-11-01T10:00:00Z' },
          { id: A2, action: 'reply_detected', leadId: L1, createdAt: '2026-11-05T10:00:00Z' },
          { id: A3, action: 'x_dm', outcome: 'failed', leadId: L2 },
        ],
      },
      { id: BETA, name: 'Beta', apiKeys: [{ key: KEY_B }], messagingAccounts: [{ id: ACC_B, name: 'Beta (LinkedIn)' }] },
    ],
  };
}

const TABLES = [
  'workspaces', 'team_links', 'api_keys', 'x_accounts', 'messaging_accounts', 'sequences', 'plays', 'candidate_batches', 'candidates',
  'leads', 'replies', 'activity', 'publicdata_users', 'publicdata_follows', 'publicdata_unavailable',
] as const;

async function rowCounts(t: TestApp): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of TABLES) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(t.db);
    out[table] = rows[0].n;
  }
  return out;
}

const seed = (t: TestApp, body: unknown, headers: Record<string, string> = admin) =>
  t.app.inject({ method: 'POST', url: '/admin/v1/seed', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

const listWorkspaces = (t: TestApp, key: string, extra: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: '/api/v1/workspaces', headers: { authorization: `Bearer ${key}`, ...extra } });

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
    expect(res.json()).toEqual({ workspaces: [{ id: ACME, name: 'Acme', role: 'owner' }, { id: BETA, name: 'Beta', role: 'admin' }] });
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
      {
        index: 1,
        kind: 'message',
        delayDays: 2,
        subject: null,
        message: null,
        actions: [],
        variants: [{ key: 'A', weight: 50, messageTmpl: 'a' }, { key: 'B', weight: 50, messageTmpl: 'b' }],
        tool: null,
      },
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
    expect(l1.sandbox).toEqual({
      acceptsInviteAfterHours: 3,
      replyAfterHours: 20,
      replyText: 'Sounds good',
      laterReplies: [{ afterHours: 90, text: 'Following up myself' }],
      failWith: { error: 'x_dm_forbidden', kinds: ['x_dm'] },
      rateLimited: 1,
      retryAfterSeconds: 60,
    });
    expect(l1.created_at.toISOString()).toBe('2026-11-01T09:00:00.000Z');
    expect(l1.replied_at?.toISOString()).toBe('2026-11-05T10:00:00.000Z');
    expect(l1.last_activity_at?.toISOString()).toBe('2026-11-05T10:00:00.000Z');
    const l2 = await t.db.selectFrom('leads').selectAll().where('id', '=', L2).executeTakeFirstOrThrow();
    expect(l2).toMatchObject({ x_user_id: '1001', username: 'alice', account_user_id: '2001', play_id: PLAY, candidate_id: C1, automation_stopped: true, stage: 'messaged' });
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
    const res = await seed(t, { workspaces: [{ name: 'Gamma', apiKeys: [{ key: revoked, revoked: true }, { key: expired, expiresAt: '2026-01-01T00:00:00Z' }] }] });
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

describe('invalid worlds answer 400 naming the JSON path of the first problem, and change nothing', () => {
  let t: TestApp;
  let before: Record<string, number>;
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
    before = await rowCounts(t);
  });
  afterAll(async () => t?.close());

  const cases: [string, (w: any) => unknown, string, RegExp][] = [
    ['a user id that does not match the pattern, deep in a Play', (w) => (w.workspaces[0].plays[0].candidates[1].xUserId = '0123'), '/workspaces/0/plays/0/candidates/1/xUserId', /must match pattern/],
    ['a user id given as a JSON number', (w) => (w.workspaces[0].xAccounts[0].userId = 2001), '/workspaces/0/xAccounts/0/userId', /must be string/],
    ['a nullable user id that is not a user id', (w) => (w.workspaces[0].leads[1].accountUserId = 'abc'), '/workspaces/0/leads/1/accountUserId', /must match pattern/],
    ['an unknown field (a typo)', (w) => (w.workspaces[0].sequences[0].stpes = []), '/workspaces/0/sequences/0/stpes', /is not a known field/],
    ['a misspelt sandbox script field', (w) => (w.workspaces[0].leads[0].sandbox.replyAfterHour = 2), '/workspaces/0/leads/0/sandbox/replyAfterHour', /is not a known field/],
    ['a later sandbox reply without its text', (w) => (w.workspaces[0].leads[0].sandbox.laterReplies = [{ afterHours: 2 }]), '/workspaces/0/leads/0/sandbox/laterReplies/0/text', /is required/],
    ['an unknown field inside a nullable object', (w) => (w.workspaces[0].plays[0].candidates[0].review.note = 'x'), '/workspaces/0/plays/0/candidates/0/review/note', /is not a known field/],
    ['an unknown top-level field', (w) => (w.world = {}), '/world', /is not a known field/],
    ['a bad lead stage', (w) => (w.workspaces[0].leads[0].stage = 'contacted'), '/workspaces/0/leads/0/stage', /must be one of: queued, resolving, invited, accepted, messaged, followed_up, replied, failed, skipped/],
    ['a bad step kind', (w) => (w.workspaces[0].sequences[0].steps[1].kind = 'sms'), '/workspaces/0/sequences/0/steps/1/kind', /must be one of/],
    ['a bad review decision', (w) => (w.workspaces[0].plays[0].candidates[0].review.decision = 'maybe'), '/workspaces/0/plays/0/candidates/0/review/decision', /good_fit, not_a_good_fit/],
    ['a bad activity action', (w) => (w.workspaces[0].activity[0].action = 'poke'), '/workspaces/0/activity/0/action', /must be one of/],
    ['a bad billing status', (w) => (w.workspaces[0].billing.status = 'free'), '/workspaces/0/billing/status', /active, trialing, past_due, canceled/],
    ['a missing workspace name', (w) => delete w.workspaces[1].name, '/workspaces/1/name', /is required/],
    ['a malformed messaging account id', (w) => (w.workspaces[0].messagingAccounts[0].id = 'acc_1'), '/workspaces/0/messagingAccounts/0/id', /must match pattern/],
    ['a malformed timestamp', (w) => (w.workspaces[0].leads[0].invitedAt = 'yesterday'), '/workspaces/0/leads/0/invitedAt', /date-time/],
    ['a key shorter than 32 characters', (w) => (w.workspaces[0].apiKeys[0].key = 'short'), '/workspaces/0/apiKeys/0/key', /must match pattern/],
    ['an unknown time zone', (w) => (w.workspaces[0].messagingAccounts[0].timeZone = 'Mars/Olympus'), '/workspaces/0/messagingAccounts/0/timeZone', /IANA time zone/],
    ['a reply whose leadId names no lead', (w) => (w.workspaces[0].replies[0].leadId = u(999)), '/workspaces/0/replies/0/leadId', /must name a lead of the same workspace/],
    ['an activity entry naming a lead of another workspace', (w) => w.workspaces[1].activity = [{ action: 'invite', leadId: L1 }], '/workspaces/1/activity/0/leadId', /a lead of the same workspace/],
    ['a Play naming a sequence of another workspace', (w) => w.workspaces[1].plays = [{ sequenceId: SEQ1 }], '/workspaces/1/plays/0/sequenceId', /a sequence of the same workspace/],
    ['a lead naming an unknown sequence', (w) => (w.workspaces[0].leads[0].sequenceId = u(998)), '/workspaces/0/leads/0/sequenceId', /a sequence of the same workspace/],
    ['a lead naming a messaging account of another workspace', (w) => (w.workspaces[0].leads[0].account = ACC_B), '/workspaces/0/leads/0/account', /a messaging account of the same workspace/],
    ['a Play sender that is not a connected X account', (w) => (w.workspaces[0].plays[0].accountUserId = '3001'), '/workspaces/0/plays/0/accountUserId', /connected X account/],
    ['a client workspace that exists nowhere', (w) => (w.workspaces[0].clients[0].workspaceId = u(997)), '/workspaces/0/clients/0/workspaceId', /a workspace in this file or the database/],
    ['a workspace as its own client', (w) => (w.workspaces[0].clients[0].workspaceId = ACME), '/workspaces/0/clients/0/workspaceId', /its own client/],
    ['a follow-up sequence that is not in the workspace', (w) => (w.workspaces[0].settings.followUpSequenceId = u(996)), '/workspaces/0/settings/followUpSequenceId', /a sequence/],
    ['status approved without good_fit', (w) => (w.workspaces[0].plays[0].candidates[0].review.decision = 'not_a_good_fit'), '/workspaces/0/plays/0/candidates/0/review', /status approved needs review.decision good_fit/],
    ['status rejected without a review', (w) => (w.workspaces[0].plays[0].candidates[1].status = 'rejected'), '/workspaces/0/plays/0/candidates/1/review', /needs review.decision not_a_good_fit/],
    ['a proposed candidate carrying a review', (w) => (w.workspaces[0].plays[0].candidates[2].status = 'proposed'), '/workspaces/0/plays/0/candidates/2/review', /review must be null/],
    ['the same person twice in a Play', (w) => (w.workspaces[0].plays[0].candidates[1].xUserId = '1001'), '/workspaces/0/plays/0/candidates/1/xUserId', /already a candidate of this Play/],
    ['the same id twice', (w) => (w.workspaces[0].leads[1].id = L1), '/workspaces/0/leads/1/id', /duplicates the id at \/workspaces\/0\/leads\/0/],
    ['approvedRevision above revision', (w) => (w.workspaces[0].sequences[0].approvedRevision = 4), '/workspaces/0/sequences/0/approvedRevision', /cannot be above revision/],
    ['a step index out of place', (w) => (w.workspaces[0].sequences[0].steps[1].index = 2), '/workspaces/0/sequences/0/steps/1/index', /position/],
    ['a step with both message and variants', (w) => (w.workspaces[0].sequences[0].steps[1].message = 'hi'), '/workspaces/0/sequences/0/steps/1/variants', /either message or variants/],
    ['an X reply with a draft', (w) => (w.workspaces[0].replies[1].draft = 'hello'), '/workspaces/0/replies/1/draft', /channel x/],
    ['a LinkedIn reply to a lead without account', (w) => (w.workspaces[0].replies[1].channel = 'linkedin'), '/workspaces/0/replies/1/leadId', /without account/],
    ['sequenceDone contradicting automationStopped', (w) => (w.workspaces[0].leads[1].automationStopped = false), '/workspaces/0/leads/1/sequenceDone', /differs/],
    ['the same key twice', (w) => (w.workspaces[1].apiKeys[0].key = KEY), '/workspaces/1/apiKeys/0/key', /same key as \/workspaces\/0\/apiKeys\/0/],
    ['a public user twice', (w) => w.publicData.users.push({ xUserId: '1009', username: 'ALICE' }), '/publicData/users/2/username', /duplicates the username/],
  ];

  it.each(cases)('%s', async (_label, mutate, path, message) => {
    const world = smallWorld();
    mutate(world);
    const res = await seed(t, world);
    expect(res.statusCode, res.body).toBe(400);
    const b = res.json();
    expect(b).toMatchObject({ error: 'invalid_world', path });
    expect(b.message.startsWith(`${path} `)).toBe(true);
    expect(b.message).toMatch(message);
    expect(res.body).not.toContain(KEY);
  });

  it('a body that is not a world object', async () => {
    for (const payload of [[], 'text', 42]) {
      const res = await seed(t, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_world', path: '' });
    }
  });

  it('nothing was written by any of the invalid worlds', async () => {
    expect(await rowCounts(t)).toEqual(before);
  });

  it('the service throws the same AppError outside HTTP', async () => {
    const world = smallWorld();
    world.workspaces[0].plays[0].candidates[1].xUserId = '12345678901234567890123';
    const err = await t.services.world.seed(world).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ statusCode: 400, code: 'invalid_world', body: { path: '/workspaces/0/plays/0/candidates/1/xUserId' } });
  });

  it('validation leaves the caller object as it was (defaults are applied to a copy)', async () => {
    const world = { workspaces: [{ name: 'Defaults', leads: [{ person: 'x' }] }] };
    const copy = structuredClone(world);
    const result = await t.services.world.seed(world);
    expect(world).toEqual(copy);
    expect(result.counts.leads).toBe(1);
    before = await rowCounts(t);
  });
});

describe('all or nothing', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
    expect((await seed(t, smallWorld())).statusCode).toBe(200);
  });
  afterAll(async () => t?.close());

  /** A new workspace full of objects, placed before the one that fails. */
  const bigNewWorkspace = () => ({
    id: u(100),
    name: 'Delta',
    apiKeys: [{ key: 'ows_test_delta_literal_key_0123456789abcdef' }],
    clients: [{ workspaceId: BETA, role: 'member' }],
    xAccounts: [{ userId: '5001', handle: 'delta' }],
    messagingAccounts: [{ id: `onb_${u(101)}` }],
    sequences: [{ id: u(102), status: 'active', revision: 1, approvedRevision: 1, steps: [{ kind: 'connect' }] }],
    plays: [{ id: u(103), sequenceId: u(102), accountUserId: '5001', candidates: Array.from({ length: 20 }, (_, i) => ({ xUserId: String(7000 + i) })) }],
    leads: Array.from({ length: 20 }, (_, i) => ({ id: u(200 + i), person: `P${i}`, account: `onb_${u(101)}`, sequenceId: u(102) })),
    replies: [{ leadId: u(200), theirMessage: 'hi' }],
    activity: [{ action: 'invite', leadId: u(200) }],
  });

  it('a world whose last workspace fails a cross-reference check leaves the database unchanged', async () => {
    const before = await rowCounts(t);
    const res = await seed(t, {
      publicData: { users: [{ xUserId: '9001', username: 'newbie' }], follows: [{ follower: '9001', followed: '2001' }] },
      workspaces: [bigNewWorkspace(), { id: u(300), name: 'Broken', replies: [{ leadId: u(200) }] }],
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_world', path: '/workspaces/1/replies/0/leadId' });
    expect(await rowCounts(t)).toEqual(before);
  });

  it('a failure raised by the database mid-transaction (same X handle under another user id) also leaves nothing', async () => {
    const before = await rowCounts(t);
    const res = await seed(t, {
      publicData: { users: [{ xUserId: '9001', username: 'newbie' }] },
      workspaces: [bigNewWorkspace(), { id: ACME, name: 'Acme', xAccounts: [{ userId: '2999', handle: 'ACME_HQ' }] }],
    });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error: 'world_conflict', message: expect.stringContaining('x_accounts_handle') });
    expect(await rowCounts(t)).toEqual(before);
    // The same world without the conflicting account loads: the failure was the only problem.
    const ok = await seed(t, { workspaces: [bigNewWorkspace()] });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().counts).toEqual({ sequences: 1, plays: 1, candidates: 20, leads: 20, replies: 1, activity: 1 });
  });
});

describe('admin access', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
  });
  afterAll(async () => t?.close());

  it('401 for a missing or wrong admin token, and nothing is loaded', async () => {
    const before = await rowCounts(t);
    expect((await seed(t, smallWorld(), {})).statusCode).toBe(401);
    const wrong = await seed(t, smallWorld(), { authorization: 'Bearer not-the-admin-token-at-all' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toBe('unauthorized');
    // A workspace key is not an admin token.
    expect((await seed(t, smallWorld(), { authorization: `Bearer ${KEY}` })).statusCode).toBe(401);
    expect(await rowCounts(t)).toEqual(before);
  });

  it('404 when the server runs without OUTREACH_ADMIN_TOKEN', async () => {
    const disabled = await buildTestApp({ handle: t.handle });
    try {
      const res = await seed(disabled, smallWorld());
      expect(res.statusCode).toBe(404);
      expect((await seed(disabled, smallWorld(), {})).statusCode).toBe(404);
    } finally {
      await disabled.close();
    }
  });
});

describe('the demo world (examples/demo-world.json)', () => {
  let t: TestApp;
  const demo = JSON.parse(fs.readFileSync(DEMO_WORLD_PATH, 'utf8'));
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
  });
  afterAll(async () => t?.close());
  let demoKey = '';

  const fileCounts = () => {
    const all = demo.workspaces;
    const sum = (f: (w: any) => number) => all.reduce((n: number, w: any) => n + f(w), 0);
    return {
      sequences: sum((w) => w.sequences?.length ?? 0),
      plays: sum((w) => w.plays?.length ?? 0),
      candidates: sum((w) => (w.plays ?? []).reduce((n: number, p: any) => n + p.candidates.length, 0)),
      leads: sum((w) => w.leads?.length ?? 0),
      replies: sum((w) => w.replies?.length ?? 0),
      activity: sum((w) => w.activity?.length ?? 0),
    };
  };

  it('has the promised shape: >= 250 candidates in every status, every lead stage, every sequence and Play status', () => {
    const [nw] = demo.workspaces;
    const counts = fileCounts();
    expect(counts.candidates).toBeGreaterThanOrEqual(250);
    const candidates = nw.plays.flatMap((p: any) => p.candidates);
    expect(new Set(candidates.map((c: any) => c.status))).toEqual(new Set(['proposed', 'imported', 'approved', 'rejected']));
    const stages = new Set(demo.workspaces.flatMap((w: any) => w.leads.map((l: any) => l.stage)));
    expect(stages).toEqual(new Set(['queued', 'resolving', 'invited', 'accepted', 'messaged', 'followed_up', 'replied', 'failed', 'skipped']));
    expect(new Set(nw.sequences.map((s: any) => s.status))).toEqual(new Set(['draft', 'active', 'paused', 'archived']));
    expect(new Set(nw.plays.map((p: any) => p.status))).toEqual(new Set(['active', 'paused', 'archived']));
    expect(nw.plays.some((p: any) => p.autopilot) && nw.plays.some((p: any) => !p.reviewApiEnabled)).toBe(true);
    const replyLeads = nw.replies.map((r: any) => [r.channel, !!nw.leads.find((l: any) => l.id === r.leadId)?.email]);
    expect(replyLeads).toEqual(expect.arrayContaining([['linkedin', true], ['linkedin', false], ['x', false]]));
  });

  it('holds no key secret: the demo key is generated at load', () => {
    expect(JSON.stringify(demo)).not.toMatch(/ows_/);
    expect(demo.workspaces[0].apiKeys).toEqual([{ expiresAt: null, revoked: false }]);
  });

  it('loads, answers the demo key first, and the key lists the Team client', async () => {
    const started = performance.now();
    const result = await t.services.world.seed(demo);
    const elapsed = performance.now() - started;
    expect(result.counts).toEqual(fileCounts());
    expect(result.workspaces.map((w) => [w.name, w.status])).toEqual([['Northwind Outreach', 'created'], ['Contoso Labs', 'created']]);
    demoKey = result.workspaces[0].apiKeys[0];
    expect(demoKey).toMatch(/^ows_[A-Za-z0-9_-]{43}$/);
    const res = await listWorkspaces(t, demoKey);
    expect(res.json()).toEqual({
      workspaces: [
        { id: demo.workspaces[0].id, name: 'Northwind Outreach', role: 'owner' },
        { id: demo.workspaces[1].id, name: 'Contoso Labs', role: 'admin' },
      ],
    });
    expect(elapsed).toBeLessThan(15_000);
  });

  it('is readable through the API with the demo key: Plays, candidate counts, sequences, replies, and the Team client', async () => {
    const auth = { authorization: `Bearer ${demoKey}` };
    const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: { ...auth, ...headers } });
    const plays = await get('/x/plays');
    expect(plays.statusCode, plays.body).toBe(200);
    expect(plays.json().plays.map((p: any) => p.name)).toEqual(demo.workspaces[0].plays.map((p: any) => p.name));
    const followers = demo.workspaces[0].plays[0];
    const candidates = await get(`/plays/${followers.id}/candidates?limit=1`);
    expect(candidates.statusCode, candidates.body).toBe(200);
    const reviewed = (d: string) => followers.candidates.filter((c: any) => c.review?.decision === d).length;
    expect(candidates.json().counts).toEqual({
      total: followers.candidates.length,
      unreviewed: followers.candidates.length - reviewed('good_fit') - reviewed('not_a_good_fit'),
      goodFit: reviewed('good_fit'),
      notAGoodFit: reviewed('not_a_good_fit'),
    });
    const sequences = await get('/sequences');
    expect(sequences.statusCode, sequences.body).toBe(200);
    expect(sequences.json().sequences).toHaveLength(demo.workspaces[0].sequences.length);
    const replies = await get('/replies');
    expect(replies.statusCode, replies.body).toBe(200);
    const byId = new Map(replies.json().replies.map((r: any) => [r.id, r]));
    for (const r of demo.workspaces[0].replies) expect(byId.get(r.id), r.id).toMatchObject({ theirMessage: r.theirMessage, channel: r.channel });
    const contoso = { 'x-workspace-client': demo.workspaces[1].id };
    expect((await get('/sequences', contoso)).json().sequences).toHaveLength(demo.workspaces[1].sequences.length);
    const disabled = await get('/x/accounts', contoso);
    expect(disabled.statusCode).toBe(403);
    expect(disabled.json().error).toBe('channel_disabled');
  });

  it('reloading it through HTTP is idempotent, except that the key without a secret is issued afresh', async () => {
    const before = await rowCounts(t);
    const res = await seed(t, demo);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().workspaces.map((w: any) => w.status)).toEqual(['existing', 'existing']);
    expect(res.json().counts).toEqual({ sequences: 0, plays: 0, candidates: 0, leads: 0, replies: 0, activity: 0 });
    const fresh = res.json().workspaces[0].apiKeys[0];
    expect(fresh).not.toBe(demoKey);
    expect(await rowCounts(t)).toEqual({ ...before, api_keys: before.api_keys + 1 });
  });

  it("the first enroll enrolls: after one engine pass (autopilot discovery included) the manual Play's first unreviewed candidate becomes a lead", async () => {
    const auth = { authorization: `Bearer ${demoKey}`, 'content-type': 'application/json' };
    const summary = await t.services.engine.runPass({ now: new Date('2026-11-23T10:00:00Z') });
    expect(summary.discovered).toBeGreaterThan(0);
    const followers = demo.workspaces[0].plays.find((p: any) => p.status === 'active' && !p.autopilot && p.reviewApiEnabled);
    const page = await t.app.inject({ method: 'GET', url: `/api/v1/plays/${followers.id}/candidates?filter=unreviewed&limit=1`, headers: auth });
    expect(page.statusCode, page.body).toBe(200);
    const body = page.json();
    const [candidate] = body.candidates;
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/plays/${followers.id}/enroll`,
      headers: auth,
      payload: { expectedRevision: body.play.revision, sequenceId: body.sequence.id, sequenceRevision: body.sequence.revision, candidateIds: [candidate.id] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results).toEqual([{ candidateId: candidate.id, result: 'enrolled', leadId: expect.any(String) }]);
  });
});

describe('a large world', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
  });
  afterAll(async () => t?.close());

  it('250 candidates and 1000 leads load in multi-row statements', async () => {
    const account = `onb_${u(500)}`;
    const world = {
      workspaces: [
        {
          name: 'Bulk',
          xAccounts: [{ userId: '42', handle: 'bulk' }],
          messagingAccounts: [{ id: account }],
          sequences: [{ id: u(501), status: 'active', approvedRevision: 1, steps: [{ kind: 'connect' }, { kind: 'message', delayDays: 1, message: 'hi' }] }],
          plays: [{ id: u(502), sequenceId: u(501), accountUserId: '42', candidates: Array.from({ length: 250 }, (_, i) => ({ xUserId: String(10_000 + i), username: `user_${i}` })) }],
          leads: Array.from({ length: 1000 }, (_, i) => ({
            person: `Person ${i}`,
            company: 'Initech',
            account,
            sequenceId: u(501),
            stage: 'invited',
            invitedAt: '2026-11-10T10:00:00Z',
            ...(i < 250 ? { xUserId: String(10_000 + i), playId: u(502) } : {}),
          })),
          activity: Array.from({ length: 1000 }, () => ({ action: 'invite', account })),
        },
      ],
    };
    const started = performance.now();
    const result = await t.services.world.seed(world);
    const elapsed = performance.now() - started;
    expect(result.counts).toEqual({ sequences: 1, plays: 1, candidates: 250, leads: 1000, replies: 0, activity: 1000 });
    const linked = await t.db.selectFrom('leads').select((eb) => eb.fn.countAll<number>().as('n')).where('candidate_id', 'is not', null).executeTakeFirstOrThrow();
    expect(Number(linked.n)).toBe(250);
    expect(elapsed).toBeLessThan(20_000);
  });
});

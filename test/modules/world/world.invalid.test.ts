import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import { AppError } from '../../../src/lib/errors.js';
import { ADMIN, u, ACME, BETA, SEQ1, L1, ACC_B, KEY, smallWorld, rowCounts, seed } from '../../helpers/world-fixtures.js';

describe('invalid worlds answer 400 naming the JSON path of the first problem, and change nothing', () => {
  let t: TestApp;
  let before: Record<string, number>;
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
    before = await rowCounts(t);
  });
  afterAll(async () => t?.close());

  const cases: [string, (w: any) => unknown, string, RegExp][] = [
    [
      'a user id that does not match the pattern, deep in a Play',
      (w) => (w.workspaces[0].plays[0].candidates[1].xUserId = '0123'),
      '/workspaces/0/plays/0/candidates/1/xUserId',
      /must match pattern/,
    ],
    ['a user id given as a JSON number', (w) => (w.workspaces[0].xAccounts[0].userId = 2001), '/workspaces/0/xAccounts/0/userId', /must be string/],
    [
      'a nullable user id that is not a user id',
      (w) => (w.workspaces[0].leads[1].accountUserId = 'abc'),
      '/workspaces/0/leads/1/accountUserId',
      /must match pattern/,
    ],
    ['an unknown field (a typo)', (w) => (w.workspaces[0].sequences[0].stpes = []), '/workspaces/0/sequences/0/stpes', /is not a known field/],
    [
      'a misspelt sandbox script field',
      (w) => (w.workspaces[0].leads[0].sandbox.replyAfterHour = 2),
      '/workspaces/0/leads/0/sandbox/replyAfterHour',
      /is not a known field/,
    ],
    [
      'a later sandbox reply without its text',
      (w) => (w.workspaces[0].leads[0].sandbox.laterReplies = [{ afterHours: 2 }]),
      '/workspaces/0/leads/0/sandbox/laterReplies/0/text',
      /is required/,
    ],
    [
      'an unknown field inside a nullable object',
      (w) => (w.workspaces[0].plays[0].candidates[0].review.note = 'x'),
      '/workspaces/0/plays/0/candidates/0/review/note',
      /is not a known field/,
    ],
    ['an unknown top-level field', (w) => (w.world = {}), '/world', /is not a known field/],
    [
      'a bad lead stage',
      (w) => (w.workspaces[0].leads[0].stage = 'contacted'),
      '/workspaces/0/leads/0/stage',
      /must be one of: queued, resolving, invited, accepted, messaged, followed_up, replied, failed, skipped/,
    ],
    ['a bad step kind', (w) => (w.workspaces[0].sequences[0].steps[1].kind = 'sms'), '/workspaces/0/sequences/0/steps/1/kind', /must be one of/],
    [
      'a bad review decision',
      (w) => (w.workspaces[0].plays[0].candidates[0].review.decision = 'maybe'),
      '/workspaces/0/plays/0/candidates/0/review/decision',
      /good_fit, not_a_good_fit/,
    ],
    ['a bad activity action', (w) => (w.workspaces[0].activity[0].action = 'poke'), '/workspaces/0/activity/0/action', /must be one of/],
    ['a bad billing status', (w) => (w.workspaces[0].billing.status = 'free'), '/workspaces/0/billing/status', /active, trialing, past_due, canceled/],
    ['a missing workspace name', (w) => delete w.workspaces[1].name, '/workspaces/1/name', /is required/],
    [
      'a malformed messaging account id',
      (w) => (w.workspaces[0].messagingAccounts[0].id = 'acc_1'),
      '/workspaces/0/messagingAccounts/0/id',
      /must match pattern/,
    ],
    ['a malformed timestamp', (w) => (w.workspaces[0].leads[0].invitedAt = 'yesterday'), '/workspaces/0/leads/0/invitedAt', /date-time/],
    ['a key shorter than 32 characters', (w) => (w.workspaces[0].apiKeys[0].key = 'short'), '/workspaces/0/apiKeys/0/key', /must match pattern/],
    [
      'an unknown time zone',
      (w) => (w.workspaces[0].messagingAccounts[0].timeZone = 'Mars/Olympus'),
      '/workspaces/0/messagingAccounts/0/timeZone',
      /IANA time zone/,
    ],
    [
      'a reply whose leadId names no lead',
      (w) => (w.workspaces[0].replies[0].leadId = u(999)),
      '/workspaces/0/replies/0/leadId',
      /must name a lead of the same workspace/,
    ],
    [
      'an activity entry naming a lead of another workspace',
      (w) => (w.workspaces[1].activity = [{ action: 'invite', leadId: L1 }]),
      '/workspaces/1/activity/0/leadId',
      /a lead of the same workspace/,
    ],
    [
      'a Play naming a sequence of another workspace',
      (w) => (w.workspaces[1].plays = [{ sequenceId: SEQ1 }]),
      '/workspaces/1/plays/0/sequenceId',
      /a sequence of the same workspace/,
    ],
    [
      'a lead naming an unknown sequence',
      (w) => (w.workspaces[0].leads[0].sequenceId = u(998)),
      '/workspaces/0/leads/0/sequenceId',
      /a sequence of the same workspace/,
    ],
    [
      'a lead naming a messaging account of another workspace',
      (w) => (w.workspaces[0].leads[0].account = ACC_B),
      '/workspaces/0/leads/0/account',
      /a messaging account of the same workspace/,
    ],
    [
      'a Play sender that is not a connected X account',
      (w) => (w.workspaces[0].plays[0].accountUserId = '3001'),
      '/workspaces/0/plays/0/accountUserId',
      /connected X account/,
    ],
    [
      'a client workspace that exists nowhere',
      (w) => (w.workspaces[0].clients[0].workspaceId = u(997)),
      '/workspaces/0/clients/0/workspaceId',
      /a workspace in this file or the database/,
    ],
    ['a workspace as its own client', (w) => (w.workspaces[0].clients[0].workspaceId = ACME), '/workspaces/0/clients/0/workspaceId', /its own client/],
    [
      'a follow-up sequence that is not in the workspace',
      (w) => (w.workspaces[0].settings.followUpSequenceId = u(996)),
      '/workspaces/0/settings/followUpSequenceId',
      /a sequence/,
    ],
    [
      'status approved without good_fit',
      (w) => (w.workspaces[0].plays[0].candidates[0].review.decision = 'not_a_good_fit'),
      '/workspaces/0/plays/0/candidates/0/review',
      /status approved needs review.decision good_fit/,
    ],
    [
      'status rejected without a review',
      (w) => (w.workspaces[0].plays[0].candidates[1].status = 'rejected'),
      '/workspaces/0/plays/0/candidates/1/review',
      /needs review.decision not_a_good_fit/,
    ],
    [
      'a proposed candidate carrying a review',
      (w) => (w.workspaces[0].plays[0].candidates[2].status = 'proposed'),
      '/workspaces/0/plays/0/candidates/2/review',
      /review must be null/,
    ],
    [
      'the same person twice in a Play',
      (w) => (w.workspaces[0].plays[0].candidates[1].xUserId = '1001'),
      '/workspaces/0/plays/0/candidates/1/xUserId',
      /already a candidate of this Play/,
    ],
    ['the same id twice', (w) => (w.workspaces[0].leads[1].id = L1), '/workspaces/0/leads/1/id', /duplicates the id at \/workspaces\/0\/leads\/0/],
    [
      'approvedRevision above revision',
      (w) => (w.workspaces[0].sequences[0].approvedRevision = 4),
      '/workspaces/0/sequences/0/approvedRevision',
      /cannot be above revision/,
    ],
    ['a step index out of place', (w) => (w.workspaces[0].sequences[0].steps[1].index = 2), '/workspaces/0/sequences/0/steps/1/index', /position/],
    [
      'a step with both message and variants',
      (w) => (w.workspaces[0].sequences[0].steps[1].message = 'hi'),
      '/workspaces/0/sequences/0/steps/1/variants',
      /either message or variants/,
    ],
    ['an X reply with a draft', (w) => (w.workspaces[0].replies[1].draft = 'hello'), '/workspaces/0/replies/1/draft', /channel x/],
    [
      'a LinkedIn reply to a lead without account',
      (w) => (w.workspaces[0].replies[1].channel = 'linkedin'),
      '/workspaces/0/replies/1/leadId',
      /without account/,
    ],
    [
      'sequenceDone contradicting automationStopped',
      (w) => (w.workspaces[0].leads[1].automationStopped = false),
      '/workspaces/0/leads/1/sequenceDone',
      /differs/,
    ],
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

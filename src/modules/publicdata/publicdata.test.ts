import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../../test/helpers/build-test-app.js';
import { addXAccount, countRows, energyRow, ledger, setWorkspace, type WorkspaceEnergy } from '../../../test/helpers/publicdata-fixtures.js';
import {
  ProviderTimeoutError,
  ProviderUnavailableError,
  createSandboxProvider,
  type PublicDataProvider,
  type SandboxWorld,
} from '../../providers/publicdata/index.js';

const ACCOUNT_ID = '2001';
const world: SandboxWorld = {
  users: [
    { xUserId: '1001', username: 'alice', name: 'Alice A.' },
    { xUserId: '1002', username: 'Bob_B', name: null },
    { xUserId: '1003', username: 'carol', name: 'Carol' },
    { xUserId: '1004', username: 'ghost', name: 'Ghost' },
    { xUserId: ACCOUNT_ID, username: 'Acme_HQ', name: 'Acme' },
    { xUserId: '3001', username: 'other_hq', name: 'Other' },
    ...Array.from({ length: 20 }, (_, i) => ({ xUserId: String(5001 + i), username: `user${i + 1}`, name: null })),
  ],
  follows: [
    { follower: '1001', followed: ACCOUNT_ID },
    { follower: '1003', followed: ACCOUNT_ID },
    { follower: '9999', followed: ACCOUNT_ID },
    { follower: '1002', followed: '1001' },
  ],
  unavailable: ['ghost'],
};

let t: TestApp;
let stranger: Awaited<ReturnType<typeof createWorkspaceWithKey>>;

const sandbox = (opts: { latencyMs?: number; failureRate?: number } = {}) =>
  createSandboxProvider(world, { ...opts, now: () => t.clock.now() });

/** A fresh workspace with the connected account `Acme_HQ`, full energy that is not due a refill. */
async function workspace(energy: WorkspaceEnergy = {}, app: TestApp = t) {
  const ws = await createWorkspaceWithKey(app, 'Acme');
  await addXAccount(app.db, ws.workspaceId, { userId: ACCOUNT_ID, handle: 'Acme_HQ' });
  await setWorkspace(app.db, ws.workspaceId, { balance: 1000, dailyRefill: 1000, refilledAt: app.clock.now(), ...energy });
  return ws;
}

const post = (url: string, headers: Record<string, string>, payload: unknown, app: TestApp = t) =>
  app.app.inject({ method: 'POST', url: `/api/v1${url}`, headers, payload: payload as object });
const resolve = (headers: Record<string, string>, username: unknown, app?: TestApp) => post('/x/users/resolve', headers, { username }, app);
const eligibility = (headers: Record<string, string>, body: unknown, app?: TestApp) => post('/x/eligibility', headers, body, app);

beforeAll(async () => {
  t = await buildTestApp({ publicData: createSandboxProvider(world, { now: () => t.clock.now() }) });
  stranger = await createWorkspaceWithKey(t, 'Stranger');
  await addXAccount(t.db, stranger.workspaceId, { userId: '3001', handle: 'other_hq' });
});
afterAll(async () => t?.close());

describe('POST /x/users/resolve', () => {
  it('resolves an exact handle case-insensitively with @ optional, and charges one unit to the ledger', async () => {
    const ws = await workspace();
    const res = await resolve(ws.auth, '@ALICE');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'resolved',
      user: { xUserId: '1001', username: 'alice', name: 'Alice A.', checkedAt: t.clock.now().toISOString(), evidence: 'public_profile' },
      provider: 'publicdata',
      sendsMessages: false,
    });
    expect((await energyRow(t.db, ws.workspaceId)).energy_balance).toBe(999);
    const l = await ledger(t.db, ws.workspaceId);
    expect(l).toMatchObject({ count: 1, units: 1 });
    expect(l.rows[0]).toMatchObject({ action: 'resolve', outcome: 'ok' });
    expect(JSON.parse(l.rows[0].detail)).toEqual({ provider: 'publicdata', read: 'resolve_handle' });
    expect(l.rows[0].detail).not.toContain('alice');
  });

  it('a null display name stays null', async () => {
    const ws = await workspace();
    expect((await resolve(ws.auth, 'bob_b')).json().user).toMatchObject({ xUserId: '1002', username: 'Bob_B', name: null });
  });

  it('a cache hit costs nothing and keeps the original checkedAt until the TTL passes', async () => {
    const ws = await workspace();
    const first = (await resolve(ws.auth, 'carol')).json();
    t.clock.advance(30_000);
    const second = await resolve(ws.auth, '@Carol');
    expect(second.statusCode).toBe(200);
    expect(second.json().user.checkedAt).toBe(first.user.checkedAt);
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 1, units: 1 });
    expect((await energyRow(t.db, ws.workspaceId)).energy_balance).toBe(999);
    t.clock.advance(31_000);
    const third = (await resolve(ws.auth, 'carol')).json();
    expect(third.user.checkedAt).toBe(t.clock.now().toISOString());
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 2, units: 2 });
  });

  it('the cache is per workspace: another workspace pays for its own read and sees its own checkedAt', async () => {
    const a = await workspace();
    const b = await workspace();
    const first = (await resolve(a.auth, 'user20')).json();
    t.clock.advance(1_000);
    const other = (await resolve(b.auth, 'user20')).json();
    expect(other.user.checkedAt).not.toBe(first.user.checkedAt);
    expect(await ledger(t.db, b.workspaceId)).toMatchObject({ count: 1, units: 1 });
  });

  it('503 status unknown for a handle the provider does not know', async () => {
    const ws = await workspace();
    const res = await resolve(ws.auth, 'nobody_here');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      status: 'unknown',
      user: null,
      provider: 'publicdata',
      sendsMessages: false,
      error: 'identity_unknown',
      reason: 'user_not_found',
      message: expect.any(String),
    });
  });

  it('503 status unknown when the provider is unavailable for the handle (no fallback)', async () => {
    const ws = await workspace();
    const res = await resolve(ws.auth, 'Ghost');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'unknown', user: null, provider: 'publicdata', sendsMessages: false, error: 'provider_unavailable', reason: 'provider_unavailable' });
  });

  it('503 with reason provider_timeout when the provider times out, and 503 when it fails outright', async () => {
    const timingOut: PublicDataProvider = { ...sandbox(), resolveHandle: () => Promise.reject(new ProviderTimeoutError()) };
    const app = await buildTestApp({ handle: t.handle, publicData: timingOut });
    try {
      const ws = await workspace({}, app);
      const res = await resolve(ws.auth, 'alice', app);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ status: 'unknown', user: null, error: 'provider_unavailable', reason: 'provider_timeout' });
    } finally {
      await app.close();
    }
    const failing = await buildTestApp({ handle: t.handle, publicData: sandbox({ failureRate: 1 }) });
    try {
      const ws = await workspace({}, failing);
      const res = await resolve(ws.auth, 'alice', failing);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ status: 'unknown', user: null, reason: 'provider_unavailable' });
    } finally {
      await failing.close();
    }
  });

  it('400 for a bad body, and nothing is charged', async () => {
    const ws = await workspace();
    const bodies: unknown[] = [
      {},
      { username: 'alice', extra: 1 },
      { username: 'bad handle' },
      { username: 'x'.repeat(16) },
      { username: '@' },
      { username: 1001 },
      { username: null },
      [],
    ];
    for (const body of bodies) {
      const res = await post('/x/users/resolve', ws.auth, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(typeof res.json().error).toBe('string');
    }
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 0 });
  });

  it('403 channel_disabled when the workspace X channel is off', async () => {
    const ws = await workspace({ xChannelEnabled: false });
    const res = await resolve(ws.auth, 'alice');
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('channel_disabled');
  });

  it('401 without a key', async () => {
    expect((await resolve({}, 'alice')).statusCode).toBe(401);
  });
});

describe('energy on resolve', () => {
  it('429 energy_exhausted with Retry-After until the next UTC midnight; balance and ledger untouched', async () => {
    const ws = await workspace({ balance: 0, dailyRefill: 100 });
    const res = await resolve(ws.auth, 'alice');
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({ error: 'energy_exhausted' });
    const midnight = Date.parse('2026-11-22T00:00:00.000Z');
    expect(res.headers['retry-after']).toBe(String(Math.ceil((midnight - t.clock.now().getTime()) / 1000)));
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(11 * 3600);
    expect((await energyRow(t.db, ws.workspaceId)).energy_balance).toBe(0);
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 0 });
  });

  it('a cached answer is still served with no energy left', async () => {
    const ws = await workspace({ balance: 1 });
    expect((await resolve(ws.auth, 'alice')).statusCode).toBe(200);
    expect((await resolve(ws.auth, 'carol')).statusCode).toBe(429);
    expect((await resolve(ws.auth, 'ALICE')).statusCode).toBe(200);
  });

  it('the daily refill happens lazily on the first read of a new UTC day', async () => {
    const ws = await workspace({ balance: 0, dailyRefill: 5, refilledAt: '2026-11-20T23:59:59.000Z' });
    const res = await resolve(ws.auth, 'alice');
    expect(res.statusCode).toBe(200);
    const row = await energyRow(t.db, ws.workspaceId);
    expect(row.energy_balance).toBe(4);
    expect(row.energy_refilled_at.toISOString()).toBe(t.clock.now().toISOString());
  });

  it('canceled billing: no refill, and 429 without Retry-After because none is scheduled', async () => {
    const ws = await workspace({ balance: 0, dailyRefill: 5, status: 'canceled', refilledAt: '2026-11-19T00:00:00.000Z' });
    const res = await resolve(ws.auth, 'alice');
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({ error: 'energy_exhausted', reason: 'billing_inactive' });
    expect(res.headers['retry-after']).toBeUndefined();
    expect((await energyRow(t.db, ws.workspaceId)).energy_balance).toBe(0);
  });

  it('20 concurrent resolves never overspend: exact balance and ledger units', async () => {
    const ws = await workspace({ balance: 7 });
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => resolve(ws.auth, `user${i + 1}`)));
    const codes = responses.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(7);
    expect(codes.filter((c) => c === 429)).toHaveLength(13);
    expect((await energyRow(t.db, ws.workspaceId)).energy_balance).toBe(0);
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 7, units: 7 });
  });

  it('OUTREACH_ENERGY_UNITS_PER_LOOKUP sets the price of one read', async () => {
    const app = await buildTestApp({ handle: t.handle, publicData: sandbox(), env: { OUTREACH_ENERGY_UNITS_PER_LOOKUP: 3 } });
    try {
      const ws = await workspace({ balance: 5 }, app);
      expect((await resolve(ws.auth, 'alice', app)).statusCode).toBe(200);
      expect((await resolve(ws.auth, 'carol', app)).statusCode).toBe(429);
      expect((await energyRow(t.db, ws.workspaceId)).energy_balance).toBe(2);
      expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 1, units: 3 });
    } finally {
      await app.close();
    }
  });
});

describe('POST /x/eligibility', () => {
  it('handle input: direct relationship evidence (true, verified false, null); echoes reference and xUsername', async () => {
    const ws = await workspace();
    const res = await eligibility(ws.auth, {
      account: '@acme_HQ',
      leads: [
        { xUsername: '@Alice', reference: 'crm-1' },
        { xUsername: 'bob_b' },
        { xUsername: 'nobody_here', reference: '' },
      ],
    });
    expect(res.statusCode).toBe(200);
    const now = t.clock.now().toISOString();
    expect(res.json()).toEqual({
      account: 'Acme_HQ',
      results: [
        { xUserId: null, followsAccount: true, checkedAt: now, reason: null, evidence: 'public_relationship', reference: 'crm-1', xUsername: '@Alice' },
        { xUserId: null, followsAccount: false, checkedAt: now, reason: null, evidence: 'public_relationship', xUsername: 'bob_b' },
        { xUserId: null, followsAccount: null, checkedAt: now, reason: 'user_not_found', evidence: null, reference: '', xUsername: 'nobody_here' },
      ],
      provider: 'publicdata',
      sendsMessages: false,
    });
    const l = await ledger(t.db, ws.workspaceId);
    expect(l).toMatchObject({ count: 3, units: 3 });
    expect(l.rows.every((r) => r.action === 'enrich')).toBe(true);
  });

  it('a handle resolved earlier supplies its xUserId for free', async () => {
    const ws = await workspace();
    await resolve(ws.auth, 'alice');
    const res = await eligibility(ws.auth, { account: 'acme_hq', leads: [{ xUsername: 'ALICE' }, { xUsername: 'carol' }] });
    expect(res.json().results.map((r: { xUserId: string | null }) => r.xUserId)).toEqual(['1001', null]);
  });

  it('numeric-id input uses one bounded follower snapshot: presence true, absence null (never false)', async () => {
    const ws = await workspace();
    const res = await eligibility(ws.auth, {
      account: 'acme_hq',
      leads: [{ xUserId: '1001', reference: 'a' }, { xUserId: '1002' }, { xUserId: '9999' }, { xUserId: '12345678901234567890' }],
    });
    expect(res.statusCode).toBe(200);
    const now = t.clock.now().toISOString();
    expect(res.json().results).toEqual([
      { xUserId: '1001', followsAccount: true, checkedAt: now, reason: null, evidence: 'follower_snapshot', reference: 'a' },
      { xUserId: '1002', followsAccount: null, checkedAt: now, reason: 'not_in_follower_snapshot', evidence: 'follower_snapshot' },
      { xUserId: '9999', followsAccount: true, checkedAt: now, reason: null, evidence: 'follower_snapshot' },
      { xUserId: '12345678901234567890', followsAccount: null, checkedAt: now, reason: 'not_in_follower_snapshot', evidence: 'follower_snapshot' },
    ]);
    expect(res.json().results.some((r: { followsAccount: unknown }) => r.followsAccount === false)).toBe(false);
    const l = await ledger(t.db, ws.workspaceId);
    expect(l).toMatchObject({ count: 1, units: 1 });
    expect(JSON.parse(l.rows[0].detail)).toEqual({ provider: 'publicdata', read: 'follower_snapshot' });
  });

  it('a mixed batch charges one unit per relationship read plus one for the snapshot; nothing is enrolled or sent', async () => {
    const ws = await workspace();
    const before = { leads: await countRows(t.db, 'leads'), candidates: await countRows(t.db, 'candidates'), events: await countRows(t.db, 'outbox_events') };
    const res = await eligibility(ws.auth, {
      account: 'acme_hq',
      leads: [{ xUsername: 'alice' }, { xUserId: '1001' }, { xUsername: 'carol' }, { xUserId: '1003' }],
    });
    expect(res.json().results.map((r: { followsAccount: unknown }) => r.followsAccount)).toEqual([true, true, true, true]);
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 3, units: 3 });
    expect((await energyRow(t.db, ws.workspaceId)).energy_balance).toBe(997);
    expect({ leads: await countRows(t.db, 'leads'), candidates: await countRows(t.db, 'candidates'), events: await countRows(t.db, 'outbox_events') }).toEqual(before);
  });

  it('a cache hit costs nothing and keeps checkedAt (the time of the evidence)', async () => {
    const ws = await workspace();
    const body = { account: 'acme_hq', leads: [{ xUsername: 'alice' }, { xUserId: '1003' }] };
    const first = (await eligibility(ws.auth, body)).json();
    t.clock.advance(20_000);
    const second = (await eligibility(ws.auth, body)).json();
    expect(second.results).toEqual(first.results);
    expect(second.results[0].checkedAt).not.toBe(t.clock.now().toISOString());
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 2, units: 2 });
  });

  it('a provider error on one lead gives that lead null with a reason and never fails the request', async () => {
    const ws = await workspace();
    const res = await eligibility(ws.auth, { account: 'acme_hq', leads: [{ xUsername: 'alice' }, { xUsername: 'ghost', reference: 'r' }, { xUsername: 'carol' }] });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([
      expect.objectContaining({ followsAccount: true }),
      { xUserId: null, followsAccount: null, checkedAt: null, reason: 'provider_unavailable', evidence: null, reference: 'r', xUsername: 'ghost' },
      expect.objectContaining({ followsAccount: true }),
    ]);
  });

  it('a failing follower snapshot is read once per request; every numeric lead gets null with the reason', async () => {
    let snapshotCalls = 0;
    const base = sandbox();
    const failingSnapshot: PublicDataProvider = {
      ...base,
      followerSnapshot: () => {
        snapshotCalls++;
        return Promise.reject(new ProviderUnavailableError('down', { reason: 'http_503' }));
      },
    };
    const app = await buildTestApp({ handle: t.handle, publicData: failingSnapshot });
    try {
      const ws = await workspace({}, app);
      const res = await eligibility(ws.auth, { account: 'acme_hq', leads: [{ xUserId: '1001' }, { xUsername: 'alice' }, { xUserId: '1003' }] }, app);
      expect(res.statusCode).toBe(200);
      expect(res.json().results).toEqual([
        { xUserId: '1001', followsAccount: null, checkedAt: null, reason: 'provider_unavailable', evidence: null },
        expect.objectContaining({ followsAccount: true }),
        { xUserId: '1003', followsAccount: null, checkedAt: null, reason: 'provider_unavailable', evidence: null },
      ]);
      expect(snapshotCalls).toBe(1);
      // The attempted snapshot read and the relationship read were both charged.
      expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 2, units: 2 });
    } finally {
      await app.close();
    }
  });

  it('one time budget for the whole request: leads not reached get null with time_budget_exceeded', async () => {
    const app = await buildTestApp({ handle: t.handle, publicData: sandbox({ latencyMs: 150 }), env: { OUTREACH_ELIGIBILITY_BUDGET_MS: 600 } });
    try {
      const ws = await workspace({}, app);
      const handles = ['alice', 'carol', 'bob_b', 'user1', 'user2', 'user3', 'user4', 'user5', 'user6', 'user7'];
      const res = await eligibility(ws.auth, { account: 'acme_hq', leads: handles.map((h, i) => ({ xUsername: h, reference: `r${i}` })) }, app);
      expect(res.statusCode).toBe(200);
      const results = res.json().results as { followsAccount: unknown; reason: string | null; reference: string }[];
      expect(results).toHaveLength(10);
      expect(results[0]).toMatchObject({ followsAccount: true, reason: null, reference: 'r0' });
      expect(results[9]).toEqual({ xUserId: null, followsAccount: null, checkedAt: null, reason: 'time_budget_exceeded', evidence: null, reference: 'r9', xUsername: 'user7' });
      const firstLate = results.findIndex((r) => r.reason === 'time_budget_exceeded');
      expect(firstLate).toBeGreaterThan(0);
      expect(results.slice(firstLate).every((r) => r.reason === 'time_budget_exceeded' && r.followsAccount === null)).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('the budget cancels the provider call in flight instead of waiting for it', async () => {
    const base = sandbox();
    const hanging: PublicDataProvider = {
      ...base,
      follows: (follower, target, signal) =>
        follower.username === 'stuck'
          ? new Promise((_, reject) => signal?.addEventListener('abort', () => reject(new ProviderTimeoutError('budget')), { once: true }))
          : base.follows(follower, target, signal),
    };
    const app = await buildTestApp({ handle: t.handle, publicData: hanging, env: { OUTREACH_ELIGIBILITY_BUDGET_MS: 300 } });
    try {
      const ws = await workspace({}, app);
      const res = await eligibility(ws.auth, { account: 'acme_hq', leads: [{ xUsername: 'alice' }, { xUsername: 'stuck' }, { xUserId: '1001' }] }, app);
      expect(res.statusCode).toBe(200);
      expect(res.json().results).toEqual([
        expect.objectContaining({ followsAccount: true }),
        { xUserId: null, followsAccount: null, checkedAt: null, reason: 'time_budget_exceeded', evidence: null, xUsername: 'stuck' },
        { xUserId: '1001', followsAccount: null, checkedAt: null, reason: 'time_budget_exceeded', evidence: null },
      ]);
    } finally {
      await app.close();
    }
  });

  it('with energy gone, the leads it could not afford get null with energy_exhausted; cached leads are still answered', async () => {
    const ws = await workspace({ balance: 2 });
    await eligibility(ws.auth, { account: 'acme_hq', leads: [{ xUsername: 'alice' }] });
    const res = await eligibility(ws.auth, {
      account: 'acme_hq',
      leads: [{ xUsername: 'carol' }, { xUsername: 'bob_b' }, { xUserId: '1001' }, { xUsername: 'alice' }],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([
      expect.objectContaining({ followsAccount: true, reason: null }),
      { xUserId: null, followsAccount: null, checkedAt: null, reason: 'energy_exhausted', evidence: null, xUsername: 'bob_b' },
      { xUserId: '1001', followsAccount: null, checkedAt: null, reason: 'energy_exhausted', evidence: null },
      expect.objectContaining({ followsAccount: true, reason: null, xUsername: 'alice' }),
    ]);
    expect((await energyRow(t.db, ws.workspaceId)).energy_balance).toBe(0);
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 2, units: 2 });
  });

  it('404 account not found for a handle that is not a connected account of the workspace, including another workspace’s', async () => {
    const ws = await workspace();
    for (const account of ['nobody_here', 'other_hq', 'alice']) {
      const res = await eligibility(ws.auth, { account, leads: [{ xUsername: 'alice' }] });
      expect(res.statusCode, account).toBe(404);
      expect(res.json()).toEqual({ error: 'account not found' });
    }
    // The other workspace does see its own account.
    expect((await eligibility(stranger.auth, { account: 'OTHER_HQ', leads: [{ xUserId: '1001' }] })).statusCode).toBe(200);
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 0 });
  });

  it('400 for every malformed body, and nothing is charged', async () => {
    const ws = await workspace();
    const lead = { xUsername: 'alice' };
    const bodies: [string, unknown][] = [
      ['no leads', { account: 'acme_hq', leads: [] }],
      ['101 leads', { account: 'acme_hq', leads: Array.from({ length: 101 }, () => lead) }],
      ['leads missing', { account: 'acme_hq' }],
      ['account missing', { leads: [lead] }],
      ['both identity fields', { account: 'acme_hq', leads: [{ xUsername: 'alice', xUserId: '1001' }] }],
      ['neither identity field', { account: 'acme_hq', leads: [{ reference: 'x' }] }],
      ['empty lead', { account: 'acme_hq', leads: [{}] }],
      ['extra lead property', { account: 'acme_hq', leads: [{ xUsername: 'alice', name: 'Alice' }] }],
      ['extra top-level property', { account: 'acme_hq', leads: [lead], dryRun: true }],
      ['xUserId as a JSON number', { account: 'acme_hq', leads: [{ xUserId: 1001 }] }],
      ['xUserId with a leading zero', { account: 'acme_hq', leads: [{ xUserId: '01001' }] }],
      ['xUserId too long', { account: 'acme_hq', leads: [{ xUserId: '123456789012345678901' }] }],
      ['bad lead handle', { account: 'acme_hq', leads: [{ xUsername: 'not a handle' }] }],
      ['handle too long', { account: 'acme_hq', leads: [{ xUsername: 'x'.repeat(16) }] }],
      ['bad account handle', { account: 'acme-hq', leads: [lead] }],
      ['reference too long', { account: 'acme_hq', leads: [{ xUsername: 'alice', reference: 'r'.repeat(201) }] }],
      ['reference not a string', { account: 'acme_hq', leads: [{ xUsername: 'alice', reference: 7 }] }],
      ['leads not an array', { account: 'acme_hq', leads: lead }],
    ];
    for (const [name, body] of bodies) {
      const res = await eligibility(ws.auth, body);
      expect(res.statusCode, name).toBe(400);
      expect(typeof res.json().error, name).toBe('string');
    }
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 0 });
  });

  it('accepts exactly 100 leads and a 200-character reference', async () => {
    const ws = await workspace();
    const leads = Array.from({ length: 100 }, (_, i) => ({ xUserId: String(1000 + i), reference: i === 0 ? 'r'.repeat(200) : undefined }));
    const res = await eligibility(ws.auth, { account: 'acme_hq', leads: leads.map((l) => JSON.parse(JSON.stringify(l))) });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toHaveLength(100);
    expect(res.json().results[0].reference).toHaveLength(200);
  });

  it('403 channel_disabled when the workspace X channel is off', async () => {
    const ws = await workspace({ xChannelEnabled: false });
    const res = await eligibility(ws.auth, { account: 'acme_hq', leads: [{ xUsername: 'alice' }] });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('channel_disabled');
  });
});

describe('OpenAPI', () => {
  it('documents the three operations with the workspace selector header and full response schemas', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    for (const [path, method] of [['/api/v1/x/users/resolve', 'post'], ['/api/v1/x/eligibility', 'post'], ['/api/v1/x/readiness', 'get']] as const) {
      const op = doc.paths[path][method];
      expect(op, path).toBeDefined();
      expect(op.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'x-workspace-client'), path).toBe(true);
      expect(op.responses['200'].content['application/json'].schema, path).toBeDefined();
    }
    expect(doc.paths['/api/v1/x/users/resolve'].post.responses['503'].content['application/json'].schema.properties.status).toBeDefined();
  });
});

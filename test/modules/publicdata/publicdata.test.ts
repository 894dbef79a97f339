import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { energyRow, ledger, startPublicDataTest, type PublicDataTest } from '../../helpers/publicdata-fixtures.js';
import { ProviderTimeoutError, type PublicDataProvider } from '../../../src/providers/publicdata/index.js';

let t: PublicDataTest['t'];
let sandbox: PublicDataTest['sandbox'];
let workspace: PublicDataTest['workspace'];
let resolve: PublicDataTest['resolve'];
let post: PublicDataTest['post'];
beforeAll(async () => ({ t, sandbox, workspace, resolve, post } = await startPublicDataTest()));
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
    expect(res.json()).toMatchObject({
      status: 'unknown',
      user: null,
      provider: 'publicdata',
      sendsMessages: false,
      error: 'provider_unavailable',
      reason: 'provider_unavailable',
    });
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

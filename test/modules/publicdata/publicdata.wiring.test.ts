import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { insertXAccount } from '../../helpers/factories.js';
import { ledger, seedPublicWorld, setWorkspace } from '../../helpers/publicdata-fixtures.js';
import { ConfigError, loadConfig } from '../../../src/config/config.js';

// The provider the service builds from configuration, as a deployment runs it (no injected provider).

describe('sandbox over the seeded publicdata_* tables', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t?.close());

  it('reads the world lazily from the database, honours unavailable handles, and sees a reseed after refreshWorld', async () => {
    await seedPublicWorld(t.db, {
      users: [
        { xUserId: '1001', username: 'alice', name: 'Alice' },
        { xUserId: '2001', username: 'acme_hq', name: 'Acme' },
      ],
      follows: [{ follower: '1001', followed: '2001' }],
      unavailable: ['ghost'],
    });
    const ws = await createWorkspaceWithKey(t);
    await insertXAccount(t.db, ws.workspaceId, { userId: '2001', handle: 'acme_hq' });
    await setWorkspace(t.db, ws.workspaceId, { balance: 100, dailyRefill: 100, refilledAt: t.clock.now() });
    const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url: `/api/v1${url}`, headers: ws.auth, payload });

    expect((await post('/x/users/resolve', { username: 'Alice' })).json().user).toMatchObject({ xUserId: '1001', username: 'alice' });
    expect((await post('/x/users/resolve', { username: 'ghost' })).json()).toMatchObject({ status: 'unknown', reason: 'provider_unavailable' });
    const elig = await post('/x/eligibility', { account: 'acme_hq', leads: [{ xUsername: 'alice' }, { xUserId: '1001' }, { xUsername: 'ghost' }] });
    expect(elig.json().results.map((r: { followsAccount: unknown; reason: unknown }) => [r.followsAccount, r.reason])).toEqual([
      [true, null],
      [true, null],
      [null, 'provider_unavailable'],
    ]);

    await seedPublicWorld(t.db, { users: [{ xUserId: '1005', username: 'newcomer', name: null }] });
    await t.services.publicData.refreshWorld();
    expect((await post('/x/users/resolve', { username: 'newcomer' })).json().user).toMatchObject({ xUserId: '1005' });
  });
});

describe('http provider from OUTREACH_PUBLICDATA_URL / OUTREACH_PUBLICDATA_KEY', () => {
  const KEY = 'pk_wiring_secret_0123456789abcdef';
  let server: Server;
  let url: string;
  const seen: { path: string; key: unknown }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://127.0.0.1');
      seen.push({ path: u.pathname, key: req.headers['x-api-key'] });
      res.writeHead(200, { 'content-type': 'application/json' });
      if (u.pathname === '/twitter/user/info' && u.searchParams.get('userName') === 'alice') {
        res.end(JSON.stringify({ status: 'success', data: { id: '1001', userName: 'alice', name: 'Alice' } }));
      } else {
        res.end('{not json');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('refuses to start without a key', () => {
    expect(() => loadConfig({}, { OUTREACH_PUBLICDATA_PROVIDER: 'http', OUTREACH_PUBLICDATA_URL: url })).toThrow(ConfigError);
  });

  it('resolves through the configured client, sends the key, and a malformed answer is 503 unknown', async () => {
    const t = await buildTestApp({ env: { OUTREACH_PUBLICDATA_PROVIDER: 'http', OUTREACH_PUBLICDATA_URL: url, OUTREACH_PUBLICDATA_KEY: KEY } });
    try {
      const ws = await createWorkspaceWithKey(t);
      await setWorkspace(t.db, ws.workspaceId, { balance: 10, refilledAt: t.clock.now() });
      const ok = await t.app.inject({ method: 'POST', url: '/api/v1/x/users/resolve', headers: ws.auth, payload: { username: '@alice' } });
      expect(ok.statusCode).toBe(200);
      expect(ok.json().user).toMatchObject({ xUserId: '1001', username: 'alice', name: 'Alice', evidence: 'public_profile' });
      expect(seen.at(-1)).toEqual({ path: '/twitter/user/info', key: KEY });
      const bad = await t.app.inject({ method: 'POST', url: '/api/v1/x/users/resolve', headers: ws.auth, payload: { username: 'bob' } });
      expect(bad.statusCode).toBe(503);
      expect(bad.json()).toMatchObject({ status: 'unknown', user: null, provider: 'publicdata', error: 'provider_unavailable' });
      expect(bad.body).not.toContain(KEY);
      expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 2, units: 2 });
    } finally {
      await t.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { sql, type KyselyPlugin } from 'kysely';
import pg from 'pg';
import { buildApp } from '../../src/app/build-app.js';
import { createServices } from '../../src/app/services.js';
import { createMemoryRateLimitStore } from '../../src/app/plugins/rate-limit.js';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { LruCache } from '../../src/modules/workspaces/auth-cache.js';
import { AUTH_CHANGES_CHANNEL } from '../../src/modules/workspaces/workspaces.repository.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, setWorkspaceState } from '../helpers/factories.js';
import { dbEngine } from '../helpers/test-database.js';

/** Counts the statements a Kysely instance sends (every query, raw SQL included, reaches transformResult once). */
function queryCounter() {
  let count = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      count++;
      return args.result;
    },
  };
  return {
    plugin,
    reset: () => (count = 0),
    get count() {
      return count;
    },
  };
}

const waitFor = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 5_000) => {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - started;
};

describe('a warm keyed read makes one database round trip (issue 16: query count)', () => {
  let t: TestApp;
  const counter = queryCounter();
  let app: Awaited<ReturnType<typeof buildApp>>;
  let services: ReturnType<typeof createServices>;
  beforeAll(async () => {
    t = await buildTestApp();
    const db = t.db.withPlugin(counter.plugin);
    services = createServices({ db, config: t.config, clock: t.clock, cipher: t.cipher, authChangesUrl: (t.handle as { url?: string }).url });
    app = await buildApp({ config: t.config, db, services, clock: t.clock, rateLimitStore: createMemoryRateLimitStore() });
    await app.ready();
    await waitFor('the auth listener', () => services.workspaces.authCache.live);
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  const countedRequest = async (url: string, headers: Record<string, string>) => {
    await app.inject({ method: 'GET', url, headers }); // warm
    counter.reset();
    const res = await app.inject({ method: 'GET', url, headers });
    return { res, queries: counter.count };
  };

  it('GET /x/leads/{id}: exactly one query (the lead), for the home workspace and through the Team selector', async () => {
    const owner = await createWorkspaceWithKey(t, 'Counted Owner');
    const client = await createWorkspaceWithKey(t, 'Counted Client');
    await t.services.workspaces.addTeamLink({ ownerWorkspaceId: owner.workspaceId, clientWorkspaceId: client.workspaceId, role: 'member' });
    const own = await insertLead(t.db, owner.workspaceId, { x_user_id: '700001' });
    const theirs = await insertLead(t.db, client.workspaceId, { x_user_id: '700002' });

    const home = await countedRequest(`/api/v1/x/leads/${own}`, owner.auth);
    expect(home.res.statusCode).toBe(200);
    expect(home.queries).toBe(1);

    const selected = await countedRequest(`/api/v1/x/leads/${theirs}`, { ...owner.auth, 'x-workspace-client': client.workspaceId });
    expect(selected.res.statusCode).toBe(200);
    expect(selected.queries).toBe(1);

    const missing = await countedRequest(`/api/v1/x/leads/00000000-0000-4000-8000-000000000000`, owner.auth);
    expect(missing.res.statusCode).toBe(404);
    expect(missing.queries).toBe(1);
  });

  it('GET /workspaces: exactly one query', async () => {
    const ws = await createWorkspaceWithKey(t, 'Counted Listing');
    const { res, queries } = await countedRequest('/api/v1/workspaces', ws.auth);
    expect(res.statusCode).toBe(200);
    expect(queries).toBe(1);
  });

  it('refusals stay cheap and uncached: an unknown key costs one query each time and takes no cache memory', async () => {
    const before = services.workspaces.authCache.sizes().keys;
    for (let i = 0; i < 20; i++) {
      counter.reset();
      const res = await app.inject({
        method: 'GET',
        url: '/api/v1/workspaces',
        headers: { authorization: `Bearer ows_${randomBytes(32).toString('base64url')}` },
      });
      expect(res.statusCode).toBe(401);
      expect(counter.count).toBe(1);
    }
    expect(services.workspaces.authCache.sizes().keys).toBe(before);
  });

  it('a cached key is refused at its expiry instant', async () => {
    const ws = await createWorkspaceWithKey(t, 'Expiring');
    const key = await services.workspaces.createApiKey({ workspaceId: ws.workspaceId, expiresAt: new Date(t.clock.now().getTime() + 1_000) });
    const auth = { authorization: `Bearer ${key.key}` };
    expect((await app.inject({ method: 'GET', url: '/api/v1/workspaces', headers: auth })).statusCode).toBe(200);
    t.clock.advance(999);
    counter.reset();
    expect((await app.inject({ method: 'GET', url: '/api/v1/workspaces', headers: auth })).statusCode).toBe(200);
    expect(counter.count).toBe(1); // served from the cache (only the listing query ran)
    t.clock.advance(1);
    expect((await app.inject({ method: 'GET', url: '/api/v1/workspaces', headers: auth })).statusCode).toBe(401);
  });

  it('in-process writes take effect at once: revocation, Team link and X-channel switch', async () => {
    const owner = await createWorkspaceWithKey(t, 'Direct Owner');
    const client = await createWorkspaceWithKey(t, 'Direct Client');
    const lead = await insertLead(t.db, owner.workspaceId, { x_user_id: '700003' });
    const get = (headers: Record<string, string>, url = '/api/v1/workspaces') => app.inject({ method: 'GET', url, headers });

    expect((await get({ ...owner.auth, 'x-workspace-client': client.workspaceId })).statusCode).toBe(403);
    await services.workspaces.addTeamLink({ ownerWorkspaceId: owner.workspaceId, clientWorkspaceId: client.workspaceId, role: 'member' });
    expect((await get({ ...owner.auth, 'x-workspace-client': client.workspaceId })).statusCode).toBe(200);

    expect((await get(owner.auth, `/api/v1/x/leads/${lead}`)).statusCode).toBe(200);
    await setWorkspaceState(t.db, owner.workspaceId, { xChannelEnabled: false });
    await services.workspaces.workspaceSettingsChanged(owner.workspaceId);
    expect((await get(owner.auth, `/api/v1/x/leads/${lead}`)).json()).toMatchObject({ error: 'channel_disabled' });

    await services.workspaces.revokeApiKey(owner.keyId);
    expect((await get(owner.auth)).statusCode).toBe(401);
  });
});

describe('LruCache', () => {
  it('holds at most its bound, forgets the least recently used first and expires entries after the TTL', () => {
    let now = 0;
    const lru = new LruCache<number>(3, 5_000, () => now);
    for (const k of ['a', 'b', 'c']) lru.set(k, 1);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('d', 1);
    expect(lru.size).toBe(3);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(1);
    now = 5_000;
    expect(lru.get('a')).toBeUndefined();
  });
});

// Two API processes on one PostgreSQL: separate pools, separate listeners, separate caches.
describe.skipIf(dbEngine() !== 'postgres')('invalidation across processes (PostgreSQL LISTEN/NOTIFY)', () => {
  let a: TestApp;
  let b: TestApp;
  let bHandle: DatabaseHandle;
  let operator: ReturnType<typeof createServices>;
  let url: string;
  beforeAll(async () => {
    a = await buildTestApp();
    url = (a.handle as { url?: string }).url!;
    bHandle = Object.assign(await createDatabase({ kind: 'postgres', url, poolSize: 4 }), { url });
    b = await buildTestApp({ handle: bHandle });
    // A third writer with no listener, as the CLI is: it only announces.
    operator = createServices({ db: bHandle.db, config: a.config, clock: a.clock, cipher: a.cipher });
    await waitFor('both listeners', () => a.services.workspaces.authCache.live && b.services.workspaces.authCache.live);
  });
  afterAll(async () => {
    await b?.close();
    await bHandle?.close();
    await a?.close();
  });

  const status = async (t: TestApp, headers: Record<string, string>, path = '/api/v1/workspaces') =>
    (await t.app.inject({ method: 'GET', url: path, headers })).statusCode;

  it('a key revoked by another process gets 401 from both API processes within 1 s', async () => {
    const ws = await createWorkspaceWithKey(a, 'Revoked Across');
    expect(await status(a, ws.auth)).toBe(200);
    expect(await status(b, ws.auth)).toBe(200);
    expect(b.services.workspaces.authCache.sizes().keys).toBeGreaterThan(0);
    const revokedAt = Date.now();
    await operator.workspaces.revokeApiKey(ws.keyId);
    await waitFor('both to refuse', async () => (await status(a, ws.auth)) === 401 && (await status(b, ws.auth)) === 401, 1_000);
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
  });

  it('an X-channel switch turned off in another process takes effect in both within 1 s (read through a Team link)', async () => {
    const owner = await createWorkspaceWithKey(a, 'Link Owner');
    const client = await createWorkspaceWithKey(a, 'Link Client');
    await operator.workspaces.addTeamLink({ ownerWorkspaceId: owner.workspaceId, clientWorkspaceId: client.workspaceId, role: 'admin' });
    expect(await status(b, { ...owner.auth, 'x-workspace-client': client.workspaceId })).toBe(200);

    const lead = await insertLead(a.db, client.workspaceId, { x_user_id: '700010' });
    const leadPath = `/api/v1/x/leads/${lead}`;
    const selected = { ...owner.auth, 'x-workspace-client': client.workspaceId };
    expect(await status(a, selected, leadPath)).toBe(200);
    expect(await status(b, selected, leadPath)).toBe(200);
    await setWorkspaceState(bHandle.db, client.workspaceId, { xChannelEnabled: false });
    await operator.workspaces.workspaceSettingsChanged(client.workspaceId);
    await waitFor(
      'channel_disabled in both',
      async () => (await status(a, selected, leadPath)) === 403 && (await status(b, selected, leadPath)) === 403,
      1_000,
    );
  });

  it('drops the whole cache when the listening connection drops, serves uncached meanwhile, and listens again', async () => {
    const ws = await createWorkspaceWithKey(a, 'Listener Drop');
    expect(await status(b, ws.auth)).toBe(200);
    expect(b.services.workspaces.authCache.sizes().keys).toBeGreaterThan(0);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // Both listeners are LISTEN sessions on this database; end them as a failover would.
      const { rowCount } = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN ${AUTH_CHANGES_CHANNEL}%' AND pid <> pg_backend_pid()`,
      );
      expect(rowCount).toBeGreaterThanOrEqual(2);
      await waitFor('the drop to be seen', () => !b.services.workspaces.authCache.live);
      expect(b.services.workspaces.authCache.sizes()).toEqual({ keys: 0, workspaces: 0, teamLinks: 0 });
      // While not listening, a revocation is still honoured at once: nothing is cached.
      expect(await status(b, ws.auth)).toBe(200);
      expect(b.services.workspaces.authCache.sizes().keys).toBe(0);
      await waitFor('the listener to come back', () => b.services.workspaces.authCache.live && a.services.workspaces.authCache.live);
      expect(await status(b, ws.auth)).toBe(200);
      await sql`select pg_notify(${AUTH_CHANGES_CHANNEL}, ${'unknown message'})`.execute(a.db);
      await waitFor('an unknown message to clear the cache', () => b.services.workspaces.authCache.sizes().keys === 0, 1_000);
    } finally {
      await admin.end();
    }
  });
});

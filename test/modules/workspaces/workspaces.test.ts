import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { createMemoryRateLimitStore } from '../../../src/app/plugins/rate-limit.js';
import { sql } from 'kysely';

let t: TestApp;
let owner: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let client: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let stranger: Awaited<ReturnType<typeof createWorkspaceWithKey>>;

beforeAll(async () => {
  t = await buildTestApp();
  owner = await createWorkspaceWithKey(t, 'Owner Co');
  client = await createWorkspaceWithKey(t, 'Client Co');
  stranger = await createWorkspaceWithKey(t, 'Stranger Co');
  await t.services.workspaces.addTeamLink({ ownerWorkspaceId: owner.workspaceId, clientWorkspaceId: client.workspaceId, role: 'admin' });
});
afterAll(async () => t?.close());

const get = (headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url: '/api/v1/workspaces', headers });

describe('authentication (spec: Authentication 1-4)', () => {
  it('401 unauthorized when the Authorization header is missing', async () => {
    const res = await get();
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'unauthorized' });
  });
  it('401 for a malformed header (not Bearer)', async () => {
    for (const authorization of ['Basic abc', owner.key, 'Bearer', 'Bearer short', `Bearer ${owner.key} extra`]) {
      const res = await get({ authorization });
      expect(res.statusCode, authorization).toBe(401);
      expect(res.json().error).toBe('unauthorized');
    }
  });
  it('401 for an unknown key', async () => {
    const res = await get({ authorization: `Bearer ows_${'x'.repeat(43)}` });
    expect(res.statusCode).toBe(401);
  });
  it('401 for a revoked key', async () => {
    const key = await t.services.workspaces.createApiKey({ workspaceId: owner.workspaceId });
    expect((await get({ authorization: `Bearer ${key.key}` })).statusCode).toBe(200);
    await t.services.workspaces.revokeApiKey(key.id);
    const res = await get({ authorization: `Bearer ${key.key}` });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });
  it('401 for an expired key', async () => {
    const key = await t.services.workspaces.createApiKey({ workspaceId: owner.workspaceId, expiresAt: new Date(t.clock.now().getTime() + 60_000) });
    expect((await get({ authorization: `Bearer ${key.key}` })).statusCode).toBe(200);
    t.clock.advance(61_000);
    expect((await get({ authorization: `Bearer ${key.key}` })).statusCode).toBe(401);
  });
  it('keys are stored only as SHA-256 hashes and look like ows_<43 base64url chars>', async () => {
    expect(owner.key).toMatch(/^ows_[A-Za-z0-9_-]{43}$/);
    const rows = await sql<{ key_hash: string }>`select key_hash from api_keys`.execute(t.db);
    expect(rows.rows.every((r) => /^[0-9a-f]{64}$/.test(r.key_hash) && r.key_hash !== owner.key)).toBe(true);
  });
  it('an error body never echoes the key', async () => {
    const res = await get({ authorization: `Bearer ${owner.key}`, 'x-workspace-client': stranger.workspaceId });
    expect(res.body).not.toContain(owner.key);
  });
});

describe('GET /workspaces and the X-Workspace-Client selector (spec: Authentication 3)', () => {
  it('lists the home workspace as owner and its Team clients with their role', async () => {
    const res = await get(owner.auth);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      workspaces: [
        { id: owner.workspaceId, name: 'Owner Co', role: 'owner' },
        { id: client.workspaceId, name: 'Client Co', role: 'admin' },
      ],
    });
  });
  it('a client key sees only its own workspace', async () => {
    expect((await get(client.auth)).json()).toEqual({ workspaces: [{ id: client.workspaceId, name: 'Client Co', role: 'owner' }] });
  });
  it('403 workspace_forbidden for a workspace the key is not permitted to use', async () => {
    const res = await get({ ...owner.auth, 'x-workspace-client': stranger.workspaceId });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('workspace_forbidden');
  });
  it('403 for an unknown workspace id and for the reverse direction of a Team link', async () => {
    expect((await get({ ...owner.auth, 'x-workspace-client': '00000000-0000-4000-8000-000000000000' })).statusCode).toBe(403);
    expect((await get({ ...client.auth, 'x-workspace-client': owner.workspaceId })).statusCode).toBe(403);
  });
  it('400 for a malformed selector', async () => {
    for (const v of ['not-a-uuid', '123', `${owner.workspaceId}x`]) {
      const res = await get({ ...owner.auth, 'x-workspace-client': v });
      expect(res.statusCode, v).toBe(400);
      expect(res.json().error).toBe('invalid_workspace_client');
    }
  });
  it('accepts the selector naming a permitted client or the home workspace', async () => {
    expect((await get({ ...owner.auth, 'x-workspace-client': client.workspaceId })).statusCode).toBe(200);
    expect((await get({ ...owner.auth, 'x-workspace-client': owner.workspaceId.toUpperCase() })).statusCode).toBe(200);
  });
});

describe('errors, limits and versioning', () => {
  it('unknown routes answer 404 JSON', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/nope', headers: owner.auth });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.json().error).toBe('not_found');
  });

  it('429 with Retry-After once a key passes its per-minute limit (spec: Errors 429)', async () => {
    const limited = await buildTestApp({ handle: t.handle, env: { OUTREACH_RATE_LIMIT_PER_MINUTE: 3 }, rateLimitStore: createMemoryRateLimitStore() });
    try {
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await limited.app.inject({ method: 'GET', url: '/api/v1/workspaces', headers: owner.auth }));
      const codes = answers.map((a) => a.statusCode);
      const last = answers[answers.length - 1];
      expect(codes).toEqual([200, 200, 200, 429, 429]);
      expect(last.json().error).toBe('rate_limited');
      const retryAfter = Number(last.headers['retry-after']);
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      // Another key has its own budget.
      expect((await limited.app.inject({ method: 'GET', url: '/api/v1/workspaces', headers: client.auth })).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('a deprecated route answers Deprecation: true and a Sunset at least 90 days ahead (spec: Versioning 4)', async () => {
    const app2 = await buildTestApp({ handle: t.handle });
    try {
      const sunset = new Date(app2.clock.now().getTime() + 120 * 86_400_000).toISOString();
      // Routes are added before ready in real modules; a fresh scope shows the mechanism.
      const { buildApp } = await import('../../../src/app/build-app.js');
      const app = await buildApp({ config: app2.config, db: app2.db, services: app2.services, clock: app2.clock });
      app.get('/old', { config: { deprecation: { sunset } } }, async () => ({ ok: true }));
      expect(() =>
        app.get('/too-soon', { config: { deprecation: { sunset: new Date(app2.clock.now().getTime() + 89 * 86_400_000).toISOString() } } }, async () => ({})),
      ).toThrow(/90 days/);
      await app.ready();
      const res = await app.inject({ method: 'GET', url: '/old' });
      expect(res.headers.deprecation).toBe('true');
      expect(new Date(String(res.headers.sunset)).getTime()).toBeGreaterThanOrEqual(app2.clock.now().getTime() + 90 * 86_400_000 - 86_400_000);
      const plain = await app.inject({ method: 'GET', url: '/healthz' });
      expect(plain.headers.deprecation).toBeUndefined();
      await app.close();
    } finally {
      await app2.close();
    }
  });

  it('health and readiness', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ ok: true });
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({
      ok: true,
      database: 'reachable',
      migrations: 'current',
      worker: 'not_in_this_process',
    });
  });
});

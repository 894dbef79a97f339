import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { ConsoleClient, signedInConsole } from '../helpers/console.js';
import { SESSION_COOKIE, SIGN_IN_FAILURES_PER_MINUTE, safeNext } from '../../src/console/plugin.js';

let t: TestApp;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;

beforeAll(async () => {
  t = await buildTestApp();
  acme = await createWorkspaceWithKey(t, 'Acme');
});
afterAll(async () => t?.close());

describe('console sign-in', () => {
  it('GET / redirects to /console with a 303', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console');
  });

  it('a console page without a session shows the sign-in form (401) with a "Workspace key" textbox and a "Sign in" button', async () => {
    const c = new ConsoleClient(t);
    const res = await c.get('/console/plays');
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('<label for="workspace-key">Workspace key</label>');
    expect(res.body).toMatch(/<input id="workspace-key" name="key" type="text"/);
    expect(res.body).toContain('<button type="submit">Sign in</button>');
    expect(res.body).toContain('name="next" value="/console/plays"');
  });

  it('a valid key starts a session (HttpOnly, SameSite=Lax, 12 h, an opaque id stored hashed) and 303s back to the page asked for', async () => {
    const c = new ConsoleClient(t);
    await c.get('/console/plays');
    const res = await c.post('/console/sign-in', { key: acme.key, next: '/console/plays' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/plays');
    const setCookie = ([] as string[]).concat(res.headers['set-cookie'] as string[]).find((l) => l.startsWith(`${SESSION_COOKIE}=`))!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).toMatch(/Max-Age=43200/);
    expect(setCookie).not.toMatch(/Secure/);
    const sessionId = c.cookies[SESSION_COOKIE];
    expect(setCookie).not.toContain(acme.key);
    const rows = await t.db.selectFrom('console_sessions').selectAll().where('key_id', '=', acme.keyId).execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.id_hash !== sessionId && r.id_hash.length === 64)).toBe(true);
    const page = await c.get('/console/plays');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<button type="submit">Sign out</button>');
    expect(page.body).not.toContain(acme.key);
  });

  it('a wrong key shows the form again with a clear message and 401', async () => {
    const c = new ConsoleClient(t);
    await c.get('/console/sign-in');
    const res = await c.post('/console/sign-in', { key: 'ows_wrongwrongwrongwrongwrongwrongwrong', next: '/console' });
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('That workspace key was not accepted');
    expect(res.body).toContain('Workspace key');
    expect(c.cookies[SESSION_COOKIE]).toBeUndefined();
  });

  it('only a path of the console is a redirect target after sign-in', () => {
    expect(safeNext('/review/plays/x?filter=all')).toBe('/review/plays/x?filter=all');
    for (const bad of ['//evil.example/console', 'https://evil.example/', '/\\evil.example', '/api/v1/workspaces', '/console\r\nx', undefined]) {
      expect(safeNext(bad)).toBe('/console');
    }
  });

  it('a form POST without a valid CSRF token answers 403 and changes nothing', async () => {
    const c = await signedInConsole(t, acme.key);
    const missing = await c.post('/console/sign-out', { _csrf: null });
    expect(missing.statusCode).toBe(403);
    expect(missing.body).toContain('Form expired');
    const forged = await c.post('/console/sign-out', { _csrf: 'forged-token' });
    expect(forged.statusCode).toBe(403);
    expect((await c.get('/console/plays')).statusCode).toBe(200);
  });

  it('"Sign out" ends the session', async () => {
    const c = await signedInConsole(t, acme.key);
    const res = await c.post('/console/sign-out');
    expect(res.statusCode).toBe(303);
    expect((await c.get('/console/plays')).statusCode).toBe(401);
  });

  it('revoking the key ends its session at the next request', async () => {
    const key = await t.services.workspaces.createApiKey({ workspaceId: acme.workspaceId });
    const c = await signedInConsole(t, key.key);
    expect((await c.get('/console/plays')).statusCode).toBe(200);
    await t.services.workspaces.revokeApiKey(key.id);
    const res = await c.get('/console/plays');
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('Workspace key');
  });

  it('an expired key ends its session at the next request', async () => {
    const expiresAt = new Date(t.clock.now().getTime() + 60_000);
    const key = await t.services.workspaces.createApiKey({ workspaceId: acme.workspaceId, expiresAt });
    const c = await signedInConsole(t, key.key);
    await t.db
      .updateTable('api_keys')
      .set({ expires_at: new Date(t.clock.now().getTime() - 1) })
      .where('id', '=', key.id)
      .execute();
    expect((await c.get('/console/plays')).statusCode).toBe(401);
  });

  it('a login link signs in once, within 10 minutes', async () => {
    const link = await t.services.consoleSessions.createLoginLink(acme.workspaceId);
    expect(link.path).toMatch(/^\/console\/login\/[A-Za-z0-9_-]+$/);
    const c = new ConsoleClient(t);
    const landing = await c.get(link.path);
    expect(landing.statusCode).toBe(200);
    const res = await c.post('/console/login', { token: link.token });
    expect(res.statusCode).toBe(303);
    expect((await c.get('/console/plays')).statusCode).toBe(200);
    const again = new ConsoleClient(t);
    await again.get(link.path);
    expect((await again.post('/console/login', { token: link.token })).statusCode).toBe(401);
  });

  it('the API keeps its JSON error bodies, and the console pages carry a strict CSP without inline scripts', async () => {
    const api = await t.app.inject({ method: 'GET', url: '/api/v1/nope' });
    expect(api.headers['content-type']).toMatch(/json/);
    expect(api.headers['content-security-policy']).toBeUndefined();
    const page = await t.app.inject({ method: 'GET', url: '/console/nope' });
    const csp = page.headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });
  it('failed sign-in attempts are rate-limited per address', async () => {
    // Its own app: every sign-in of the other tests counts against the same address.
    const own = await buildTestApp();
    const c = new ConsoleClient(own);
    await c.get('/console/sign-in');
    let last = 0;
    for (let i = 0; i <= SIGN_IN_FAILURES_PER_MINUTE + 1; i++) {
      last = (await c.post('/console/sign-in', { key: 'ows_wrongwrongwrongwrongwrongwrongwrong' })).statusCode;
    }
    await own.close();
    expect(last).toBe(429);
  });

  it('the session and CSRF cookies are Secure and __Host- prefixed when OUTREACH_PUBLIC_URL is https', async () => {
    const own = await buildTestApp({ env: { OUTREACH_PUBLIC_URL: 'https://outreach.example' } });
    try {
      const ws = await createWorkspaceWithKey(own, 'Secure');
      const c = new ConsoleClient(own);
      const form = await c.get('/console/sign-in');
      expect(String(form.headers['set-cookie'])).toMatch(/^__Host-outreach_csrf=[^;]+;.*Secure/);
      expect(form.headers['strict-transport-security']).toBeDefined();
      const res = await c.post('/console/sign-in', { key: ws.key });
      expect(res.statusCode).toBe(303);
      const session = ([] as string[]).concat(res.headers['set-cookie'] as string[]).find((l) => l.startsWith(`__Host-${SESSION_COOKIE}=`))!;
      expect(session).toMatch(/; Secure/);
    } finally {
      await own.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { captureServiceLogs, findSecrets } from '../helpers/log-capture.js';
import { ConsoleClient, csrfTokenOf } from '../helpers/console.js';
import { SIGN_IN_FAILURES_PER_MINUTE } from '../../src/console/plugin.js';
import { LINK_SESSION_MAX_AGE_MS } from '../../src/modules/console-sessions/index.js';
import { loadConfig } from '../../src/config/config.js';

const WRONG_KEY = 'ows_wrongwrongwrongwrongwrongwrongwrongwrongwro';

/** A console client (test/helpers/console.ts) with the sign-ins these tests count by their status. */
class Browser extends ConsoleClient {
  /** The sign-in form, as a person fills it: answers the POST's status (303 signed in, 401 refused, 429 limited). */
  async signInStatus(key: string) {
    await this.get('/console/sign-in');
    const res = await this.post('/console/sign-in', { key, next: '/console/plays' });
    if (res.statusCode === 303) await this.get('/console/plays');
    return res.statusCode;
  }

  /** Redeems a login link: the landing page, then its "Sign in" button. */
  async signInWithLink(path: string, token: string) {
    await this.get(path);
    const res = await this.post('/console/login', { token });
    if (res.statusCode === 303) await this.get('/console/plays');
    return res.statusCode;
  }

  async status(url = '/console/plays') {
    return (await this.get(url)).statusCode;
  }
}

let t: TestApp;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let other: Awaited<ReturnType<typeof createWorkspaceWithKey>>;

beforeAll(async () => {
  t = await buildTestApp();
  acme = await createWorkspaceWithKey(t, 'Acme');
  other = await createWorkspaceWithKey(t, 'Other');
});
afterAll(async () => t?.close());

const sessionRows = (workspaceId: string) => t.db.selectFrom('console_sessions').select(['key_id']).where('workspace_id', '=', workspaceId).execute();

describe('rule: the login-link token never reaches a log line', () => {
  it('the info-level request log names /console/login/[redacted], never the token (path, trailing slash, query string, body)', async () => {
    const logs = captureServiceLogs('debug', { OUTREACH_ADMIN_TOKEN: 'admin-token-for-the-log-test' });
    const own = await buildTestApp({ logger: logs.logger, env: { OUTREACH_ADMIN_TOKEN: 'admin-token-for-the-log-test' } });
    try {
      const ws = await createWorkspaceWithKey(own, 'Logged');
      // The operator's way (`outreach login-link` through a running server) and the service's.
      const made = await own.app.inject({
        method: 'POST',
        url: '/admin/v1/login-links',
        headers: { authorization: 'Bearer admin-token-for-the-log-test' },
        payload: { workspaceId: ws.workspaceId },
      });
      expect(made.statusCode).toBe(201);
      const adminToken = made.json<{ path: string }>().path.split('/').pop()!;
      const link = await own.services.consoleSessions.createLoginLink(ws.workspaceId);
      const b = new Browser(own);
      for (const url of [link.path, `${link.path}/`, `${link.path}?utm_source=mail`, `/console/login?token=${link.token}`, `//console/login/${link.token}`]) {
        await b.get(url);
      }
      expect(await b.signInWithLink(link.path, link.token)).toBe(303);
      // A used link is no longer valid; it is not logged either.
      expect(await new Browser(own).signInWithLink(link.path, link.token)).toBe(401);
      await b.get(`/console/login/${adminToken}`);

      const text = logs.text();
      expect(text).toContain('/console/login/[redacted]');
      expect(text).toContain('/console/login?token=[redacted]');
      expect(findSecrets(text, [link.token, adminToken])).toEqual([]);
    } finally {
      await own.close();
    }
  });
});

describe('rule: the sign-in limit counts failures per client address', () => {
  it('successful sign-ins do not count; after 10 failures the address is refused (429), even with the right key', async () => {
    const own = await buildTestApp({ handle: t.handle });
    try {
      const b = new Browser(own, '127.0.0.1');
      for (let i = 0; i < SIGN_IN_FAILURES_PER_MINUTE + 5; i++) expect(await b.signInStatus(acme.key)).toBe(303);
      for (let i = 0; i < SIGN_IN_FAILURES_PER_MINUTE; i++) expect(await b.signInStatus(WRONG_KEY)).toBe(401);
      expect(await b.signInStatus(WRONG_KEY)).toBe(429);
      const limited = await b.post('/console/sign-in', { key: acme.key });
      expect(limited.statusCode).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // A login link from the limited address is refused too (same budget).
      const link = await own.services.consoleSessions.createLoginLink(acme.workspaceId);
      expect(await b.signInWithLink(link.path, link.token)).toBe(429);
    } finally {
      await own.close();
    }
  });

  it('while 127.0.0.1 is limited, the right key signs in from 127.0.0.2 (inject)', async () => {
    const own = await buildTestApp({ handle: t.handle });
    try {
      const attacker = new Browser(own, '127.0.0.1');
      for (let i = 0; i <= SIGN_IN_FAILURES_PER_MINUTE; i++) await attacker.signInStatus(WRONG_KEY);
      expect(await attacker.signInStatus(acme.key)).toBe(429);
      const colleague = new Browser(own, '127.0.0.2');
      expect(await colleague.signInStatus(acme.key)).toBe(303);
      expect(await colleague.status()).toBe(200);
    } finally {
      await own.close();
    }
  });

  it('the same over a real socket: a client connecting from 127.0.0.2 is not limited by 127.0.0.1', async () => {
    const own = await buildTestApp({ handle: t.handle });
    try {
      await own.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (own.app.server.address() as { port: number }).port;
      const signIn = async (localAddress: string, key: string) => {
        const form = await rawRequest({ port, localAddress, path: '/console/sign-in' });
        const cookie = ([] as string[])
          .concat(form.headers['set-cookie'] ?? [])
          .map((c) => c.split(';')[0])
          .join('; ');
        const body = new URLSearchParams({ _csrf: csrfTokenOf(form.body), key }).toString();
        const res = await rawRequest({
          port,
          localAddress,
          method: 'POST',
          path: '/console/sign-in',
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
          body,
        });
        return res.status;
      };
      for (let i = 0; i < SIGN_IN_FAILURES_PER_MINUTE; i++) expect(await signIn('127.0.0.1', WRONG_KEY)).toBe(401);
      expect(await signIn('127.0.0.1', acme.key)).toBe(429);
      expect(await signIn('127.0.0.2', acme.key)).toBe(303);
    } finally {
      await own.close();
    }
  });

  it('behind a proxy in OUTREACH_TRUST_PROXY the limit keys on X-Forwarded-For; from any other peer the header is ignored', async () => {
    const own = await buildTestApp({ handle: t.handle, env: { OUTREACH_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' } });
    try {
      // Everyone reaches the service through the proxy at 10.0.0.2: one client's guesses lock out only that client.
      const attacker = new Browser(own, '10.0.0.2', { 'x-forwarded-for': '203.0.113.7' });
      for (let i = 0; i < SIGN_IN_FAILURES_PER_MINUTE; i++) expect(await attacker.signInStatus(WRONG_KEY)).toBe(401);
      expect(await attacker.signInStatus(acme.key)).toBe(429);
      const colleague = new Browser(own, '10.0.0.2', { 'x-forwarded-for': '198.51.100.20' });
      expect(await colleague.signInStatus(acme.key)).toBe(303);
      // A chain: the client is the right-most address the trusted proxies did not add.
      const chained = new Browser(own, '10.0.0.2', { 'x-forwarded-for': '203.0.113.7, 10.0.0.9' });
      expect(await chained.signInStatus(acme.key)).toBe(429);
      // A peer that is not a trusted proxy cannot pick its address with the header.
      const spoofer = new Browser(own, '192.0.2.50', { 'x-forwarded-for': '198.51.100.99' });
      for (let i = 0; i < SIGN_IN_FAILURES_PER_MINUTE; i++) expect(await spoofer.signInStatus(WRONG_KEY)).toBe(401);
      const rotated = new Browser(own, '192.0.2.50', { 'x-forwarded-for': '198.51.100.100' });
      expect(await rotated.signInStatus(acme.key)).toBe(429);
    } finally {
      await own.close();
    }
  });

  it('without OUTREACH_TRUST_PROXY, X-Forwarded-For is ignored', async () => {
    const own = await buildTestApp({ handle: t.handle });
    try {
      for (let i = 0; i < SIGN_IN_FAILURES_PER_MINUTE; i++)
        await new Browser(own, '127.0.0.1', { 'x-forwarded-for': `198.51.100.${i}` }).signInStatus(WRONG_KEY);
      expect(await new Browser(own, '127.0.0.1', { 'x-forwarded-for': '198.51.100.200' }).signInStatus(acme.key)).toBe(429);
    } finally {
      await own.close();
    }
  });

  it('OUTREACH_TRUST_PROXY takes comma-separated IPs and CIDR ranges; anything else stops start-up naming the variable', () => {
    expect(loadConfig({}, { OUTREACH_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,fd00::/8' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1', 'fd00::/8']);
    expect(loadConfig({}).trustProxy).toEqual([]);
    for (const bad of ['proxy.example', '10', '10.0.0.0/33', '127.0.0.1/8/1']) {
      expect(() => loadConfig({}, { OUTREACH_TRUST_PROXY: bad })).toThrow(/OUTREACH_TRUST_PROXY must be comma-separated IP addresses or CIDR ranges/);
    }
  });
});

describe('rule: CSRF tokens are bound to the session', () => {
  it('a token minted for one session is refused (403) in another, even with the same CSRF secret cookie', async () => {
    const a = new Browser(t);
    expect(await a.signInStatus(acme.key)).toBe(303);
    const b = new Browser(t);
    expect(await b.signInStatus(acme.key)).toBe(303);
    const tokenOfA = a.csrf;
    // B carries A's CSRF secret (as if planted by a sibling site) and its own session: A's token is still refused.
    b.cookies.outreach_csrf = a.cookies.outreach_csrf;
    const replayed = await b.post('/console/sign-out', { _csrf: tokenOfA });
    expect(replayed.statusCode).toBe(403);
    expect(replayed.body).toContain('Form expired');
    expect(await b.status()).toBe(200);
    // A token minted for B's session under that secret works, and A's own token works for A.
    await b.get('/console/plays');
    expect((await b.post('/console/sign-out', { _csrf: b.csrf })).statusCode).toBe(303);
    expect((await a.post('/console/sign-out', { _csrf: tokenOfA })).statusCode).toBe(303);
  });

  it('a token from before sign-in, or from an ended session of the same browser, is refused in the new session', async () => {
    const c = new Browser(t);
    await c.get('/console/sign-in');
    const anonymous = c.csrf;
    expect((await c.post('/console/sign-in', { key: acme.key })).statusCode).toBe(303);
    await c.get('/console/plays');
    expect((await c.post('/console/sign-out', { _csrf: anonymous })).statusCode).toBe(403);
    const firstSession = c.csrf;
    expect((await c.post('/console/sign-out')).statusCode).toBe(303);
    expect(await c.signInStatus(acme.key)).toBe(303);
    expect((await c.post('/console/sign-out', { _csrf: firstSession })).statusCode).toBe(403);
    expect(await c.status()).toBe(200);
  });
});

describe('rule: cookies are __Host- prefixed when secure, bare on plain http', () => {
  it('https (OUTREACH_PUBLIC_URL): __Host-outreach_console and __Host-outreach_csrf with Secure, Path=/ and no Domain; sign-out clears the prefixed cookie', async () => {
    const own = await buildTestApp({ handle: t.handle, env: { OUTREACH_PUBLIC_URL: 'https://outreach.example' } });
    try {
      const b = new Browser(own);
      const form = await b.get('/console/sign-in');
      const res = await b.post('/console/sign-in', { key: acme.key });
      expect(res.statusCode).toBe(303);
      const lines = [...([] as string[]).concat(form.headers['set-cookie'] ?? []), ...([] as string[]).concat(res.headers['set-cookie'] ?? [])];
      for (const name of ['__Host-outreach_csrf', '__Host-outreach_console']) {
        const line = lines.find((l) => l.startsWith(`${name}=`));
        expect(line, name).toBeDefined();
        expect(line).toMatch(/; Secure/);
        expect(line).toMatch(/; Path=\//);
        expect(line).not.toMatch(/Domain=/i);
      }
      expect(lines.some((l) => /^outreach_(console|csrf)=/.test(l))).toBe(false);
      expect(await b.status()).toBe(200);
      // The notice a form leaves for the next page too (security probe: it lacked Secure and the prefix).
      await b.get('/console/suppressions');
      const done = await b.post('/console/suppressions/remove', { address: 'nobody@example.com' });
      const notice = ([] as string[]).concat(done.headers['set-cookie'] ?? []).find((l) => l.includes('outreach_notice='));
      expect(notice).toMatch(/^__Host-outreach_notice=.*; Path=\/; .*Secure/);
      const shown = await b.get(done.headers.location as string);
      expect(shown.body).toContain('is not on the suppression list');
      expect(String(shown.headers['set-cookie'])).toMatch(/__Host-outreach_notice=;.*Secure/);
      const out = await b.post('/console/sign-out');
      expect(out.statusCode).toBe(303);
      expect(String(out.headers['set-cookie'])).toMatch(/__Host-outreach_console=;.*Secure/);
      expect(await b.status()).toBe(401);
    } finally {
      await own.close();
    }
  });

  it('plain http (no OUTREACH_PUBLIC_URL): outreach_console and outreach_csrf without Secure, so http://localhost works', async () => {
    const b = new Browser(t);
    const form = await b.get('/console/sign-in');
    const res = await b.post('/console/sign-in', { key: acme.key });
    const lines = [...([] as string[]).concat(form.headers['set-cookie'] ?? []), ...([] as string[]).concat(res.headers['set-cookie'] ?? [])];
    expect(lines.find((l) => l.startsWith('outreach_csrf='))).not.toMatch(/Secure/);
    expect(lines.find((l) => l.startsWith('outreach_console='))).not.toMatch(/Secure/);
    expect(lines.some((l) => l.startsWith('__Host-'))).toBe(false);
  });
});

describe('rule: "Sign out everywhere" ends every console session of the workspace', () => {
  it('the button (a CSRF form) ends the key sessions and the login-link sessions of the workspace; other workspaces keep theirs', async () => {
    const secondKey = await t.services.workspaces.createApiKey({ workspaceId: acme.workspaceId });
    const here = new Browser(t);
    expect(await here.signInStatus(acme.key)).toBe(303);
    const laptop = new Browser(t);
    expect(await laptop.signInStatus(secondKey.key)).toBe(303);
    const link = await t.services.consoleSessions.createLoginLink(acme.workspaceId);
    const linked = new Browser(t);
    expect(await linked.signInWithLink(link.path, link.token)).toBe(303);
    const elsewhere = new Browser(t);
    expect(await elsewhere.signInStatus(other.key)).toBe(303);

    const page = await here.get('/console/plays');
    expect(page.body).toMatch(
      /<form method="post" action="\/console\/sign-out-everywhere"><input type="hidden" name="_csrf" value="[^"]+"\/><button type="submit">Sign out everywhere<\/button><\/form>/,
    );
    // Without its token it changes nothing.
    expect((await here.post('/console/sign-out-everywhere', { _csrf: null })).statusCode).toBe(403);
    expect(await laptop.status()).toBe(200);

    const res = await here.post('/console/sign-out-everywhere');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/console/sign-in');
    for (const b of [here, laptop, linked]) expect(await b.status()).toBe(401);
    expect(await sessionRows(acme.workspaceId)).toEqual([]);
    expect(await elsewhere.status()).toBe(200);
  });
});

describe('rule: revoking a key ends the console sessions it opened', () => {
  it('every session of the revoked key is refused at its next request and deleted; other keys and login-link sessions go on', async () => {
    const key = await t.services.workspaces.createApiKey({ workspaceId: acme.workspaceId });
    const one = new Browser(t);
    const two = new Browser(t);
    expect(await one.signInStatus(key.key)).toBe(303);
    expect(await two.signInStatus(key.key)).toBe(303);
    const kept = new Browser(t);
    expect(await kept.signInStatus(acme.key)).toBe(303);
    const link = await t.services.consoleSessions.createLoginLink(acme.workspaceId);
    const linked = new Browser(t);
    expect(await linked.signInWithLink(link.path, link.token)).toBe(303);

    await t.services.workspaces.revokeApiKey(key.id);
    expect(await one.status()).toBe(401);
    // The first refused request ended every session of the key, not only its own.
    expect((await sessionRows(acme.workspaceId)).filter((r) => r.key_id === key.id)).toEqual([]);
    expect(await two.status()).toBe(401);
    expect(await kept.status()).toBe(200);
    expect(await linked.status()).toBe(200);
  });

  it('consoleSessions.endSessionsOfKey ends them at once (for whoever revokes a key)', async () => {
    const key = await t.services.workspaces.createApiKey({ workspaceId: acme.workspaceId });
    const one = new Browser(t);
    expect(await one.signInStatus(key.key)).toBe(303);
    expect(await new Browser(t).signInStatus(key.key)).toBe(303);
    expect(await t.services.consoleSessions.endSessionsOfKey(key.id)).toBe(2);
    expect(await one.status()).toBe(401);
  });
});

describe('rule: a login-link session lasts at most 12 hours', () => {
  it('it works until 12 h after sign-in and is refused (and deleted) after', async () => {
    const start = t.clock.now();
    try {
      const link = await t.services.consoleSessions.createLoginLink(other.workspaceId);
      const b = new Browser(t);
      expect(await b.signInWithLink(link.path, link.token)).toBe(303);
      t.clock.advance(LINK_SESSION_MAX_AGE_MS - 60_000);
      expect(await b.status()).toBe(200);
      t.clock.advance(60_000);
      expect(await b.status()).toBe(401);
      expect((await sessionRows(other.workspaceId)).filter((r) => r.key_id === null)).toEqual([]);
    } finally {
      t.clock.set(start);
    }
  });

  it('its start is what counts: a row whose expiry was pushed later still ends 12 h after sign-in', async () => {
    const start = t.clock.now();
    try {
      const link = await t.services.consoleSessions.createLoginLink(other.workspaceId);
      const b = new Browser(t);
      expect(await b.signInWithLink(link.path, link.token)).toBe(303);
      await t.db
        .updateTable('console_sessions')
        .set({ expires_at: new Date(start.getTime() + 7 * 86_400_000) })
        .where('workspace_id', '=', other.workspaceId)
        .where('key_id', 'is', null)
        .execute();
      t.clock.advance(LINK_SESSION_MAX_AGE_MS);
      expect(await b.status()).toBe(401);
    } finally {
      t.clock.set(start);
    }
  });
});

/** One HTTP request over a real socket from a chosen local address. */
function rawRequest(opts: { port: number; localAddress: string; method?: string; path: string; headers?: Record<string, string>; body?: string }) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: opts.port,
        localAddress: opts.localAddress,
        method: opts.method ?? 'GET',
        path: opts.path,
        headers: opts.headers,
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

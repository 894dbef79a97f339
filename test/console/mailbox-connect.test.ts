import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { ConsoleClient, signedInConsole } from '../helpers/console.js';
import type { DnsFake } from '../helpers/dns-server.js';
import { dovecotAvailable, DOVECOT_MISSING, type Dovecot } from '../helpers/dovecot.js';
import type { OAuthProviderFake } from '../helpers/oauth-provider-fake.js';
import { countRows } from '../helpers/publicdata-fixtures.js';
import type { SmtpReceiver } from '../helpers/smtp-receiver.js';
import { oauthProviderEnv, startOAuthWorld, type OAuthWorld } from '../helpers/worlds/oauth.js';
import { ADMIN, admin } from '../helpers/world-fixtures.js';
import { readMailboxTokens } from '../../src/channels/email/mailboxes/mailboxes.repository.js';

// Issue 29 §1 in the console: "Connect Google mailbox" / "Connect Microsoft 365 mailbox" (OAuth 2.0 authorization
// code + PKCE + single-use state), its callback, the mailbox page and Disconnect. Over HTTP (inject for the console,
// real sockets for the provider) against the real database, the OAuth provider fake, Dovecot checking the token
// through the fake's introspection endpoint, and an SMTP receiver taking XOAUTH2.

const DANA = 'dana@acme.example';
const LEE = 'lee@acme.example';
const canLogIn = dovecotAvailable();
if (!canLogIn) console.warn(`test/console/mailbox-connect.test.ts (the connects that log in) skipped: ${DOVECOT_MISSING}`);

describe('mailbox connect in the console', { timeout: 120_000 }, () => {
  let fake: OAuthProviderFake;
  let smtp: SmtpReceiver;
  let world: OAuthWorld;
  let dns: DnsFake;
  let dovecot: Dovecot | null = null;
  let t: TestApp;
  let workspaceId: string;
  let key: string;
  let c: ConsoleClient;
  let servers: { smtpUrl: string; imapUrl: string };

  beforeAll(async () => {
    world = await startOAuthWorld({
      fake: { userEmail: DANA },
      dns: true,
      ...(canLogIn && {
        users: [
          { user: DANA, pass: 'unused-dana-pw' },
          { user: LEE, pass: 'unused-lee-pw' },
        ],
      }),
    });
    ({ fake, smtp, dovecot } = world);
    dns = world.dns!;
    servers = { smtpUrl: `smtp://127.0.0.1:${smtp.port}`, imapUrl: `imap://127.0.0.1:${dovecot?.port ?? 9}` };
    t = await buildTestApp({
      now: new Date().toISOString(),
      // The receiver and Dovecot listen on 127.0.0.1: the server overrides below are allowed only with this setting.
      env: { OUTREACH_ADMIN_TOKEN: ADMIN, OUTREACH_DNS_SERVERS: dns.server, OUTREACH_MAILBOX_ALLOW_PRIVATE: '1', ...oauthProviderEnv(fake) },
    });
    ({ workspaceId, key } = await createWorkspaceWithKey(t, 'Acme'));
    c = await signedInConsole(t, key);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await world?.close();
  });

  const mailboxCount = () => countRows(t.db, 'mailboxes');
  const stateCount = () => countRows(t.db, 'oauth_states');

  /** Presses "Connect … mailbox" on Accounts: the 303 to the provider's authorize URL. */
  async function pressConnect(client: ConsoleClient, provider: 'google' | 'microsoft', fields: Record<string, string> = servers) {
    await client.get('/console/accounts');
    const res = await client.post('/console/accounts/mailbox/connect', { provider, ...fields });
    expect(res.statusCode, res.body).toBe(303);
    return new URL(res.headers.location as string);
  }

  /** The browser at the provider: it approves (or not) and is sent back; answers the callback path and query. */
  async function approve(authorize: URL, extra: Record<string, string> = {}) {
    const url = new URL(authorize);
    for (const [k, v] of Object.entries(extra)) url.searchParams.set(k, v);
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status, await res.text()).toBe(302);
    const back = new URL(res.headers.get('location')!);
    expect(back.pathname).toBe('/console/accounts/mailbox/callback');
    return back.pathname + back.search;
  }

  it('Accounts shows both connect buttons, each with the optional servers; no hint about the environment', async () => {
    const page = await c.get('/console/accounts');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Connect Google mailbox');
    expect(page.body).toContain('Connect Microsoft 365 mailbox');
    expect(page.body).toContain('action="/console/accounts/mailbox/connect"');
    expect(page.body).toContain('Servers (advanced)');
    expect(page.body.match(/name="smtpUrl"/g)).toHaveLength(2);
    expect(page.body).not.toContain('OUTREACH_GOOGLE_CLIENT_ID');
  });

  it('Connect asks Google for the mail scope with PKCE S256 and a state; the state is stored, the verifier never leaves', async () => {
    const before = await stateCount();
    const authorize = await pressConnect(c, 'google');
    expect(authorize.origin + authorize.pathname).toBe(fake.authorizeUrl);
    const q = authorize.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe(fake.clientId);
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('scope')!.split(' ')).toEqual(expect.arrayContaining(['https://mail.google.com/', 'openid', 'email']));
    expect(q.get('access_type')).toBe('offline');
    expect(q.get('redirect_uri')).toBe(t.services.mailboxConnect.callbackUrl());
    expect(q.get('state')!.length).toBeGreaterThanOrEqual(43);
    expect(q.has('code_verifier')).toBe(false);
    expect(await stateCount()).toBe(before + 1);
  });

  it('without OUTREACH_MAILBOX_ALLOW_PRIVATE a server override on a non-public address is refused (generic words), nothing is started', async () => {
    const guarded = await buildTestApp({
      handle: t.handle,
      cipher: t.cipher,
      env: { OUTREACH_DNS_SERVERS: dns.server, ...oauthProviderEnv(fake) },
      resolver: async (h) => (h === 'imap.internal.test' ? ['192.168.1.20'] : ['93.184.216.34']),
    });
    try {
      const g = await signedInConsole(guarded, key);
      const before = await stateCount();
      const overrides: Record<string, string>[] = [
        { smtpUrl: 'smtp://127.0.0.1:2525' },
        { imapUrl: 'imaps://imap.internal.test:993' },
        { smtpUrl: 'smtps://[::ffff:10.0.0.1]:465' },
        { smtpUrl: 'smtps://169.254.169.254:465' },
      ];
      for (const fields of overrides) {
        await g.get('/console/accounts');
        const res = await g.post('/console/accounts/mailbox/connect', { provider: 'google', ...fields });
        expect(res.statusCode, JSON.stringify(fields)).toBe(400);
        expect(res.body).toContain('That server&#39;s address is not allowed');
        expect(res.body).not.toContain('192.168.1.20');
      }
      expect(await stateCount()).toBe(before);
      // A public server is accepted (the connect starts).
      await g.get('/console/accounts');
      const ok = await g.post('/console/accounts/mailbox/connect', { provider: 'google', smtpUrl: 'smtps://smtp.public.test:465' });
      expect(ok.statusCode).toBe(303);
    } finally {
      await guarded.close();
    }
  });

  it('a bad server URL or provider is refused on Accounts with the reason, and nothing is started', async () => {
    const before = await stateCount();
    await c.get('/console/accounts');
    const creds = await c.post('/console/accounts/mailbox/connect', { provider: 'google', smtpUrl: 'smtp://dana:pw@127.0.0.1:25' });
    expect(creds.statusCode).toBe(400);
    expect(creds.body).toContain('<h1>Accounts</h1>');
    expect(creds.body).toMatch(/smtpUrl must not carry a user name or password/);
    expect(creds.body).not.toContain('dana:pw');
    const yahoo = await c.post('/console/accounts/mailbox/connect', { provider: 'yahoo' });
    expect(yahoo.statusCode).toBe(400);
    expect(yahoo.body).toContain('provider must be one of: google, microsoft');
    expect(await stateCount()).toBe(before);
  });

  it('a denied authorize (access_denied) is refused (400) with a link back to Accounts; nothing is saved, no token asked', async () => {
    const mailboxes = await mailboxCount();
    const tokenCalls = fake.requests.filter((r) => r.path === '/token').length;
    const authorize = await pressConnect(c, 'google');
    fake.denyNext();
    const res = await c.get(await approve(authorize));
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Mailbox not connected');
    expect(res.body).toContain('Google did not grant access (access_denied)');
    expect(res.body).toContain('href="/console/accounts"');
    expect(await mailboxCount()).toBe(mailboxes);
    expect(fake.requests.filter((r) => r.path === '/token').length).toBe(tokenCalls);
  });

  it('a connect started in one console session is refused in another session and without one; its state is then spent', async () => {
    const authorize = await pressConnect(c, 'google');
    const callback = await approve(authorize);
    const other = await signedInConsole(t, key);
    const elsewhere = await other.get(callback);
    expect(elsewhere.statusCode).toBe(400);
    expect(elsewhere.body).toContain('this connect was started in another browser session');
    const second = await pressConnect(c, 'google');
    const anonymous = await new ConsoleClient(t).get(await approve(second));
    expect(anonymous.statusCode).toBe(400);
    expect(anonymous.body).toContain('another browser session');
    // The state is single use, whatever happened to it: the right session cannot use it any more either.
    const late = await c.get(callback);
    expect(late.statusCode).toBe(400);
    expect(late.body).toContain('unknown, already used or expired');
    expect(await mailboxCount()).toBe(0);
  });

  describe.skipIf(!canLogIn)('connects that log in to SMTP and IMAP with the token', () => {
    let mailboxId: string;
    let callback: string;

    it('end to end: Connect → Google → callback → the mailbox page with the notice and "Google (OAuth 2.0)"; no token is ever shown', async () => {
      const authorize = await pressConnect(c, 'google');
      callback = await approve(authorize);
      const done = await c.get(callback);
      expect(done.statusCode, done.body).toBe(303);
      const page = await c.get(done.headers.location as string);
      expect(page.statusCode, page.body).toBe(200);
      mailboxId = /\/console\/mailboxes\/(mbx_[^/?]+)/.exec(done.headers.location as string)![1];
      expect(page.body).toContain(`Mailbox ${DANA}`);
      expect(page.body).toContain(`Connected ${DANA} with Google to the workspace “Acme”. It sends and reads mail with OAuth; tokens are stored encrypted.`);
      expect(page.body).toContain('Signs in with Google (OAuth 2.0)');
      expect(page.body).toContain(`action="/console/mailboxes/${mailboxId}/disconnect"`);

      const tokens = (await readMailboxTokens(t.db, t.cipher, mailboxId))!;
      expect(fake.isActive(tokens.accessToken)).toBe(true);
      expect(fake.emailOf(tokens.accessToken)).toBe(DANA);
      // The token exchange used the state's verifier, and SMTP and IMAP were logged in to before the save.
      expect(fake.requests.filter((r) => r.path === '/token').map((r) => r.grantType)).toContain('authorization_code');
      expect(fake.requests.some((r) => r.path === '/introspect')).toBe(true);

      const accounts = await c.get('/console/accounts');
      const list = await t.app.inject({ method: 'POST', url: '/admin/v1/mailboxes/list', headers: admin, payload: { workspaceId } });
      expect(list.statusCode).toBe(200);
      expect(list.json()).toEqual([
        expect.objectContaining({
          id: mailboxId,
          address: DANA,
          auth: 'google',
          health: 'ok',
          smtp: `smtp://${encodeURIComponent(DANA)}@127.0.0.1:${smtp.port}`,
        }),
      ]);
      const row = await t.db.selectFrom('mailboxes').selectAll().where('id', '=', mailboxId).executeTakeFirstOrThrow();
      for (const secret of [tokens.accessToken, tokens.refreshToken]) {
        for (const shown of [page.body, accounts.body, list.body, JSON.stringify(row)]) expect(shown).not.toContain(secret);
      }
    });

    it('the same callback again (a reused state) is refused with 400 and changes nothing', async () => {
      const before = await readMailboxTokens(t.db, t.cipher, mailboxId);
      const tokenCalls = fake.requests.filter((r) => r.path === '/token').length;
      const again = await c.get(callback);
      expect(again.statusCode).toBe(400);
      expect(again.body).toContain('this connect link is unknown, already used or expired');
      expect(fake.requests.filter((r) => r.path === '/token').length).toBe(tokenCalls);
      expect(await readMailboxTokens(t.db, t.cipher, mailboxId)).toEqual(before);
    });

    it('Disconnect asks first, then revokes the grant at Google and removes the mailbox', async () => {
      const { refreshToken, accessToken } = (await readMailboxTokens(t.db, t.cipher, mailboxId))!;
      await c.get(`/console/mailboxes/${mailboxId}`);
      const ask = await c.post(`/console/mailboxes/${mailboxId}/disconnect`);
      expect(ask.statusCode).toBe(200);
      expect(ask.body).toContain(`Disconnect ${DANA}?`);
      expect(ask.body).toContain('revoked at Google');
      expect(ask.body).toContain('name="confirmed" value="yes"');
      expect(fake.revoked.has(refreshToken)).toBe(false);
      expect(await mailboxCount()).toBe(1);

      const done = await c.post(`/console/mailboxes/${mailboxId}/disconnect`, { confirmed: 'yes' });
      expect(done.statusCode).toBe(303);
      expect(done.headers.location).toBe('/console/accounts');
      const accounts = await c.get('/console/accounts');
      expect(accounts.body).toContain(`Disconnected ${DANA}: its tokens are deleted here and Google revoked the access it had granted.`);
      expect(fake.revoked.has(refreshToken)).toBe(true);
      expect(fake.isActive(accessToken)).toBe(false);
      expect(await mailboxCount()).toBe(0);
      expect((await c.get(`/console/mailboxes/${mailboxId}`)).statusCode).toBe(404);
      expect((await c.post(`/console/mailboxes/${mailboxId}/disconnect`, { confirmed: 'yes' })).statusCode).toBe(404);
    });

    it('Microsoft 365: the page says "Microsoft 365 (OAuth 2.0)"; Disconnect says to remove the app in "My apps"', async () => {
      const authorize = await pressConnect(c, 'microsoft');
      const scopes = authorize.searchParams.get('scope')!.split(' ');
      expect(scopes).toEqual(
        expect.arrayContaining(['https://outlook.office.com/IMAP.AccessAsUser.All', 'https://outlook.office.com/SMTP.Send', 'offline_access']),
      );
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
      // The person signs in at Microsoft as Lee.
      const done = await c.get(await approve(authorize, { login_hint: LEE }));
      expect(done.statusCode, done.body).toBe(303);
      const page = await c.get(done.headers.location as string);
      expect(page.body).toContain(`Connected ${LEE} with Microsoft 365 to the workspace “Acme”.`);
      expect(page.body).toContain('Signs in with Microsoft 365 (OAuth 2.0)');
      const id = /\/console\/mailboxes\/(mbx_[^/?]+)/.exec(done.headers.location as string)![1];
      const { refreshToken } = (await readMailboxTokens(t.db, t.cipher, id))!;
      const revokes = fake.requests.filter((r) => r.path === '/revoke').length;

      const ask = await c.post(`/console/mailboxes/${id}/disconnect`);
      expect(ask.body).toContain('My apps');
      await c.post(`/console/mailboxes/${id}/disconnect`, { confirmed: 'yes' });
      const accounts = await c.get('/console/accounts');
      expect(accounts.body).toContain(`Disconnected ${LEE}: its tokens are deleted here. Microsoft offers no way for this service to revoke the access`);
      expect(accounts.body).toContain('My apps');
      expect(fake.requests.filter((r) => r.path === '/revoke').length).toBe(revokes);
      expect(fake.revoked.has(refreshToken)).toBe(false);
      expect(await mailboxCount()).toBe(0);
    });

    it('a connect started by the CLI (no console session) completes in any browser and says it is connected', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/mailboxes/connect',
        headers: admin,
        payload: { workspaceId, provider: 'google', ...servers },
      });
      expect(res.statusCode, res.body).toBe(200);
      const done = await new ConsoleClient(t).get(await approve(new URL(res.json().authorizeUrl)));
      expect(done.statusCode, done.body).toBe(200);
      expect(done.body).toContain('Mailbox connected');
      expect(done.body).toContain(
        `Connected ${DANA} with Google to the workspace “Acme”. It sends and reads mail with OAuth; tokens are stored encrypted. You can close this page.`,
      );
      const removed = await t.app.inject({ method: 'POST', url: '/admin/v1/mailboxes/remove', headers: admin, payload: { workspaceId, mailbox: DANA } });
      expect(removed.json()).toEqual({ removed: true, revokedAtProvider: true });
    });
  });

  describe('a provider whose app is not configured', () => {
    let onlyGoogle: TestApp;
    let none: TestApp;
    beforeAll(async () => {
      onlyGoogle = await buildTestApp({ handle: t.handle, cipher: t.cipher, env: { OUTREACH_DNS_SERVERS: dns.server, ...oauthProviderEnv(fake, ['google']) } });
      none = await buildTestApp({ handle: t.handle, cipher: t.cipher, env: { OUTREACH_DNS_SERVERS: dns.server } });
    });
    afterAll(async () => {
      await onlyGoogle?.close();
      await none?.close();
    });

    it('has no button, and a POST answers 503 naming the environment variables to set', async () => {
      const g = await signedInConsole(onlyGoogle, key);
      const page = await g.get('/console/accounts');
      expect(page.body).toContain('Connect Google mailbox');
      expect(page.body).not.toContain('Connect Microsoft 365 mailbox');
      const before = await stateCount();
      const refused = await g.post('/console/accounts/mailbox/connect', { provider: 'microsoft' });
      expect(refused.statusCode).toBe(503);
      expect(refused.body).toContain('<h1>Accounts</h1>');
      expect(refused.body).toContain('OUTREACH_MICROSOFT_CLIENT_ID and OUTREACH_MICROSOFT_CLIENT_SECRET');
      expect(await stateCount()).toBe(before);

      const n = await signedInConsole(none, key);
      const bare = await n.get('/console/accounts');
      expect(bare.body).not.toContain('Connect Google mailbox');
      expect(bare.body).not.toContain('/console/accounts/mailbox/connect');
      expect(bare.body).toContain('OUTREACH_GOOGLE_CLIENT_ID');
      expect(bare.body).toContain('OUTREACH_MICROSOFT_CLIENT_SECRET');
      const google = await n.post('/console/accounts/mailbox/connect', { provider: 'google' });
      expect(google.statusCode).toBe(503);
      expect(google.body).toContain('OUTREACH_GOOGLE_CLIENT_ID and OUTREACH_GOOGLE_CLIENT_SECRET');
    });
  });
});

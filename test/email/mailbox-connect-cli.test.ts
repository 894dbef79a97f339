import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../src/config/config.js';
import { resolveTextCipher } from '../../src/lib/encryption-key.js';
import { startServer } from '../../src/server.js';
import { readMailboxTokens } from '../../src/channels/email/mailboxes/mailboxes.repository.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { dovecotAvailable, DOVECOT_MISSING, type Dovecot } from '../helpers/dovecot.js';
import { startOAuthProviderFake, type OAuthProviderFake } from '../helpers/oauth-provider-fake.js';
import type { SmtpReceiver } from '../helpers/smtp-receiver.js';
import { oauthProviderEnv, startOAuthWorld, type OAuthWorld } from '../helpers/worlds/oauth.js';
import { dbEngine } from '../helpers/test-database.js';
import { ADMIN, admin } from '../helpers/world-fixtures.js';
import { runCli } from '../helpers/cli-process.js';

// Issue 29 §1 for operators: `outreach mailbox connect` (the URL a person opens, the callback URL to register, until
// when), what `mailbox list` and `mailbox remove` say of an OAuth mailbox, and the admin routes behind them. The admin
// routes run on every database (inject); the CLI is spawned against a running server on the embedded database, as
// test/email/mailbox-cli.test.ts does, with the OAuth provider fake, Dovecot and an XOAUTH2 SMTP receiver.

const DANA = 'dana@acme.example';
const LEE = 'lee@acme.example';
const canLogIn = dovecotAvailable();
if (!canLogIn) console.warn(`test/email/mailbox-connect-cli.test.ts (the connects that log in) skipped: ${DOVECOT_MISSING}`);

const cli = (args: string[], env: Record<string, string>) => runCli(args, env);

describe('admin routes of outreach mailbox connect / remove', () => {
  let fake: OAuthProviderFake;
  let t: TestApp;
  let workspaceId: string;
  beforeAll(async () => {
    fake = await startOAuthProviderFake({ userEmail: DANA });
    // Google's app is configured here, Microsoft's is not (no secret).
    const { OUTREACH_MICROSOFT_CLIENT_SECRET: _secret, ...onlyGoogle } = oauthProviderEnv(fake);
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN, ...onlyGoogle } });
    ({ workspaceId } = await createWorkspaceWithKey(t, 'Acme'));
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  const connect = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/admin/v1/mailboxes/connect', headers: admin, payload });

  it('answers the authorize URL (PKCE S256, the mail scopes), the callback URL to register, and the expiry ten minutes on', async () => {
    const res = await connect({ workspaceId, provider: 'google', smtpUrl: 'smtps://smtp.acme.example:465' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['authorizeUrl', 'callbackUrl', 'expiresAt']);
    expect(body.callbackUrl).toBe(`${t.config.publicBase.url()}/console/accounts/mailbox/callback`);
    expect(Date.parse(body.expiresAt) - t.clock.now().getTime()).toBe(10 * 60_000);
    const url = new URL(body.authorizeUrl);
    expect(url.origin + url.pathname).toBe(fake.authorizeUrl);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toBe(body.callbackUrl);
    expect(url.searchParams.get('scope')).toBe('https://mail.google.com/ openid email');
    const state = await t.db.selectFrom('oauth_states').selectAll().where('state', '=', url.searchParams.get('state')!).executeTakeFirstOrThrow();
    expect(state).toMatchObject({
      workspace_id: workspaceId,
      flow: 'mailbox',
      session_id_hash: null,
      details: { provider: 'google', smtpUrl: 'smtps://smtp.acme.example:465' },
    });
    // The PKCE verifier is stored encrypted and is not the challenge.
    expect(state.code_verifier).not.toContain(url.searchParams.get('code_challenge')!);
  });

  it('refuses a provider other than google or microsoft (400), an unconfigured one (503), an unknown workspace or account (404)', async () => {
    const yahoo = await connect({ workspaceId, provider: 'yahoo' });
    expect(yahoo.statusCode).toBe(400);
    expect(yahoo.body).toContain('provider');
    const microsoft = await connect({ workspaceId, provider: 'microsoft' });
    expect(microsoft.statusCode).toBe(503);
    expect(microsoft.json()).toMatchObject({ error: 'mailbox_oauth_not_configured' });
    expect(microsoft.json().message).toContain('OUTREACH_MICROSOFT_CLIENT_ID and OUTREACH_MICROSOFT_CLIENT_SECRET');
    expect((await connect({ workspaceId: '00000000-0000-4000-8000-000000000999', provider: 'google' })).statusCode).toBe(404);
    expect((await connect({ workspaceId, provider: 'google', accountId: 'onb_nope' })).statusCode).toBe(404);
    expect((await connect({ workspaceId, provider: 'google', imapUrl: 'imaps://dana:pw@imap.acme.example' })).statusCode).toBe(400);
    expect((await connect({ workspaceId, provider: 'google', password: 'x' })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'POST', url: '/admin/v1/mailboxes/connect', payload: { workspaceId, provider: 'google' } })).statusCode).toBe(401);
  });

  it('/mailboxes/remove says revokedAtProvider: null for a password mailbox', async () => {
    await t.services.mailboxes.add({
      workspaceId,
      address: 'ops@acme.example',
      smtpUrl: 'smtp://ops:pw-1@127.0.0.1:2525',
      imapUrl: 'imap://ops:pw-1@127.0.0.1:1143',
      skipCheck: true,
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/mailboxes/remove',
      headers: admin,
      payload: { workspaceId, mailbox: 'ops@acme.example' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ removed: true, revokedAtProvider: null });
  });
});

// The spawned CLI reaches the running server's admin API on the embedded database (the admin-backend path).
describe.runIf(dbEngine() === 'pglite')('npx outreach mailbox connect', { timeout: 300_000 }, () => {
  let dataDir: string;
  let server: Awaited<ReturnType<typeof startServer>> | null = null;
  let fake: OAuthProviderFake;
  let smtp: SmtpReceiver;
  let dovecot: Dovecot | null = null;
  let world: OAuthWorld;
  let env: Record<string, string>;
  let workspaceId: string;
  let servers: string[];
  let config: Config;

  beforeAll(async () => {
    world = await startOAuthWorld({
      fake: { userEmail: DANA },
      ...(canLogIn && {
        users: [
          { user: DANA, pass: 'unused-dana-pw' },
          { user: LEE, pass: 'unused-lee-pw' },
        ],
      }),
    });
    ({ fake, smtp, dovecot } = world);
    servers = ['--smtp-url', `smtp://127.0.0.1:${smtp.port}`, '--imap-url', `imap://127.0.0.1:${dovecot?.port ?? 9}`];
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-mailbox-connect-cli-'));
    config = loadConfig(
      { OUTREACH_DATA_DIR: dataDir, OUTREACH_SEED_DEMO: '0', LOG_LEVEL: 'silent', OUTREACH_ENGINE_INTERVAL: '0', ...oauthProviderEnv(fake) },
      { PORT: 0, HOST: '127.0.0.1' },
    );
    server = await startServer(config, { print: () => undefined });
    env = { OUTREACH_DATA_DIR: dataDir };
    workspaceId = (await server.services.workspaces.createWorkspace({ name: 'Mail' })).id;
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await world?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The person's browser: opens the URL, approves at the provider, and follows the redirect to this server. */
  async function openInBrowser(authorizeUrl: string, extra: Record<string, string> = {}) {
    const url = new URL(authorizeUrl);
    for (const [k, v] of Object.entries(extra)) url.searchParams.set(k, v);
    const atProvider = await fetch(url, { redirect: 'manual' });
    expect(atProvider.status).toBe(302);
    const back = new URL(atProvider.headers.get('location')!);
    // The callback URL is on OUTREACH_PUBLIC_URL's fallback (localhost and the bound port); reach it on 127.0.0.1.
    expect(back.origin).toBe(`http://localhost:${server!.port}`);
    const res = await fetch(`http://127.0.0.1:${server!.port}${back.pathname}${back.search}`, { redirect: 'manual' });
    return { status: res.status, body: await res.text() };
  }

  it('prints the URL to open (PKCE S256, https://mail.google.com/), the callback URL to register and the expiry; --provider yahoo is refused', async () => {
    const started = await cli(['mailbox', 'connect', '--provider', 'google', '--workspace', workspaceId], env);
    expect(started.code, started.stderr).toBe(0);
    const [first, ...rest] = started.stdout.trim().split('\n');
    const url = new URL(first);
    expect(url.origin + url.pathname).toBe(fake.authorizeUrl);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('scope')!.split(' ')).toEqual(expect.arrayContaining(['https://mail.google.com/', 'openid', 'email']));
    expect(url.searchParams.get('state')).toBeTruthy();
    const text = rest.join('\n');
    expect(text).toContain(`http://localhost:${server!.port}/console/accounts/mailbox/callback`);
    expect(text).toContain('OUTREACH_GOOGLE_CLIENT_ID');
    expect(text).toMatch(/good once, until \d{4}-\d{2}-\d{2}T/);

    const yahoo = await cli(['mailbox', 'connect', '--provider', 'yahoo', '--workspace', workspaceId], env);
    expect(yahoo.code).toBe(1);
    expect(yahoo.stderr).toContain('--provider must be one of: google, microsoft');
    expect(yahoo.stdout).not.toContain('http');

    const unknown = await cli(['mailbox', 'connect', '--provider', 'microsoft', '--workspace', '00000000-0000-4000-8000-000000000999'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/workspace/i);
  });

  it.skipIf(!canLogIn)(
    'a connect from the CLI completes in a browser without a console session; list shows the auth kind; remove says whether the access was revoked',
    async () => {
      const google = await cli(['mailbox', 'connect', '--provider', 'google', '--workspace', workspaceId, ...servers, '--json'], env);
      expect(google.code, google.stderr).toBe(0);
      const done = await openInBrowser(JSON.parse(google.stdout).authorizeUrl);
      expect(done.status, done.body).toBe(200);
      expect(done.body).toContain(
        `Connected ${DANA} with Google to the workspace “Mail”. It sends and reads mail with OAuth; tokens are stored encrypted. You can close this page.`,
      );

      const microsoft = await cli(['mailbox', 'connect', '--provider', 'microsoft', '--workspace', workspaceId, ...servers], env);
      expect(microsoft.code, microsoft.stderr).toBe(0);
      expect(new URL(microsoft.stdout.split('\n')[0]).searchParams.get('scope')).toContain('offline_access');
      expect((await openInBrowser(microsoft.stdout.split('\n')[0], { login_hint: LEE })).status).toBe(200);

      const views = await server!.services.mailboxes.list(workspaceId);
      const dana = views.find((v) => v.address === DANA)!;
      const tokens = (await readMailboxTokens(server!.handle.db, resolveTextCipher(config), dana.id))!;

      const list = await cli(['mailbox', 'list', '--workspace', workspaceId], env);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toMatch(new RegExp(`${DANA}  google \\(OAuth 2\\.0\\)  ok`));
      expect(list.stdout).toMatch(new RegExp(`${LEE}  microsoft \\(OAuth 2\\.0\\)  ok`));
      const json = await cli(['mailbox', 'list', '--workspace', workspaceId, '--json'], env);
      expect(
        JSON.parse(json.stdout)
          .map((m: { auth: string }) => m.auth)
          .sort(),
      ).toEqual(['google', 'microsoft']);
      for (const out of [list.stdout, json.stdout, google.stdout, microsoft.stdout]) {
        expect(out).not.toContain(tokens.accessToken);
        expect(out).not.toContain(tokens.refreshToken);
      }

      const removeGoogle = await cli(['mailbox', 'remove', '--workspace', workspaceId, DANA], env);
      expect(removeGoogle.code, removeGoogle.stderr).toBe(0);
      expect(removeGoogle.stdout).toContain(`Removed mailbox ${DANA}; its tokens are deleted and its access was revoked at the provider (Google)`);
      expect(fake.revoked.has(tokens.refreshToken)).toBe(true);

      const revokes = fake.requests.filter((r) => r.path === '/revoke').length;
      const removeMicrosoft = await cli(['mailbox', 'remove', '--workspace', workspaceId, LEE], env);
      expect(removeMicrosoft.code, removeMicrosoft.stderr).toBe(0);
      expect(removeMicrosoft.stdout).toContain(`Removed mailbox ${LEE}; its tokens are deleted here, but the access was not revoked at the provider`);
      expect(removeMicrosoft.stdout).toContain('"My apps"');
      expect(fake.requests.filter((r) => r.path === '/revoke').length).toBe(revokes);
      expect((await server!.services.mailboxes.list(workspaceId)).length).toBe(0);
    },
  );
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { request } from 'undici';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { axeSeriousOrCritical, CHROMIUM_ARGS, CHROMIUM_PATH } from '../helpers/browser.js';
import { dbEngine } from '../helpers/test-database.js';
import { ADMIN, admin } from '../helpers/world-fixtures.js';
import { ConsoleClient, signedInConsole } from '../helpers/console.js';
import { startXApiFake, xAppEnv, type XApiFake } from '../helpers/x-api-fake.js';
import { freePort } from '../helpers/free-port.js';

// Issue 18 §1: "Connect X account" runs OAuth 2.0 Authorization Code with PKCE against X's authorize and token
// endpoints (here the X API fake, which approves at once and redirects back) and returns to the console's callback.
// The service's public URL is the address it listens on, so X's redirect reaches it, as it would in production.

// Screenshots for the README only when asked for (UPDATE_SCREENSHOTS=1), so a test run never rewrites tracked files.
const saveShots = dbEngine() === 'pglite' && process.env.UPDATE_SCREENSHOTS === '1';

describe('connecting an X account', { timeout: 120_000 }, () => {
  let x: XApiFake;
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;

  beforeAll(async () => {
    x = await startXApiFake();
    x.addUser({ id: '4242', username: 'northwind_hq', name: 'Northwind' });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await buildTestApp({
      realClock: true,
      env: {
        OUTREACH_ADMIN_TOKEN: ADMIN,
        OUTREACH_PUBLIC_URL: base,
        ...xAppEnv(x),
      },
    });
    ws = await createWorkspaceWithKey(t, 'Northwind');
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
    page = await (await browser.newContext({ viewport: { width: 1200, height: 800 } })).newPage();
    page.setDefaultTimeout(15_000);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await x?.close();
  });

  it('the console button runs the PKCE flow and the account becomes a row of GET /x/accounts, tokens encrypted', async () => {
    await page.goto(`${base}/console/accounts`);
    await page.getByRole('textbox', { name: 'Workspace key' }).fill(ws.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    await page.getByRole('button', { name: 'Connect X account' }).click();
    await page.getByText('Connected @northwind_hq (user id 4242) to the workspace “Northwind”.').waitFor();
    // The callback answered 303 to Accounts: a reload shows Accounts again (the notice was shown once), never a
    // replay of the spent state saying "not connected".
    expect(new URL(page.url()).pathname).toBe('/console/accounts');
    await page.getByRole('cell', { name: 'Connected to X' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    await page.getByRole('cell', { name: 'Connected to X' }).waitFor();
    expect(await page.getByText('not connected', { exact: false }).count()).toBe(0);
    expect(await page.getByText('Connected @northwind_hq (user id 4242) to the workspace “Northwind”.').count()).toBe(0);
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    if (saveShots) await page.screenshot({ path: 'docs/images/x-connect.png', fullPage: true });

    // The authorize request carried PKCE S256 and every scope; the code was exchanged once.
    expect(x.requests.filter((r) => r === 'POST /2/oauth2/token')).toHaveLength(1);
    const accounts = await t.app.inject({ method: 'GET', url: '/api/v1/x/accounts', headers: ws.auth });
    expect(accounts.json().accounts).toEqual(expect.arrayContaining([expect.objectContaining({ userId: '4242', handle: 'northwind_hq' })]));
    const row = await t.db.selectFrom('x_account_oauth').selectAll().where('workspace_id', '=', ws.workspaceId).executeTakeFirstOrThrow();
    expect(row.access_token).not.toMatch(/^at_/);
    expect(row.refresh_token).not.toMatch(/^rt_/);
    expect(row.scopes.split(' ')).toEqual(
      expect.arrayContaining(['tweet.read', 'users.read', 'follows.read', 'follows.write', 'like.write', 'dm.read', 'dm.write', 'offline.access']),
    );
  });

  it('outreach x connect (admin API): the authorize URL works from a browser without a console session; the state is single-use', async () => {
    const started = await t.app.inject({ method: 'POST', url: '/admin/v1/x/connect', headers: admin, payload: { workspaceId: ws.workspaceId } });
    expect(started.statusCode, started.body).toBe(200);
    const { authorizeUrl, callbackUrl } = started.json();
    expect(callbackUrl).toBe(`${base}/console/accounts/x/callback`);
    const url = new URL(authorizeUrl);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('scope')).toBe('tweet.read users.read follows.read follows.write like.write dm.read dm.write offline.access');
    expect(url.searchParams.get('redirect_uri')).toBe(callbackUrl);
    // X approves and sends the browser back; a browser with no session cookie follows the redirect.
    const approved = await request(authorizeUrl, { method: 'GET' });
    expect(approved.statusCode).toBe(302);
    await approved.body.dump();
    const back = new URL(approved.headers.location as string);
    // Without a console session the outcome goes to a result page of its own (303), shown once.
    const browserWithoutSession = new ConsoleClient(t);
    const done = await browserWithoutSession.get(`${back.pathname}${back.search}`);
    expect([done.statusCode, done.headers.location]).toEqual([303, '/console/accounts/x/connected']);
    const result = await browserWithoutSession.get('/console/accounts/x/connected');
    expect(result.statusCode).toBe(200);
    expect(result.body).toContain('Connected @northwind_hq');
    const reloaded = await browserWithoutSession.get('/console/accounts/x/connected');
    expect(reloaded.statusCode).toBe(200);
    expect(reloaded.body).not.toContain('not connected');
    expect(reloaded.body).toContain('its outcome was shown once');
    // The same state again: refused, nothing changes.
    const again = await browserWithoutSession.get(`${back.pathname}${back.search}`);
    expect([again.statusCode, again.headers.location]).toEqual([303, '/console/accounts/x/connected']);
    expect((await browserWithoutSession.get('/console/accounts/x/connected')).body).toContain('unknown, already used or expired');
  });

  it('a state past its 10 minutes, or one never issued, is refused with a plain page', async () => {
    const started = (await t.app.inject({ method: 'POST', url: '/admin/v1/x/connect', headers: admin, payload: { workspaceId: ws.workspaceId } })).json();
    const state = new URL(started.authorizeUrl).searchParams.get('state')!;
    await t.db
      .updateTable('oauth_states')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('state', '=', state)
      .execute();
    const outcome = async (url: string) => {
      const b = new ConsoleClient(t);
      const res = await b.get(url);
      expect([res.statusCode, res.headers.location]).toEqual([303, '/console/accounts/x/connected']);
      return (await b.get('/console/accounts/x/connected')).body;
    };
    expect(await outcome(`/console/accounts/x/callback?state=${state}&code=whatever`)).toContain('unknown, already used or expired');
    expect(await outcome('/console/accounts/x/callback?state=nope&code=whatever')).toContain('X account not connected');
    const unknownWs = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/x/connect',
      headers: admin,
      payload: { workspaceId: '00000000-0000-4000-8000-000000000999' },
    });
    expect(unknownWs.statusCode).toBe(404);
  });

  it('a connect started in the console completes only in that browser session: the link handed to another browser is refused and spent', async () => {
    const c = await signedInConsole(t, ws.key);
    const started = await c.post('/console/accounts/x/connect');
    expect(started.statusCode).toBe(303);
    const authorizeUrl = started.headers.location as string;
    expect(authorizeUrl.startsWith(`${x.url}/i/oauth2/authorize?`)).toBe(true);
    // Someone else's browser approves it (no console session, or another one): refused.
    const approved = await request(authorizeUrl);
    await approved.body.dump();
    const back = new URL(approved.headers.location as string);
    const other = new ConsoleClient(t);
    const elsewhere = await other.get(`${back.pathname}${back.search}`);
    expect([elsewhere.statusCode, elsewhere.headers.location]).toEqual([303, '/console/accounts/x/connected']);
    expect((await other.get('/console/accounts/x/connected')).body).toContain('started in another browser session');
    // Spent: not even the browser that started it can use that state now; the refusal shows on its Accounts page.
    const same = await c.get(`${back.pathname}${back.search}`);
    expect([same.statusCode, same.headers.location]).toEqual([303, '/console/accounts']);
    expect((await c.get('/console/accounts')).body).toContain('unknown, already used or expired');
  });

  it('Disconnect in the browser: a confirmation page (axe-clean), then the row says disconnected and X no longer takes the tokens', async () => {
    await page.goto(`${base}/console/accounts`);
    await page.getByRole('button', { name: 'Disconnect @northwind_hq' }).click();
    await page.getByRole('heading', { level: 1, name: 'Disconnect @northwind_hq?' }).waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    if (saveShots) await page.screenshot({ path: 'docs/images/x-disconnect.png', fullPage: true });
    const row = await t.db.selectFrom('x_account_oauth').selectAll().where('workspace_id', '=', ws.workspaceId).executeTakeFirstOrThrow();
    const accessToken = t.cipher.decrypt(row.access_token)!;
    await page.getByRole('button', { name: 'Yes, disconnect' }).click();
    await page.getByText('Disconnected: its tokens are deleted here and revoked at X.').waitFor();
    await page.getByRole('cell', { name: 'Disconnected here: its steps wait until it is connected again' }).waitFor();
    expect(await page.getByRole('button', { name: 'Disconnect @northwind_hq' }).count()).toBe(0);
    const me = await request(`${x.url}/2/users/me`, { headers: { authorization: `Bearer ${accessToken}` } });
    await me.body.dump();
    expect(me.statusCode).toBe(401);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { insertLead, insertPlay, insertSequence } from '../helpers/factories.js';
import { admin } from '../helpers/world-fixtures.js';
import { worldOauth, type XApiFake } from '../helpers/x-api-fake.js';
import { seedWorkspaces } from '../helpers/worlds/common.js';
import { startXWorld, X_SCOPES } from '../helpers/worlds/x.js';
import { step, steps } from '../engine/helpers.js';
import { xOauthRepository } from '../../src/channels/x/oauth.repository.js';
import { xTokensService } from '../../src/channels/x/tokens.service.js';

// "Disconnect" an X account (console and `outreach x disconnect`): its tokens are deleted here and revoked at X
// (RFC 7009, POST /2/oauth2/revoke), and its steps wait, never falling back to the sandbox, until a person connects
// it again. Against the X API fake over real sockets.

const ME = '2001';
const SANDBOX_ONLY = '2002';
const OTHERS = '2003';
const SCOPES = X_SCOPES;

describe('disconnecting an X account', () => {
  let x: XApiFake;
  let t: TestApp;
  let env: NonNullable<Parameters<typeof buildTestApp>[0]>['env'];
  let workspaceId: string;
  let otherWorkspaceId: string;
  let key: string;
  let tokens: ReturnType<XApiFake['issueTokens']>;
  let clock = Date.now();

  beforeAll(async () => {
    const world = await startXWorld({
      now: () => clock,
      users: [
        { id: ME, username: 'acme_hq' },
        { id: SANDBOX_ONLY, username: 'acme_lab' },
        { id: OTHERS, username: 'globex_hq' },
      ],
      workspaces: (x) => {
        tokens = x.issueTokens(ME);
        const others = x.issueTokens(OTHERS);
        return [
          {
            name: 'Acme',
            apiKeys: [{}],
            xAccounts: [
              { userId: ME, handle: 'acme_hq', oauth: worldOauth(tokens, SCOPES) },
              { userId: SANDBOX_ONLY, handle: 'acme_lab' },
            ],
          },
          { name: 'Globex', apiKeys: [{}], xAccounts: [{ userId: OTHERS, handle: 'globex_hq', oauth: worldOauth(others, SCOPES) }] },
        ];
      },
    });
    ({ x, t, env } = world);
    const [acme, globex] = world.workspaces;
    workspaceId = acme.id;
    otherWorkspaceId = globex.id;
    key = acme.key;
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await x?.close();
  });

  const oauthRow = (ws: string, userId: string) =>
    t.db.selectFrom('x_account_oauth').selectAll().where('workspace_id', '=', ws).where('user_id', '=', userId).executeTakeFirstOrThrow();
  const xAnswers = async (accessToken: string) =>
    (await request(`${x.url}/2/users/me`, { headers: { authorization: `Bearer ${accessToken}` } }).then(async (r) => (await r.body.dump(), r))).statusCode;
  const refreshAnswers = async (refreshToken: string) => {
    const res = await request(`${x.url}/2/oauth2/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${x.clientId}:${x.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
    });
    await res.body.dump();
    return res.statusCode;
  };
  const xDisconnectPath = (userId: string) => `/console/accounts/x/${userId}/disconnect`;

  describe('in the console', () => {
    let c: ConsoleClient;
    beforeAll(async () => {
      c = await signedInConsole(t, key);
    });

    it('the accounts page offers Disconnect for the connected account only, not for a sandbox account', async () => {
      const page = await c.get('/console/accounts');
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(`action="${xDisconnectPath(ME)}"`);
      expect(page.body).toContain('aria-label="Disconnect @acme_hq"');
      expect(page.body).not.toContain(xDisconnectPath(SANDBOX_ONLY));
    });

    it('asks first: the unconfirmed form shows a confirmation page and changes nothing', async () => {
      await c.get('/console/accounts');
      const res = await c.post(xDisconnectPath(ME));
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('Disconnect @acme_hq?');
      expect(res.body).toContain('name="confirmed" value="yes"');
      expect((await oauthRow(workspaceId, ME)).disconnected_at).toBeNull();
      expect(await xAnswers(tokens.accessToken)).toBe(200);
      expect(x.requests.filter((r) => r === 'POST /2/oauth2/revoke')).toHaveLength(0);
    });

    it('a form without the CSRF token is refused and changes nothing', async () => {
      await c.get('/console/accounts');
      const res = await c.post(xDisconnectPath(ME), { _csrf: null, confirmed: 'yes' });
      expect(res.statusCode).toBe(403);
      expect((await oauthRow(workspaceId, ME)).disconnected_at).toBeNull();
    });

    it("a sandbox account, another workspace's account and an unknown id are 404, and nothing changes", async () => {
      await c.get('/console/accounts');
      for (const userId of [SANDBOX_ONLY, OTHERS, '999999', 'not-a-number']) {
        const res = await c.post(xDisconnectPath(userId), { confirmed: 'yes' });
        expect(res.statusCode, userId).toBe(404);
      }
      expect((await oauthRow(otherWorkspaceId, OTHERS)).disconnected_at).toBeNull();
      expect(x.requests.filter((r) => r === 'POST /2/oauth2/revoke')).toHaveLength(0);
    });

    it('confirmed: the tokens are wiped here and revoked at X, the account stays listed, and the page says so', async () => {
      await c.get('/console/accounts');
      const res = await c.post(xDisconnectPath(ME), { confirmed: 'yes' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('Disconnected: its tokens are deleted here and revoked at X.');
      expect(res.body).toContain('Disconnected here: its steps wait until it is connected again');
      expect(res.body).not.toContain(xDisconnectPath(ME)); // nothing left to disconnect

      const row = await oauthRow(workspaceId, ME);
      expect(row.disconnected_at).not.toBeNull();
      expect(row.disconnect_reason).toBe('by_person');
      expect(t.cipher.decrypt(row.access_token)).toBe('');
      expect(t.cipher.decrypt(row.refresh_token)).toBe('');
      // Revoked at X: neither token works any more.
      expect(x.requests.filter((r) => r === 'POST /2/oauth2/revoke')).toHaveLength(2);
      expect(await xAnswers(tokens.accessToken)).toBe(401);
      expect(await refreshAnswers(tokens.refreshToken)).toBe(400);
      // Still one of the workspace's X accounts; readiness names it and says why.
      const accounts = await t.app.inject({ method: 'GET', url: '/api/v1/x/accounts', headers: { authorization: `Bearer ${key}` } });
      expect(accounts.json().accounts.map((a: { userId: string }) => a.userId)).toContain(ME);
      const readiness = await t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: { authorization: `Bearer ${key}` } });
      expect(readiness.body).toContain('x_account_disconnected');
      expect(readiness.body).toContain('a person disconnected it');
      // The other workspace's account is untouched.
      expect((await oauthRow(otherWorkspaceId, OTHERS)).disconnected_at).toBeNull();
    });

    it("a disconnected account's DM step waits: nothing goes to X, nothing to the sandbox, and the lead's attempts are untouched", async () => {
      const sequenceId = await insertSequence(t.db, workspaceId, { channels: ['x'], steps: steps(step('x_dm', { message: 'Hello {{firstName}}' })) });
      const playId = (await insertPlay(t.db, workspaceId, { accountUserId: ME })).id;
      x.addUser({ id: '3001', username: 'pat_x', name: 'Pat' });
      const leadId = await insertLead(t.db, workspaceId, {
        person: 'Pat Doe',
        x_user_id: '3001',
        username: 'pat_x',
        account_user_id: ME,
        play_id: playId,
        sequence_id: sequenceId,
        next_action_at: new Date(clock),
      });
      clock += 1_000;
      const tick = await t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: { now: new Date(clock).toISOString() } });
      expect(tick.statusCode, tick.body).toBe(200);
      const lead = await t.db
        .selectFrom('leads')
        .select(['stage', 'messaged_at', 'step_attempts', 'step_waits', 'last_error'])
        .where('id', '=', leadId)
        .executeTakeFirstOrThrow();
      expect(lead.messaged_at).toBeNull();
      expect(lead.step_attempts).toBe(0);
      expect(lead.step_waits).toBe(1);
      expect(lead.last_error).toBe('x_account_disconnected');
      expect(x.dmEvents.filter((e) => e.senderId === ME)).toHaveLength(0);
      expect(x.requests.filter((r) => r.startsWith('POST /2/dm_conversations'))).toHaveLength(0);
    });

    it('disconnecting again (a resubmitted form) changes nothing and calls X no more', async () => {
      await c.get('/console/accounts');
      const revokes = x.requests.filter((r) => r === 'POST /2/oauth2/revoke').length;
      const before = await oauthRow(workspaceId, ME);
      const res = await c.post(xDisconnectPath(ME), { confirmed: 'yes' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('That X account was already disconnected');
      expect(x.requests.filter((r) => r === 'POST /2/oauth2/revoke').length).toBe(revokes);
      expect(await oauthRow(workspaceId, ME)).toEqual(before);
      // A 429 answered to a call that left before the Disconnect does not pause the account for after a reconnect.
      await xOauthRepository(t.cipher).pauseUntil(t.db, workspaceId, ME, new Date(clock + 900_000));
      expect((await oauthRow(workspaceId, ME)).rate_limited_until).toBeNull();
    });

    it('"Connect X account" again makes it connected: the reason is cleared and the label says Connected to X', async () => {
      await c.get('/console/accounts');
      const start = await c.post('/console/accounts/x/connect');
      expect(start.statusCode).toBe(303);
      const authorize = new URL(start.headers.location as string);
      authorize.searchParams.set('login_as', ME);
      const approved = await request(authorize.toString());
      await approved.body.dump();
      expect(approved.statusCode).toBe(302);
      const back = new URL(approved.headers.location as string);
      // The callback answers 303 to Accounts (a reload never replays it), which says how the connect went.
      const callback = await c.get(back.pathname + back.search);
      expect(callback.statusCode, callback.body).toBe(303);
      const done = await c.get(callback.headers.location as string);
      expect(done.statusCode, done.body).toBe(200);
      expect(done.body).toContain('Connected @acme_hq');
      expect(done.body).toContain('Connected to X');
      const row = await oauthRow(workspaceId, ME);
      expect(row.disconnected_at).toBeNull();
      expect(row.disconnect_reason).toBeNull();
      expect(await xAnswers(t.cipher.decrypt(row.access_token)!)).toBe(200);
    });
  });

  describe('outreach x disconnect (the admin route the CLI calls)', () => {
    it('disconnects and revokes; bad input is 400 naming the field; a foreign account is 404', async () => {
      const before = t.cipher.decrypt((await oauthRow(workspaceId, ME)).refresh_token)!;
      const bad = await t.app.inject({ method: 'POST', url: '/admin/v1/x/disconnect', headers: admin, payload: { workspaceId, userId: 'acme_hq' } });
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toContain('userId');
      const foreign = await t.app.inject({ method: 'POST', url: '/admin/v1/x/disconnect', headers: admin, payload: { workspaceId, userId: OTHERS } });
      expect(foreign.statusCode).toBe(404);
      const res = await t.app.inject({ method: 'POST', url: '/admin/v1/x/disconnect', headers: admin, payload: { workspaceId, userId: ME } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ userId: ME, revokedAtX: true, alreadyDisconnected: false });
      expect(res.body).not.toContain(before);
      expect(await refreshAnswers(before)).toBe(400);
    });

    it('when X refuses the revocation the tokens are still deleted here, and the answer says X did not confirm', async () => {
      // A second process of the same installation whose X app secret is wrong: X answers the revocation 401.
      const fresh = x.issueTokens(OTHERS);
      await seedWorkspaces(t, [{ name: 'Initech', xAccounts: [{ userId: OTHERS, handle: 'initech_hq', oauth: worldOauth(fresh, SCOPES) }] }]);
      const initech = await t.db.selectFrom('workspaces').select('id').where('name', '=', 'Initech').executeTakeFirstOrThrow();
      const second = await buildTestApp({
        handle: t.handle,
        cipher: t.cipher,
        now: new Date(clock).toISOString(),
        env: { ...env, OUTREACH_X_CLIENT_SECRET: 'wrong' },
      });
      try {
        const res = await second.app.inject({
          method: 'POST',
          url: '/admin/v1/x/disconnect',
          headers: admin,
          payload: { workspaceId: initech.id, userId: OTHERS },
        });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toMatchObject({ revokedAtX: false, alreadyDisconnected: false });
      } finally {
        await second.close();
      }
      const row = await oauthRow(initech.id, OTHERS);
      expect(row.disconnect_reason).toBe('by_person');
      expect(t.cipher.decrypt(row.refresh_token)).toBe('');
      expect(await xAnswers(fresh.accessToken)).toBe(200); // X kept it: the person removes the app in X's settings
    });

    it('an account X already refused, or whose stored tokens no longer decrypt, is still disconnected and wiped', async () => {
      // Connected (tokens on record, as the world file or a connect would store them), then refused by X.
      await xOauthRepository(t.cipher).save(t.db, workspaceId, SANDBOX_ONLY, { ...x.issueTokens(SANDBOX_ONLY), scopes: SCOPES });
      await xOauthRepository(t.cipher).markDisconnected(t.db, workspaceId, SANDBOX_ONLY);
      const afterRefusal = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/x/disconnect',
        headers: admin,
        payload: { workspaceId, userId: SANDBOX_ONLY },
      });
      expect(afterRefusal.json()).toEqual({ userId: SANDBOX_ONLY, revokedAtX: true, alreadyDisconnected: false });
      expect((await oauthRow(workspaceId, SANDBOX_ONLY)).disconnect_reason).toBe('by_person');

      // Tokens written under another encryption key: nothing to revoke, but the row is wiped and marked all the same.
      await t.db
        .updateTable('x_account_oauth')
        .set({ access_token: 'v1:garbage', refresh_token: 'v1:garbage', disconnected_at: null, disconnect_reason: null })
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', SANDBOX_ONLY)
        .execute();
      const unreadable = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/x/disconnect',
        headers: admin,
        payload: { workspaceId, userId: SANDBOX_ONLY },
      });
      expect(unreadable.statusCode, unreadable.body).toBe(200);
      expect(unreadable.json()).toEqual({ userId: SANDBOX_ONLY, revokedAtX: false, alreadyDisconnected: false });
      const row = await oauthRow(workspaceId, SANDBOX_ONLY);
      expect(row.disconnect_reason).toBe('by_person');
      expect(t.cipher.decrypt(row.refresh_token)).toBe('');
    });

    it('a Disconnect racing a token refresh waits for it, then wipes and revokes the fresh tokens: the account never comes back', async () => {
      const near = x.issueTokens(ME, 60); // inside the refresh margin: the next use refreshes
      await xOauthRepository(t.cipher).save(t.db, workspaceId, ME, { ...near, scopes: SCOPES });
      const tokens = xTokensService({
        db: t.db,
        repo: xOauthRepository(t.cipher),
        settings: { apiUrl: x.url, clientId: x.clientId, clientSecret: x.clientSecret, timeoutMs: 5_000 },
      });
      const refreshes = x.requests.filter((r) => r === 'POST /2/oauth2/token').length;
      const revokes = x.requests.filter((r) => r === 'POST /2/oauth2/revoke').length;
      x.delayNextToken(400);
      const refreshing = tokens.accessToken(workspaceId, ME);
      // The refresh holds the row lock while X takes its time; the Disconnect starts meanwhile.
      while (x.requests.filter((r) => r === 'POST /2/oauth2/token').length === refreshes) await new Promise((r) => setTimeout(r, 10));
      const disconnecting = t.app.inject({ method: 'POST', url: '/admin/v1/x/disconnect', headers: admin, payload: { workspaceId, userId: ME } });
      const [fresh, done] = await Promise.all([refreshing, disconnecting]);
      expect(done.statusCode, done.body).toBe(200);
      expect(done.json()).toEqual({ userId: ME, revokedAtX: true, alreadyDisconnected: false });
      expect(fresh).not.toBe(near.accessToken);
      // The tokens the refresh stored were the ones revoked: neither the old nor the fresh one works at X.
      expect(x.requests.filter((r) => r === 'POST /2/oauth2/revoke').length - revokes).toBe(2);
      expect(await xAnswers(fresh)).toBe(401);
      const row = await oauthRow(workspaceId, ME);
      expect(row.disconnect_reason).toBe('by_person');
      expect(t.cipher.decrypt(row.access_token)).toBe('');
      await expect(tokens.accessToken(workspaceId, ME)).rejects.toMatchObject({ code: 'x_account_disconnected' });
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { insertPlay, insertSequence } from '../helpers/factories.js';
import { admin } from '../helpers/world-fixtures.js';
import { worldOauth, type XApiFake } from '../helpers/x-api-fake.js';
import { engineTick } from '../helpers/worlds/common.js';
import { insertXPersonLead, startXWorld, X_SCOPES, FOLLOW_AND_LIKE } from '../helpers/worlds/x.js';
import { step, steps } from '../engine/helpers.js';
import { xOauthRepository } from '../../src/channels/x/oauth.repository.js';

// Issue 18: the real X driver and watcher against a local fake of the X API v2 (a real HTTP server with X's shapes,
// rate-limit headers and pagination). The account is seeded with the world file's `xAccounts[].oauth` (no OAuth
// dance), and the engine runs through POST /admin/v1/engine/tick.
// Issue 28 (domain/policy.ts): X allows automated DMs only to people who DMed the account first, and no automated
// follows or likes. The tests about sending (503, closed DMs, 429, crash, 401, two workers) reach people on record as
// having written first (`wroteFirst`: the x_dm_senders row the watcher keeps); follows, likes and the first DM of the
// Play's lead are a person's clicks (services.tasks.performAtClick, the console's Send DM / Follow / Like).

const ME = '2001';
const LEASE_S = 600;

describe('the real X channel', () => {
  let x: XApiFake;
  let t: TestApp;
  let workspaceId: string;
  let auth: { authorization: string };
  let playId: string;
  let engageThenDm: string;
  let dmOnly: string;
  let accessToken: string;
  let clock = Date.now();
  let userSeq = 3000;
  let env: NonNullable<Parameters<typeof buildTestApp>[0]>['env'];

  beforeAll(async () => {
    ({
      x,
      t,
      env,
      workspaces: [{ id: workspaceId, auth }],
    } = await startXWorld({
      now: () => clock,
      users: [{ id: ME, username: 'acme_hq' }],
      env: { OUTREACH_X_TIMEOUT_MS: 60_000, OUTREACH_X_POLL_INTERVAL: 60, OUTREACH_ENGINE_INFLIGHT_LEASE: LEASE_S, OUTREACH_ENGINE_MAX_ATTEMPTS: 2 },
      workspaces: (x) => {
        const tokens = x.issueTokens(ME);
        accessToken = tokens.accessToken;
        return [
          {
            name: 'X Co',
            apiKeys: [{}],
            energy: { balance: 10_000, dailyRefill: 10_000 },
            xAccounts: [{ userId: ME, handle: 'acme_hq', oauth: worldOauth(tokens, X_SCOPES) }],
          },
        ];
      },
    }));
    engageThenDm = await insertSequence(t.db, workspaceId, {
      channels: ['x'],
      steps: steps(step('x_engage', { actions: FOLLOW_AND_LIKE }), step('x_dm', { delayDays: 1, message: 'Hi {{firstName}}, thanks for the follow' }, 1)),
    });
    // With a link: X stores it rewritten to t.co, so finding the DM again cannot compare texts literally.
    dmOnly = await insertSequence(t.db, workspaceId, {
      channels: ['x'],
      steps: steps(step('x_dm', { message: 'Hello {{firstName}}, two minutes: https://acme.example/demo?ref=x' })),
    });
    playId = (await insertPlay(t.db, workspaceId, { accountUserId: ME })).id;
  }, 60_000);

  afterAll(async () => {
    x?.releaseStalled();
    await t?.close();
    await x?.close();
  });

  const tick = (advanceMs = 1_000) => engineTick(t, (clock += advanceMs));

  /**
   * A person on X, and the lead of the Play that reaches them with `sequence`. `wroteFirst`: they DMed the account
   * before they were a lead, and the watcher recorded them (x_dm_senders), so X allows the sequence's DMs to them.
   */
  const xLead = (name: string, sequence: string, user: { acceptsDms?: boolean; wroteFirst?: boolean } = {}) =>
    insertXPersonLead(
      { x, t },
      { workspaceId, xUserId: String(++userSeq), name, accountUserId: ME, playId, sequenceId: sequence, at: new Date(clock), ...user },
    );
  const leadRow = (id: string) =>
    t.db
      .selectFrom('leads')
      .select([
        'stage',
        'last_error',
        'next_action_at',
        'followed_at',
        'followed_back_at',
        'messaged_at',
        'automation_stopped',
        'step_attempts',
        'step_waits',
        'inflight_key',
        'x_user_id',
      ])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  const dmsTo = (userId: string) => x.dmEvents.filter((e) => e.senderId === ME && e.recipientId === userId);
  const count = (prefix: string) => x.requests.filter((r) => r.startsWith(prefix)).length;
  /** The lead's open task, performed as the console's button does it, at the test's clock. */
  async function click(leadId: string, kind: 'x_dm' | 'x_engage') {
    t.clock.set(new Date(clock));
    const open = (await t.services.tasks.list(workspaceId, { kind })).tasks.filter((k) => k.lead.id === leadId);
    expect(open).toHaveLength(1);
    return t.services.tasks.performAtClick(workspaceId, open[0].id, 'console:test');
  }

  it("an X Play's lead is followed and liked (a click), then DMed (a click: Pat never wrote first), then answers by DM: the lead freezes and the reply is queued once", async () => {
    const { xUserId, leadId } = await xLead('Pat', engageThenDm);
    const post = x.post(xUserId, 'Shipping our new API today');
    await tick();
    expect(x.follows.get(ME)?.has(xUserId)).toBeFalsy();
    await click(leadId, 'x_engage');
    expect(x.follows.get(ME)?.has(xUserId)).toBe(true);
    expect(x.likes.get(ME)?.has(post.id)).toBe(true);
    expect((await leadRow(leadId)).stage).toBe('invited');

    await tick(86_400_000 + 60_000);
    expect(dmsTo(xUserId)).toHaveLength(0);
    await click(leadId, 'x_dm');
    expect(dmsTo(xUserId).map((e) => e.text)).toEqual(['Hi Pat, thanks for the follow']);
    const confirmed = await t.app.inject({ method: 'GET', url: '/api/v1/activity?action=x_dm&outcome=ok', headers: auth });
    expect(confirmed.json().actions.some((a: { lead: { id: string } }) => a.lead.id === leadId)).toBe(true);

    x.receiveDm(xUserId, ME, 'Thanks! Happy to talk on Tuesday.');
    const summary = await tick(120_000);
    expect(summary.xAccounts?.[ME]).toMatchObject({ replies: 1 });
    const lead = await leadRow(leadId);
    expect(lead.stage).toBe('replied');
    const replies = await t.app.inject({ method: 'GET', url: '/api/v1/replies', headers: auth });
    const mine = replies.json().replies.filter((r: { lead: { id: string } }) => r.lead.id === leadId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ channel: 'x', theirMessage: 'Thanks! Happy to talk on Tuesday.' });

    // Polled again (and again by a second pass): the same DM event is never applied twice.
    await tick(120_000);
    await tick(120_000);
    const again = await t.app.inject({ method: 'GET', url: '/api/v1/replies', headers: auth });
    expect(again.json().replies.filter((r: { lead: { id: string } }) => r.lead.id === leadId)).toHaveLength(1);
    // Our own DMs and DMs from people who are not leads are not replies.
    const stranger = x.addUser({ id: '9999', username: 'stranger' });
    x.receiveDm(stranger.id, ME, 'who are you?');
    expect((await tick(120_000)).xAccounts?.[ME]).toMatchObject({ replies: 0, unmatched: 1 });
  });

  it('a follow-back is heard by comparing the account’s followers with the leads it followed', async () => {
    const { xUserId, leadId } = await xLead('Quinn', engageThenDm);
    await tick();
    await click(leadId, 'x_engage');
    expect((await leadRow(leadId)).followed_at).not.toBeNull();
    x.follow(xUserId, ME);
    // Followers are compared at most every 15 minutes (X allows 15 follower reads per 15 minutes).
    const summary = await tick(16 * 60_000);
    expect(summary.xAccounts?.[ME]?.followBacks).toBe(1);
    expect((await leadRow(leadId)).followed_back_at).not.toBeNull();
    const acts = await t.app.inject({ method: 'GET', url: '/api/v1/activity?action=x_follow_back', headers: auth });
    expect(acts.json().actions.filter((a: { lead: { id: string } }) => a.lead.id === leadId)).toHaveLength(1);
  });

  it('a 503 after X took the DM: the DM is found among the DM events (its link rewritten to t.co) and recorded as sent, never sent twice', async () => {
    const w = await xLead('Wade', dmOnly, { wroteFirst: true });
    x.failNext('POST /2/dm_conversations', { status: 503, afterDelivery: true }, 1);
    await tick();
    expect(dmsTo(w.xUserId)).toHaveLength(1);
    expect(dmsTo(w.xUserId)[0].text).toMatch(/^Hello Wade, two minutes: https:\/\/t\.co\//);
    const lead = await leadRow(w.leadId);
    expect(lead.messaged_at).not.toBeNull();
    expect(lead.last_error).toBeNull();
    await tick(3_600_000);
    expect(dmsTo(w.xUserId)).toHaveLength(1);
  });

  it('a DM to a person whose DMs are closed fails the lead plainly (x_dm_not_permitted), without retries', async () => {
    const { leadId } = await xLead('Closed', dmOnly, { acceptsDms: false, wroteFirst: true });
    await tick();
    const lead = await leadRow(leadId);
    expect(lead).toMatchObject({ stage: 'failed', last_error: 'x_dm_not_permitted', automation_stopped: true });
  });

  it("a 429 pauses the whole account until X's reset: no call to X before it, the leads wait (not failed, not their attempts), then go out", async () => {
    const resetAt = Math.ceil(clock / 1000) + 600;
    x.failNext('POST /2/dm_conversations', { status: 429, resetAt }, 50);
    const a = await xLead('Rita', dmOnly, { wroteFirst: true });
    const b = await xLead('Sam', dmOnly, { wroteFirst: true });
    await tick();
    for (const id of [a.leadId, b.leadId]) {
      const lead = await leadRow(id);
      expect(lead.last_error).toBe('rate_limited');
      expect(lead.stage).not.toBe('failed');
      expect(new Date(lead.next_action_at!).getTime()).toBeGreaterThanOrEqual(resetAt * 1000 - 1000);
    }
    // Both leads made due again inside the window: the paused account does not call X at all.
    await t.db
      .updateTable('leads')
      .set({ next_action_at: new Date(clock) })
      .where('id', 'in', [a.leadId, b.leadId])
      .execute();
    const before = count('POST /2/dm_conversations');
    await tick(60_000);
    expect(count('POST /2/dm_conversations')).toBe(before);
    // Rate limits are not the lead's attempts: with OUTREACH_ENGINE_MAX_ATTEMPTS=2, two waits and then one 503
    // (a real failure, attempt 1 of 2) still leave the lead waiting, and the DM goes out on the retry.
    expect((await leadRow(a.leadId)).stage).not.toBe('failed');
    x.clearScripted();
    x.failNext('POST /2/dm_conversations', { status: 503 }, 1);
    await tick(11 * 60_000);
    const afterReset = [dmsTo(a.xUserId).length, dmsTo(b.xUserId).length].sort();
    expect(afterReset).toEqual([0, 1]);
    const unlucky = dmsTo(a.xUserId).length === 0 ? a : b;
    expect(await leadRow(unlucky.leadId)).toMatchObject({ last_error: 'x_503', step_attempts: 1, step_waits: 2 });
    await tick(61 * 60_000);
    expect(dmsTo(a.xUserId)).toHaveLength(1);
    expect(dmsTo(b.xUserId)).toHaveLength(1);
    expect((await leadRow(unlucky.leadId)).stage).not.toBe('failed');
  });

  it("a crash after X took the DM: recovery finds it among the account's DM events, records it once, never sends again", async () => {
    const v = await xLead('Vera', dmOnly, { wroteFirst: true });
    x.stallNextDm();
    const abandoned = t.services.engine.runPass({ now: new Date(clock) });
    await expect.poll(async () => (await leadRow(v.leadId)).inflight_key, { timeout: 10_000 }).not.toBeNull();
    await expect.poll(() => dmsTo(v.xUserId).length, { timeout: 10_000 }).toBe(1);
    // Inside the lease nothing happens; after it, the next pass asks X (GET /2/dm_events) instead of sending again.
    await tick(60_000);
    expect((await leadRow(v.leadId)).inflight_key).not.toBeNull();
    const summary = await tick((LEASE_S + 60) * 1000);
    expect(summary.actions).toBeGreaterThanOrEqual(1);
    const lead = await leadRow(v.leadId);
    expect(lead.inflight_key).toBeNull();
    expect(lead.messaged_at).not.toBeNull();
    // The abandoned attempt ends (its connection drops); it records nothing more and sends nothing more.
    x.releaseStalled();
    await abandoned;
    await tick(60_000);
    expect(dmsTo(v.xUserId)).toHaveLength(1);
    const acts = await t.app.inject({ method: 'GET', url: '/api/v1/activity?action=x_dm', headers: auth });
    const mine = acts.json().actions.filter((a: { lead: { id: string } }) => a.lead.id === v.leadId);
    expect(mine.map((a: { outcome: string }) => a.outcome)).toEqual(['ok']);
  });

  it('a 401 refreshes the token once and sends; a refused refresh disconnects the account: steps wait, readiness says x_account_disconnected', async () => {
    // The token in use: the clicks above ran at the test's clock, a day on, so the service refreshed the seeded one.
    accessToken = (await xOauthRepository(t.cipher).find(t.db, workspaceId, ME))!.accessToken;
    x.expireAccessToken(accessToken);
    const refreshes = count('POST /2/oauth2/token');
    const { xUserId } = await xLead('Tess', dmOnly, { wroteFirst: true });
    await tick();
    expect(dmsTo(xUserId)).toHaveLength(1);
    expect(count('POST /2/oauth2/token')).toBe(refreshes + 1);

    // X refuses the (rotated) refresh token: the account is disconnected, nothing is sent, no lead is failed.
    const row = await t.services.xConnect.connections(workspaceId);
    expect(row.get(ME)?.status).toBe('connected');
    await sql`UPDATE x_account_oauth SET expires_at = now() - interval '1 minute' WHERE user_id = ${ME}`.execute(t.db);
    x.revokeAllRefreshTokens();
    const u = await xLead('Uma', dmOnly, { wroteFirst: true });
    await tick();
    const lead = await leadRow(u.leadId);
    expect(lead.last_error).toBe('x_account_disconnected');
    expect(lead.stage).not.toBe('failed');
    expect(dmsTo(u.xUserId)).toHaveLength(0);
    const readiness = await t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: auth });
    expect(readiness.body).toContain('x_account_disconnected');
    expect(readiness.body).not.toContain(accessToken);
    // Connected again (the world file's tokens, as a person's connect would store them): the waiting step goes out.
    const fresh = x.issueTokens(ME);
    accessToken = fresh.accessToken;
    const reseed = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/seed',
      headers: admin,
      payload: {
        workspaces: [
          {
            id: workspaceId,
            name: 'X Co',
            xAccounts: [
              {
                userId: ME,
                handle: 'acme_hq',
                oauth: worldOauth(fresh),
              },
            ],
          },
        ],
      },
    });
    expect(reseed.statusCode, reseed.body).toBe(200);
    expect(reseed.body).not.toContain(fresh.accessToken);
    await tick(31 * 60_000);
    expect(dmsTo(u.xUserId)).toHaveLength(1);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: auth })).body).not.toContain('x_account_disconnected');
  });

  it('two workers on one database with an expired token: one refresh (the row lock), every DM sent once', async () => {
    const second = await buildTestApp({ handle: t.handle, cipher: t.cipher, now: new Date(clock).toISOString(), env });
    try {
      await sql`UPDATE x_account_oauth SET expires_at = now() + interval '1 minute' WHERE user_id = ${ME}`.execute(t.db);
      const refreshes = count('POST /2/oauth2/token');
      const leads = await Promise.all(['Wes', 'Xia', 'Yul', 'Zed'].map((n) => xLead(n, dmOnly, { wroteFirst: true })));
      const now = new Date(clock + 1_000);
      await Promise.all([t.services.engine.runPass({ now }), second.services.engine.runPass({ now })]);
      expect(count('POST /2/oauth2/token')).toBe(refreshes + 1);
      for (const l of leads) expect(dmsTo(l.xUserId)).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});

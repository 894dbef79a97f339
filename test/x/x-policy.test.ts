import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertPlay, insertSequence } from '../helpers/factories.js';
import { worldOauth, type XApiFake } from '../helpers/x-api-fake.js';
import { engineTick, seedWorkspaces } from '../helpers/worlds/common.js';
import { startXWorld, X_SCOPES, FOLLOW_AND_LIKE } from '../helpers/worlds/x.js';
import { step, steps } from '../engine/helpers.js';
import { deliveryOf } from '../../src/domain/policy.js';
import { recipientIdentityOf } from '../../src/channels/recipients.js';
import type { TaskView } from '../../src/modules/tasks/index.js';
import { xOauthRepository } from '../../src/channels/x/oauth.repository.js';

// Issue 28 §1, X under the platform policy (domain/policy.ts, docs/policy.md, docs/x-channel.md): X's Developer
// Guidelines allow automated DMs only after the person DMed the account first, and no automated follow or like. So a
// sequence's x_dm to someone who never wrote, and every x_engage, become a person's task; only the console's button
// (services.tasks.performAtClick) acts on X, at the click. Against the X API fake over real sockets, engine through
// POST /admin/v1/engine/tick, tasks through GET /api/v1/tasks.

const ME = '2001';
const LATE = '2002';
const DAY = 86_400_000;
const SCOPES = X_SCOPES;

describe('X under the platform policy', () => {
  let x: XApiFake;
  let t: TestApp;
  let env: NonNullable<Parameters<typeof buildTestApp>[0]>['env'];
  let workspaceId: string;
  let auth: { authorization: string };
  let playId: string;
  let dmOnly: string;
  let engage: string;
  let clock = Date.now();
  let userSeq = 7000;

  beforeAll(async () => {
    ({
      x,
      t,
      env,
      workspaces: [{ id: workspaceId, auth }],
    } = await startXWorld({
      now: () => clock,
      users: [
        { id: ME, username: 'acme_hq' },
        { id: LATE, username: 'acme_late' },
      ],
      env: { OUTREACH_X_POLL_INTERVAL: 60, OUTREACH_PACING_MESSAGE_CAP: 50, OUTREACH_PACING_INVITE_CAP: 50 },
      workspaces: (x) => [
        {
          name: 'Policy Co',
          apiKeys: [{}],
          energy: { balance: 10_000, dailyRefill: 10_000 },
          xAccounts: [{ userId: ME, handle: 'acme_hq', oauth: worldOauth(x.issueTokens(ME, 30 * 86_400), SCOPES) }],
        },
      ],
    }));
    dmOnly = await insertSequence(t.db, workspaceId, {
      channels: ['x'],
      steps: steps(step('x_dm', { message: 'Hello {{firstName}}, a question about your launch' })),
    });
    engage = await insertSequence(t.db, workspaceId, {
      channels: ['x'],
      steps: steps(step('x_engage', { actions: FOLLOW_AND_LIKE })),
    });
    playId = (await insertPlay(t.db, workspaceId, { accountUserId: ME })).id;
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await x?.close();
  });

  /** One engine pass at the test's clock (the watcher's 60 s poll is due after the default step). */
  const tick = (advanceMs = 61_000) => engineTick(t, (clock += advanceMs), { setClock: true });
  /** A person on X. */
  function person(name: string) {
    const id = String(++userSeq);
    x.addUser({ id, username: `${name.toLowerCase()}_x`, name });
    return id;
  }
  /** The lead that reaches `xUserId` with `sequence` through `play` (ME's by default). */
  const xLead = (name: string, xUserId: string, sequence: string | null, play = playId) =>
    insertLead(t.db, workspaceId, {
      person: `${name} Doe`,
      x_user_id: xUserId,
      username: `${name.toLowerCase()}_x`,
      play_id: play,
      sequence_id: sequence,
      next_action_at: sequence ? new Date(clock) : null,
    });
  const dmsTo = (id: string, from = ME) => x.dmEvents.filter((e) => e.senderId === from && e.recipientId === id);
  const count = (prefix: string) => x.requests.filter((r) => r.startsWith(prefix)).length;
  const ledger = async (leadId: string) =>
    (await t.db.selectFrom('activity').select(['action', 'outcome', 'detail']).where('lead_id', '=', leadId).orderBy('created_at').execute()).map((a) => ({
      ...a,
      detail: (typeof a.detail === 'string' ? JSON.parse(a.detail) : a.detail) as Record<string, unknown>,
    }));
  const tasksOf = async (leadId: string, query = '') => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/tasks${query}`, headers: auth });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().tasks as TaskView[]).filter((k) => k.lead.id === leadId);
  };
  const sender = (account: string, id: string) =>
    t.db
      .selectFrom('x_dm_senders')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('account_user_id', '=', account)
      .where('sender_id', '=', id)
      .executeTakeFirst();
  /** DMs and follows counted today on ME's send budget (issue 25's ledger, scope x_account). */
  const budgetUsed = async (budget: 'dms' | 'follows') => {
    const row = await t.db
      .selectFrom('send_budgets')
      .select(sql<number>`COALESCE(sum(used), 0)::int`.as('used'))
      .where('workspace_id', '=', workspaceId)
      .where('scope', '=', 'x_account')
      .where('scope_id', '=', ME)
      .where('budget', '=', budget)
      .where('window_start', '=', new Date(clock).toISOString().slice(0, 10) as never)
      .executeTakeFirstOrThrow();
    return Number(row.used);
  };

  it('an x_dm to someone who never wrote becomes a task: nothing reaches X, and the task lists the rendered text and the X profile link', async () => {
    const nora = person('Nora');
    const leadId = await xLead('Nora', nora, dmOnly);
    const posts = count('POST /2/dm_conversations');
    for (let i = 0; i < 3; i++) await tick();
    expect(count('POST /2/dm_conversations')).toBe(posts);
    expect(dmsTo(nora)).toHaveLength(0);
    const [task, ...more] = await tasksOf(leadId, '?kind=x_dm');
    expect(more).toHaveLength(0);
    expect(task).toMatchObject({
      status: 'open',
      kind: 'x_dm',
      channel: 'x',
      reason: 'x_dm_not_invited',
      xAccount: ME,
      text: 'Hello Nora, a question about your launch',
      profileUrl: 'https://x.com/nora_x',
    });
    // The task holds the lead's lane: no x_dm on the ledger, nothing due.
    expect((await ledger(leadId)).filter((a) => a.action === 'x_dm')).toEqual([]);
    const lead = await t.db.selectFrom('leads').select(['next_action_at', 'messaged_at']).where('id', '=', leadId).executeTakeFirstOrThrow();
    expect(lead).toMatchObject({ next_action_at: null, messaged_at: null });
  });

  it('an x_dm X forbids falls through its allowed:false edge to e-mail: no task, nothing reaches X, the path says why', async () => {
    const dmThenMail = await insertSequence(t.db, workspaceId, {
      channels: ['x', 'email'],
      steps: steps(
        step('x_dm', { message: 'Hello {{firstName}}', id: 'dm', next: [{ if: { allowed: false }, goto: 'mail' }], else: 'exit' }),
        step('email', { id: 'mail', subject: 'Hello', message: 'Hello {{firstName}}, by e-mail' }),
      ),
    });
    const olga = person('Olga');
    const leadId = await xLead('Olga', olga, dmThenMail);
    await t.db.updateTable('leads').set({ email: 'olga@example.com' }).where('id', '=', leadId).execute();
    const posts = count('POST /2/dm_conversations');
    await tick();
    await tick();
    expect(count('POST /2/dm_conversations')).toBe(posts);
    expect(await tasksOf(leadId)).toEqual([]);
    const dm = (await ledger(leadId)).find((a) => a.action === 'x_dm');
    expect(dm).toMatchObject({ outcome: 'skipped', detail: { step: 0, reason: 'x_dm_not_invited' } });
    // The lane is at the e-mail step now (the workspace has no mailbox here, so it waits there for a sender).
    const lead = await t.db.selectFrom('leads').select(['current_step', 'waiting_for']).where('id', '=', leadId).executeTakeFirstOrThrow();
    expect(lead).toMatchObject({ current_step: 1, waiting_for: null });
    const path = await t.db.selectFrom('lead_paths').select(['from_step', 'edge', 'goto', 'to_step', 'values']).where('lead_id', '=', leadId).execute();
    expect(path).toEqual([{ from_step: 0, edge: 0, goto: 'mail', to_step: 1, values: { allowed: false } }]);
  });

  it('after the person DMs the account first (the watcher records the sender), the next x_dm goes alone', async () => {
    const olga = person('Olga');
    // She writes before she is anyone's lead: not a reply, but X now allows this account's DMs to her.
    x.receiveDm(olga, ME, 'Hi! Loved your talk, are you hiring?');
    const heard = await tick();
    expect(heard.xAccounts?.[ME]).toMatchObject({ unmatched: 1 });
    expect(await sender(ME, olga)).toBeDefined();

    const leadId = await xLead('Olga', olga, dmOnly);
    await tick();
    expect(dmsTo(olga).map((e) => e.text)).toEqual(['Hello Olga, a question about your launch']);
    const dms = (await ledger(leadId)).filter((a) => a.action === 'x_dm');
    expect(dms).toHaveLength(1);
    expect(dms[0].outcome).toBe('ok');
    expect(dms[0].detail.via).toBeUndefined();
    expect(await tasksOf(leadId, '?status=open')).toEqual([]);
    expect(await tasksOf(leadId, '?status=done')).toEqual([]);
  });

  it('the conversation lookup at send time: someone who wrote before the watcher ever read it is found at X, the DM goes alone, and the sender is recorded', async () => {
    // Pia wrote to the second account ten days ago, before it was connected here: the watcher's first poll reads back
    // one day only, so nothing records her. Only the conversation at X knows.
    const pia = person('Pia');
    const now = clock;
    clock = now - 10 * DAY;
    const hers = x.receiveDm(pia, LATE, 'Ping me when you launch');
    clock = now;
    await seedWorkspaces(t, [
      { id: workspaceId, name: 'Policy Co', xAccounts: [{ userId: LATE, handle: 'acme_late', oauth: worldOauth(x.issueTokens(LATE, 30 * 86_400), SCOPES) }] },
    ]);
    await tick();
    expect(await sender(LATE, pia)).toBeUndefined();

    const latePlay = (await insertPlay(t.db, workspaceId, { accountUserId: LATE })).id;
    const leadId = await xLead('Pia', pia, dmOnly, latePlay);
    await tick();
    expect(count(`GET /2/dm_conversations/with/${pia}/dm_events`)).toBe(1);
    expect(dmsTo(pia, LATE).map((e) => e.text)).toEqual(['Hello Pia, a question about your launch']);
    const dms = (await ledger(leadId)).filter((a) => a.action === 'x_dm');
    expect(dms.map((a) => [a.outcome, a.detail.via])).toEqual([['ok', undefined]]);
    const recorded = await sender(LATE, pia);
    expect(new Date(recorded!.first_at).toISOString()).toBe(hers.createdAt);
    expect(await tasksOf(leadId, '?status=open')).toEqual([]);
    // Her old DM never became a reply: the lead was messaged, not frozen.
    expect((await t.db.selectFrom('leads').select('stage').where('id', '=', leadId).executeTakeFirstOrThrow()).stage).not.toBe('replied');
  });

  it('follows and likes only ever happen from a click: x_engage steps open tasks, the engine never follows or likes, performAtClick performs exactly one, and recording through the API performs none', async () => {
    const quinn = person('Quinn');
    const rex = person('Rex');
    const quinnPost = x.post(quinn, 'Shipping our API today');
    x.post(rex, 'Hiring two engineers');
    const q = await xLead('Quinn', quinn, engage);
    const r = await xLead('Rex', rex, engage);
    for (let i = 0; i < 3; i++) await tick(3_600_000);
    expect(x.follows.get(ME)?.size ?? 0).toBe(0);
    expect(x.likes.get(ME)?.size ?? 0).toBe(0);
    expect(count(`POST /2/users/${ME}/following`) + count(`POST /2/users/${ME}/likes`)).toBe(0);
    const [qTask] = await tasksOf(q, '?kind=x_engage');
    const [rTask] = await tasksOf(r, '?kind=x_engage');
    for (const task of [qTask, rTask]) {
      expect(task).toMatchObject({ status: 'open', reason: 'x_engage_by_person', xAccount: ME });
      expect(task.actions.map((a) => a.type)).toEqual(['follow', 'like']);
    }

    const done = await t.services.tasks.performAtClick(workspaceId, qTask.id, 'console:pat');
    expect(done.status).toBe('done');
    expect([...(x.follows.get(ME) ?? [])]).toEqual([quinn]);
    expect([...(x.likes.get(ME) ?? [])]).toEqual([quinnPost.id]);
    const quinnLedger = (await ledger(q)).filter((a) => a.outcome === 'ok' && a.action === 'x_follow');
    expect(quinnLedger).toHaveLength(1);
    expect(quinnLedger[0].detail).toMatchObject({ via: 'task', taskId: qTask.id });

    // The API records that a person did it on X themselves: nothing is sent.
    const recorded = await t.app.inject({ method: 'POST', url: `/api/v1/tasks/${rTask.id}/complete`, headers: auth });
    expect(recorded.statusCode, recorded.body).toBe(200);
    for (let i = 0; i < 2; i++) await tick(3_600_000);
    expect([...(x.follows.get(ME) ?? [])]).toEqual([quinn]);
    expect(x.likes.get(ME)?.size).toBe(1);
    expect(count(`POST /2/users/${ME}/following`)).toBe(1);
  });

  it('a reply decision’s answer on X is not refused by the policy: the driver sends kind reply to someone who never wrote first', async () => {
    expect(deliveryOf('reply', 'x', 'x_connected')).toEqual({ by: 'engine' });
    const ray = person('Ray');
    const leadId = await xLead('Ray', ray, null);
    const row = await t.db.selectFrom('leads').selectAll().where('id', '=', leadId).executeTakeFirstOrThrow();
    const result = await t.services.drivers.forChannel('x').perform({
      workspaceId,
      accountId: null,
      accountUserId: ME,
      kind: 'reply',
      channel: 'x',
      recipient: recipientIdentityOf(row),
      subject: null,
      text: 'Thanks Ray, Tuesday works.',
      actions: [],
      idempotencyKey: `reply:${leadId}`,
      at: new Date(clock),
    });
    expect(result).toMatchObject({ outcome: 'ok' });
    expect(dmsTo(ray).map((e) => e.text)).toEqual(['Thanks Ray, Tuesday works.']);
  });

  it('an X DM asking to stop opts the person out and cancels their open tasks', async () => {
    const sol = person('Sol');
    const dmLane = await xLead('Sol', sol, dmOnly);
    const engageLane = await xLead('Sol', sol, engage);
    await tick();
    const open = [...(await tasksOf(dmLane)), ...(await tasksOf(engageLane))];
    expect(open.map((k) => k.kind).sort()).toEqual(['x_dm', 'x_engage']);

    x.receiveDm(sol, ME, 'STOP');
    await tick();
    const leads = await t.db.selectFrom('leads').select(['id', 'opted_out_at']).where('id', 'in', [dmLane, engageLane]).execute();
    expect(leads.every((l) => l.opted_out_at !== null)).toBe(true);
    // Every open task of the person is cancelled. The lane the DM reached records it as its reply first (closed_reason
    // replied, in the same transaction); the person's other lane is closed by the opt-out itself.
    const [reply] = await t.db.selectFrom('replies').select('lead_id').where('lead_id', 'in', [dmLane, engageLane]).execute();
    const cancelled = await t.db
      .selectFrom('tasks')
      .select(['lead_id', 'status', 'closed_reason'])
      .where(
        'id',
        'in',
        open.map((k) => k.id),
      )
      .execute();
    expect(cancelled.map((k) => [k.status, k.closed_reason, k.lead_id === reply.lead_id]).sort()).toEqual([
      ['cancelled', 'opted_out', false],
      ['cancelled', 'replied', true],
    ]);
    expect([...(await tasksOf(dmLane)), ...(await tasksOf(engageLane))]).toEqual([]);
    expect(dmsTo(sol)).toHaveLength(0);
  });

  it('two concurrent performAtClick calls on one task (two workers): X receives exactly one DM; the other is 409 task_closed', async () => {
    const uma = person('Uma');
    const leadId = await xLead('Uma', uma, dmOnly);
    await tick();
    const [task] = await tasksOf(leadId, '?kind=x_dm');
    const second = await buildTestApp({ handle: t.handle, cipher: t.cipher, now: new Date(clock).toISOString(), env });
    try {
      const results = await Promise.allSettled([
        t.services.tasks.performAtClick(workspaceId, task.id, 'console:a'),
        second.services.tasks.performAtClick(workspaceId, task.id, 'console:b'),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(lost.reason).toMatchObject({ statusCode: 409, code: 'task_closed' });
    } finally {
      await second.close();
    }
    expect(dmsTo(uma)).toHaveLength(1);
    const again = await t.app.inject({ method: 'POST', url: `/api/v1/tasks/${task.id}/complete`, headers: auth });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ ok: false, error: 'task_closed' });
    const dms = (await ledger(leadId)).filter((a) => a.action === 'x_dm');
    expect(dms.map((a) => [a.outcome, a.detail.via])).toEqual([['ok', 'task']]);
  });

  it("a completed X DM task counts once on the account's daily DM budget, whether performed at a click or recorded through the API", async () => {
    const vic = person('Vic');
    const wyn = person('Wyn');
    const v = await xLead('Vic', vic, dmOnly);
    const w = await xLead('Wyn', wyn, dmOnly);
    clock += 61_000;
    const before = await budgetUsed('dms');
    await tick(0);
    // Opening the tasks counted nothing: pacing counts a task when it is completed.
    expect(await budgetUsed('dms')).toBe(before);
    const [vTask] = await tasksOf(v, '?kind=x_dm');
    const [wTask] = await tasksOf(w, '?kind=x_dm');
    await t.services.tasks.performAtClick(workspaceId, vTask.id, 'console:pat');
    expect(dmsTo(vic)).toHaveLength(1);
    expect(await budgetUsed('dms')).toBe(before + 1);
    const recorded = await t.app.inject({ method: 'POST', url: `/api/v1/tasks/${wTask.id}/complete`, headers: auth });
    expect(recorded.statusCode, recorded.body).toBe(200);
    expect(dmsTo(wyn)).toHaveLength(0);
    expect(await budgetUsed('dms')).toBe(before + 2);
  });

  it('a click after the access token expired refreshes it (once) and performs the task', async () => {
    const zoe = person('Zoe');
    const leadId = await xLead('Zoe', zoe, dmOnly);
    await tick();
    const [task] = await tasksOf(leadId, '?kind=x_dm');
    // X access tokens live two hours: a person's click often comes after that.
    await sql`UPDATE x_account_oauth SET expires_at = ${new Date(clock - 60_000).toISOString()}::timestamptz WHERE user_id = ${ME}`.execute(t.db);
    const refreshes = count('POST /2/oauth2/token');
    const done = await t.services.tasks.performAtClick(workspaceId, task.id, 'console:pat');
    expect(done.status).toBe('done');
    expect(dmsTo(zoe)).toHaveLength(1);
    expect(count('POST /2/oauth2/token')).toBe(refreshes + 1);
  });

  it('a click whose DM already reached X (its record lost to a crash) is not sent again: the task is recorded done', async () => {
    const ann = person('Ann');
    const leadId = await xLead('Ann', ann, dmOnly);
    await tick();
    const [task] = await tasksOf(leadId, '?kind=x_dm');
    // X holds the DM from an earlier click whose transaction never committed.
    x.receiveDm(ME, ann, task.text!);
    expect(dmsTo(ann)).toHaveLength(1);
    await t.services.tasks.performAtClick(workspaceId, task.id, 'console:pat');
    expect(dmsTo(ann)).toHaveLength(1);
    expect((await t.services.tasks.get(workspaceId, task.id)).status).toBe('done');
  });

  it('a 401 during a click (X dropped the token before its expiry) fails the click at once, the task stays open, and the next click refreshes and sends', async () => {
    const ann = person('Ann');
    const leadId = await xLead('Ann', ann, dmOnly);
    await tick();
    const [task] = await tasksOf(leadId, '?kind=x_dm');
    x.expireAccessToken((await xOauthRepository(t.cipher).find(t.db, workspaceId, ME))!.accessToken);
    const refreshes = count('POST /2/oauth2/token');
    await expect(t.services.tasks.performAtClick(workspaceId, task.id, 'console:pat')).rejects.toMatchObject({
      statusCode: 503,
      body: { reason: 'x_unauthorized' },
    });
    expect(dmsTo(ann)).toHaveLength(0);
    expect((await t.services.tasks.get(workspaceId, task.id)).status).toBe('open');
    await t.services.tasks.performAtClick(workspaceId, task.id, 'console:pat');
    expect(dmsTo(ann)).toHaveLength(1);
    expect(count('POST /2/oauth2/token')).toBe(refreshes + 1);
  });
});

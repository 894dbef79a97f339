import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertPlay, insertSequence, insertXAccount } from '../helpers/factories.js';
import { ENGINE_ENV, step, steps } from '../engine/helpers.js';
import { startXApiFake, type XApiFake } from '../helpers/x-api-fake.js';
import { recordWroteFirst } from '../helpers/worlds/x.js';

// Issue 18 §2, "keep per-account pacing and caps": a connected X account sends at most OUTREACH_PACING_MESSAGE_CAP
// DMs and OUTREACH_PACING_INVITE_CAP follows per UTC day; the rest wait for the next day (not failed). A DM that X
// refused does not use up the day. Issue 41: the claim reserves a sequence DM's unit, so a DM past the cap never
// reaches X and waits like a step past its account's own cap (no error recorded).
// Issue 28 (domain/policy.ts): X allows automated DMs only to people who wrote to the account first, so the DM leads
// here are people on record as having written first (x_dm_senders, the stored record the watcher keeps); follows
// happen only at a person's click (the console's performAtClick), and the click is capped the same way.
const DAY = 86_400_000;
const ME = '2001';
let x: XApiFake;
let t: TestApp;
let clock = Date.now();
let workspaceId: string;
let key: string;
let playId: string;
let seq = 6000;

beforeAll(async () => {
  x = await startXApiFake({ now: () => clock });
  x.addUser({ id: ME, username: 'acme_hq' });
  t = await buildTestApp({
    now: new Date(clock).toISOString(),
    env: {
      ...ENGINE_ENV,
      OUTREACH_X_API_URL: x.url,
      OUTREACH_PACING_MESSAGE_CAP: 2,
      OUTREACH_PACING_INVITE_CAP: 1,
      OUTREACH_X_POLL_INTERVAL: 3600,
      OUTREACH_X_ENGAGE_API: '1',
    },
  });
  ({ workspaceId, key } = await createWorkspaceWithKey(t, 'Capped X'));
  await t.db.updateTable('workspaces').set({ energy_balance: 1_000 }).where('id', '=', workspaceId).execute();
  await insertXAccount(t.db, workspaceId, { userId: ME, handle: 'acme_hq' });
  const tokens = x.issueTokens(ME, 7 * 86_400);
  const { xOauthRepository } = await import('../../src/channels/x/oauth.repository.js');
  await xOauthRepository(t.cipher).save(t.db, workspaceId, ME, { ...tokens, scopes: [] });
  playId = (await insertPlay(t.db, workspaceId, { accountUserId: ME })).id;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await x?.close();
});

async function leads(n: number, sequence: string, opts: { acceptsDms?: boolean; wroteFirst?: boolean } = {}) {
  const out: { xUserId: string; leadId: string }[] = [];
  for (let i = 0; i < n; i++) {
    const id = String(++seq);
    x.addUser({ id, username: `p${id}`, acceptsDms: opts.acceptsDms ?? true });
    // They DMed the account before their lead existed, and the watcher recorded it.
    if (opts.wroteFirst) await recordWroteFirst(t, workspaceId, ME, id, new Date(clock - DAY));
    const leadId = await insertLead(t.db, workspaceId, {
      person: `P ${id}`,
      x_user_id: id,
      account_user_id: ME,
      play_id: playId,
      sequence_id: sequence,
      next_action_at: new Date(clock),
    });
    out.push({ xUserId: id, leadId });
  }
  return out;
}
const dmsTo = (id: string) => x.dmEvents.filter((e) => e.senderId === ME && e.recipientId === id).length;

it('DMs stop at the daily cap and go out the next UTC day; a DM X refused gives its unit back', async () => {
  const dm = await insertSequence(t.db, workspaceId, { channels: ['x'], steps: steps(step('x_dm', { message: 'Hi' })) });
  const closed = await leads(1, dm, { acceptsDms: false, wroteFirst: true });
  await t.services.engine.runPass({ now: new Date(clock) });
  const open = await leads(3, dm, { wroteFirst: true });
  await t.services.engine.runPass({ now: new Date(clock + 1000) });
  const failed = await t.db.selectFrom('leads').select(['stage', 'last_error']).where('id', '=', closed[0].leadId).executeTakeFirstOrThrow();
  expect(failed).toMatchObject({ stage: 'failed', last_error: 'x_dm_not_permitted' });
  // The refusal did not count: two of the three open leads got their DM today, the third waits.
  expect(open.map((l) => dmsTo(l.xUserId)).sort()).toEqual([0, 1, 1]);
  const waiting = open.find((l) => dmsTo(l.xUserId) === 0)!;
  const row = await t.db.selectFrom('leads').select(['stage', 'last_error', 'next_action_at']).where('id', '=', waiting.leadId).executeTakeFirstOrThrow();
  expect(row.last_error).toBeNull();
  expect(row.stage).not.toBe('failed');
  const nextUtcDay = new Date(clock + 1000);
  nextUtcDay.setUTCHours(24, 0, 0, 0);
  expect(new Date(row.next_action_at!).toISOString()).toBe(nextUtcDay.toISOString());
  // GET /progress lists the X account's budgets as the claim counted them: the day's DMs at the cap, no follow yet.
  // A sandbox X account is listed too, drawing no budget.
  await insertXAccount(t.db, workspaceId, { userId: '2999', handle: 'acme_sandbox' });
  const progress = await t.app.inject({ method: 'GET', url: '/api/v1/progress', headers: { authorization: `Bearer ${key}` } });
  expect(progress.statusCode).toBe(200);
  const today = new Date(clock + 1000).toISOString().slice(0, 10);
  expect(progress.json().platformAccounts).toEqual([
    {
      channel: 'x',
      accountUserId: ME,
      handle: 'acme_hq',
      delivery: 'x_connected',
      budgets: [
        { scope: 'x_account', scopeId: ME, budget: 'dms', window: 'utc_day', windowStart: today, used: 2, cap: 2 },
        { scope: 'x_account', scopeId: ME, budget: 'follows', window: 'utc_day', windowStart: today, used: 0, cap: 1 },
      ],
    },
    { channel: 'x', accountUserId: '2999', handle: 'acme_sandbox', delivery: 'sandbox', budgets: [] },
  ]);
  clock += DAY;
  await t.services.engine.runPass({ now: new Date(clock) });
  expect(open.map((l) => dmsTo(l.xUserId))).toEqual([1, 1, 1]);
});

it('follows stop at the invite cap per UTC day: the engine never follows, and a Follow click over the cap is refused until the next day', async () => {
  const follow = await insertSequence(t.db, workspaceId, {
    channels: ['x'],
    steps: steps(step('x_engage', { actions: [{ type: 'follow', count: null, reaction: null }] as never })),
  });
  clock += 2 * DAY;
  t.clock.set(new Date(clock));
  const people = await leads(2, follow);
  await t.services.engine.runPass({ now: new Date(clock) });
  const followed = () => people.filter((p) => x.follows.get(ME)?.has(p.xUserId));
  expect(followed()).toHaveLength(0);
  const tasks = (await t.services.tasks.list(workspaceId, { kind: 'x_engage' })).tasks.filter((k) => people.some((p) => p.leadId === k.lead.id));
  expect(tasks).toHaveLength(2);
  await t.services.tasks.performAtClick(workspaceId, tasks[0].id, 'tester');
  expect(followed()).toHaveLength(1);
  // The day's one follow is used: the second click is refused (429), nothing reaches X, and the task stays open.
  await expect(t.services.tasks.performAtClick(workspaceId, tasks[1].id, 'tester')).rejects.toMatchObject({ statusCode: 429, code: 'channel_rate_limited' });
  expect(followed()).toHaveLength(1);
  expect((await t.services.tasks.get(workspaceId, tasks[1].id)).status).toBe('open');
  clock += DAY;
  t.clock.set(new Date(clock));
  await t.services.engine.runPass({ now: new Date(clock) });
  expect(followed()).toHaveLength(1);
  await t.services.tasks.performAtClick(workspaceId, tasks[1].id, 'tester');
  expect(followed()).toHaveLength(2);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { launchConsoleBrowser, axeSeriousOrCritical, phoneScrollWidth, signInWithKey, closeBrowserAndApp } from '../helpers/browser.js';
import { insertLead, insertPlay, insertSequence } from '../helpers/factories.js';
import { dbEngine } from '../helpers/test-database.js';
import { startXApiFake, worldOauth, xAppEnv, type XApiFake } from '../helpers/x-api-fake.js';
import { ENGINE_ENV, insertAccount, step, steps } from '../engine/helpers.js';

// Issue 28's first test, in Chromium: an X account connected with OAuth (against the X API fake), a sequence with an
// x_dm step to someone who never wrote. The engine's pass makes a task and nothing reaches X's DM endpoint; on
// /console/tasks, **Send DM** makes exactly one DM at X, the task leaves the queue and the lead's ledger says x_dm ok.
// A follow is never made until **Follow** is clicked, and a double click or two concurrent POSTs follow once. A
// LinkedIn account set to Tasks gives the other kind of card (Open profile, Copy message, Done, Skip), worked from the
// keyboard. Axe and the 390 px check on the page; the README's screenshot with UPDATE_SCREENSHOTS=1.
const saveShots = process.env.UPDATE_SCREENSHOTS === '1';

const CONTROL = 'tasks-control-token-0123456789abcdef';
const WORKSPACE = '00000000-0000-4000-8000-000000002801';
const KEY = 'ows_tasks_literal_key_0123456789abcdef01';
const ME = '7000';

describe.runIf(dbEngine() === 'pglite')('the task queue in Chromium (issue 28)', { timeout: 120_000 }, () => {
  let x: XApiFake;
  let t: TestApp;
  let b: Awaited<ReturnType<typeof launchConsoleBrowser>>;
  let page: Page;
  const leads: Record<string, string> = {};

  async function engineTick() {
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/engine/tick',
      headers: { authorization: `Bearer ${CONTROL}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ now: new Date().toISOString() }),
    });
    expect(res.statusCode, res.body).toBe(200);
  }

  const ledgerOf = (leadId: string) => t.db.selectFrom('activity').select(['action', 'outcome']).where('lead_id', '=', leadId).execute();
  const dmPosts = () => x.requests.filter((r) => r.startsWith('POST /2/dm_conversations'));
  const followPosts = () => x.requests.filter((r) => r === `POST /2/users/${ME}/following`);
  const openTaskOf = (leadId: string) =>
    t.db.selectFrom('tasks').select(['id', 'status']).where('lead_id', '=', leadId).where('status', '=', 'open').executeTakeFirst();

  beforeAll(async () => {
    x = await startXApiFake();
    x.addUser({ id: ME, username: 'northwind_hq' });
    const tokens = x.issueTokens(ME);
    t = await buildTestApp({ realClock: true, controlToken: CONTROL, env: { ...ENGINE_ENV, ...xAppEnv(x), OUTREACH_X_TIMEOUT_MS: 10_000 } });
    const seeded = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/seed',
      headers: { authorization: `Bearer ${CONTROL}`, 'content-type': 'application/json' },
      payload: JSON.stringify({
        workspaces: [
          {
            id: WORKSPACE,
            name: 'Northwind',
            apiKeys: [{ key: KEY }],
            energy: { balance: 1000, dailyRefill: 1000 },
            xAccounts: [{ userId: ME, handle: 'northwind_hq', oauth: worldOauth(tokens) }],
          },
        ],
      }),
    });
    expect(seeded.statusCode, seeded.body).toBe(200);

    const dm = await insertSequence(t.db, WORKSPACE, {
      name: 'Welcome DM',
      channels: ['x'],
      steps: steps(step('x_dm', { message: 'Hi {{firstName}}, thanks for following Northwind.' })),
    });
    const follow = await insertSequence(t.db, WORKSPACE, {
      name: 'Follow first',
      channels: ['x'],
      steps: steps(step('x_engage', { actions: [{ type: 'follow', count: null, reaction: null }] as never })),
    });
    const playId = (await insertPlay(t.db, WORKSPACE, { accountUserId: ME })).id;
    const due = new Date(Date.now() - 60_000);
    const xLead = async (id: string, first: string, sequence: string) => {
      x.addUser({ id, username: `${first.toLowerCase()}_x`, name: `${first} Doe` });
      leads[first] = await insertLead(t.db, WORKSPACE, {
        person: `${first} Doe`,
        company: 'Initech',
        x_user_id: id,
        username: `${first.toLowerCase()}_x`,
        account_user_id: ME,
        play_id: playId,
        sequence_id: sequence,
        next_action_at: due,
      });
    };
    await xLead('7101', 'Ada', dm);
    await xLead('7102', 'Bob', follow);
    await xLead('7103', 'Cy', follow);

    // A LinkedIn account set to Tasks: its connect step is a person's task too.
    const linkedin = await insertAccount(t.db, WORKSPACE);
    await t.db.updateTable('messaging_accounts').set({ name: 'Dana' }).where('id', '=', linkedin).execute();
    await t.services.linkedin.setDelivery(WORKSPACE, linkedin, 'tasks');
    const connect = await insertSequence(t.db, WORKSPACE, {
      name: 'Connect',
      steps: steps(step('connect', { message: 'Hi {{firstName}}, glad to connect.' })),
    });
    leads.Lin = await insertLead(t.db, WORKSPACE, {
      person: 'Lin Park',
      company: 'Globex',
      linkedin_url: 'https://www.linkedin.com/in/lin-park',
      account_id: linkedin,
      sequence_id: connect,
      next_action_at: due,
    });

    b = await launchConsoleBrowser(t);
    page = b.page;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: b.base });
  }, 120_000);

  afterAll(async () => {
    await closeBrowserAndApp(b, t);
    await x?.close();
  });

  it('an engine pass makes tasks and nothing reaches X: no DM, no follow', async () => {
    await engineTick();
    for (const name of ['Ada', 'Bob', 'Cy', 'Lin']) expect(await openTaskOf(leads[name]), name).toBeDefined();
    expect(dmPosts()).toEqual([]);
    expect(followPosts()).toEqual([]);
    expect(x.dmEvents).toEqual([]);
    expect(x.follows.get(ME)?.size ?? 0).toBe(0);
    expect(await ledgerOf(leads.Ada)).toEqual([]);
  });

  it('/console/tasks shows the tasks by account, passes axe and fits 390 px', async () => {
    await signInWithKey(page, b.url('/console/tasks'), KEY);
    await page.getByRole('heading', { level: 1, name: 'Tasks' }).waitFor();
    await page.getByRole('heading', { level: 2, name: '@northwind_hq (X)' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Dana (LinkedIn)' }).waitFor();
    await page.getByText('Hi Ada, thanks for following Northwind.').waitFor();
    await page.getByRole('button', { name: 'Send DM for Ada Doe, Initech' }).waitFor();
    await page.getByRole('button', { name: 'Follow for Bob Doe, Initech' }).waitFor();
    await page.getByRole('link', { name: /^Open profile of Lin Park/ }).waitFor();
    // Copy message needs tasks.js: the button is shown once the script runs.
    await page.getByRole('button', { name: 'Copy message for Lin Park, Globex' }).waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
    if (saveShots) await page.screenshot({ path: 'docs/images/tasks.png', fullPage: true });
  });

  it('Send DM makes exactly one DM at X; the task leaves the queue and the ledger says x_dm ok', async () => {
    await page.getByRole('button', { name: 'Send DM for Ada Doe, Initech' }).click();
    await page.getByText('Sent: the DM went to X, and the task left the queue.').waitFor();
    expect(dmPosts()).toHaveLength(1);
    expect(x.dmEvents.filter((e) => e.senderId === ME && e.recipientId === '7101').map((e) => e.text)).toEqual(['Hi Ada, thanks for following Northwind.']);
    expect(await openTaskOf(leads.Ada)).toBeUndefined();
    expect(await ledgerOf(leads.Ada)).toEqual([{ action: 'x_dm', outcome: 'ok' }]);
  });

  it('Follow follows only at the click, and a double click follows once', async () => {
    expect(x.follows.get(ME)?.has('7102') ?? false).toBe(false);
    await page.getByRole('button', { name: 'Follow for Bob Doe, Initech' }).dblclick();
    await page.getByText('Done on X: the task left the queue.').first().waitFor();
    expect(x.follows.get(ME)?.has('7102')).toBe(true);
    expect(followPosts()).toHaveLength(1);
    expect(await ledgerOf(leads.Bob)).toEqual([{ action: 'x_follow', outcome: 'ok' }]);
  });

  it('two concurrent POSTs of one task perform it once', async () => {
    const task = (await openTaskOf(leads.Cy))!;
    const statuses = await page.evaluate(async (id) => {
      const form = document.querySelector<HTMLFormElement>(`form[action="/console/tasks/${id}/perform"]`)!;
      const body = new URLSearchParams(new FormData(form) as unknown as Record<string, string>).toString();
      const post = () =>
        fetch(`/console/tasks/${id}/perform`, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' } });
      const answers = await Promise.all([post(), post()]);
      return Promise.all(answers.map(async (a) => [a.status, await a.text()] as const));
    }, task.id);
    expect(statuses.map(([s]) => s)).toEqual([200, 200]);
    const texts = statuses.map(([, html]) => (html.includes('Done on X') ? 'done' : html.includes('no longer open') ? 'closed' : html)).sort();
    expect(texts).toEqual(['closed', 'done']);
    expect(followPosts()).toHaveLength(2);
    expect(await ledgerOf(leads.Cy)).toEqual([{ action: 'x_follow', outcome: 'ok' }]);
  });

  it('a LinkedIn task from the keyboard: j selects it, c copies its message, d marks it done', async () => {
    await page.reload();
    await page.getByRole('heading', { level: 2, name: 'Dana (LinkedIn)' }).waitFor();
    expect(await page.getByRole('button', { name: /^Send DM|^Follow/ }).count()).toBe(0);
    await page.keyboard.press('j');
    await page.keyboard.press('c');
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('Hi Lin, glad to connect.');
    await page.keyboard.press('d');
    await page.getByText('Done: recorded as the step, and the sequence goes on.').waitFor();
    expect(await ledgerOf(leads.Lin)).toEqual([{ action: 'invite', outcome: 'ok' }]);

    await page.reload();
    await page.getByText('No task is waiting for you.').waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
  });

  it('the accounts page says how each account delivers: Connected to X, Tasks', async () => {
    await page.goto(b.url('/console/accounts'));
    await page.getByRole('cell', { name: /Connected to X/ }).waitFor();
    await page.getByRole('cell', { name: 'Tasks', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Switch Dana to Sandbox (simulated)' }).waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
  });
});

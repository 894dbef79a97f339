import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { insertLead, insertReply, insertSequence } from '../helpers/factories.js';
import { ADMIN, admin } from '../helpers/world-fixtures.js';
import { ENGINE_ENV, insertAccount, step, steps } from '../engine/helpers.js';

// Issue 28 §2 (console) and §5: the task queue at /console/tasks (Done, Skip, CSRF, another workspace's task, filters,
// htmx in place), the dashboard's open-task count, the accounts page's LinkedIn delivery and its switch, and the reply
// confirmation that says what leaves at the click. Tasks come from the engine itself: a LinkedIn account switched to
// Tasks in the console, then an engine pass over leads on a connect step.

const XSS = '<img src=x onerror=alert(1)>';

describe('the console task queue', () => {
  let t: TestApp;
  let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  let c: ConsoleClient;
  let account: string;
  let sequence: string;
  let clock = Date.parse('2026-11-23T10:00:00.000Z');

  beforeAll(async () => {
    t = await buildTestApp({ now: new Date(clock).toISOString(), env: { ...ENGINE_ENV, OUTREACH_ADMIN_TOKEN: ADMIN } });
    acme = await createWorkspaceWithKey(t, 'Acme');
    await t.db.updateTable('workspaces').set({ energy_balance: 10_000 }).where('id', '=', acme.workspaceId).execute();
    account = await insertAccount(t.db, acme.workspaceId);
    await t.db.updateTable('messaging_accounts').set({ name: 'Dana' }).where('id', '=', account).execute();
    sequence = await insertSequence(t.db, acme.workspaceId, {
      steps: steps(step('connect', { message: 'Hi {{firstName}}, glad to connect' }), step('message', { delayDays: 1, message: 'Thanks, {{firstName}}!' })),
    });
    c = await signedInConsole(t, acme.key);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  async function tick(advanceMs = 1_000) {
    clock += advanceMs;
    t.clock.set(new Date(clock));
    const res = await t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: { now: new Date(clock).toISOString() } });
    expect(res.statusCode, res.body).toBe(200);
  }

  const lead = (person: string, handle: string) =>
    insertLead(t.db, acme.workspaceId, {
      person,
      company: 'Initech',
      linkedin_url: `https://www.linkedin.com/in/${handle}`,
      account_id: account,
      sequence_id: sequence,
      next_action_at: new Date(clock),
    });
  const openTask = (leadId: string) =>
    t.db.selectFrom('tasks').selectAll().where('lead_id', '=', leadId).where('status', '=', 'open').executeTakeFirstOrThrow();
  const taskRow = (id: string) => t.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const ledger = (leadId: string) => t.db.selectFrom('activity').select(['action', 'outcome', 'detail']).where('lead_id', '=', leadId).execute();

  it('the accounts page shows a LinkedIn account as Sandbox (simulated), and its switch to Tasks goes through the LinkedIn service (CSRF first)', async () => {
    let page = await c.get('/console/accounts');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h2 id="linkedin-delivery">LinkedIn delivery</h2>');
    expect(page.body).toContain('Sandbox (simulated)');
    expect(page.body).toContain(`aria-label="Switch Dana to Tasks"`);

    const forged = await c.post(`/console/accounts/linkedin/${account}/delivery`, { delivery: 'tasks', _csrf: null });
    expect(forged.statusCode).toBe(403);
    expect((await t.services.linkedin.get(acme.workspaceId, account)).delivery).toBe('sandbox');

    const bad = await c.post(`/console/accounts/linkedin/${account}/delivery`, { delivery: 'gateway' });
    expect(bad.statusCode).toBe(400);

    const done = await c.post(`/console/accounts/linkedin/${account}/delivery`, { delivery: 'tasks' });
    expect([done.statusCode, done.headers.location]).toEqual([303, '/console/accounts']);
    expect((await t.services.linkedin.get(acme.workspaceId, account)).delivery).toBe('tasks');
    page = await c.get('/console/accounts');
    expect(page.body).toContain('Delivery set to Tasks');
    expect(page.body).toContain(`aria-label="Switch Dana to Sandbox (simulated)"`);
    expect(page.body).not.toContain(`aria-label="Switch Dana to Tasks"`);

    // A typed gateway account id is the operator's act (security probe M2): a key's session is refused; nothing changes.
    expect(page.body).toContain('is an operator act');
    const link = await c.post(`/console/accounts/linkedin/${account}/gateway`, { gatewayAccountId: 'gw_1' });
    expect(link.statusCode).toBe(403);
    expect(link.body).toContain('outreach linkedin connect');
    expect((await t.services.linkedin.get(acme.workspaceId, account)).delivery).toBe('tasks');
  });

  it('an account of another workspace cannot be switched: the 404 page', async () => {
    const beta = await createWorkspaceWithKey(t, 'Beta');
    const b = await signedInConsole(t, beta.key);
    await b.get('/console/accounts');
    const res = await b.post(`/console/accounts/linkedin/${account}/delivery`, { delivery: 'sandbox' });
    expect(res.statusCode).toBe(404);
    expect((await t.services.linkedin.get(acme.workspaceId, account)).delivery).toBe('tasks');
  });

  it('with no task the queue says so, and the dashboard counts 0 open tasks', async () => {
    const page = await c.get('/console/tasks');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Tasks</h1>');
    expect(page.body).toContain('No task is waiting for you.');
    expect(page.body).toContain('<a href="/console/tasks" aria-current="page">Tasks</a>');
    expect((await c.get('/console')).body).toContain('<a href="/console/tasks">Open tasks: 0</a>');
  });

  it('a connect step on a Tasks account waits in the queue by account: lead, what to do, the text, Open profile, Copy message, Done, Skip', async () => {
    const ada = await lead(`Ada ${XSS}`, 'ada');
    await lead('Grace Hopper', 'grace');
    await tick();
    const page = await c.get('/console/tasks');
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<h2 id="group-onb_[^"]+">Dana \(LinkedIn\)<\/h2>/);
    expect(page.body).not.toContain('<img');
    expect(page.body).toContain('Ada &lt;img src=x onerror=alert(1)>, Initech');
    expect(page.body).toContain('Send a LinkedIn invitation with this note.');
    expect(page.body).toContain('Hi Grace, glad to connect');
    expect(page.body).toContain('2 open tasks in the workspace');
    const task = await openTask(ada);
    const card = page.body.slice(page.body.indexOf(`id="task-${task.id}"`), page.body.indexOf('</article>', page.body.indexOf(`id="task-${task.id}"`)));
    expect(card).toContain('href="https://www.linkedin.com/in/ada" target="_blank" rel="noopener noreferrer"');
    expect(card).toMatch(/<button type="button" data-action="copy" data-copy="task-text-[^"]+" hidden>Copy message/);
    expect(card).toContain(`action="/console/tasks/${task.id}/complete"`);
    expect(card).toContain(`action="/console/tasks/${task.id}/skip"`);
    expect(card).toMatch(/<span>Done<\/span>/);
    expect(card).not.toContain('/perform');
    expect((await c.get('/console')).body).toContain('<a href="/console/tasks">Open tasks: 2</a>');
  });

  it('filters by account and kind (GET), an unknown kind is no filter', async () => {
    expect((await c.get(`/console/tasks?account=${account}`)).body).toContain('2 open tasks');
    expect((await c.get('/console/tasks?kind=x_dm')).body).toContain('No open task matches these filters.');
    expect((await c.get('/console/tasks?kind=connect&account=')).body).toContain('Hi Grace, glad to connect');
    expect((await c.get('/console/tasks?kind=nonsense')).body).toContain('Hi Grace, glad to connect');
  });

  it('an account whose name already says its channel is labelled once, never "(LinkedIn) (LinkedIn)"', async () => {
    await t.db.updateTable('messaging_accounts').set({ name: 'Dana (LinkedIn)' }).where('id', '=', account).execute();
    try {
      const page = await c.get('/console/tasks');
      expect(page.body).toMatch(/<h2 id="group-onb_[^"]+">Dana \(LinkedIn\)<\/h2>/);
      expect(page.body).toContain('Dana (LinkedIn): 2 open');
      expect(page.body).not.toContain('(LinkedIn) (LinkedIn)');
    } finally {
      await t.db.updateTable('messaging_accounts').set({ name: 'Dana' }).where('id', '=', account).execute();
    }
  });

  it('Done without a CSRF token is refused (403) and changes nothing', async () => {
    const ada = (await t.db.selectFrom('leads').select('id').where('linkedin_url', '=', 'https://www.linkedin.com/in/ada').executeTakeFirstOrThrow()).id;
    const task = await openTask(ada);
    const res = await c.post(`/console/tasks/${task.id}/complete`, { _csrf: null });
    expect(res.statusCode).toBe(403);
    expect((await taskRow(task.id)).status).toBe('open');
  });

  it('Done records the step as the engine would (invite ok, via task, by console); a second Done says it is closed', async () => {
    const ada = (await t.db.selectFrom('leads').select(['id']).where('linkedin_url', '=', 'https://www.linkedin.com/in/ada').executeTakeFirstOrThrow()).id;
    const task = await openTask(ada);
    await c.get('/console/tasks');
    const res = await c.post(`/console/tasks/${task.id}/complete`);
    expect([res.statusCode, res.headers.location]).toEqual([303, '/console/tasks']);
    expect(await taskRow(task.id)).toMatchObject({ status: 'done', closed_by: `console:${acme.keyId}` });
    const entries = await ledger(ada);
    expect(entries.map((e) => [e.action, e.outcome])).toEqual([['invite', 'ok']]);
    expect(JSON.parse(entries[0].detail)).toMatchObject({ via: 'task', taskId: task.id, by: `console:${acme.keyId}` });
    expect((await t.db.selectFrom('leads').select('stage').where('id', '=', ada).executeTakeFirstOrThrow()).stage).toBe('invited');
    const page = await c.get('/console/tasks');
    expect(page.body).toContain('Done: recorded as the step, and the sequence goes on.');
    expect(page.body).not.toContain(`id="task-${task.id}"`);

    const again = await c.post(`/console/tasks/${task.id}/complete`);
    expect(again.statusCode).toBe(303);
    expect((await c.get('/console/tasks')).body).toContain('This task is no longer open');
    expect(await ledger(ada)).toHaveLength(1);
  });

  it('Skip (htmx) redraws the card in place as closed; the ledger says skipped and the sequence goes on', async () => {
    const grace = (await t.db.selectFrom('leads').select('id').where('linkedin_url', '=', 'https://www.linkedin.com/in/grace').executeTakeFirstOrThrow()).id;
    const task = await openTask(grace);
    await c.get('/console/tasks');
    const res = await c.post(`/console/tasks/${task.id}/skip`, {}, { 'hx-request': 'true' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(new RegExp(`^<article class="reply task closed" id="task-${task.id}"`));
    expect(res.body).toContain('Skipped: nothing was sent, and the sequence goes on.');
    // The count is redrawn in place (htmx out-of-band swap): it no longer counts the skipped task.
    expect(res.body).toMatch(/<p id="tasks-count" role="status" hx-swap-oob="true">0 open tasks in the workspace/);
    expect(await taskRow(task.id)).toMatchObject({ status: 'skipped', closed_by: `console:${acme.keyId}` });
    expect((await ledger(grace)).map((e) => [e.action, e.outcome])).toEqual([['invite', 'skipped']]);
    expect((await c.get('/console')).body).toContain('<a href="/console/tasks">Open tasks: 0</a>');
  });

  it('a task of another workspace, an unknown id or a malformed id is the 404 page, and the task stays as it was', async () => {
    const other = await lead('Lin Other', 'lin');
    await tick();
    const task = await openTask(other);
    const beta = await createWorkspaceWithKey(t, 'Beta 2');
    const b = await signedInConsole(t, beta.key);
    await b.get('/console/tasks');
    for (const path of [`/console/tasks/${task.id}/complete`, `/console/tasks/${task.id}/skip`, `/console/tasks/${task.id}/perform`]) {
      const res = await b.post(path);
      expect(res.statusCode, path).toBe(404);
      expect(res.body).toContain('Not found');
    }
    expect((await b.get('/console/tasks')).body).toContain('No task is waiting for you.');
    expect((await c.post('/console/tasks/00000000-0000-4000-8000-000000000999/complete')).statusCode).toBe(404);
    expect((await c.post('/console/tasks/not-a-uuid/skip')).statusCode).toBe(404);
    expect((await taskRow(task.id)).status).toBe('open');
  });

  it('a LinkedIn task is not performed from the console: Send DM’s route refuses it and the task stays open', async () => {
    const other = (await t.db.selectFrom('leads').select('id').where('linkedin_url', '=', 'https://www.linkedin.com/in/lin').executeTakeFirstOrThrow()).id;
    const task = await openTask(other);
    await c.get('/console/tasks');
    const res = await c.post(`/console/tasks/${task.id}/perform`);
    expect(res.statusCode).toBe(303);
    expect((await c.get('/console/tasks')).body).toContain('This is not done from here');
    expect((await taskRow(task.id)).status).toBe('open');
  });

  it('a reply on a Tasks account: Send’s confirmation says it creates a task (not "messages the prospect now"), and the answer is a task', async () => {
    const leadId = await insertLead(t.db, acme.workspaceId, {
      person: 'Rita Reply',
      linkedin_url: 'https://www.linkedin.com/in/rita',
      account_id: account,
      stage: 'replied',
    });
    const replyId = await insertReply(t.db, t.cipher, acme.workspaceId, { leadId, draft: 'Tuesday works' });
    await c.get('/console/replies');
    const ask = await c.post(`/console/replies/${replyId}/decide`, { decision: 'send', text: 'Tuesday works', attempt: 'r1' });
    expect(ask.statusCode).toBe(200);
    expect(ask.body).toContain('This creates a task');
    expect(ask.body).not.toContain('messages the prospect now');
    // The button names the act: nothing is sent from here, so it says "Create task", not "Yes, send".
    expect(ask.body).toMatch(/<button type="submit">\s*Create task\s*<\/button>/);
    expect(ask.body).not.toContain('Yes, send');
    const done = await c.post(`/console/replies/${replyId}/decide`, { decision: 'send', text: 'Tuesday works', attempt: 'r1', confirmed: 'yes' });
    expect([done.statusCode, done.headers.location]).toEqual([303, '/console/replies?notice=task_created']);
    const page = await c.get('/console/tasks?kind=reply');
    expect(page.body).toContain('Answer their reply with this message.');
    expect(page.body).toContain('Tuesday works');
  });

  it('a reply on a sandbox account says it is simulated', async () => {
    const sandbox = await insertAccount(t.db, acme.workspaceId);
    const leadId = await insertLead(t.db, acme.workspaceId, { person: 'Sam Sandbox', account_id: sandbox, stage: 'replied' });
    const replyId = await insertReply(t.db, t.cipher, acme.workspaceId, { leadId });
    await c.get('/console/replies');
    const ask = await c.post(`/console/replies/${replyId}/decide`, { decision: 'send', attempt: 's1' });
    expect(ask.body).toContain('This account is in the sandbox (simulated): nothing reaches the prospect.');
    expect(ask.body).not.toContain('messages the prospect now');
    expect(ask.body).toMatch(/<button type="submit">\s*Yes, send \(simulated\)\s*<\/button>/);
  });
});

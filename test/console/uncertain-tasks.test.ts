import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { ENGINE_ENV, insertAccount, step, steps } from '../engine/helpers.js';

// Issue 31 §3 in the console (docs/console.md): the dashboard's "Uncertain sends" card and the task queue's Send anyway,
// Mark as sent and Leave it. A send a crash left in flight is set up as the engine finds it after the crash (the lead's
// in-flight mark, an old lease); e-mail goes to the sandbox (no mailbox, no SMTP_URL), whose confirm answers `unknown`
// for a key this process never sent.

const H = 3_600_000;

describe('uncertain sends in the console', () => {
  let t: TestApp;
  let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  let c: ConsoleClient;
  let account: string;
  let emailSeq: string;
  let linkedinSeq: string;
  let clock = Date.parse('2026-11-23T10:00:00.000Z');
  let serial = 0;

  beforeAll(async () => {
    t = await buildTestApp({ now: new Date(clock).toISOString(), env: ENGINE_ENV });
    acme = await createWorkspaceWithKey(t, 'Acme');
    account = await insertAccount(t.db, acme.workspaceId);
    emailSeq = await insertSequence(t.db, acme.workspaceId, {
      channels: ['email'],
      steps: steps(step('email', { subject: 'Quick note for {{firstName}}', message: 'Hi {{firstName}}, a first line.' })),
    });
    linkedinSeq = await insertSequence(t.db, acme.workspaceId, { steps: steps(step('connect', { message: 'Hi {{firstName}}' })) });
    c = await signedInConsole(t, acme.key);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  async function uncertain(sequence: string) {
    serial += 1;
    const id = await insertLead(t.db, acme.workspaceId, {
      person: `Grace Hopper${serial}`,
      email: `grace${serial}@example.com`,
      linkedin_url: `https://www.linkedin.com/in/grace-${serial}`,
      account_id: account,
      sequence_id: sequence,
      next_action_at: new Date(clock),
    });
    await sql`UPDATE leads SET inflight_key = ${`${id}:${sequence}:0`}, inflight_step = 0,
      inflight_at = ${new Date(clock - 2 * H).toISOString()}::timestamptz WHERE id = ${id}::uuid`.execute(t.db);
    clock += H;
    t.clock.set(new Date(clock));
    await t.services.engine.runPass({ now: new Date(clock) });
    const task = await t.db.selectFrom('tasks').selectAll().where('lead_id', '=', id).where('source', '=', 'uncertain').executeTakeFirstOrThrow();
    return { id, task };
  }
  const taskRow = (id: string) => t.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const ledger = (leadId: string) =>
    t.db.selectFrom('activity').select(['action', 'outcome', 'detail']).where('lead_id', '=', leadId).orderBy('created_at').execute();

  it('the dashboard’s Needs a person shows Uncertain sends: N, card-attention when N > 0, linking to the filtered task list', async () => {
    expect((await c.get('/console')).body).toContain('<li class="card"><a href="/console/tasks?source=uncertain">Uncertain sends: 0</a></li>');
    await uncertain(emailSeq);
    const page = await c.get('/console');
    expect(page.body).toContain('<li class="card card-attention"><a href="/console/tasks?source=uncertain">Uncertain sends: 1</a></li>');
  });

  it('the task list filtered to uncertain sends shows an e-mail’s Send anyway, Mark as sent and Leave it, each a POST form with CSRF', async () => {
    const { task } = await uncertain(emailSeq);
    const page = await c.get('/console/tasks?source=uncertain');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Tasks: uncertain sends</h1>');
    const card = page.body.slice(page.body.indexOf(`id="task-${task.id}"`));
    const article = card.slice(0, card.indexOf('</article>'));
    expect(article).toContain('Uncertain send');
    expect(article).toContain('Subject: <span>Quick note for Grace</span>');
    for (const [path, label] of [
      ['send-anyway', 'Send anyway'],
      ['mark-sent', 'Mark as sent'],
      ['skip', 'Leave it'],
    ]) {
      expect(article).toContain(`action="/console/tasks/${task.id}/${path}"`);
      expect(article).toContain(`<span>${label}</span><span class="visually-hidden"> for Grace Hopper`);
    }
    expect(article.match(/name="_csrf"/g)).toHaveLength(3);
    // Send anyway has no keyboard shortcut (it contacts the person again): Mark as sent is the main button.
    expect(article).toContain('data-action="send-anyway"');
    expect(article).toMatch(/class="primary" data-action="done"><span>Mark as sent/);
  });

  it('an uncertain LinkedIn step offers Mark as sent and Leave it, not Send anyway', async () => {
    const { task } = await uncertain(linkedinSeq);
    const page = await c.get('/console/tasks?source=uncertain');
    const card = page.body.slice(page.body.indexOf(`id="task-${task.id}"`));
    const article = card.slice(0, card.indexOf('</article>'));
    expect(article).toContain(`/console/tasks/${task.id}/mark-sent`);
    expect(article).not.toContain('send-anyway');
  });

  it('Mark as sent without a CSRF token is refused (403) and changes nothing; with it, it records the person’s word', async () => {
    const { id, task } = await uncertain(emailSeq);
    await c.get('/console/tasks?source=uncertain');
    expect((await c.post(`/console/tasks/${task.id}/mark-sent`, { _csrf: null })).statusCode).toBe(403);
    expect((await taskRow(task.id)).status).toBe('open');
    const res = await c.post(`/console/tasks/${task.id}/mark-sent`);
    expect([res.statusCode, res.headers.location]).toEqual([303, '/console/tasks']);
    expect(await taskRow(task.id)).toMatchObject({ status: 'done', closed_by: `console:${acme.keyId}` });
    const entries = await ledger(id);
    expect(entries.map((e) => [e.action, e.outcome])).toEqual([
      ['email_sent', 'failed'],
      ['email_sent', 'ok'],
    ]);
    expect(JSON.parse(entries[1].detail)).toMatchObject({ recovered: 'marked_sent', by: `console:${acme.keyId}` });
    expect((await c.get('/console/tasks')).body).toContain('Marked as sent');
  });

  it('Send anyway (htmx) sends again and redraws the card closed; Leave it closes the task and clears lastError', async () => {
    const sent = await uncertain(emailSeq);
    await c.get('/console/tasks?source=uncertain');
    const res = await c.post(`/console/tasks/${sent.task.id}/send-anyway`, {}, { 'hx-request': 'true' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(new RegExp(`^<article class="reply task closed" id="task-${sent.task.id}"`));
    expect(res.body).toContain('Sent again with a fresh Message-ID');
    expect(JSON.parse((await ledger(sent.id))[1].detail)).toMatchObject({ recovered: 'sent_anyway', by: `console:${acme.keyId}` });

    const left = await uncertain(emailSeq);
    expect((await t.db.selectFrom('leads').select('last_error').where('id', '=', left.id).executeTakeFirstOrThrow()).last_error).toBe('uncertain_delivery');
    const skip = await c.post(`/console/tasks/${left.task.id}/skip`, {}, { 'hx-request': 'true' });
    expect(skip.body).toContain('Left as it was');
    expect(await taskRow(left.task.id)).toMatchObject({ status: 'skipped' });
    expect((await t.db.selectFrom('leads').select('last_error').where('id', '=', left.id).executeTakeFirstOrThrow()).last_error).toBeNull();
    expect(await ledger(left.id)).toHaveLength(1);
  });

  it('another workspace’s uncertain task is the 404 page for Send anyway and Mark as sent, and stays open', async () => {
    const { task } = await uncertain(emailSeq);
    const beta = await createWorkspaceWithKey(t, 'Beta');
    const b = await signedInConsole(t, beta.key);
    await b.get('/console/tasks');
    for (const path of ['send-anyway', 'mark-sent']) expect((await b.post(`/console/tasks/${task.id}/${path}`)).statusCode, path).toBe(404);
    expect((await taskRow(task.id)).status).toBe('open');
  });
});

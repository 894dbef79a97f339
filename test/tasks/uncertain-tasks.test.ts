import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver.js';
import { ENGINE_ENV, insertAccount, step, steps } from '../engine/helpers.js';
import { shortHash } from '../../src/lib/hash.js';

// Issue 31 §3, an uncertain step reaches a person (docs/tasks.md "Uncertain sends"). A send a crash left in flight is
// set up as the engine finds it after the crash (the lead's in-flight mark, an old lease). E-mail goes over SMTP_URL to a
// real SMTP receiver: that driver has no confirm, so the step is uncertain; a LinkedIn step goes to the sandbox, whose
// confirm answers `unknown` for a key this process never sent. Everything else goes through the API and engine passes.

const T0 = new Date('2026-11-02T09:00:00.000Z');
const H = 3_600_000;
type Ws = Awaited<ReturnType<typeof createWorkspaceWithKey>>;

describe('uncertain sends reach a person', () => {
  let t: TestApp;
  let smtp: SmtpReceiver;
  let acme: Ws;
  let beta: Ws;
  let account: string;
  let emailSeq: string;
  let linkedinSeq: string;
  let clock = T0.getTime();
  let serial = 0;

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    t = await buildTestApp({ env: { ...ENGINE_ENV, SMTP_URL: smtp.url() }, now: T0.toISOString() });
    acme = await createWorkspaceWithKey(t, 'Acme');
    beta = await createWorkspaceWithKey(t, 'Beta');
    account = await insertAccount(t.db, acme.workspaceId);
    emailSeq = await insertSequence(t.db, acme.workspaceId, {
      channels: ['email'],
      steps: steps(
        step('email', { subject: 'Quick note for {{firstName}}', message: 'Hi {{firstName}}, a first line.' }),
        step('email', { delayDays: 1, message: 'Following up, {{firstName}}.' }),
      ),
    });
    linkedinSeq = await insertSequence(t.db, acme.workspaceId, { steps: steps(step('connect', { message: 'Hi {{firstName}}' })) });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  const json = { 'content-type': 'application/json' };
  const post = (ws: Ws, path: string, body?: unknown) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/tasks/${path}`,
      headers: { ...ws.auth, ...(body !== undefined && json) },
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    });
  const leadRow = (id: string) => t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const tasksOf = (leadId: string) => t.db.selectFrom('tasks').selectAll().where('lead_id', '=', leadId).orderBy('created_at').execute();
  const ledger = async (leadId: string) =>
    (await t.db.selectFrom('activity').selectAll().where('lead_id', '=', leadId).orderBy('created_at').execute()).map((a) => ({
      action: a.action,
      outcome: a.outcome,
      units: a.units,
      detail: JSON.parse(a.detail) as Record<string, unknown>,
    }));
  const pass = async (advanceMs = H) => {
    clock += advanceMs;
    t.clock.set(new Date(clock));
    return t.services.engine.runPass({ now: new Date(clock) });
  };

  /** A lead whose current step a crashed worker left in flight two hours ago (the lease long expired). */
  async function leftInFlight(sequence: string, stepIndex = 0, f: Record<string, unknown> = {}) {
    serial += 1;
    const id = await insertLead(t.db, acme.workspaceId, {
      person: `Ada Lovelace${serial}`,
      company: 'Initech',
      email: `ada${serial}@example.com`,
      linkedin_url: `https://www.linkedin.com/in/ada-${serial}`,
      account_id: account,
      sequence_id: sequence,
      current_step: stepIndex,
      next_action_at: new Date(clock),
      ...f,
    });
    await markInFlight(id, sequence, stepIndex);
    return id;
  }
  async function markInFlight(id: string, sequence: string, stepIndex: number) {
    await sql`UPDATE leads SET inflight_key = ${`${id}:${sequence}:${stepIndex}`}, inflight_step = ${stepIndex},
      inflight_at = ${new Date(clock - 2 * H).toISOString()}::timestamptz, next_action_at = ${new Date(clock).toISOString()}::timestamptz
      WHERE id = ${id}::uuid`.execute(t.db);
  }
  const openUncertain = async (leadId: string) => (await tasksOf(leadId)).filter((x) => x.source === 'uncertain' && x.status === 'open');

  it('an uncertain step opens a task (source uncertain, its rendered e-mail, key uncertain:<step key>), keeps the ledger entry and does not hold the lane', async () => {
    const id = await leftInFlight(emailSeq);
    await pass();
    const entries = await ledger(id);
    expect(entries.map((e) => [e.action, e.outcome, e.detail.reason])).toEqual([['email_sent', 'failed', 'uncertain_delivery']]);
    const [task] = await tasksOf(id);
    expect(task).toMatchObject({
      source: 'uncertain',
      status: 'open',
      reason: 'uncertain_delivery',
      kind: 'email',
      channel: 'email',
      account_id: account,
      step_index: 0,
      subject: `Quick note for Ada`,
      idempotency_key: `uncertain:${id}:${emailSeq}:0`,
    });
    // The sequence moved on as before: step 1 is due a day later, no task holds the lane.
    const lead = await leadRow(id);
    expect(lead).toMatchObject({ current_step: 1, waiting_for: null, last_error: 'uncertain_delivery' });
    expect(lead.next_action_at?.getTime()).toBe(clock + 24 * H);
    const listed = await t.app.inject({ method: 'GET', url: '/api/v1/tasks?source=uncertain', headers: acme.auth });
    expect(listed.statusCode, listed.body).toBe(200);
    const view = listed.json().tasks.find((x: { id: string }) => x.id === task.id);
    expect(view).toMatchObject({ source: 'uncertain', reason: 'uncertain_delivery', subject: 'Quick note for Ada', text: 'Hi Ada, a first line.' });
    expect(smtp.messages).toHaveLength(0);
  });

  it('an uncertain step keeps lastError uncertain_delivery until a person acts, even when a later step fails for another reason', async () => {
    const id = await leftInFlight(emailSeq);
    await pass();
    // Step 1 due now, alone (other tests' leads wait a day): the one message the receiver refuses is this one.
    await t.db
      .updateTable('leads')
      .set({ next_action_at: new Date(clock) })
      .where('id', '=', id)
      .execute();
    smtp.failNext(550);
    await pass();
    const entries = await ledger(id);
    expect(entries.map((e) => [e.action, e.outcome, e.detail.reason])).toEqual([
      ['email_sent', 'failed', 'uncertain_delivery'],
      ['email_sent', 'failed', 'smtp_550'],
    ]);
    expect(await leadRow(id)).toMatchObject({ stage: 'failed', last_error: 'uncertain_delivery' });
    const leads = await t.app.inject({ method: 'GET', url: `/api/v1/leads?q=${encodeURIComponent(`Lovelace${serial}`)}`, headers: acme.auth });
    expect(leads.statusCode, leads.body).toBe(200);
    expect(leads.json().leads.find((l: { id: string }) => l.id === id)).toMatchObject({ lastError: 'uncertain_delivery' });
    // Leave it: the step stays as recorded, nothing is written to the ledger, and lastError clears.
    const [task] = await openUncertain(id);
    const left = await post(acme, `${task.id}/skip`);
    expect(left.statusCode, left.body).toBe(200);
    expect(left.json()).toMatchObject({ status: 'skipped', source: 'uncertain', closedBy: 'api' });
    expect(await ledger(id)).toHaveLength(2);
    expect((await leadRow(id)).last_error).toBeNull();
  });

  it('lastError stays uncertain_delivery while another uncertain send of the lead is open', async () => {
    const id = await leftInFlight(emailSeq);
    await pass();
    await markInFlight(id, emailSeq, 1);
    await pass();
    const open = await openUncertain(id);
    expect(open.map((x) => x.idempotency_key)).toEqual([`uncertain:${id}:${emailSeq}:0`, `uncertain:${id}:${emailSeq}:1`]);
    expect((await post(acme, `${open[0].id}/mark-sent`)).statusCode).toBe(200);
    expect((await leadRow(id)).last_error).toBe('uncertain_delivery');
    expect((await post(acme, `${open[1].id}/skip`)).statusCode).toBe(200);
    expect((await leadRow(id)).last_error).toBeNull();
  });

  it('Mark as sent records the person’s word (ok, no units, recovered marked_sent, by), sets a first contact’s milestone and sends nothing', async () => {
    const id = await leftInFlight(emailSeq);
    await pass();
    const [task] = await openUncertain(id);
    const before = smtp.messages.length;
    const res = await post(acme, `${task.id}/mark-sent`, { by: 'dana' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: task.id, status: 'done', source: 'uncertain', closedBy: 'dana' });
    const entries = await ledger(id);
    expect(entries).toHaveLength(2);
    expect(entries[1]).toMatchObject({ action: 'email_sent', outcome: 'ok', units: 0 });
    expect(entries[1].detail).toMatchObject({ step: 0, kind: 'email', channel: 'email', recovered: 'marked_sent', by: 'dana' });
    const lead = await leadRow(id);
    expect(lead).toMatchObject({ stage: 'messaged', last_message_channel: 'email', last_error: null, current_step: 1 });
    expect(lead.messaged_at?.getTime()).toBe(clock);
    expect(smtp.messages.length).toBe(before);
    // Closed: a second answer is 409, and complete on it says the same.
    expect((await post(acme, `${task.id}/mark-sent`)).statusCode).toBe(409);
    expect((await post(acme, `${task.id}/complete`)).json()).toMatchObject({ status: 'done' });
  });

  it('complete on an uncertain task is Mark as sent', async () => {
    const id = await leftInFlight(emailSeq);
    await pass();
    const [task] = await openUncertain(id);
    const res = await post(acme, `${task.id}/complete`);
    expect(res.statusCode, res.body).toBe(200);
    expect((await ledger(id))[1].detail).toMatchObject({ recovered: 'marked_sent', by: 'api' });
  });

  const messagesBudget = async () =>
    Number(
      (
        await t.db
          .selectFrom('send_budgets')
          .select(sql<string>`COALESCE(sum(used), 0)`.as('n'))
          .where('scope', '=', 'account')
          .where('scope_id', '=', account)
          .where('budget', '=', 'messages')
          .executeTakeFirst()
      )?.n ?? 0,
    );

  it('Send anyway sends with a fresh Message-ID and records the person’s decision (a new send: it counts on the account’s budget)', async () => {
    const id = await leftInFlight(emailSeq);
    await pass();
    const [task] = await openUncertain(id);
    const before = smtp.messages.length;
    const budgetBefore = await messagesBudget();
    const res = await post(acme, `${task.id}/send-anyway`, { by: 'dana' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'done', closedBy: 'dana', closedReason: null });
    expect(smtp.messages.length).toBe(before + 1);
    const sent = smtp.messages[smtp.messages.length - 1];
    expect(sent.to).toEqual([`ada${serial}@example.com`]);
    expect(sent.header('subject')).toBe('Quick note for Ada');
    const stepKey = `${id}:${emailSeq}:0`;
    // The SMTP driver derives the Message-ID from the key: the fresh key's, never the interrupted step's.
    expect(sent.header('message-id')).toBe(`<${shortHash('smtp', `${stepKey}:again:${task.id}`)}@outreach.invalid>`);
    expect(sent.header('message-id')).not.toBe(`<${shortHash('smtp', stepKey)}@outreach.invalid>`);
    const entries = await ledger(id);
    expect(entries[1]).toMatchObject({ action: 'email_sent', outcome: 'ok', units: 0 });
    expect(entries[1].detail).toMatchObject({ step: 0, kind: 'email', channel: 'email', recovered: 'sent_anyway', by: 'dana' });
    expect(await leadRow(id)).toMatchObject({ stage: 'messaged', last_error: null });
    expect(await messagesBudget()).toBe(budgetBefore + 1);
  });

  it('Send anyway refused for now (4xx) keeps the task open and records nothing; refused for good it records failed and closes', async () => {
    const id = await leftInFlight(emailSeq);
    await pass();
    const [task] = await openUncertain(id);
    smtp.failNext(451);
    const later = await post(acme, `${task.id}/send-anyway`);
    expect(later.statusCode, later.body).toBe(503);
    expect(later.json()).toMatchObject({ error: 'channel_send_failed' });
    expect((await openUncertain(id)).map((x) => x.id)).toEqual([task.id]);
    expect(await ledger(id)).toHaveLength(1);
    expect((await leadRow(id)).last_error).toBe('uncertain_delivery');
    smtp.failNext(550);
    const final = await post(acme, `${task.id}/send-anyway`);
    expect(final.statusCode, final.body).toBe(200);
    expect(final.json()).toMatchObject({ status: 'done', closedReason: 'send_failed' });
    const entries = await ledger(id);
    expect(entries[1]).toMatchObject({ outcome: 'failed', detail: expect.objectContaining({ recovered: 'sent_anyway', reason: 'smtp_550' }) });
  });

  it('Send anyway is for e-mail only: an uncertain LinkedIn step answers 400 naming the allowed case; Mark as sent sets the invite milestone', async () => {
    const id = await leftInFlight(linkedinSeq);
    await pass();
    const [task] = await openUncertain(id);
    expect(task).toMatchObject({ kind: 'connect', channel: 'linkedin', text: expect.any(String) });
    const res = await post(acme, `${task.id}/send-anyway`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'task_not_sendable' });
    expect(res.json().message).toMatch(/only for uncertain e-mail sends/);
    expect((await post(acme, `${task.id}/mark-sent`)).statusCode).toBe(200);
    expect(await leadRow(id)).toMatchObject({ stage: 'invited', last_error: null });
    expect((await ledger(id))[1]).toMatchObject({ action: 'invite', outcome: 'ok', detail: expect.objectContaining({ recovered: 'marked_sent' }) });
  });

  it('foreign task id 404 on mark-sent and send-anyway; a task that is not uncertain is 400', async () => {
    const id = await leftInFlight(emailSeq);
    await pass();
    const [task] = await openUncertain(id);
    for (const path of ['mark-sent', 'send-anyway', 'complete', 'skip']) {
      const res = await post(beta, `${task.id}/${path}`);
      expect(res.statusCode, path).toBe(404);
    }
    expect((await post(acme, '00000000-0000-4000-8000-000000000999/mark-sent')).statusCode).toBe(404);
    expect((await openUncertain(id)).map((x) => x.id)).toEqual([task.id]);
    // A step task (a LinkedIn account set to tasks) is not an uncertain send.
    const tasksAccount = await insertAccount(t.db, acme.workspaceId);
    await t.db.updateTable('messaging_accounts').set({ linkedin_delivery: 'tasks' }).where('id', '=', tasksAccount).execute();
    const other = await insertLead(t.db, acme.workspaceId, {
      person: 'Lin',
      account_id: tasksAccount,
      sequence_id: linkedinSeq,
      next_action_at: new Date(clock),
    });
    await pass();
    const [stepTask] = await tasksOf(other);
    expect(stepTask.source).toBe('step');
    const res = await post(acme, `${stepTask.id}/mark-sent`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'task_not_uncertain' });
  });

  it('an uncertain task survives the lead moving past the step (sequence ended, replied) but is cancelled when the lead opts out', async () => {
    const ended = await leftInFlight(linkedinSeq);
    const opted = await leftInFlight(linkedinSeq);
    await pass();
    expect(await leadRow(ended)).toMatchObject({ automation_stopped: true });
    await sql`UPDATE leads SET replied_at = ${new Date(clock).toISOString()}::timestamptz WHERE id = ${ended}::uuid`.execute(t.db);
    expect((await openUncertain(ended)).length).toBe(1);
    await sql`UPDATE leads SET opted_out_at = ${new Date(clock).toISOString()}::timestamptz WHERE id = ${opted}::uuid`.execute(t.db);
    expect(await tasksOf(opted)).toMatchObject([{ source: 'uncertain', status: 'cancelled', closed_reason: 'opted_out' }]);
  });

  it('readiness counts uncertain sends per mailbox (the e-mail driver’s stored send names it), others under their account', async () => {
    const ws = await createWorkspaceWithKey(t, 'Readiness');
    const acc = await insertAccount(t.db, ws.workspaceId);
    const seq = await insertSequence(t.db, ws.workspaceId, { channels: ['email'], steps: steps(step('email', { subject: 'Hi', message: 'Hello' })) });
    const li = await insertSequence(t.db, ws.workspaceId, { steps: steps(step('connect')) });
    const ids: string[] = [];
    for (const [i, sequence] of [seq, seq, li].entries()) {
      const id = await insertLead(t.db, ws.workspaceId, {
        email: `r${i}@example.com`,
        account_id: acc,
        sequence_id: sequence,
        next_action_at: new Date(clock),
      });
      await markInFlight(id, sequence, 0);
      ids.push(id);
    }
    await pass();
    // What the e-mail driver stores when a transaction starts: the step key and the mailbox it went from.
    const mailbox = 'mbx_readiness_1';
    await t.db
      .insertInto('mailboxes')
      .values({ id: mailbox, workspace_id: ws.workspaceId, account_id: acc, address: 'dana@acme.example', smtp_url_enc: 'x', imap_url_enc: 'x' })
      .execute();
    for (const id of ids.slice(0, 2))
      await t.db
        .insertInto('email_messages')
        .values({
          workspace_id: ws.workspaceId,
          message_id: `<${id}@acme.example>`,
          lead_id: id,
          mailbox_id: mailbox,
          idempotency_key: `${id}:${seq}:0`,
          subject: 'Hi',
          delivery: 'started',
        })
        .execute();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: ws.auth });
    expect(res.statusCode, res.body).toBe(200);
    const issues = res.json().accounts.issues as { code: string; message: string; retryable: boolean }[];
    expect(issues.filter((i) => i.code === 'mailbox_uncertain_sends')).toEqual([
      {
        code: 'mailbox_uncertain_sends',
        message: `mailbox dana@acme.example (${mailbox}) has 2 sends whose delivery is uncertain; a person decides each (console: Tasks)`,
        retryable: false,
      },
    ]);
    expect(issues.filter((i) => i.code === 'account_uncertain_sends').map((i) => i.message)).toEqual([
      `account ${acc} has 1 send whose delivery is uncertain; a person decides each (console: Tasks)`,
    ]);
    // Mark as sent tells the e-mail driver (acknowledge): its stored send is marked sent, and the mailbox's count drops.
    const [task] = await openUncertain(ids[0]);
    expect((await post(ws, `${task.id}/mark-sent`)).statusCode).toBe(200);
    const stored = await t.db.selectFrom('email_messages').select('delivery').where('idempotency_key', '=', `${ids[0]}:${seq}:0`).executeTakeFirstOrThrow();
    expect(stored.delivery).toBe('marked_sent');
    const after = (await t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: ws.auth })).json().accounts.issues as { message: string }[];
    expect(after.map((i) => i.message)).toContain(
      `mailbox dana@acme.example (${mailbox}) has 1 send whose delivery is uncertain; a person decides each (console: Tasks)`,
    );
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertReply } from '../helpers/factories.js';
import { step, steps } from '../engine/helpers.js';
import { H, T0, startTasksWorld, type TasksWorld, type Ws } from './world.js';

// Issue 28 §2 and §3: a task that no longer applies is cancelled (lead stopped, opted out, replied, sequence archived);
// a paused sequence's tasks are hidden and come back on resume; a reply decision on a tasks account opens a task.

let w: TasksWorld;
beforeAll(async () => {
  w = await startTasksWorld();
});
afterAll(async () => w?.t.close());

const twoSteps = () => steps(step('connect', { message: 'Hi {{firstName}}' }), step('message', { delayDays: 1, message: 'Thanks' }));

/** A workspace with one open connect task, for each cancellation case. */
async function openTask(name: string) {
  const ws = await w.workspace(name);
  const seq = await w.sequence(ws.workspaceId, twoSteps());
  const leadId = await w.lead(ws.workspaceId, ws.tasksAccount, seq);
  await w.pass(T0);
  const [task] = await w.taskRows(leadId);
  expect(task.status).toBe('open');
  return { ws, seq, leadId, taskId: task.id };
}

const taskById = async (ws: Ws, status: string, id: string) =>
  (await w.api.list(ws, `?status=${status}`)).json().tasks.find((x: { id: string }) => x.id === id);

describe('a task that no longer applies is cancelled', () => {
  it('when the lead is stopped (POST /x/leads/{id}/stop)', async () => {
    const { ws, leadId, taskId } = await openTask('Stopped');
    const res = await w.t.app.inject({ method: 'POST', url: `/api/v1/x/leads/${leadId}/stop`, headers: ws.auth });
    expect(res.statusCode).toBe(200);
    expect(await taskById(ws, 'cancelled', taskId)).toMatchObject({ status: 'cancelled', closedReason: 'lead_stopped' });
    expect((await w.api.list(ws)).json().tasks).toEqual([]);
    const closed = await w.api.complete(ws, taskId);
    expect(closed.statusCode).toBe(409);
    expect(closed.json()).toMatchObject({ ok: false, error: 'task_closed', status: 'cancelled' });
  });

  it('when the person opts out (a reply decision opt_out), and nothing is recorded for the step', async () => {
    const { ws, leadId, taskId } = await openTask('Opted out');
    const replyId = await insertReply(w.t.db, w.t.cipher, ws.workspaceId, { leadId, classification: 'not_interested', draft: null });
    const res = await w.t.app.inject({
      method: 'POST',
      url: `/api/v1/replies/${replyId}/decide`,
      headers: { ...ws.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ decision: 'opt_out' }),
    });
    expect(res.statusCode).toBe(200);
    expect(await taskById(ws, 'cancelled', taskId)).toMatchObject({ closedReason: 'opted_out' });
    expect((await w.ledger(leadId)).filter((e) => e.action === 'invite')).toEqual([]);
  });

  it('when the lead replies (its reply time is set, as the reply path writes it)', async () => {
    const { ws, leadId, taskId } = await openTask('Replied');
    await sql`UPDATE leads SET replied_at = ${new Date(T0.getTime() + H).toISOString()}::timestamptz, stage = 'replied' WHERE id = ${leadId}::uuid`.execute(
      w.t.db,
    );
    expect(await taskById(ws, 'cancelled', taskId)).toMatchObject({ closedReason: 'replied' });
  });

  it('when the sequence is archived', async () => {
    const { ws, seq, taskId } = await openTask('Archived');
    await w.t.db.updateTable('sequences').set({ status: 'archived' }).where('id', '=', seq).execute();
    expect(await taskById(ws, 'cancelled', taskId)).toMatchObject({ closedReason: 'sequence_archived' });
    expect((await w.api.skip(ws, taskId)).statusCode).toBe(409);
  });
});

describe('a paused sequence', () => {
  it('hides its open tasks from the queue and the counts, and they come back on resume', async () => {
    const { ws, seq, taskId } = await openTask('Paused');
    const openTasks = async () => (await w.api.progress(ws)).json().accounts.find((a: { id: string }) => a.id === ws.tasksAccount).openTasks;
    expect(await openTasks()).toBe(1);
    expect((await w.api.setSequenceStatus(ws, seq, 'paused')).statusCode).toBe(200);
    expect((await w.api.list(ws)).json().tasks).toEqual([]);
    expect(await openTasks()).toBe(0);
    expect((await w.api.readiness(ws)).json().accounts.data.openTasks).toBe(0);
    // Hidden, not closed.
    expect(await w.taskStatus(taskId)).toBe('open');
    expect((await w.api.setSequenceStatus(ws, seq, 'active')).statusCode).toBe(200);
    expect((await w.api.list(ws)).json().tasks.map((x: { id: string }) => x.id)).toEqual([taskId]);
    expect(await openTasks()).toBe(1);
  });

  it('a hidden task can still be closed by its id (the person did it before the pause)', async () => {
    const { ws, seq, leadId, taskId } = await openTask('Paused close');
    expect((await w.api.setSequenceStatus(ws, seq, 'paused')).statusCode).toBe(200);
    expect((await w.api.complete(ws, taskId)).statusCode).toBe(200);
    expect((await w.ledger(leadId)).map((e) => `${e.action}:${e.outcome}`)).toEqual(['invite:ok']);
  });
});

describe('a reply decision on a tasks account', () => {
  async function pendingReply(name: string) {
    const ws = await w.workspace(name);
    const leadId = await w.lead(ws.workspaceId, ws.tasksAccount, null, {
      next_action_at: null,
      stage: 'replied',
      invited_at: new Date('2026-10-20T10:00:00.000Z'),
      connected_at: new Date('2026-10-21T10:00:00.000Z'),
      replied_at: new Date('2026-11-01T10:00:00.000Z'),
    });
    const replyId = await insertReply(w.t.db, w.t.cipher, ws.workspaceId, { leadId, draft: 'Great, here is a time.' });
    const decide = await w.t.app.inject({
      method: 'POST',
      url: `/api/v1/replies/${replyId}/decide`,
      headers: { ...ws.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ decision: 'send', text: 'Tuesday 10:00 works, Pat.' }),
    });
    return { ws, leadId, replyId, decide };
  }

  it('send answers {ok, messaged: false, taskId}, leaves the queue, and opens a task with the text; completing writes reply_sent via task and lead.messaged', async () => {
    const { ws, leadId, replyId, decide } = await pendingReply('Reply task');
    expect(decide.statusCode).toBe(200);
    const body = decide.json();
    expect(body).toMatchObject({ ok: true, replyId, leadId, decision: 'send', state: 'decided', messaged: false, taskId: expect.any(String) });
    expect((await w.t.app.inject({ method: 'GET', url: '/api/v1/replies', headers: ws.auth })).json().replies).toEqual([]);
    expect(await w.ledger(leadId)).toEqual([]);
    expect(await w.events(ws.workspaceId, leadId)).toEqual([]);

    const [task] = (await w.api.list(ws, '?kind=reply')).json().tasks;
    expect(task).toMatchObject({
      id: body.taskId,
      kind: 'reply',
      channel: 'linkedin',
      action: 'reply_sent',
      replyId,
      decision: 'send',
      sequenceId: null,
      step: null,
      text: 'Tuesday 10:00 works, Pat.',
      account: ws.tasksAccount,
      lead: { id: leadId },
    });
    expect(task.profileUrl).toMatch(/^https:\/\/www\.linkedin\.com\/in\//);

    const done = await w.api.complete(ws, task.id, { by: 'dana' });
    expect(done.statusCode).toBe(200);
    const entries = await w.ledger(leadId);
    expect(entries.map((e) => `${e.action}:${e.outcome}`)).toEqual(['reply_sent:ok']);
    expect(entries[0].units).toBe(0);
    expect(JSON.parse(entries[0].detail)).toMatchObject({ via: 'task', taskId: task.id, replyId, decision: 'send', by: 'dana' });
    expect(entries[0].detail).not.toContain('Tuesday');
    expect((await w.events(ws.workspaceId, leadId)).map((e) => e.event)).toEqual(['lead.messaged']);
    expect((await w.leadRow(leadId)).messaged_at).not.toBeNull();
  });

  it('skipping the reply task writes reply_sent skipped and nothing else', async () => {
    const { ws, leadId, decide } = await pendingReply('Reply skip');
    const res = await w.api.skip(ws, decide.json().taskId);
    expect(res.statusCode).toBe(200);
    expect((await w.ledger(leadId)).map((e) => `${e.action}:${e.outcome}`)).toEqual(['reply_sent:skipped']);
    expect(await w.events(ws.workspaceId, leadId)).toEqual([]);
    expect((await w.leadRow(leadId)).messaged_at).toBeNull();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { step, steps } from '../engine/helpers.js';
import { DAY, H, T0, startTasksWorld, type TasksWorld } from './world.js';

// Issue 28 §2: a step the platform policy gives to a person becomes a task; the lead's lane waits for it; completing
// it records the step as the engine's own send would (detail.via = "task"), skipping records it skipped.

let w: TasksWorld;
beforeAll(async () => {
  w = await startTasksWorld();
});
afterAll(async () => w?.t.close());

const connectThenMessage = () =>
  steps(step('connect', { message: 'Hi {{firstName}}, glad to connect' }), step('message', { delayDays: 2, message: 'Thanks {{firstName}}!' }));

describe('a LinkedIn connect on a tasks account', () => {
  it('becomes a task with the rendered text and the LinkedIn URL, and holds the lead until the task ends', async () => {
    const ws = await w.workspace('Connect task');
    const seq = await w.sequence(ws.workspaceId, connectThenMessage());
    const id = await w.lead(ws.workspaceId, ws.tasksAccount, seq, { person: 'Ada Lovelace', linkedin_url: 'https://www.linkedin.com/in/ada' });

    const s1 = await w.pass(T0);
    expect(s1).toMatchObject({ actions: 0, tasksOpened: 1 });
    const res = await w.api.list(ws);
    expect(res.statusCode).toBe(200);
    const { tasks, nextCursor } = res.json();
    expect(nextCursor).toBeNull();
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({
      status: 'open',
      kind: 'connect',
      channel: 'linkedin',
      action: 'invite',
      reason: 'linkedin_tasks',
      lead: { id, person: 'Ada Lovelace', company: 'Initech', linkedinUrl: 'https://www.linkedin.com/in/ada' },
      account: ws.tasksAccount,
      xAccount: null,
      sequenceId: seq,
      step: 0,
      replyId: null,
      text: 'Hi Ada, glad to connect',
      profileUrl: 'https://www.linkedin.com/in/ada',
      dueAt: T0.toISOString(),
      overdue: false,
      closedAt: null,
    });
    let lead = await w.leadRow(id);
    expect(lead).toMatchObject({ stage: 'queued', current_step: 0, next_action_at: null, waiting_for: 'task', invited_at: null });

    // Lane hold: more passes, even days later, neither invite nor open a second task.
    for (const at of [new Date(T0.getTime() + H), new Date(T0.getTime() + 3 * DAY)]) {
      const s = await w.pass(at);
      expect(s).toMatchObject({ actions: 0 });
      expect(s.tasksOpened ?? 0).toBe(0);
    }
    expect((await w.taskRows(id)).map((r) => r.status)).toEqual(['open']);
    lead = await w.leadRow(id);
    expect(lead).toMatchObject({ stage: 'queued', invited_at: null });
    expect(await w.ledger(id)).toEqual([]);
    // Overdue: still open more than a day after it fell due.
    expect((await w.api.list(ws)).json().tasks[0].overdue).toBe(true);

    // Completing it through the API records the invite the engine would have sent, and the sequence goes on.
    const doneAt = new Date(T0.getTime() + 3 * DAY + H);
    w.t.clock.set(doneAt);
    const done = await w.api.complete(ws, tasks[0].id, { by: 'dana@acme.example' });
    expect(done.statusCode).toBe(200);
    expect(done.json()).toMatchObject({ id: tasks[0].id, status: 'done', closedAt: doneAt.toISOString(), closedBy: 'dana@acme.example', overdue: false });
    lead = await w.leadRow(id);
    expect(lead).toMatchObject({ stage: 'invited', current_step: 1, waiting_for: null });
    expect(lead.invited_at?.toISOString()).toBe(doneAt.toISOString());
    expect(lead.next_action_at?.toISOString()).toBe(new Date(doneAt.getTime() + 2 * DAY).toISOString());
    const entries = await w.ledger(id);
    expect(entries.map((e) => `${e.action}:${e.outcome}`)).toEqual(['invite:ok']);
    expect(entries[0]).toMatchObject({ units: 0, account_id: ws.tasksAccount });
    expect(JSON.parse(entries[0].detail)).toMatchObject({ via: 'task', taskId: tasks[0].id, by: 'dana@acme.example' });
    expect((await w.events(ws.workspaceId, id)).map((e) => `${e.event}:${e.data.lead?.stage}`)).toEqual(['lead.invited:invited']);
    expect((await w.api.list(ws)).json().tasks).toEqual([]);
    expect((await w.api.list(ws, '?status=done')).json().tasks.map((x: { id: string }) => x.id)).toEqual([tasks[0].id]);

    // Not before delayDays: the next step is not due yet, so no new task.
    await w.pass(new Date(doneAt.getTime() + DAY));
    expect((await w.api.list(ws)).json().tasks).toEqual([]);
    // When it falls due, the message (on a tasks account, no watcher hears the accept) is the next task.
    await w.pass(new Date(doneAt.getTime() + 2 * DAY));
    const next = (await w.api.list(ws)).json().tasks;
    expect(next).toHaveLength(1);
    expect(next[0]).toMatchObject({ kind: 'message', step: 1, text: 'Thanks Ada!', lead: { id } });
  });

  it('a bare POST (no body) completes as `api`', async () => {
    const ws = await w.workspace('Bare complete');
    const seq = await w.sequence(ws.workspaceId, connectThenMessage());
    const id = await w.lead(ws.workspaceId, ws.tasksAccount, seq);
    await w.pass(T0);
    const [task] = await w.taskRows(id);
    const res = await w.api.complete(ws, task.id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'done', closedBy: 'api' });
  });
});

describe('skipping a step task', () => {
  it('writes the step skipped and moves that sequence on; another lead’s task is untouched', async () => {
    const ws = await w.workspace('Skip task');
    const seq = await w.sequence(ws.workspaceId, connectThenMessage());
    const skipped = await w.lead(ws.workspaceId, ws.tasksAccount, seq);
    const other = await w.lead(ws.workspaceId, ws.tasksAccount, seq);
    await w.pass(T0);
    const [task] = await w.taskRows(skipped);
    const at = new Date(T0.getTime() + 2 * H);
    w.t.clock.set(at);
    const res = await w.api.skip(ws, task.id, {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: task.id, status: 'skipped', closedBy: 'api' });
    const entries = await w.ledger(skipped);
    expect(entries.map((e) => `${e.action}:${e.outcome}`)).toEqual(['invite:skipped']);
    expect(JSON.parse(entries[0].detail)).toMatchObject({ reason: 'task_skipped', via: 'task', taskId: task.id });
    const lead = await w.leadRow(skipped);
    expect(lead).toMatchObject({ current_step: 1, invited_at: null, waiting_for: null });
    expect(lead.next_action_at?.toISOString()).toBe(new Date(at.getTime() + 2 * DAY).toISOString());
    expect(await w.events(ws.workspaceId, skipped)).toEqual([]);
    expect((await w.taskRows(other)).map((r) => r.status)).toEqual(['open']);
    expect((await w.leadRow(other)).current_step).toBe(0);
  });
});

describe('instagram_dm', () => {
  const dm = () => steps(step('instagram_dm', { message: 'Hey {{firstName}}' }));

  it('on a tasks account is a task with the Instagram profile', async () => {
    const ws = await w.workspace('Instagram task');
    const seq = await w.sequence(ws.workspaceId, dm(), ['instagram']);
    const id = await w.lead(ws.workspaceId, ws.tasksAccount, seq, { person: 'Ines Ig', username: 'ines.ig' });
    const s = await w.pass(T0);
    expect(s).toMatchObject({ actions: 0, tasksOpened: 1 });
    const [task] = (await w.api.list(ws, '?kind=instagram_dm')).json().tasks;
    expect(task).toMatchObject({
      kind: 'instagram_dm',
      channel: 'instagram',
      reason: 'instagram_no_cold_dm',
      text: 'Hey Ines',
      profileUrl: 'https://www.instagram.com/ines.ig/',
      lead: { id },
    });
    expect(await w.ledger(id)).toEqual([]);
  });

  it('on the default sandbox account nothing changes: the step is simulated as before, no task', async () => {
    const ws = await w.workspace('Instagram sandbox');
    const seq = await w.sequence(ws.workspaceId, dm(), ['instagram']);
    const id = await w.lead(ws.workspaceId, ws.sandboxAccount, seq);
    const s = await w.pass(T0);
    expect(s).toMatchObject({ actions: 1 });
    expect(s.tasksOpened ?? 0).toBe(0);
    expect(await w.taskRows(id)).toEqual([]);
    expect((await w.ledger(id)).map((e) => `${e.action}:${e.outcome}`)).toEqual(['message:ok']);
    expect((await w.leadRow(id)).stage).toBe('messaged');
  });

  it('a LinkedIn connect on the sandbox account is simulated as before', async () => {
    const ws = await w.workspace('Connect sandbox');
    const seq = await w.sequence(ws.workspaceId, connectThenMessage());
    const id = await w.lead(ws.workspaceId, ws.sandboxAccount, seq);
    expect(await w.pass(T0)).toMatchObject({ actions: 1 });
    expect(await w.taskRows(id)).toEqual([]);
    expect((await w.leadRow(id)).stage).toBe('invited');
  });
});

describe('pacing and /progress', () => {
  it('a completed task counts on the account’s budgets; /progress shows each account’s open tasks and LinkedIn delivery', async () => {
    const ws = await w.workspace('Pacing');
    const seq = await w.sequence(ws.workspaceId, connectThenMessage());
    const a = await w.lead(ws.workspaceId, ws.tasksAccount, seq);
    await w.lead(ws.workspaceId, ws.tasksAccount, seq);
    await w.lead(ws.workspaceId, ws.tasksAccount, seq);
    await w.pass(T0);

    const entryOf = async (account: string) => {
      const res = await w.api.progress(ws);
      expect(res.statusCode).toBe(200);
      return res.json().accounts.find((e: { id: string }) => e.id === account);
    };
    const budget = (entry: { budgets: { budget: string; used: number }[] }, name: string) => entry.budgets.find((b) => b.budget === name)?.used ?? 0;
    let entry = await entryOf(ws.tasksAccount);
    expect(entry).toMatchObject({ openTasks: 3, linkedinGateway: { delivery: 'tasks', error: null }, invitesSentToday: 0 });
    // Opening a task charges nothing: the person has not acted yet.
    expect(budget(entry, 'invites')).toBe(0);
    expect(await entryOf(ws.sandboxAccount)).toMatchObject({ openTasks: 0, linkedinGateway: { delivery: 'sandbox', error: null } });

    const [task] = await w.taskRows(a);
    expect((await w.api.complete(ws, task.id)).statusCode).toBe(200);
    entry = await entryOf(ws.tasksAccount);
    expect(entry.openTasks).toBe(2);
    expect(budget(entry, 'invites')).toBe(1);
    expect(budget(entry, 'actions')).toBe(1);
    expect(entry.invitesSentToday).toBe(1);
  });
});

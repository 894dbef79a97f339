import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { step, steps } from '../engine/helpers.js';
import { connectInMemory, fails, ok } from '../mcp/mcp-client.js';
import { T0, startTasksWorld, type TasksWorld, type Ws } from './world.js';

// Issue 28 §2: the task API's edges (404, 409, keyset pages, 400 naming the field), one winner of two concurrent
// completes, the MCP tools that only record, readiness, and the OpenAPI marks.

let w: TasksWorld;
let ws: Awaited<ReturnType<TasksWorld['workspace']>>;
let foreign: Awaited<ReturnType<TasksWorld['workspace']>>;
let seq: string;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  w = await startTasksWorld();
  ws = await w.workspace('Task API');
  foreign = await w.workspace('Foreign');
  seq = await w.sequence(ws.workspaceId, steps(step('connect', { message: 'Hi {{firstName}}' }), step('message', { delayDays: 1, message: 'Hello' })));
});
afterAll(async () => w?.t.close());

/** `n` leads of the workspace whose connect step became an open task in one pass. */
async function openTasks(target: Ws & { tasksAccount: string }, n: number, sequence = seq) {
  const leads: string[] = [];
  for (let i = 0; i < n; i++) leads.push(await w.lead(target.workspaceId, target.tasksAccount, sequence));
  await w.pass(T0);
  const rows = await w.t.db.selectFrom('tasks').select(['id', 'lead_id']).where('lead_id', 'in', leads).execute();
  return leads.map((l) => rows.find((r) => r.lead_id === l)!.id);
}

describe('POST /tasks/{id}/complete and /skip', () => {
  it('404 task not found for an unknown id and for another workspace’s task; 400 for a non-uuid id', async () => {
    const [theirs] = await openTasks(foreign, 1, await w.sequence(foreign.workspaceId, steps(step('connect'))));
    for (const id of [UNKNOWN, theirs]) {
      for (const call of [w.api.complete, w.api.skip]) {
        const res = await call(ws, id);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toMatchObject({ error: 'task not found' });
      }
    }
    expect(await w.taskStatus(theirs)).toBe('open');
    const bad = await w.api.complete(ws, 'not-a-uuid');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/^params\/id /);
  });

  it('409 {ok:false, error:"task_closed"} once the task is no longer open, whichever way it closed', async () => {
    const [a, b] = await openTasks(ws, 2);
    expect((await w.api.complete(ws, a)).statusCode).toBe(200);
    expect((await w.api.skip(ws, b)).statusCode).toBe(200);
    for (const [id, status] of [
      [a, 'done'],
      [b, 'skipped'],
    ]) {
      for (const call of [w.api.complete, w.api.skip]) {
        const res = await call(ws, id);
        expect(res.statusCode).toBe(409);
        expect(res.json()).toEqual({ ok: false, error: 'task_closed', status, message: expect.any(String) });
      }
    }
  });

  it('refuses a body with other properties or a bad `by`', async () => {
    const [id] = await openTasks(ws, 1);
    const extra = await w.api.complete(ws, id, { by: 'me', text: 'x' });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().message).toBe('body/text is not allowed: body has no property "text" (allowed: by)');
    expect((await w.api.complete(ws, id, { by: '' })).statusCode).toBe(400);
    expect((await w.api.complete(ws, id, { by: 7 })).statusCode).toBe(400);
    expect(await w.taskStatus(id)).toBe('open');
  });

  it('two concurrent completes of one task: exactly one 200 and one 409; the step is recorded once (two workers never do one task twice)', async () => {
    for (let round = 0; round < 3; round++) {
      const [id] = await openTasks(ws, 1);
      const answers = await Promise.all([w.api.complete(ws, id, { by: 'worker-1' }), w.api.complete(ws, id, { by: 'worker-2' })]);
      expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
      expect(answers.find((r) => r.statusCode === 409)!.json()).toMatchObject({ ok: false, error: 'task_closed' });
      const row = await w.t.db.selectFrom('tasks').select('lead_id').where('id', '=', id).executeTakeFirstOrThrow();
      expect((await w.ledger(row.lead_id)).map((e) => `${e.action}:${e.outcome}`)).toEqual(['invite:ok']);
      expect((await w.events(ws.workspaceId, row.lead_id)).map((e) => e.event)).toEqual(['lead.invited']);
    }
  });
});

describe('GET /tasks', () => {
  it('keyset pages: limit tasks a page, nextCursor as `after`, every open task once, soonest due first', async () => {
    const pageWs = await w.workspace('Pages');
    const pageSeq = await w.sequence(pageWs.workspaceId, steps(step('connect')));
    const ids = await openTasks(pageWs, 5, pageSeq);
    const seen: string[] = [];
    let after: string | null = null;
    const sizes: number[] = [];
    do {
      const res = await w.api.list(pageWs, `?limit=2${after ? `&after=${after}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body: { tasks: { id: string; dueAt: string }[]; nextCursor: string | null } = res.json();
      sizes.push(body.tasks.length);
      seen.push(...body.tasks.map((x) => x.id));
      after = body.nextCursor;
    } while (after);
    expect(sizes).toEqual([2, 2, 1]);
    expect([...seen].sort()).toEqual([...ids].sort());
    // One pass opened them all at T0: ties on dueAt are ordered by id.
    expect(seen).toEqual([...ids].sort());
    // The default page holds them all; a foreign workspace sees none of them.
    expect((await w.api.list(pageWs)).json().tasks).toHaveLength(5);
    expect((await w.api.list(foreign)).json().tasks.filter((x: { id: string }) => ids.includes(x.id))).toEqual([]);
  });

  it('filters by account and kind', async () => {
    const f = await w.workspace('Filters');
    const s = await w.sequence(f.workspaceId, steps(step('connect')));
    const [id] = await openTasks(f, 1, s);
    expect((await w.api.list(f, `?account=${f.tasksAccount}`)).json().tasks.map((x: { id: string }) => x.id)).toEqual([id]);
    expect((await w.api.list(f, `?account=${f.sandboxAccount}`)).json().tasks).toEqual([]);
    expect((await w.api.list(f, '?kind=connect')).json().tasks).toHaveLength(1);
    expect((await w.api.list(f, '?kind=message')).json().tasks).toEqual([]);
    expect((await w.api.list(f, '?status=cancelled')).json().tasks).toEqual([]);
  });

  it('400 naming the field and the allowed values for a bad query', async () => {
    const cases: [string, string | RegExp][] = [
      ['?status=closed', 'querystring/status must be one of: "open", "done", "skipped", "cancelled"'],
      ['?kind=dm', 'querystring/kind must be one of: "connect", "message", "engage", "email", "x_dm", "x_engage", "instagram_dm", "reply", "leaver"'],
      ['?limit=0', /^querystring\/limit must be >= 1/],
      ['?limit=201', /^querystring\/limit must be <= 200/],
      ['?limit=ten', 'querystring/limit must be of type integer'],
      ['?after=abc', /^querystring\/after must match/],
      ['?account=bob', /^querystring\/account must match pattern/],
    ];
    for (const [query, message] of cases) {
      const res = await w.api.list(ws, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error, query).toBe('invalid_request');
      if (typeof message === 'string') expect(res.json().message, query).toBe(message);
      else expect(res.json().message, query).toMatch(message);
    }
    // A cursor of no task of this workspace.
    const res = await w.api.list(ws, `?after=${UNKNOWN}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_cursor' });
  });

  it('needs a key like every /api/v1 route', async () => {
    expect((await w.t.app.inject({ method: 'GET', url: '/api/v1/tasks' })).statusCode).toBe(401);
    expect((await w.t.app.inject({ method: 'POST', url: `/api/v1/tasks/${UNKNOWN}/complete` })).statusCode).toBe(401);
  });
});

describe('MCP: list_tasks, complete_task and skip_task only record', () => {
  it('lists, dry-runs and completes a task; the descriptions say an agent never performs an X action', async () => {
    const m = await w.workspace('MCP tasks');
    const s = await w.sequence(m.workspaceId, steps(step('connect', { message: 'Hi {{firstName}}' }), step('message', { delayDays: 1 })));
    const [a, b] = await openTasks(m, 2, s);
    const client = await connectInMemory(w.t.services, m.workspaceId);
    try {
      const { tools } = await client.listTools();
      for (const name of ['list_tasks', 'complete_task', 'skip_task']) {
        const tool = tools.find((x) => x.name === name)!;
        expect(tool.description, name).toMatch(/Only a signed-in person, in the console, acts on X\./);
        expect(tool.description, name).toMatch(/contacts a prospect: no/);
      }
      const listed = await ok(client, 'list_tasks', { limit: 1 });
      expect(listed.tasks).toHaveLength(1);
      expect(listed.nextCursor).toBe(listed.tasks[0].id);

      const dry = await ok(client, 'complete_task', { taskId: a, dryRun: true });
      expect(dry).toMatchObject({ dryRun: true, id: a, status: 'done', closedBy: 'api' });
      expect(await w.taskStatus(a)).toBe('open');

      expect(await ok(client, 'complete_task', { taskId: a, by: 'agent' })).toMatchObject({ dryRun: false, status: 'done', closedBy: 'agent' });
      expect(await ok(client, 'skip_task', { taskId: b })).toMatchObject({ status: 'skipped', closedBy: 'api' });
      expect(await fails(client, 'complete_task', { taskId: a })).toMatchObject({ error: 'task_closed', httpStatus: 409 });
      expect(await fails(client, 'skip_task', { taskId: UNKNOWN })).toMatchObject({ error: 'task not found', httpStatus: 404 });
      expect((await ok(client, 'list_tasks', {})).tasks).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('readiness', () => {
  it('counts open tasks per account and in all, and reports a gateway account the gateway refused', async () => {
    const r = await w.workspace('Readiness');
    const s = await w.sequence(r.workspaceId, steps(step('connect')));
    await openTasks(r, 2, s);
    const gateway = r.sandboxAccount;
    await w.t.db
      .updateTable('messaging_accounts')
      .set({
        linkedin_delivery: 'gateway',
        linkedin_gateway_account_id: 'gw-acc-1',
        linkedin_gateway_error: 'linkedin_gateway_auth_failed',
        linkedin_gateway_error_at: T0,
      })
      .where('id', '=', gateway)
      .execute();
    const res = await w.api.readiness(r);
    expect(res.statusCode).toBe(200);
    const { data, issues } = res.json().accounts;
    expect(data.openTasks).toBe(2);
    expect(data.messagingAccounts.find((a: { id: string }) => a.id === r.tasksAccount)).toMatchObject({
      openTasks: 2,
      linkedinGateway: { delivery: 'tasks', error: null },
    });
    expect(data.messagingAccounts.find((a: { id: string }) => a.id === gateway)).toMatchObject({
      openTasks: 0,
      linkedinGateway: { delivery: 'gateway', error: 'linkedin_gateway_auth_failed' },
    });
    expect(issues).toContainEqual({ code: 'linkedin_gateway_auth_failed', message: expect.stringContaining(gateway), retryable: false });
    const progress = (await w.api.progress(r)).json().accounts.find((a: { id: string }) => a.id === gateway);
    expect(progress.linkedinGateway).toEqual({ delivery: 'gateway', error: 'linkedin_gateway_auth_failed' });
  });
});

describe('the OpenAPI document', () => {
  it('marks the task operations and the new account fields as extensions, and says completing only records', async () => {
    const doc = (await w.t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const list = doc.paths['/api/v1/tasks'].get;
    const complete = doc.paths['/api/v1/tasks/{id}/complete'].post;
    const skip = doc.paths['/api/v1/tasks/{id}/skip'].post;
    for (const op of [list, complete, skip]) expect(op['x-extension']).toBe(true);
    expect(complete.description).toMatch(/Records only: it says that a person did it themselves, on X, LinkedIn or Instagram/);
    expect(complete.description).toMatch(/the reply decision stays the only API operation that contacts a prospect/);
    expect(Object.keys(complete.responses)).toEqual(expect.arrayContaining(['200', '404', '409']));
    const entry = doc.paths['/api/v1/progress'].get.responses['200'].content['application/json'].schema.properties.accounts.items;
    expect(entry.properties.openTasks['x-extension']).toBe(true);
    expect(entry.properties.linkedinGateway['x-extension']).toBe(true);
  });
});

import type { SequenceStepRow } from '../../src/db/schema.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence, type LeadFixture } from '../helpers/factories.js';
import { ENGINE_ENV, insertAccount } from '../engine/helpers.js';

// The world the task tests share: the engine with deterministic settings (every hour a sending hour, no scripted
// accepts or replies), workspaces with a LinkedIn account set to `tasks` and one left on the sandbox, and the HTTP
// calls of the task queue.

export const T0 = new Date('2026-11-02T09:00:00.000Z');
export const H = 3_600_000;
export const DAY = 24 * H;
export type Ws = Awaited<ReturnType<typeof createWorkspaceWithKey>>;

export async function startTasksWorld() {
  const t: TestApp = await buildTestApp({ env: ENGINE_ENV, now: T0.toISOString() });

  async function workspace(name: string) {
    const ws = await createWorkspaceWithKey(t, name);
    const tasksAccount = await insertAccount(t.db, ws.workspaceId);
    await t.db.updateTable('messaging_accounts').set({ linkedin_delivery: 'tasks' }).where('id', '=', tasksAccount).execute();
    const sandboxAccount = await insertAccount(t.db, ws.workspaceId);
    return { ...ws, tasksAccount, sandboxAccount };
  }

  let serial = 0;
  /** A lead of `sequence` on `account`, due at T0 (or `at`). */
  async function lead(workspaceId: string, account: string, sequence: string | null, f: LeadFixture = {}) {
    serial += 1;
    return insertLead(t.db, workspaceId, {
      person: `Pat Person${serial}`,
      company: 'Initech',
      title: 'CTO',
      linkedin_url: `https://www.linkedin.com/in/pat-${serial}`,
      username: `pat_${serial}`,
      account_id: account,
      sequence_id: sequence,
      next_action_at: T0,
      ...f,
    });
  }

  const sequence = (workspaceId: string, steps: SequenceStepRow[], channels = ['linkedin']) => insertSequence(t.db, workspaceId, { steps, channels });

  const json = { 'content-type': 'application/json' };
  const api = {
    list: (ws: Ws, query = '') => t.app.inject({ method: 'GET', url: `/api/v1/tasks${query}`, headers: ws.auth }),
    complete: (ws: Ws, id: string, body?: unknown) =>
      t.app.inject({
        method: 'POST',
        url: `/api/v1/tasks/${id}/complete`,
        headers: { ...ws.auth, ...(body !== undefined && json) },
        ...(body !== undefined && { payload: JSON.stringify(body) }),
      }),
    skip: (ws: Ws, id: string, body?: unknown) =>
      t.app.inject({
        method: 'POST',
        url: `/api/v1/tasks/${id}/skip`,
        headers: { ...ws.auth, ...(body !== undefined && json) },
        ...(body !== undefined && { payload: JSON.stringify(body) }),
      }),
    progress: (ws: Ws) => t.app.inject({ method: 'GET', url: '/api/v1/progress', headers: ws.auth }),
    readiness: (ws: Ws) => t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: ws.auth }),
    setSequenceStatus: (ws: Ws, id: string, status: string) =>
      t.app.inject({ method: 'PATCH', url: `/api/v1/sequences/${id}/status`, headers: { ...ws.auth, ...json }, payload: JSON.stringify({ status }) }),
  };

  const leadRow = (id: string) => t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const taskRows = (leadId: string) => t.db.selectFrom('tasks').selectAll().where('lead_id', '=', leadId).orderBy('created_at').execute();
  const taskStatus = async (id: string) => (await t.db.selectFrom('tasks').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
  const ledger = (leadId: string) => t.db.selectFrom('activity').selectAll().where('lead_id', '=', leadId).orderBy('created_at').execute();
  const events = async (workspaceId: string, leadId: string) =>
    (await t.db.selectFrom('outbox_events').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').execute())
      .map((r) => ({ event: r.event, data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as { lead?: { id?: string; stage?: string } } }))
      .filter((e) => e.data.lead?.id === leadId);
  /** One engine pass at `at`, with the API's clock there too. */
  const pass = async (at: Date) => {
    t.clock.set(at);
    return t.services.engine.runPass({ now: at });
  };

  return { t, workspace, lead, sequence, api, leadRow, taskRows, taskStatus, ledger, events, pass };
}
export type TasksWorld = Awaited<ReturnType<typeof startTasksWorld>>;

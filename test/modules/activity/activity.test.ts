import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import { createTeamWorkspaces, type TestWorkspace } from '../../helpers/http-client.js';
import { insertActivity, insertLead, insertMessagingAccount } from '../../helpers/factories.js';
import { ACTIVITY_ACTIONS } from '../../../src/domain/vocabulary.js';

let t: TestApp;
type Ws = TestWorkspace;
let a: Ws, b: Ws, client: Ws;
const NOW = '2026-11-21T12:00:00.000Z';

const get = (ws: Ws, query = '', headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: `/api/v1/activity${query}`, headers: { ...ws.auth, ...headers } });

let acc1: string, acc2: string, lead: string, newest: string;

beforeAll(async () => {
  t = await buildTestApp({ now: NOW });
  ({ a, b, client } = await createTeamWorkspaces(t, 'Ledger Co'));
  acc1 = await insertMessagingAccount(t.db, a.workspaceId);
  acc2 = await insertMessagingAccount(t.db, a.workspaceId);
  lead = await insertLead(t.db, a.workspaceId, { person: 'Bob B.', company: 'Initech', linkedin_url: 'https://www.linkedin.com/in/bob', title: 'CTO' });

  const day = (n: number) => `2026-11-${String(n).padStart(2, '0')}T10:00:00.000Z`;
  // invite: 5 ok (2 in the last 3 days), 1 failed, 1 skipped.
  for (const n of [2, 10, 15, 19, 20])
    await insertActivity(t.db, a.workspaceId, { action: 'invite', createdAt: day(n), accountId: acc1, leadId: lead, units: 1 });
  await insertActivity(t.db, a.workspaceId, { action: 'invite', outcome: 'failed', createdAt: day(20), accountId: acc2, detail: '{"error":"rate_limited"}' });
  await insertActivity(t.db, a.workspaceId, { action: 'invite', outcome: 'skipped', createdAt: day(20), accountId: acc2 });
  // x_dm: 2 confirmed, 1 failed; no messaging account.
  await insertActivity(t.db, a.workspaceId, { action: 'x_dm', createdAt: day(18) });
  await insertActivity(t.db, a.workspaceId, { action: 'x_dm', createdAt: day(19) });
  await insertActivity(t.db, a.workspaceId, { action: 'x_dm', outcome: 'failed', createdAt: day(19) });
  await insertActivity(t.db, a.workspaceId, { action: 'message', createdAt: day(17), accountId: acc2, leadId: lead });
  newest = await insertActivity(t.db, a.workspaceId, { action: 'error', outcome: 'failed', createdAt: '2026-11-21T11:00:00.000Z', detail: 'engine stalled' });

  await insertActivity(t.db, b.workspaceId, { action: 'invite', createdAt: day(20) });
  await insertActivity(t.db, client.workspaceId, { action: 'x_dm', createdAt: day(20) });
});
afterAll(async () => t?.close());

describe('GET /activity', () => {
  it('lists the ledger newest first with an exact count and the lead object', async () => {
    const res = await get(a);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ count: 12, returned: 12 });
    expect(body.actions[0]).toEqual({
      id: newest,
      createdAt: '2026-11-21T11:00:00.000Z',
      action: 'error',
      outcome: 'failed',
      units: 0,
      detail: 'engine stalled',
      account: null,
      lead: { id: null, person: null, company: null, linkedinUrl: null },
    });
    const times = body.actions.map((e: { createdAt: string }) => e.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    const withLead = body.actions.find((e: { action: string }) => e.action === 'message');
    expect(withLead).toMatchObject({ account: acc2, lead: { id: lead, person: 'Bob B.', company: 'Initech', linkedinUrl: 'https://www.linkedin.com/in/bob' } });
  });

  it('reads exactly the confirmed sends: action=x_dm&outcome=ok and action=invite&outcome=ok&sinceDays=n', async () => {
    expect((await get(a, '?action=x_dm&outcome=ok')).json()).toMatchObject({ count: 2, returned: 2 });
    expect((await get(a, '?action=invite&outcome=ok&sinceDays=3')).json().count).toBe(2);
    expect((await get(a, '?action=invite&outcome=ok&sinceDays=30')).json().count).toBe(5);
    expect((await get(a, '?action=invite')).json().count).toBe(7);
  });

  it('filters by a comma list of actions, outcome, account and sinceDays', async () => {
    expect((await get(a, '?action=x_dm,message')).json().count).toBe(4);
    expect((await get(a, '?action=x_dm, message,x_dm')).json().count).toBe(4);
    expect((await get(a, '?outcome=failed')).json().count).toBe(3);
    expect((await get(a, '?outcome=skipped')).json().count).toBe(1);
    expect((await get(a, `?account=${acc2}`)).json().count).toBe(3);
    expect((await get(a, `?account=${acc1}&sinceDays=10`)).json().count).toBe(3);
    expect((await get(a, '?sinceDays=1')).json().count).toBe(1);
  });

  it('limit bounds the page while count stays exact', async () => {
    const body = (await get(a, '?action=invite&limit=2')).json();
    expect(body).toMatchObject({ count: 7, returned: 2 });
    expect(body.actions.map((e: { createdAt: string }) => e.createdAt.slice(0, 10))).toEqual(['2026-11-20', '2026-11-20']);
    expect((await get(a, '?limit=1000')).statusCode).toBe(200);
  });

  it('400 naming the first unknown action', async () => {
    const res = await get(a, '?action=invite,sending,bogus');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_action', action: 'sending' });
    expect(res.json().message).toContain("'sending'");
    expect((await get(a, '?action=')).statusCode).toBe(400);
    expect((await get(a, '?action=,')).statusCode).toBe(400);
    expect((await get(a, '?action=INVITE')).json().action).toBe('INVITE');
  });

  it('400 for a bad outcome, account, sinceDays or limit', async () => {
    for (const q of ['outcome=done', 'account=acc_1', 'account=onb_x', 'sinceDays=0', 'sinceDays=366', 'limit=0', 'limit=1001', 'limit=x']) {
      expect((await get(a, `?${q}`)).statusCode, q).toBe(400);
    }
  });

  it('accepts every action of the spec list', async () => {
    expect((await get(a, `?action=${ACTIVITY_ACTIONS.join(',')}`)).json().count).toBe(12);
  });

  it('is scoped to the workspace and honors X-Workspace-Client', async () => {
    expect((await get(b)).json().count).toBe(1);
    expect((await get(a, '?action=x_dm', { 'x-workspace-client': client.workspaceId })).json().count).toBe(1);
    expect((await get(b, '', { 'x-workspace-client': client.workspaceId })).statusCode).toBe(403);
  });
});

describe('the ledger is append-only', () => {
  it('refuses UPDATE and DELETE of an entry', async () => {
    await expect(sql`UPDATE activity SET detail = 'rewritten' WHERE id = ${newest}`.execute(t.db)).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM activity WHERE id = ${newest}`.execute(t.db)).rejects.toThrow(/append-only/);
    expect((await get(a)).json().count).toBe(12);
  });

  it('only the retention job deletes, and only entries older than the window (default 180 days)', async () => {
    const old = await insertActivity(t.db, a.workspaceId, { action: 'invite', createdAt: '2026-05-01T00:00:00.000Z' });
    const kept = await insertActivity(t.db, a.workspaceId, { action: 'invite', createdAt: '2026-06-01T00:00:00.000Z' });
    const result = await t.services.activity.pruneExpired();
    expect(result).toEqual({ deleted: 1, before: '2026-05-25T12:00:00.000Z' });
    const left = await t.db.selectFrom('activity').select('id').where('id', 'in', [old, kept]).execute();
    expect(left.map((r) => r.id)).toEqual([kept]);
    expect((await t.services.activity.pruneExpired({ retentionDays: 10, batchSize: 2 })).deleted).toBe(3);
    // The permission does not leak out of the job's own transaction.
    await expect(sql`DELETE FROM activity WHERE id = ${newest}`.execute(t.db)).rejects.toThrow(/append-only/);
  });
});

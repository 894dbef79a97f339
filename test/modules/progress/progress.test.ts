import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZERO_FUNNEL } from '../../helpers/funnel.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { createTeamWorkspaces, type TestWorkspace, okJson } from '../../helpers/http-client.js';
import { insertActivity, insertLead, insertMessagingAccount, insertReply } from '../../helpers/factories.js';
import { createTextCipher } from '../../../src/lib/crypto.js';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';

let t: TestApp;
type Ws = TestWorkspace;
let a: Ws;
let b: Ws;
let client: Ws;
const cipher = createTextCipher(randomBytes(32));
const NOW = '2026-11-21T12:00:00.000Z';
const at = (iso: string) => new Date(iso);

const get = (ws: Ws, query = '', headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: `/api/v1/progress${query}`, headers: { ...ws.auth, ...headers } });

let nyAccount: string;
let warmAccount: string;

beforeAll(async () => {
  t = await buildTestApp({ now: NOW });
  ({ a, b, client } = await createTeamWorkspaces(t, 'Progress Co'));

  nyAccount = await insertMessagingAccount(t.db, a.workspaceId, {
    name: 'Dana (LinkedIn)',
    time_zone: 'America/New_York',
    connected_at: at('2026-09-01T00:00:00.000Z'),
    account_score: 80,
    relations_count: 1200,
    created_at: at('2026-09-01T00:00:00.000Z'),
  });
  // Warm-up started 10 local days ago: week 2 of the default 10,20,30 ramp.
  warmAccount = await insertMessagingAccount(t.db, a.workspaceId, {
    name: 'Warm',
    time_zone: 'UTC',
    warmup_started_at: at('2026-11-11T09:00:00.000Z'),
    stored_status: 'disconnected',
    created_at: at('2026-09-02T00:00:00.000Z'),
  });

  const d = (day: number) => at(`2026-11-${String(day).padStart(2, '0')}T10:00:00.000Z`);
  // Lifetime funnel fixture: 8 leads in A.
  await insertLead(t.db, a.workspaceId, { stage: 'queued' });
  await insertLead(t.db, a.workspaceId, { stage: 'resolving' });
  await insertLead(t.db, a.workspaceId, { stage: 'queued', automation_stopped: true });
  await insertLead(t.db, a.workspaceId, { stage: 'invited', invited_at: d(1), account_id: nyAccount });
  await insertLead(t.db, a.workspaceId, { stage: 'failed', invited_at: d(1), last_error: 'boom' });
  await insertLead(t.db, a.workspaceId, { stage: 'messaged', invited_at: d(1), connected_at: d(2), messaged_at: d(3) });
  const positive = await insertLead(t.db, a.workspaceId, {
    stage: 'replied',
    invited_at: d(1),
    connected_at: d(2),
    messaged_at: d(3),
    replied_at: d(4),
    meeting_booked_at: d(5),
    meeting_outcome: 'no_show',
  });
  await insertReply(t.db, cipher, a.workspaceId, { leadId: positive, classification: 'meeting_intent' });
  const negative = await insertLead(t.db, a.workspaceId, {
    stage: 'replied',
    invited_at: d(1),
    connected_at: d(2),
    messaged_at: d(3),
    replied_at: d(4),
    reply_sentiment: 'negative',
    meeting_booked_at: d(6),
  });
  await insertReply(t.db, cipher, a.workspaceId, { leadId: negative, classification: 'meeting_intent' });

  // Ledger: in period (7 days) and outside; skipped counts as neither.
  await insertActivity(t.db, a.workspaceId, { action: 'invite', createdAt: '2026-11-20T10:00:00.000Z', accountId: nyAccount });
  await insertActivity(t.db, a.workspaceId, { action: 'message', createdAt: '2026-11-15T10:00:00.000Z' });
  await insertActivity(t.db, a.workspaceId, { action: 'message', outcome: 'failed', createdAt: '2026-11-19T10:00:00.000Z' });
  await insertActivity(t.db, a.workspaceId, { action: 'message', outcome: 'skipped', createdAt: '2026-11-19T10:00:00.000Z' });
  await insertActivity(t.db, a.workspaceId, { action: 'message', createdAt: '2026-11-10T10:00:00.000Z' });
  await insertActivity(t.db, a.workspaceId, { action: 'error', outcome: 'failed', createdAt: '2026-11-01T10:00:00.000Z' });
  // Today in New York began at 05:00Z: one invite before it, two after (one failed).
  await insertActivity(t.db, a.workspaceId, { action: 'invite', createdAt: '2026-11-21T04:30:00.000Z', accountId: nyAccount });
  await insertActivity(t.db, a.workspaceId, { action: 'invite', createdAt: '2026-11-21T05:30:00.000Z', accountId: nyAccount });
  await insertActivity(t.db, a.workspaceId, { action: 'invite', outcome: 'failed', createdAt: '2026-11-21T06:00:00.000Z', accountId: nyAccount });
  await insertActivity(t.db, a.workspaceId, { action: 'invite', createdAt: '2026-11-21T07:00:00.000Z', accountId: warmAccount });

  // The send budget ledger's rows are what pacing enforces; yesterday's rows must not count.
  for (const [scope, id, budget, day, used] of [
    ['account', nyAccount, 'invites', '2026-11-21', 3],
    ['account', nyAccount, 'invites', '2026-11-20', 9],
    ['account', nyAccount, 'messages', '2026-11-21', 5],
    ['account', nyAccount, 'actions', '2026-11-21', 8],
    ['account', warmAccount, 'invites', '2026-11-21', 2],
    ['mailbox', 'mbx_warm', 'emails', '2026-11-21', 4],
    ['mailbox', 'mbx_warm', 'emails', '2026-11-20', 7],
  ] as const) {
    await sql`INSERT INTO send_budgets (workspace_id, scope, scope_id, budget, window_kind, window_start, used)
      VALUES (${a.workspaceId}, ${scope}, ${id}, ${budget}, 'local_day', ${day}::date, ${used})`.execute(t.db);
  }
  // A mailbox of the warming account: its daily e-mails are one of the account's budgets (ramped as its invites).
  await t.db
    .insertInto('mailboxes')
    .values({ id: 'mbx_warm', workspace_id: a.workspaceId, account_id: warmAccount, address: 'warm@progress.example', smtp_url_enc: 'x', imap_url_enc: 'x' })
    .execute();

  await insertLead(t.db, b.workspaceId, { stage: 'replied', invited_at: d(1), replied_at: d(2) });
  await insertActivity(t.db, b.workspaceId, { action: 'invite', createdAt: '2026-11-20T10:00:00.000Z' });
  await insertLead(t.db, client.workspaceId, { stage: 'queued' });
});
afterAll(async () => t?.close());

describe('GET /progress', () => {
  it('answers the lifetime funnel, queue, period counts and every pacing field as the engine enforces it', async () => {
    const body = okJson(await get(a));
    expect(body.asOf).toBe(NOW);
    expect(body.period).toEqual({ since: '2026-11-14T12:00:00.000Z', days: 7 });
    expect(body.funnel).toEqual({
      leads: 8,
      invited: 5,
      accepted: 3,
      messaged: 3,
      replied: 2,
      meetingsBooked: 2,
      repliesPositive: 1,
      repliesNegative: 1,
      acceptRate: 0.6,
      replyRate: 0.6667,
      meetingsQualifying: 1,
      meetingsNoShowOrCancelled: 1,
    });
    expect(body.queued).toBe(2);
    // In the period: invite 20th, message 15th, 3 invites today (ok 05:30, ok 07:00; 04:30 too) → ok; failed: message 19th, invite 06:00.
    expect(body.recentActions).toBe(5);
    expect(body.recentFailures).toBe(2);
    expect(body.accounts).toEqual([
      {
        id: nyAccount,
        name: 'Dana (LinkedIn)',
        mode: 'linkedin',
        storedStatus: 'connected',
        connectedAt: '2026-09-01T00:00:00.000Z',
        warmupStartedAt: null,
        pacingTimeZone: 'America/New_York',
        invitesSentToday: 3,
        inviteCapToday: 40,
        rampPhase: 4,
        accountScore: 80,
        relationsCount: 1200,
        budgets: [
          { scope: 'account', scopeId: nyAccount, budget: 'invites', window: 'local_day', windowStart: '2026-11-21', used: 3, cap: 40 },
          { scope: 'account', scopeId: nyAccount, budget: 'messages', window: 'local_day', windowStart: '2026-11-21', used: 5, cap: 100 },
          { scope: 'account', scopeId: nyAccount, budget: 'actions', window: 'local_day', windowStart: '2026-11-21', used: 8, cap: null },
        ],
        openTasks: 0,
        linkedinGateway: { delivery: 'sandbox', error: null },
      },
      {
        id: warmAccount,
        name: 'Warm',
        mode: 'linkedin',
        storedStatus: 'disconnected',
        connectedAt: '2026-10-01T00:00:00.000Z',
        warmupStartedAt: '2026-11-11T09:00:00.000Z',
        pacingTimeZone: 'UTC',
        invitesSentToday: 2,
        inviteCapToday: 20,
        rampPhase: 2,
        accountScore: null,
        relationsCount: null,
        budgets: [
          { scope: 'account', scopeId: warmAccount, budget: 'invites', window: 'local_day', windowStart: '2026-11-21', used: 2, cap: 20 },
          { scope: 'account', scopeId: warmAccount, budget: 'messages', window: 'local_day', windowStart: '2026-11-21', used: 0, cap: 100 },
          { scope: 'account', scopeId: warmAccount, budget: 'actions', window: 'local_day', windowStart: '2026-11-21', used: 0, cap: null },
          { scope: 'mailbox', scopeId: 'mbx_warm', budget: 'emails', window: 'local_day', windowStart: '2026-11-21', used: 4, cap: 20 },
        ],
        openTasks: 0,
        linkedinGateway: { delivery: 'sandbox', error: null },
      },
    ]);
  });

  it('sinceDays changes only the period counts, never the lifetime funnel', async () => {
    const one = (await get(a, '?sinceDays=1')).json();
    expect(one.period).toEqual({ since: '2026-11-20T12:00:00.000Z', days: 1 });
    expect(one.recentActions).toBe(3);
    expect(one.recentFailures).toBe(1);
    const ninety = (await get(a, '?sinceDays=90')).json();
    expect(ninety.recentActions).toBe(6);
    expect(ninety.recentFailures).toBe(3);
    expect(ninety.funnel).toEqual(one.funnel);
  });

  it('400 for sinceDays outside 1..90 or not an integer', async () => {
    for (const v of ['0', '91', '-1', '1.5', 'abc', '']) {
      const res = await get(a, `?sinceDays=${v}`);
      expect(res.statusCode, v).toBe(400);
      expect(res.json().error).toEqual(expect.any(String));
    }
  });

  it('is scoped to the selected workspace and honors X-Workspace-Client', async () => {
    const other = (await get(b)).json();
    expect(other.funnel.leads).toBe(1);
    expect(other.accounts).toEqual([]);
    const viaSelector = await get(a, '', { 'x-workspace-client': client.workspaceId });
    expect(viaSelector.statusCode).toBe(200);
    expect(viaSelector.json().funnel.leads).toBe(1);
    expect(viaSelector.json().queued).toBe(1);
    expect((await get(a, '', { 'x-workspace-client': b.workspaceId })).statusCode).toBe(403);
  });

  it("the pacing entry's budgets are published as an extension of the spec", async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const entry = doc.paths['/api/v1/progress'].get.responses['200'].content['application/json'].schema.properties.accounts.items;
    expect(entry.properties.budgets['x-extension']).toBe(true);
    expect(entry.properties.invitesSentToday['x-extension']).toBeUndefined();
  });

  it('an empty workspace answers zeros, not nulls', async () => {
    const empty = await createWorkspaceWithKey(t, 'Empty');
    const body = (await get(empty)).json();
    expect(body.funnel).toEqual({ ...ZERO_FUNNEL, meetingsQualifying: 0, meetingsNoShowOrCancelled: 0 });
    expect(body).toMatchObject({ queued: 0, recentActions: 0, recentFailures: 0, accounts: [] });
  });
});

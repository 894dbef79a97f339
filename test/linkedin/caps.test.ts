import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { insertAccount, step, steps } from '../engine/helpers.js';
import type { LinkedinGatewayFake } from '../helpers/linkedin-gateway-fake.js';
import { engineTick } from '../helpers/worlds/common.js';
import { startLinkedinWorld, type LinkedinWorld } from '../helpers/worlds/linkedin.js';
import type { OutboundAction } from '../../src/channels/types.js';

// Issue 28 §4, caps: a gateway account sends at most OUTREACH_LINKEDIN_INVITES_PER_WEEK invitations in any seven
// local days and OUTREACH_LINKEDIN_MESSAGES_PER_DAY messages per UTC day (on the send budget ledger); past them the
// step waits until the window has room. The claim reserves the unit with the account's pacing (issue 41), so a step
// past the cap never reaches the gateway: it waits like a step past the account's own cap (no error, no attempt, no
// wait counted), and a send LinkedIn refused gives its unit back. And who acts: a tasks account's
// actions and a gateway account's engage are a person's (`needs_person`), a sandbox account stays simulated.

const DAY = 86_400_000;
const GW = 'gw_capped';

describe('LinkedIn gateway caps and who acts', () => {
  let gw: LinkedinGatewayFake;
  let t: TestApp;
  // A Monday, 10:00 UTC (the account's time zone is UTC).
  let clock = Date.parse('2026-11-23T10:00:00.000Z');
  let workspaceId: string;
  let auth: Record<string, string>;
  let account: string;
  let n = 0;

  beforeAll(async () => {
    let ws: LinkedinWorld['ws'];
    ({ gw, t, ws, account } = await startLinkedinWorld({
      now: () => clock,
      gatewayAccounts: [GW],
      env: {
        OUTREACH_LINKEDIN_INVITES_PER_WEEK: 2,
        OUTREACH_LINKEDIN_MESSAGES_PER_DAY: 1,
        OUTREACH_LINKEDIN_NOTES_PER_MONTH: 2,
        OUTREACH_LINKEDIN_POLL_INTERVAL: 86_400,
      },
      workspaceName: 'Capped LinkedIn',
    }));
    workspaceId = ws.workspaceId;
    auth = ws.auth;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await gw?.close();
  });

  async function tick(advanceMs = 1_000) {
    await engineTick(t, (clock += advanceMs));
  }
  async function leads(count: number, sequence: string, acc = account) {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const handle = `capped-${++n}`;
      gw.addUser(handle);
      ids.push(
        await insertLead(t.db, workspaceId, {
          person: `Person ${n}`,
          linkedin_url: `https://www.linkedin.com/in/${handle}`,
          account_id: acc,
          sequence_id: sequence,
          next_action_at: new Date(clock),
        }),
      );
    }
    return ids;
  }
  const row = (id: string) =>
    t.db.selectFrom('leads').select(['stage', 'last_error', 'step_attempts', 'step_waits', 'next_action_at']).where('id', '=', id).executeTakeFirstOrThrow();

  it('invitations stop at the weekly cap and wait for the rolling week to have room, without using an attempt', async () => {
    const connect = await insertSequence(t.db, workspaceId, { steps: steps(step('connect')) });
    const ids = await leads(3, connect);
    await tick();
    expect(gw.invitations.filter((i) => i.accountId === GW)).toHaveLength(2);
    const stages = await Promise.all(ids.map(row));
    const waiting = stages.filter((s) => s.stage === 'queued');
    expect(waiting).toHaveLength(1);
    expect(waiting[0]).toMatchObject({ last_error: null, step_attempts: 0, step_waits: 0 });
    // It waits for the next local day, when the week's window moves on by one day.
    expect(new Date(waiting[0].next_action_at!).toISOString()).toBe('2026-11-24T00:00:00.000Z');
    // GET /progress lists the gateway's budgets with the account's: the week's invitations as the claim counted them.
    const progress = await t.app.inject({ method: 'GET', url: '/api/v1/progress', headers: auth });
    expect(progress.statusCode).toBe(200);
    const entry = progress.json().accounts.find((a: { id: string }) => a.id === account);
    expect(entry.budgets.filter((b: { scope: string }) => b.scope === 'linkedin_gateway')).toEqual([
      { scope: 'linkedin_gateway', scopeId: account, budget: 'invites', window: 'rolling_week', windowStart: '2026-11-23', used: 2, cap: 2 },
      { scope: 'linkedin_gateway', scopeId: account, budget: 'messages', window: 'utc_day', windowStart: '2026-11-23', used: 0, cap: 1 },
      { scope: 'linkedin_gateway', scopeId: account, budget: 'notes', window: 'rolling_month', windowStart: '2026-11-23', used: 0, cap: 2 },
    ]);
    // The next days of the same week still have no room.
    await tick(DAY);
    await tick(DAY);
    expect(gw.invitations.filter((i) => i.accountId === GW)).toHaveLength(2);
    // Seven days after the first two, the window has room again.
    clock = Date.parse('2026-11-30T00:00:30.000Z');
    await tick();
    expect(gw.invitations.filter((i) => i.accountId === GW)).toHaveLength(3);
    for (const id of ids) expect((await row(id)).stage).toBe('invited');
  });

  it('messages stop at the daily cap and go out the next UTC day; a refused message gives its unit back', async () => {
    const message = await insertSequence(t.db, workspaceId, { steps: steps(step('message', { message: 'Hello there' })) });
    // A person the gateway cannot reach (unknown provider id) is refused: that does not use the day's message.
    const unknown = await insertLead(t.db, workspaceId, {
      person: 'Gone Person',
      linkedin_url: 'https://www.linkedin.com/in/gone-person',
      account_id: account,
      sequence_id: message,
      linkedin_provider_id: 'ACoAAgone',
      next_action_at: new Date(clock),
    });
    await tick();
    expect(await row(unknown)).toMatchObject({ stage: 'failed', last_error: 'linkedin_invalid_recipient' });
    const ids = await leads(2, message);
    await tick();
    const sent = () => gw.messages.filter((m) => m.accountId === GW && m.isSender).length;
    expect(sent()).toBe(1);
    const waiting = (await Promise.all(ids.map(row))).filter((s) => s.stage === 'queued');
    expect(waiting).toEqual([expect.objectContaining({ last_error: null, step_attempts: 0, step_waits: 0 })]);
    // It waits for the next UTC day.
    expect(new Date(waiting[0].next_action_at!).toISOString()).toBe('2026-12-01T00:00:00.000Z');
    await tick(DAY);
    expect(sent()).toBe(2);
  });

  it('notes: past the notes a month an invitation goes without its note and the ledger says so; one that did not go gives its note back', async () => {
    // A fresh week for the invitations (the first test used this week's), the clock on from the messages test.
    clock = Date.parse('2026-12-08T10:00:00.000Z');
    const NOTE = 'Hi Person, glad to connect.';
    const withNote = await insertSequence(t.db, workspaceId, { steps: steps(step('connect', { message: 'Hi {{firstName}}, glad to connect.' })) });
    const mine = () => gw.invitations.filter((i) => i.accountId === GW && i.at >= '2026-12-08');
    const notesUsed = async () =>
      (await t.db.selectFrom('send_budgets').select('used').where('budget', '=', 'notes').execute()).reduce((n, r) => n + Number(r.used), 0);
    // The gateway down as the first invitation goes: it did not go, so its note is not used; it goes, noted, later.
    const [first] = await leads(1, withNote);
    gw.failNext('POST /api/v1/users/invite', { status: 503 });
    await tick();
    expect(mine()).toEqual([]);
    expect(await notesUsed()).toBe(0);
    await tick(10 * 60_000);
    expect(mine().map((i) => i.message)).toEqual([NOTE]);
    // A week on, two more: one note is left of the two in 30 days, so one of them goes without its note.
    clock = Date.parse('2026-12-15T10:00:00.000Z');
    const pair = await leads(2, withNote);
    await tick();
    expect(
      mine()
        .map((i) => i.message)
        .sort(),
    ).toEqual([NOTE, NOTE, null].sort());
    const ledger = await t.db.selectFrom('activity').select(['lead_id', 'detail']).where('action', '=', 'invite').where('outcome', '=', 'ok').execute();
    const detailOf = (id: string) => JSON.parse(String(ledger.find((a) => a.lead_id === id)!.detail));
    expect(pair.map((id) => detailOf(id).noteOmitted ?? null).sort()).toEqual(['linkedin_note_limit', null].sort());
    expect(detailOf(first)).not.toHaveProperty('noteOmitted');
    for (const id of [first, ...pair]) expect((await row(id)).stage).toBe('invited');
    // Thirty local days after the first note, it is free again.
    clock = Date.parse('2027-01-07T10:00:00.000Z');
    await leads(1, withNote);
    await tick();
    expect(mine().at(-1)?.message).toBe(NOTE);
  });

  it('a tasks account answers needs_person; a gateway engage is a person’s; a sandbox account stays simulated', async () => {
    const driver = t.services.drivers.forChannel('linkedin');
    const tasks = await insertAccount(t.db, workspaceId);
    await t.services.linkedin.setDelivery(workspaceId, tasks, 'tasks');
    const sandbox = await insertAccount(t.db, workspaceId);
    const [leadId] = await leads(1, await insertSequence(t.db, workspaceId, { status: 'paused' }), tasks);
    const action = (accountId: string, kind: OutboundAction['kind']): OutboundAction => ({
      workspaceId,
      accountId,
      accountUserId: null,
      kind,
      channel: 'linkedin',
      recipient: { leadId, person: 'P', email: null, linkedinUrl: null, xUserId: null, username: null, sandbox: null },
      subject: null,
      text: 'Hi',
      actions: [],
      idempotencyKey: `k-${accountId}-${kind}`,
      at: new Date(clock),
    });
    const before = gw.requests.length;
    for (const kind of ['connect', 'message', 'engage', 'reply'] as const)
      expect(await driver.perform(action(tasks, kind))).toEqual({ outcome: 'needs_person', reason: 'linkedin_tasks' });
    expect(await driver.perform(action(account, 'engage'))).toEqual({ outcome: 'needs_person', reason: 'linkedin_engage_by_person' });
    expect(gw.requests.length).toBe(before);
    const simulated = await driver.perform(action(sandbox, 'connect'));
    expect(simulated.outcome).toBe('ok');
    expect(gw.requests.length).toBe(before);
  });
});

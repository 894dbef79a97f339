import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { admin } from '../helpers/world-fixtures.js';
import { insertAccount, step, steps } from '../engine/helpers.js';
import type { LinkedinGatewayFake } from '../helpers/linkedin-gateway-fake.js';
import { engineTick } from '../helpers/worlds/common.js';
import { startLinkedinWorld, type LinkedinWorld } from '../helpers/worlds/linkedin.js';

// Issue 28 §4: a LinkedIn account linked to the gateway (Unipile API v1) invites and messages through it, hears
// acceptances (relations) and replies (chats) by polling, waits on 429 and 5xx without using the lead's attempts, and
// stops on 401/403 until it is linked again. Against a real HTTP fake of the gateway; the engine runs through
// POST /admin/v1/engine/tick.

const GW = 'gw_acc_main';
const GW_REFUSED = 'gw_acc_refused';
const GW_SPARE = 'gw_acc_spare';

describe('the LinkedIn gateway channel', () => {
  let gw: LinkedinGatewayFake;
  let t: TestApp;
  let clock = Date.parse('2026-11-23T10:00:00.000Z');
  let ws: LinkedinWorld['ws'];
  let account: string;
  let connectThenMessage: string;
  let n = 0;

  beforeAll(async () => {
    let linked: LinkedinWorld['linked'];
    ({ gw, t, ws, account, linked } = await startLinkedinWorld({
      now: () => clock,
      gatewayAccounts: [GW, GW_REFUSED, GW_SPARE],
      env: { OUTREACH_LINKEDIN_POLL_INTERVAL: 60, OUTREACH_LINKEDIN_GATEWAY_TIMEOUT_MS: 10_000 },
      workspaceName: 'LinkedIn Co',
    }));
    expect(linked).toMatchObject({ delivery: 'gateway', gatewayAccountId: GW, gatewayError: null });
    connectThenMessage = await insertSequence(t.db, ws.workspaceId, {
      steps: steps(step('connect', { message: 'Hi {{firstName}}, glad to connect' }), step('message', { message: 'Thanks for connecting, {{firstName}}!' })),
    });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await gw?.close();
  });

  const tick = (advanceMs = 1_000) => engineTick(t, (clock += advanceMs));

  /** A person on LinkedIn, and the lead of `acc` that reaches them with `sequence`. */
  async function linkedinLead(first: string, sequence: string, acc = account) {
    const handle = `${first.toLowerCase()}-doe-${++n}`;
    const user = gw.addUser(handle, `${first} Doe`);
    const leadId = await insertLead(t.db, ws.workspaceId, {
      person: `${first} Doe`,
      linkedin_url: `https://www.linkedin.com/in/${handle}/`,
      account_id: acc,
      sequence_id: sequence,
      next_action_at: new Date(clock),
    });
    return { user, leadId };
  }
  const leadRow = (id: string) =>
    t.db
      .selectFrom('leads')
      .select([
        'stage',
        'invited_at',
        'connected_at',
        'messaged_at',
        'replied_at',
        'last_error',
        'step_attempts',
        'step_waits',
        'next_action_at',
        'linkedin_provider_id',
        'linkedin_chat_id',
      ])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  const calls = (prefix: string) => gw.requests.filter((r) => r.startsWith(prefix)).length;

  it('a gateway account invites and messages through the gateway, and hears the acceptance and the reply', async () => {
    const { user, leadId } = await linkedinLead('Pat', connectThenMessage);
    await tick();
    const inv = gw.invitations.filter((i) => i.providerId === user.providerId);
    expect(inv).toEqual([expect.objectContaining({ accountId: GW, message: 'Hi Pat, glad to connect' })]);
    let lead = await leadRow(leadId);
    expect(lead.stage).toBe('invited');
    // The person's LinkedIn id is looked up once and kept on the lead.
    expect(lead.linkedin_provider_id).toBe(user.providerId);
    expect(calls(`GET /api/v1/users/${user.publicIdentifier}?account_id=${GW}`)).toBe(1);

    gw.accept(GW, user.providerId, clock + 5_000);
    await tick(120_000);
    await tick(1_000);
    lead = await leadRow(leadId);
    expect(lead.connected_at).not.toBeNull();
    expect(lead.stage === 'accepted' || lead.stage === 'messaged').toBe(true);
    const accepted = await t.db.selectFrom('activity').select('action').where('lead_id', '=', leadId).where('action', '=', 'accepted').execute();
    expect(accepted).toHaveLength(1);

    await tick(1_000);
    lead = await leadRow(leadId);
    expect(lead.stage).toBe('messaged');
    // A new chat, multipart as Unipile documents it; the chat id is kept on the lead. The profile is not fetched again.
    expect(lead.linkedin_chat_id).toBe(gw.chats.find((c) => c.attendeeProviderId === user.providerId)!.id);
    expect(gw.messages.filter((m) => m.chatId === lead.linkedin_chat_id && m.isSender).map((m) => m.text)).toEqual(['Thanks for connecting, Pat!']);
    expect(calls(`GET /api/v1/users/${user.publicIdentifier}`)).toBe(1);

    gw.reply(GW, user.providerId, 'Sounds interesting, can we talk next week?', clock + 1_000);
    await tick(120_000);
    lead = await leadRow(leadId);
    expect(lead.stage).toBe('replied');
    const replies = await t.app.inject({ method: 'GET', url: '/api/v1/replies', headers: ws.auth });
    expect(replies.statusCode).toBe(200);
    const mine = (replies.json().replies as { id: string; lead: { id: string }; channel: string; theirMessage: string }[]).filter((r) => r.lead.id === leadId);
    expect(mine).toEqual([expect.objectContaining({ channel: 'linkedin', account: account, theirMessage: 'Sounds interesting, can we talk next week?' })]);

    // A second poll does not hear the same message twice; the account's own messages are never replies.
    await tick(120_000);
    expect(await t.db.selectFrom('replies').select('id').where('lead_id', '=', leadId).execute()).toHaveLength(1);

    // The reply decision answers in the same chat, through the gateway.
    const decided = await t.app.inject({
      method: 'POST',
      url: `/api/v1/replies/${mine[0].id}/decide`,
      headers: ws.auth,
      payload: { decision: 'send', text: 'Tuesday 10:00?' },
    });
    expect(decided.statusCode, decided.body).toBe(200);
    expect(gw.messages.filter((m) => m.chatId === lead.linkedin_chat_id && m.isSender).map((m) => m.text)).toEqual([
      'Thanks for connecting, Pat!',
      'Tuesday 10:00?',
    ]);
  });

  it('a 429 makes the step wait as the gateway says, without counting an attempt; the invite goes once it is over', async () => {
    const { user, leadId } = await linkedinLead('Rae', connectThenMessage);
    gw.failNext('POST /api/v1/users/invite', { status: 429, retryAfter: 600 });
    await tick();
    let lead = await leadRow(leadId);
    expect(lead).toMatchObject({ stage: 'queued', invited_at: null, last_error: 'rate_limited', step_attempts: 0, step_waits: 1 });
    expect(new Date(lead.next_action_at!).getTime()).toBe(clock + 600_000);
    expect(gw.invitations.some((i) => i.providerId === user.providerId)).toBe(false);
    await tick(601_000);
    lead = await leadRow(leadId);
    expect(lead.stage).toBe('invited');
    expect(gw.invitations.filter((i) => i.providerId === user.providerId)).toHaveLength(1);
  });

  it('a 5xx waits and retries without counting an attempt', async () => {
    const { leadId } = await linkedinLead('Sam', connectThenMessage);
    gw.failNext('POST /api/v1/users/invite', { status: 503 });
    await tick();
    const lead = await leadRow(leadId);
    expect(lead).toMatchObject({ stage: 'queued', last_error: 'linkedin_gateway_503', step_attempts: 0, step_waits: 1 });
    await tick(301_000);
    expect((await leadRow(leadId)).stage).toBe('invited');
  });

  it('a 401 stops that account: the refusal is stored, nothing more is sent from it or read, until it is linked again', async () => {
    const refused = await insertAccount(t.db, ws.workspaceId);
    t.clock.set(new Date(clock));
    await t.services.linkedin.linkGateway(ws.workspaceId, refused, GW_REFUSED);
    const a = await linkedinLead('Ida', connectThenMessage, refused);
    const b = await linkedinLead('Jo', connectThenMessage, refused);
    gw.failNext(`GET /api/v1/users/${a.user.publicIdentifier}`, { status: 401 });
    gw.failNext(`GET /api/v1/users/${b.user.publicIdentifier}`, { status: 401 });
    await tick();
    // The second lead may never reach the gateway (the account was refused first): its scripted 401 is dropped.
    gw.clearFailures();
    const acc = await t.db
      .selectFrom('messaging_accounts')
      .select(['linkedin_gateway_error', 'linkedin_gateway_error_at'])
      .where('id', '=', refused)
      .executeTakeFirstOrThrow();
    expect(acc.linkedin_gateway_error).toBe('linkedin_gateway_auth_failed');
    expect(acc.linkedin_gateway_error_at).not.toBeNull();
    for (const { leadId } of [a, b]) {
      const lead = await leadRow(leadId);
      expect(lead).toMatchObject({ stage: 'queued', step_attempts: 0 });
      expect(lead.last_error).toBe('linkedin_gateway_auth_failed');
    }
    const sentBefore = gw.requests.filter((r) => r.includes(GW_REFUSED) || r.includes(a.user.publicIdentifier) || r.includes(b.user.publicIdentifier)).length;
    await tick(3_600_000);
    await tick(3_600_000);
    const sentAfter = gw.requests.filter((r) => r.includes(GW_REFUSED) || r.includes(a.user.publicIdentifier) || r.includes(b.user.publicIdentifier)).length;
    expect(sentAfter).toBe(sentBefore);
    expect(gw.invitations.filter((i) => i.accountId === GW_REFUSED)).toHaveLength(0);
    expect((await leadRow(a.leadId)).step_attempts).toBe(0);

    // Linked again (the owner re-authenticated at the gateway): the refusal is cleared and the steps go.
    t.clock.set(new Date(clock));
    const relinked = await t.services.linkedin.linkGateway(ws.workspaceId, refused, GW_REFUSED);
    expect(relinked.gatewayError).toBeNull();
    await tick(1_800_000);
    expect(gw.invitations.filter((i) => i.accountId === GW_REFUSED)).toHaveLength(2);
  });

  it('a person the gateway does not know is a final failure with a short code', async () => {
    const leadId = await insertLead(t.db, ws.workspaceId, {
      person: 'Nobody Known',
      linkedin_url: 'https://www.linkedin.com/in/nobody-known-here/',
      account_id: account,
      sequence_id: connectThenMessage,
      next_action_at: new Date(clock),
    });
    await tick();
    expect(await leadRow(leadId)).toMatchObject({ stage: 'failed', last_error: 'linkedin_user_not_found' });
  });

  it('the admin routes the CLI uses through a running server link and switch an account', async () => {
    const acc = await insertAccount(t.db, ws.workspaceId);
    const linked = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/linkedin/connect',
      headers: admin,
      payload: { workspaceId: ws.workspaceId, accountId: acc, gatewayAccountId: GW_SPARE },
    });
    expect(linked.statusCode, linked.body).toBe(200);
    expect(linked.json()).toMatchObject({ accountId: acc, delivery: 'gateway', gatewayAccountId: GW_SPARE });
    const tasks = await t.app.inject({ method: 'POST', url: '/admin/v1/linkedin/delivery', headers: admin, payload: { accountId: acc, delivery: 'tasks' } });
    expect(tasks.json()).toMatchObject({ workspaceId: ws.workspaceId, delivery: 'tasks', gatewayAccountId: GW_SPARE });
    const bad = await t.app.inject({ method: 'POST', url: '/admin/v1/linkedin/delivery', headers: admin, payload: { accountId: acc, delivery: 'gateway' } });
    expect(bad.statusCode).toBe(400);
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/linkedin/delivery',
      headers: admin,
      payload: { accountId: 'onb_nope', delivery: 'sandbox' },
    });
    expect(unknown.statusCode).toBe(404);
  });

  it('linking checks the account at the gateway: unknown there, or a foreign messaging account, is not found', async () => {
    await expect(t.services.linkedin.linkGateway(ws.workspaceId, account, 'gw_nobody')).rejects.toMatchObject({
      statusCode: 404,
      code: 'gateway account not found',
    });
    const other = await createWorkspaceWithKey(t, 'Other Co');
    await expect(t.services.linkedin.linkGateway(other.workspaceId, account, GW)).rejects.toMatchObject({
      statusCode: 404,
      code: 'messaging account not found',
    });
    await expect(t.services.linkedin.setDelivery(other.workspaceId, account, 'tasks')).rejects.toMatchObject({ statusCode: 404 });
  });

  it('a gateway account is one messaging account’s in the whole installation: a second link, from any workspace, is 409 and changes nothing', async () => {
    // The security probe's M2: another workspace links its account to our gateway account id.
    const other = await createWorkspaceWithKey(t, 'Prober Co');
    const theirs = await insertAccount(t.db, other.workspaceId);
    const mine = await insertAccount(t.db, ws.workspaceId);
    for (const [workspaceId, acc] of [
      [other.workspaceId, theirs],
      [ws.workspaceId, mine],
    ])
      await expect(t.services.linkedin.linkGateway(workspaceId, acc, GW)).rejects.toMatchObject({ statusCode: 409, code: 'gateway_account_in_use' });
    const rows = await t.db
      .selectFrom('messaging_accounts')
      .select(['id', 'linkedin_gateway_account_id'])
      .where('linkedin_gateway_account_id', '=', GW)
      .execute();
    expect(rows.map((r) => r.id)).toEqual([account]);
    // The console's door says the same.
    const refused = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/linkedin/connect',
      headers: admin,
      payload: { workspaceId: other.workspaceId, accountId: theirs, gatewayAccountId: GW },
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).not.toContain(ws.workspaceId);
    // The index holds against a write that skips the check (two links racing).
    await expect(t.db.updateTable('messaging_accounts').set({ linkedin_gateway_account_id: GW }).where('id', '=', theirs).execute()).rejects.toMatchObject({
      code: '23505',
    });
    // Linking the account that holds it again is no conflict.
    expect(await t.services.linkedin.linkGateway(ws.workspaceId, account, GW)).toMatchObject({ gatewayAccountId: GW });
  });
});

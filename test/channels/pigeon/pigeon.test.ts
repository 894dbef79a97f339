import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { insertLead, insertSequence, stepRow } from '../../helpers/factories.js';
import { ENGINE_ENV, insertAccount } from '../../engine/helpers.js';
import { connectInMemory, fails } from '../../mcp/mcp-client.js';
import { STEP_KINDS } from '../../../src/domain/vocabulary.js';
import { budgetsOf, channelBudgetKey } from '../../../src/domain/budgets.js';
import { createMemoryRateLimitStore } from '../../../src/app/plugins/rate-limit.js';
import { createPigeonChannel, PIGEON_DM } from './descriptor.js';
import { PIGEON_PERSON_REASON } from './driver.js';
import { createPigeonPlatform, type PigeonInbound } from './platform.js';

// Issue 41 §6: a fifth channel, registered at run time from this folder alone (descriptor, driver, fake platform),
// runs a sequence end to end through the service's HTTP API and the engine's pass: it sends, it keeps to its budget,
// its platform pushes replies (signed) that freeze the lead or opt the person out, and its platform's rules can hand
// a step to a person as a task. Nothing in src/ names it, and the spec's step kinds on the wire stay as they are.

const platform = createPigeonPlatform();
const CONTROL = 'pigeon-control-token';
// The sender's message budget: one a day (the descriptor draws every pigeon_dm from it).
const ENV = { ...ENGINE_ENV, OUTREACH_PACING_MESSAGE_CAP: 1 };
const T0 = new Date('2026-12-01T10:00:00.000Z');

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: ENV, controlToken: CONTROL, channels: [createPigeonChannel(platform, { deliveriesPerDay: 2 })], now: T0.toISOString() });
});
afterAll(async () => t?.close());

/** One engine pass as of `now`, through the operator's tick route. */
async function tick(now: Date) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/v1/engine/tick',
    headers: { authorization: `Bearer ${CONTROL}` },
    payload: { now: now.toISOString() },
  });
  expect(res.statusCode).toBe(200);
  return res.json();
}

async function get(url: string, auth: Record<string, string>) {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function leadView(auth: Record<string, string>, id: string) {
  const { leads } = await get('/leads?limit=500', auth);
  return leads.find((l: { id: string }) => l.id === id);
}

/** The platform's webhook call for `messages` to the push route of `workspaceId`. */
function push(workspaceId: string, messages: PigeonInbound[], opts: { signature?: string | null; channel?: string } = {}) {
  const { payload, headers } = platform.webhook(messages, opts);
  return t.app.inject({ method: 'POST', url: `/api/v1/channels/${opts.channel ?? 'pigeon'}/inbound?workspace=${workspaceId}`, headers, payload });
}

/** A workspace with one connected messaging account, a pigeon sequence and `people` due at `dueAt` (T0) on it. */
async function world(
  name: string,
  people: { person: string; email: string }[],
  steps = [stepRow({ index: 0, kind: PIGEON_DM, message: 'Coo, {{person}}!' })],
  dueAt = T0,
) {
  const ws = await createWorkspaceWithKey(t, name);
  const account = await insertAccount(t.db, ws.workspaceId);
  const sequenceId = await insertSequence(t.db, ws.workspaceId, { channels: ['pigeon'], steps });
  const leads: string[] = [];
  for (const p of people) {
    leads.push(await insertLead(t.db, ws.workspaceId, { ...p, account_id: account, sequence_id: sequenceId, next_action_at: dueAt }));
  }
  return { ...ws, account, sequenceId, leads };
}

const deliveredTo = (email: string) => platform.delivered.filter((d) => d.to === email);

describe('a fifth channel registered at run time (pigeon)', () => {
  it('send: the engine performs a pigeon_dm through the pigeon driver; the platform has it and the ledger records it', async () => {
    const w = await world('Pigeon send', [{ person: 'Ada', email: 'ada@loft.example' }]);
    const summary = await tick(T0);
    expect(summary).toMatchObject({ actions: 1, failed: 0, skipped: 0 });
    expect(deliveredTo('ada@loft.example')).toEqual([expect.objectContaining({ text: 'Coo, Ada!', accountId: w.account })]);
    const { actions } = await get('/activity', w.auth);
    expect(actions).toEqual([
      expect.objectContaining({ action: 'message', outcome: 'ok', account: w.account, lead: expect.objectContaining({ id: w.leads[0], person: 'Ada' }) }),
    ]);
    expect(JSON.parse(actions[0].detail)).toMatchObject({ step: 0, kind: PIGEON_DM, channel: 'pigeon' });
    expect(await leadView(w.auth, w.leads[0])).toMatchObject({ stage: 'messaged', messagedAt: T0.toISOString(), sequenceDone: true });
    // A pass later sends nothing again.
    expect(await tick(new Date(T0.getTime() + 3_600_000))).toMatchObject({ actions: 0 });
    expect(deliveredTo('ada@loft.example')).toHaveLength(1);
  });

  it('budget: with one message a day for the sender, a second due lead waits for the next day, then goes', async () => {
    const w = await world('Pigeon budget', [
      { person: 'Bea', email: 'bea@loft.example' },
      { person: 'Bo', email: 'bo@loft.example' },
    ]);
    expect(await tick(T0)).toMatchObject({ actions: 1, deferred: 1 });
    const sent = [...deliveredTo('bea@loft.example'), ...deliveredTo('bo@loft.example')];
    expect(sent).toHaveLength(1);
    const waitingId = sent[0].to === 'bea@loft.example' ? w.leads[1] : w.leads[0];
    const waiting = await leadView(w.auth, waitingId);
    // The account's day is UTC: the budget has room again at the next midnight.
    expect(waiting).toMatchObject({ stage: 'queued', messagedAt: null, nextActionAt: '2026-12-02T00:00:00.000Z' });
    expect(await tick(new Date('2026-12-01T23:00:00.000Z'))).toMatchObject({ actions: 0 });
    expect(await tick(new Date('2026-12-02T00:05:00.000Z'))).toMatchObject({ actions: 1, deferred: 0 });
    expect([...deliveredTo('bea@loft.example'), ...deliveredTo('bo@loft.example')]).toHaveLength(2);
    expect(await leadView(w.auth, waitingId)).toMatchObject({ stage: 'messaged', messagedAt: '2026-12-02T00:05:00.000Z' });
  });

  it("budget of its own: the platform takes two deliveries a day per workspace (scope channel); a third sender's lead waits though its account has room", async () => {
    const ws = await createWorkspaceWithKey(t, 'Pigeon platform cap');
    const sequenceId = await insertSequence(t.db, ws.workspaceId, { channels: ['pigeon'], steps: [stepRow({ index: 0, kind: PIGEON_DM, message: 'Coo!' })] });
    const people = ['cy', 'cai', 'cole'].map((n) => `${n}@loft.example`);
    const leads: string[] = [];
    for (const email of people) {
      // Three senders with a message each to spare today: only the platform's budget can hold one back.
      const account = await insertAccount(t.db, ws.workspaceId);
      leads.push(await insertLead(t.db, ws.workspaceId, { person: email, email, account_id: account, sequence_id: sequenceId, next_action_at: T0 }));
    }
    expect(await tick(T0)).toMatchObject({ actions: 2, deferred: 1 });
    expect(people.flatMap(deliveredTo)).toHaveLength(2);
    const waitingId = leads[people.findIndex((p) => deliveredTo(p).length === 0)];
    expect(await leadView(ws.auth, waitingId)).toMatchObject({ stage: 'queued', messagedAt: null, lastError: null, nextActionAt: '2026-12-02T00:00:00.000Z' });
    const rows = await t.db
      .selectFrom('send_budgets')
      .select(['scope_id', 'budget', 'used'])
      .where('workspace_id', '=', ws.workspaceId)
      .where('scope', '=', 'channel')
      .execute();
    expect(rows).toEqual([{ scope_id: `pigeon:${ws.workspaceId}`, budget: 'deliveries', used: 2 }]);
    expect(await tick(new Date('2026-12-02T00:05:00.000Z'))).toMatchObject({ actions: 1 });
    expect(people.flatMap(deliveredTo)).toHaveLength(3);
  });

  it("a key of the channel scope must be its own and in its budgetWindows: another channel's, or another window, throws", () => {
    const sender = { workspaceId: 'w', accountId: 'a', accountUserId: null, timeZone: 'UTC', warmupStartedAt: null, delivery: 'sandbox' };
    const step = stepRow({ index: 0, kind: PIGEON_DM, message: 'Coo!' }) as never;
    const at = T0;
    const source = (key: ReturnType<typeof channelBudgetKey>) => ({
      channel: 'pigeon',
      budgetWindows: { deliveries: 'utc_day' as const },
      budgetsOf: () => [key],
    });
    expect(budgetsOf(source(channelBudgetKey('w', 'pigeon', 'w', 'deliveries', 'utc_day', at, null)), step, sender, at)).toHaveLength(1);
    expect(() => budgetsOf(source(channelBudgetKey('w', 'raven', 'w', 'deliveries', 'utc_day', at, null)), step, sender, at)).toThrow(/budgetWindows/);
    expect(() => budgetsOf(source(channelBudgetKey('w', 'pigeon', 'w', 'deliveries', 'local_day', at, 'UTC')), step, sender, at)).toThrow(/budgetWindows/);
    expect(() => budgetsOf(source(channelBudgetKey('w', 'pigeon', 'w', 'flights', 'utc_day', at, null)), step, sender, at)).toThrow(/budgetWindows/);
  });

  it('reply: a signed push freezes the lead and lists the reply; an unsigned or badly signed one is refused and changes nothing', async () => {
    const w = await world('Pigeon reply', [{ person: 'Cal', email: 'cal@loft.example' }]);
    await tick(T0);
    const answer = { from: 'cal@loft.example', text: 'Sounds good, can we talk on Tuesday?', at: new Date('2026-12-01T11:00:00.000Z') };

    const unsigned = await push(w.workspaceId, [answer], { signature: null });
    expect([unsigned.statusCode, unsigned.json().error]).toEqual([401, 'unverified_push']);
    const forged = await push(w.workspaceId, [answer], { signature: createPigeonPlatform('another-secret').sign(platform.webhook([answer]).payload) });
    expect(forged.statusCode).toBe(401);
    const tampered = platform.webhook([answer]);
    const altered = await t.app.inject({
      method: 'POST',
      url: `/api/v1/channels/pigeon/inbound?workspace=${w.workspaceId}`,
      headers: tampered.headers,
      payload: tampered.payload.replace('Tuesday', 'Friday'),
    });
    expect(altered.statusCode).toBe(401);
    expect(await leadView(w.auth, w.leads[0])).toMatchObject({ stage: 'messaged', repliedAt: null });
    expect((await get('/replies', w.auth)).replies).toEqual([]);

    const res = await push(w.workspaceId, [answer]);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ channel: 'pigeon', received: 1, applied: 1, unchanged: 0, unmatched: 0, failed: 0 });
    expect(await leadView(w.auth, w.leads[0])).toMatchObject({ stage: 'replied', repliedAt: answer.at.toISOString(), optedOutAt: null });
    const { replies } = await get('/replies', w.auth);
    expect(replies).toEqual([
      expect.objectContaining({ channel: 'pigeon', theirMessage: answer.text, lead: expect.objectContaining({ id: w.leads[0] }), account: w.account }),
    ]);
    // The platform delivers the same webhook again: nothing new.
    expect((await push(w.workspaceId, [answer])).json()).toMatchObject({ received: 1, applied: 0, unchanged: 1 });
    expect((await get('/replies', w.auth)).replies).toHaveLength(1);
  });

  it('the push route: 404 for an unknown channel or one that does not push, 413 past its bound; each item applied alone', async () => {
    const w = await world('Pigeon route', [
      { person: 'Dot', email: 'dot@loft.example' },
      { person: 'Dan', email: 'dan@loft.example' },
    ]);
    const url = `/api/v1/channels/pigeon/inbound?workspace=${w.workspaceId}`;
    const answer = { from: 'dot@loft.example', text: 'Who is this?', at: new Date('2026-12-01T11:00:00.000Z') };
    expect((await push(w.workspaceId, [answer], { channel: 'raven' })).statusCode).toBe(404);
    expect((await push(w.workspaceId, [answer], { channel: 'email' })).statusCode).toBe(404);
    const big = platform.webhook([{ ...answer, text: 'x'.repeat(300 * 1024) }]);
    const tooBig = await t.app.inject({ method: 'POST', url, headers: big.headers, payload: big.payload });
    expect([tooBig.statusCode, tooBig.json().error]).toEqual([413, 'body_too_large']);
    const bad = await t.app.inject({ method: 'POST', url: '/api/v1/channels/pigeon/inbound?workspace=nope', ...platform.webhook([answer]) });
    expect(bad.statusCode).toBe(400);
    // Signed for another workspace: its leads are not this one's.
    const other = await createWorkspaceWithKey(t, 'Pigeon other');
    expect((await push(other.workspaceId, [answer])).json()).toMatchObject({ received: 0, applied: 0 });
    expect(await leadView(w.auth, w.leads[0])).toMatchObject({ repliedAt: null });

    // Whatever the content type, the channel reads the bytes as signed; an item the observation path refuses (a
    // time that is no time) fails alone, and the other is recorded.
    const payload = JSON.stringify({
      messages: [
        { from: 'dot@loft.example', text: answer.text, sentAt: answer.at.toISOString() },
        { from: 'dan@loft.example', text: 'Tell me more', sentAt: 'yesterday' },
      ],
    });
    const res = await t.app.inject({ method: 'POST', url, headers: { 'content-type': 'text/plain', 'x-pigeon-signature': platform.sign(payload) }, payload });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ channel: 'pigeon', received: 2, applied: 1, unchanged: 0, unmatched: 0, failed: 1 });
    expect(await leadView(w.auth, w.leads[0])).toMatchObject({ repliedAt: answer.at.toISOString() });
    expect(await leadView(w.auth, w.leads[1])).toMatchObject({ repliedAt: null, stage: 'queued' });
  });

  it('the push route counts each caller against the per-minute budget before reading the body: 429 past it, nothing applied', async () => {
    // A lead of its own that no pass of this file is due to send to (its step waits until next year).
    const w = await world('Pigeon flood', [{ person: 'Gil', email: 'gil@loft.example' }], undefined, new Date('2027-12-01T10:00:00.000Z'));
    const gil = w.leads[0];
    const limited = await buildTestApp({
      handle: t.handle,
      env: { ...ENV, OUTREACH_RATE_LIMIT_PER_MINUTE: 2 },
      channels: [createPigeonChannel(platform)],
      rateLimitStore: createMemoryRateLimitStore(),
    });
    try {
      const url = `/api/v1/channels/pigeon/inbound?workspace=${w.workspaceId}`;
      const quiet = platform.webhook([]);
      for (let i = 0; i < 2; i++) expect((await limited.app.inject({ method: 'POST', url, ...quiet })).statusCode).toBe(202);
      const at = new Date('2026-12-01T11:00:00.000Z');
      const answer = platform.webhook([{ from: 'gil@loft.example', text: 'Who is this?', at }]);
      const res = await limited.app.inject({ method: 'POST', url, ...answer });
      expect([res.statusCode, res.json().error, Number(res.headers['retry-after']) > 0]).toEqual([429, 'rate_limited', true]);
      expect(res.headers['x-ratelimit-remaining']).toBe('0');
      expect(await leadView(w.auth, gil)).toMatchObject({ repliedAt: null });
      // The same request within another caller's budget (the first app's) is applied: the 429 alone kept it out.
      expect((await t.app.inject({ method: 'POST', url, ...answer })).json()).toMatchObject({ applied: 1 });
      expect(await leadView(w.auth, gil)).toMatchObject({ repliedAt: at.toISOString() });
    } finally {
      await limited.close();
    }
  });

  it('opt-out: a pushed request to stop opts the person out, and no channel sends to them again', async () => {
    const w = await world('Pigeon opt-out', [{ person: 'Eve', email: 'eve@loft.example' }]);
    // The same person is also a lead of an e-mail sequence, due the day after.
    const emailSequence = await insertSequence(t.db, w.workspaceId, {
      channels: ['email'],
      steps: [stepRow({ index: 0, kind: 'email', subject: 'Hi', message: 'Hello {{person}}' })],
    });
    const emailLead = await insertLead(t.db, w.workspaceId, {
      person: 'Eve',
      email: 'eve@loft.example',
      account_id: w.account,
      sequence_id: emailSequence,
      next_action_at: new Date('2026-12-02T10:00:00.000Z'),
    });
    await tick(T0);
    expect(deliveredTo('eve@loft.example')).toHaveLength(1);

    const stop = { from: 'eve@loft.example', text: 'Please stop messaging me', at: new Date('2026-12-01T12:00:00.000Z') };
    expect((await push(w.workspaceId, [stop])).json()).toMatchObject({ applied: 1, failed: 0 });
    const { leads } = await get('/leads?limit=500', w.auth);
    for (const id of [w.leads[0], emailLead]) expect(leads.find((l: { id: string }) => l.id === id).optedOutAt).toBe(stop.at.toISOString());

    expect(await tick(new Date('2026-12-02T10:00:00.000Z'))).toMatchObject({ actions: 0 });
    expect(await tick(new Date('2026-12-03T10:00:00.000Z'))).toMatchObject({ actions: 0 });
    expect(deliveredTo('eve@loft.example')).toHaveLength(1);
    const { actions } = await get('/activity', w.auth);
    const entries = actions.map((a: { action: string; outcome: string; detail: string; lead: { id: string } }) => ({
      action: a.action,
      outcome: a.outcome,
      lead: a.lead.id,
      detail: JSON.parse(a.detail),
    }));
    // One send ever: the pigeon_dm before the request; then the reply and the opt-out of both of the person's leads.
    expect(entries.filter((e: { action: string }) => ['message', 'followup', 'email_sent'].includes(e.action))).toEqual([
      expect.objectContaining({ action: 'message', outcome: 'ok', lead: w.leads[0], detail: expect.objectContaining({ channel: 'pigeon' }) }),
    ]);
    expect(entries.filter((e: { detail: { op?: string } }) => e.detail.op === 'opt_out')).toEqual(
      expect.arrayContaining(
        [w.leads[0], emailLead].map((lead) => expect.objectContaining({ lead, detail: expect.objectContaining({ via: 'reply_text', channel: 'pigeon' }) })),
      ),
    );
  });

  it('task: the platform keeps automation from a person, the driver answers needs_person, and a task opens', async () => {
    platform.requirePerson('fay@loft.example');
    const w = await world('Pigeon task', [{ person: 'Fay', email: 'fay@loft.example' }]);
    expect(await tick(T0)).toMatchObject({ actions: 0, tasksOpened: 1 });
    expect(deliveredTo('fay@loft.example')).toEqual([]);
    const { tasks } = await get('/tasks', w.auth);
    expect(tasks).toEqual([
      expect.objectContaining({
        status: 'open',
        source: 'step',
        kind: PIGEON_DM,
        channel: 'pigeon',
        reason: PIGEON_PERSON_REASON,
        text: 'Coo, Fay!',
        account: w.account,
        lead: expect.objectContaining({ id: w.leads[0] }),
      }),
    ]);
    // The lane waits for the person: later passes send nothing.
    expect(await tick(new Date('2026-12-02T10:00:00.000Z'))).toMatchObject({ actions: 0 });
    expect(await leadView(w.auth, w.leads[0])).toMatchObject({ nextActionAt: null, messagedAt: null });
  });

  it('a reply routes by the message it answers, across channels: its conversation first, else the latest step sent', async () => {
    // Pigeon then e-mail (sandbox), the e-mail waiting 3 days for a reply: a pigeon answer that comes after the e-mail
    // answers the pigeon message (its conversation), so it is no reply to the e-mail.
    const routed = [
      stepRow({ index: 0, kind: PIGEON_DM, message: 'Coo, {{person}}!' }),
      {
        ...stepRow({ index: 1, kind: 'email', delayDays: 1, subject: 'Hi', message: 'Hi {{person}}' }),
        id: 'mail',
        next: [{ if: { replied: true }, withinDays: 3, goto: 'goal' }],
        else: 'exit',
      },
    ];
    const w = await world('Pigeon routed', [{ person: 'Gus', email: 'gus@loft.example' }], routed);
    await tick(T0);
    await tick(new Date('2026-12-02T10:00:00.000Z'));
    t.clock.set(new Date('2026-12-02T12:30:00.000Z'));
    const pushed = await push(w.workspaceId, [
      { from: 'gus@loft.example', text: 'Sounds good, can we talk on Tuesday?', at: new Date('2026-12-02T12:00:00.000Z') },
    ]);
    expect(pushed.json()).toMatchObject({ applied: 1 });
    const reply = (leadId: string) =>
      t.db.selectFrom('replies').select(['answers_step', 'answer_match']).where('lead_id', '=', leadId).executeTakeFirstOrThrow();
    expect(await reply(w.leads[0])).toEqual({ answers_step: 0, answer_match: 'conversation' });
    expect(await leadView(w.auth, w.leads[0])).toMatchObject({ stage: 'replied', sequenceDone: true });
    expect((await leadView(w.auth, w.leads[0])).path).toBeUndefined();

    // E-mail alone, waiting for a reply: a pigeon answer (no pigeon message was sent) answers the latest step sent,
    // the e-mail, and its goal edge is taken at once.
    const mailOnly = [{ ...routed[1], index: 0, delayDays: 0 }];
    const v = await world('Pigeon fallback', [{ person: 'Hal', email: 'hal@loft.example' }], mailOnly);
    await tick(T0);
    t.clock.set(new Date('2026-12-01T12:30:00.000Z'));
    expect(
      (
        await push(v.workspaceId, [{ from: 'hal@loft.example', text: 'Sounds good, can we talk on Tuesday?', at: new Date('2026-12-01T12:00:00.000Z') }])
      ).json(),
    ).toMatchObject({
      applied: 1,
    });
    expect(await reply(v.leads[0])).toEqual({ answers_step: 0, answer_match: 'latest_step' });
    expect(await leadView(v.auth, v.leads[0])).toMatchObject({
      outcome: 'goal',
      path: [expect.objectContaining({ fromStep: 0, edge: 0, goto: 'goal', values: expect.objectContaining({ matchedBy: 'latest_step' }) })],
    });
    t.clock.set(T0);
  });

  it('on the wire the step kinds stay the spec’s: authoring refuses pigeon_dm, and the published step kinds do not list it', async () => {
    const w = await world('Pigeon wire', []);
    // A stored pigeon sequence is listed with the spec's step kinds only.
    const { sequences } = await get('/sequences', w.auth);
    const listed = sequences.find((q: { id: string }) => q.id === w.sequenceId);
    expect(listed.steps).toHaveLength(1);
    for (const s of listed.steps) expect(STEP_KINDS).toContain(s.kind);
    const client = await connectInMemory(t.services, w.workspaceId);
    try {
      const error = await fails(client, 'create_sequence', { name: 'By pigeon', steps: [{ kind: PIGEON_DM, delayDays: 0, message: 'Coo' }] });
      expect(error).toMatchObject({ httpStatus: 400 });
      expect(JSON.stringify(error)).toContain('arguments/steps/0/kind');
    } finally {
      await client.close();
    }
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(JSON.stringify(doc)).not.toContain(PIGEON_DM);
    expect(doc.paths['/api/v1/channels/{channel}/inbound'].post).toMatchObject({ 'x-extension': true, security: [] });
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NOW, startRepliesWorld, type RepliesWorld } from '../../helpers/replies-world.js';
import { newId } from '../../../src/lib/ids.js';

let t: RepliesWorld['t'],
  channels: RepliesWorld['channels'],
  a: RepliesWorld['a'],
  foreign: RepliesWorld['foreign'],
  bare: RepliesWorld['bare'],
  decide: RepliesWorld['decide'],
  replyRow: RepliesWorld['replyRow'],
  ledger: RepliesWorld['ledger'],
  events: RepliesWorld['events'],
  deliveredTo: RepliesWorld['deliveredTo'],
  scenario: RepliesWorld['scenario'];
let world: RepliesWorld;
beforeAll(async () => {
  world = await startRepliesWorld();
  ({ t, channels, a, foreign, bare, decide, replyRow, ledger, events, deliveredTo, scenario } = world);
});
afterAll(async () => t?.close());
beforeEach(() => t.clock.set(NOW));

describe('POST /replies/{id}/decide: errors', () => {
  it('409 reply_already_decided once a reply is decided', async () => {
    const { replyId } = await scenario();
    expect((await decide(a, replyId, { decision: 'dismiss' })).statusCode).toBe(200);
    const res = await decide(a, replyId, { decision: 'send' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ ok: false, error: 'reply_already_decided', message: expect.any(String) });
  });

  it('409 decision_not_allowed for a decision the rules exclude; 409 answered_on_x for any decision on an x row', async () => {
    const { replyId, leadId } = await scenario({ ws: bare, lead: { email: null } });
    for (const decision of ['invite', 'booking_link']) {
      const res = await decide(bare, replyId, { decision });
      expect(res.statusCode, decision).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error: 'decision_not_allowed' });
    }
    expect((await replyRow(replyId)).state).toBe('pending');
    expect(await ledger(leadId)).toEqual([]);
    const x = await scenario({ reply: { channel: 'x', draft: null } });
    for (const decision of ['send', 'dismiss', 'opt_out']) {
      const res = await decide(a, x.replyId, { decision });
      expect(res.statusCode, decision).toBe(409);
      // The spec's 409 form, saying why and where to go instead (an X reply is answered on X, then marked handled).
      expect(res.json(), decision).toEqual({
        ok: false,
        error: 'answered_on_x',
        message: expect.stringMatching(/answered on X.*\/handled/),
        allowedDecisions: [],
      });
    }
    expect((await replyRow(x.replyId)).state).toBe('pending');
    expect(await ledger(x.leadId)).toEqual([]);
  });

  it('404 reply not found for an unknown id or another workspace’s reply; 400 for a malformed id', async () => {
    const unknown = await decide(a, newId(), { decision: 'dismiss' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'reply not found' });
    const theirs = await scenario({ ws: foreign });
    const res = await decide(a, theirs.replyId, { decision: 'dismiss' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'reply not found' });
    expect((await replyRow(theirs.replyId)).state).toBe('pending');
    expect((await decide(a, 'not-a-uuid', { decision: 'dismiss' })).statusCode).toBe(400);
  });

  it('400 for a bad decision, days, text, by or extra properties', async () => {
    const { replyId } = await scenario();
    const bodies: unknown[] = [
      {},
      { decision: 'archive' },
      { decision: 'snooze', days: 0 },
      { decision: 'snooze', days: 91 },
      { decision: 'snooze', days: 1.5 },
      { decision: 'snooze', days: '3' },
      { decision: 'dismiss', text: 'hi' },
      { decision: 'send', days: 3 },
      { decision: 'send', text: '' },
      { decision: 'dismiss', by: '' },
      { decision: 'dismiss', by: 'x'.repeat(201) },
      { decision: 'dismiss', extra: true },
      [],
    ];
    for (const body of bodies) {
      const res = await decide(a, replyId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toEqual(expect.any(String));
    }
    expect((await replyRow(replyId)).state).toBe('pending');
    expect((await decide(a, replyId, { decision: 'snooze', days: 90 })).statusCode).toBe(200);
  });

  it('a channel failure answers 503 and leaves the reply pending with the failed attempt in the ledger; rate limits answer 429', async () => {
    const { leadId, replyId } = await scenario();
    channels.failNext({ outcome: 'failed', error: 'provider_down', retryable: true });
    const res = await decide(a, replyId, { decision: 'send' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'channel_send_failed', retryable: true });
    expect((await replyRow(replyId)).state).toBe('pending');
    expect((await ledger(leadId)).map((e) => [e.action, e.outcome, e.units])).toEqual([['reply_sent', 'failed', 0]]);
    expect(await events(leadId)).toEqual([]);

    channels.failNext({ outcome: 'rate_limited', retryAfterSeconds: 120 });
    const limited = await decide(a, replyId, { decision: 'send' });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('120');

    expect((await decide(a, replyId, { decision: 'send' })).statusCode).toBe(200);
    expect(deliveredTo(leadId)).toHaveLength(1);
    expect((await events(leadId)).map((e) => e.event)).toEqual(['lead.messaged']);
  });
});

describe('POST /replies/{id}/decide: concurrency and idempotency', () => {
  it('two concurrent decisions on one reply: exactly one wins, the other gets 409', async () => {
    for (let round = 0; round < 3; round++) {
      const { leadId, replyId } = await scenario();
      const [r1, r2] = await Promise.all([decide(a, replyId, { decision: 'send' }), decide(a, replyId, { decision: 'send', text: 'Other answer' })]);
      expect([r1.statusCode, r2.statusCode].sort()).toEqual([200, 409]);
      const loser = r1.statusCode === 409 ? r1 : r2;
      expect(loser.json()).toMatchObject({ ok: false, error: 'reply_already_decided' });
      expect(deliveredTo(leadId)).toHaveLength(1);
      expect((await ledger(leadId)).filter((e) => e.outcome === 'ok')).toHaveLength(1);
      expect(await events(leadId)).toHaveLength(1);
    }
    const { leadId, replyId } = await scenario();
    const results = await Promise.all([decide(a, replyId, { decision: 'dismiss' }), decide(a, replyId, { decision: 'opt_out' })]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(await ledger(leadId)).toHaveLength(1);
  });

  it('a retry with the same Idempotency-Key and body returns the first answer; a changed body answers 409 idempotency_key_reused', async () => {
    const { leadId, replyId } = await scenario();
    const key = { 'idempotency-key': `decide-${newId()}` };
    const first = await decide(a, replyId, { decision: 'send' }, key);
    expect(first.statusCode).toBe(200);
    t.clock.advance(60_000);
    const retry = await decide(a, replyId, { decision: 'send' }, key);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual(first.json());
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(deliveredTo(leadId)).toHaveLength(1);
    expect(await ledger(leadId)).toHaveLength(1);
    expect(await events(leadId)).toHaveLength(1);

    const changed = await decide(a, replyId, { decision: 'send', text: 'different' }, key);
    expect(changed.statusCode).toBe(409);
    expect(changed.json()).toMatchObject({ ok: false, error: 'idempotency_key_reused' });
    const other = await scenario();
    expect((await decide(a, other.replyId, { decision: 'send' }, key)).json()).toMatchObject({ ok: false, error: 'idempotency_key_reused' });
    // Without the key the same request is a second decision, which no longer applies.
    expect((await decide(a, replyId, { decision: 'send' })).json()).toMatchObject({ ok: false, error: 'reply_already_decided' });
    // Keys are per workspace.
    const theirs = await scenario({ ws: foreign });
    expect((await decide(foreign, theirs.replyId, { decision: 'dismiss' }, key)).statusCode).toBe(200);
  });

  it('concurrent requests with the same key both get the one answer', async () => {
    const { leadId, replyId } = await scenario();
    const key = { 'idempotency-key': `race-${newId()}` };
    const [r1, r2] = await Promise.all([decide(a, replyId, { decision: 'invite' }, key), decide(a, replyId, { decision: 'invite' }, key)]);
    expect([r1.statusCode, r2.statusCode]).toEqual([200, 200]);
    expect(r1.json()).toEqual(r2.json());
    expect(deliveredTo(leadId)).toHaveLength(1);
  });

  it('400 for a malformed Idempotency-Key', async () => {
    const { replyId } = await scenario();
    expect((await decide(a, replyId, { decision: 'dismiss' }, { 'idempotency-key': 'has space' })).statusCode).toBe(400);
    expect((await decide(a, replyId, { decision: 'dismiss' }, { 'idempotency-key': 'k'.repeat(201) })).statusCode).toBe(400);
  });
});

describe('POST /replies/{id}/handled (extension): an X reply answered on X leaves the queue', () => {
  const handled = (ws: RepliesWorld['a'], id: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: `/api/v1/replies/${id}/handled`, headers: { ...ws.auth, ...headers } });
  const xScenario = (ws = a) => scenario({ ws, reply: { channel: 'x', draft: null } });

  it('marks it handled as the dismiss decision, recorded as api:<key id> with a reply_dismissed entry; sends nothing', async () => {
    const { leadId, replyId } = await xScenario();
    const res = await handled(a, replyId);
    expect(res.statusCode).toBe(200);
    const by = `api:${a.keyId}`;
    expect(res.json()).toEqual({ ok: true, replyId, leadId, decision: 'dismiss', state: 'decided', by, decidedAt: NOW, alreadyHandled: false });
    const row = await replyRow(replyId);
    expect([row.state, row.decision, row.decided_by]).toEqual(['decided', 'dismiss', by]);
    const entries = await ledger(leadId);
    expect(entries.map((e) => [e.action, e.outcome, e.units])).toEqual([['reply_dismissed', 'ok', 0]]);
    expect(JSON.parse(entries[0].detail)).toEqual({ replyId, decision: 'dismiss', by, via: 'api' });
    expect(deliveredTo(leadId)).toEqual([]);
    expect(await events(leadId)).toEqual([]);
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/replies?limit=200', headers: a.auth });
    expect(list.json().replies.map((r: { id: string }) => r.id)).not.toContain(replyId);
  });

  it('is idempotent: a repeat (also a concurrent one) answers the first close and writes nothing', async () => {
    const { leadId, replyId } = await xScenario();
    const first = (await handled(a, replyId)).json();
    t.clock.advance(60_000);
    const again = await handled(a, replyId);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ...first, alreadyHandled: true });
    expect(await ledger(leadId)).toHaveLength(1);

    const race = await xScenario();
    const answers = await Promise.all([handled(a, race.replyId), handled(a, race.replyId)]);
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(answers.map((r) => r.json().alreadyHandled).sort()).toEqual([false, true]);
    expect(await ledger(race.leadId)).toHaveLength(1);
  });

  it('404 for another workspace’s or an unknown reply, 400 for a malformed id; a Team owner selecting its client works', async () => {
    const theirs = await xScenario(foreign);
    for (const id of [theirs.replyId, newId()]) {
      const res = await handled(a, id);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'reply not found' });
    }
    expect((await replyRow(theirs.replyId)).state).toBe('pending');
    expect((await handled(a, 'not-a-uuid')).statusCode).toBe(400);
    const { client } = world;
    const own = await xScenario(client);
    const res = await handled(a, own.replyId, { 'x-workspace-client': client.workspaceId });
    expect(res.json()).toMatchObject({ ok: true, by: `api:${a.keyId}`, alreadyHandled: false });
  });

  it('409 reply_has_decisions for a reply of another channel, pending or decided, saying to use decide; nothing changes', async () => {
    const { leadId, replyId } = await scenario();
    const res = await handled(a, replyId);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ ok: false, error: 'reply_has_decisions', message: expect.stringContaining('/decide') });
    expect((await replyRow(replyId)).state).toBe('pending');
    expect(await ledger(leadId)).toEqual([]);
    expect((await decide(a, replyId, { decision: 'dismiss' })).statusCode).toBe(200);
    expect((await handled(a, replyId)).json()).toMatchObject({ ok: false, error: 'reply_has_decisions' });
  });
});

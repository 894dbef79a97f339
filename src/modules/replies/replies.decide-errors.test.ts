import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NOW, startRepliesWorld, type RepliesWorld } from '../../../test/helpers/replies-world.js';
import { newId } from '../../lib/ids.js';

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
beforeAll(async () => ({ t, channels, a, foreign, bare, decide, replyRow, ledger, events, deliveredTo, scenario } = await startRepliesWorld()));
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

  it('409 decision_not_allowed for a decision the rules exclude, and for any decision on an x row', async () => {
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
      expect((await decide(a, x.replyId, { decision })).json(), decision).toMatchObject({ ok: false, error: 'decision_not_allowed' });
    }
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

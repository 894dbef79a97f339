import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { tableResolver } from './receiver.js';
import { createTextCipher } from '../../src/lib/crypto.js';
import { newId } from '../../src/lib/ids.js';
import { claimDueDeliveries, completeAttempt, MAX_LOST_ATTEMPTS, retryDelayMs } from '../../src/webhooks/claims.js';
import { dispatchOutbox } from '../../src/webhooks/dispatcher.js';
import { createOutboxSignal, enqueueEvent, openSealedData, sealText } from '../../src/webhooks/outbox.js';

const resolver = tableResolver({ 'hooks.example.com': ['93.184.216.34'] });
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ resolver, cipher: createTextCipher(randomBytes(32)) });
});
afterAll(async () => t?.close());

async function workspaceWithHooks(hooks: { events: string[] }[]) {
  const ws = await createWorkspaceWithKey(t, 'outbox');
  const ids: string[] = [];
  for (const h of hooks) ids.push((await t.services.webhooks.createWebhook(ws.workspaceId, { url: 'https://hooks.example.com/', events: h.events })).id);
  return { ...ws, hookIds: ids };
}

const emit = (workspaceId: string, event: 'lead.invited' | 'lead.accepted' | 'reply.received', data: Record<string, unknown> = { lead: { id: newId() } }) =>
  t.db.transaction().execute((trx) => enqueueEvent(trx, { workspaceId, event, data }));

const deliveriesOf = (workspaceId: string) =>
  t.db.selectFrom('webhook_deliveries').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').execute();

describe('enqueueEvent', () => {
  it('refuses to run outside a transaction, an unknown event and non-object data', async () => {
    const ws = await workspaceWithHooks([]);
    await expect(enqueueEvent(t.db, { workspaceId: ws.workspaceId, event: 'lead.invited', data: {} })).rejects.toThrow(/transaction/);
    await expect(
      t.db.transaction().execute((trx) => enqueueEvent(trx, { workspaceId: ws.workspaceId, event: 'lead.exploded' as never, data: {} })),
    ).rejects.toThrow(/unknown webhook event/);
    await expect(
      t.db.transaction().execute((trx) => enqueueEvent(trx, { workspaceId: ws.workspaceId, event: 'lead.invited', data: [] as never })),
    ).rejects.toThrow(/JSON object/);
    await expect(
      t.db.transaction().execute((trx) => enqueueEvent(trx, { workspaceId: ws.workspaceId, event: 'lead.invited', data: { big: 'x'.repeat(70_000) } })),
    ).rejects.toThrow(/at most/);
  });

  it('an event enqueued in a rolled-back transaction never exists, so it is never dispatched', async () => {
    const ws = await workspaceWithHooks([{ events: ['lead.invited'] }]);
    await expect(
      t.db.transaction().execute(async (trx) => {
        await enqueueEvent(trx, { workspaceId: ws.workspaceId, event: 'lead.invited', data: { lead: { id: 'x' } } });
        throw new Error('the state change failed');
      }),
    ).rejects.toThrow('the state change failed');
    await dispatchOutbox(t.db, { now: t.clock.now() });
    expect(await t.db.selectFrom('outbox_events').select('id').where('workspace_id', '=', ws.workspaceId).execute()).toEqual([]);
    expect(await deliveriesOf(ws.workspaceId)).toEqual([]);
  });
});

describe('dispatchOutbox', () => {
  it('fans an event out to every enabled hook that lists it, and marks it dispatched', async () => {
    const ws = await workspaceWithHooks([{ events: ['lead.invited'] }, { events: ['lead.invited', 'lead.accepted'] }, { events: ['reply.received'] }]);
    const other = await workspaceWithHooks([{ events: ['lead.invited'] }]);
    const { id: eventId } = await emit(ws.workspaceId, 'lead.invited');
    const r = await dispatchOutbox(t.db, { now: t.clock.now() });
    expect(r.events).toBeGreaterThanOrEqual(1);
    const rows = await deliveriesOf(ws.workspaceId);
    expect(rows.map((d) => d.webhook_id).sort()).toEqual([ws.hookIds[0], ws.hookIds[1]].sort());
    expect(rows.every((d) => d.event_id === eventId && d.event === 'lead.invited' && d.state === 'pending' && d.attempts === 0)).toBe(true);
    expect(new Set(rows.map((d) => d.id)).size).toBe(2);
    expect(await deliveriesOf(other.workspaceId)).toEqual([]);
    const ev = await t.db.selectFrom('outbox_events').select('dispatched_at').where('id', '=', eventId).executeTakeFirstOrThrow();
    expect(ev.dispatched_at).not.toBeNull();
    // A second pass finds nothing new.
    await dispatchOutbox(t.db, { now: t.clock.now() });
    expect(await deliveriesOf(ws.workspaceId)).toHaveLength(2);
  });

  it('a disabled hook gets no new deliveries, but one already queued stays queued', async () => {
    const ws = await workspaceWithHooks([{ events: ['lead.accepted'] }]);
    await emit(ws.workspaceId, 'lead.accepted');
    await dispatchOutbox(t.db, { now: t.clock.now() });
    await t.services.webhooks.deleteWebhook(ws.workspaceId, ws.hookIds[0]);
    await emit(ws.workspaceId, 'lead.accepted');
    await dispatchOutbox(t.db, { now: t.clock.now() });
    const rows = await deliveriesOf(ws.workspaceId);
    expect(rows).toHaveLength(1);
    expect(rows[0].state).toBe('pending');
  });

  it('the test ping goes to its one hook whatever its event list, and to no other hook', async () => {
    const ws = await workspaceWithHooks([{ events: ['lead.invited'] }, { events: ['ping'] }]);
    await t.services.webhooks.sendTestPing(ws.workspaceId, ws.hookIds[0]);
    await dispatchOutbox(t.db, { now: t.clock.now() });
    const rows = await deliveriesOf(ws.workspaceId);
    expect(rows.map((d) => [d.webhook_id, d.event])).toEqual([[ws.hookIds[0], 'ping']]);
  });

  it('the test ping signals an in-process worker after commit', async () => {
    const signal = createOutboxSignal();
    const ws = await workspaceWithHooks([{ events: ['ping'] }]);
    const { createWebhooksService } = await import('../../src/modules/webhook-subscriptions/webhook-subscriptions.service.js');
    const svc = createWebhooksService({
      db: t.db,
      config: t.config,
      clock: t.clock,
      cipher: createTextCipher(randomBytes(32)),
      resolver,
      outboxSignal: signal,
    });
    const woke = signal.next();
    await svc.sendTestPing(ws.workspaceId, ws.hookIds[0]);
    await expect(woke).resolves.toBeUndefined();
  });

  it('concurrent dispatchers never create a delivery twice', async () => {
    const ws = await workspaceWithHooks([{ events: ['lead.invited'] }, { events: ['lead.invited'] }]);
    for (let i = 0; i < 30; i++) await emit(ws.workspaceId, 'lead.invited');
    await Promise.all(
      Array.from({ length: 4 }, () =>
        dispatchOutbox(t.db, { now: t.clock.now(), batchSize: 7 }).then(() => dispatchOutbox(t.db, { now: t.clock.now(), batchSize: 7 })),
      ),
    );
    for (let i = 0; i < 5; i++) await dispatchOutbox(t.db, { now: t.clock.now() });
    expect(await deliveriesOf(ws.workspaceId)).toHaveLength(60);
  });
});

describe('claims: leases, attempt numbers, backoff', () => {
  it('retry budget: 1 s after the first attempt, 4 s after the second, none after the third', () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([1000, 4000, null, null]);
    expect(retryDelayMs(0)).toBeNull();
  });

  async function oneDelivery() {
    const ws = await workspaceWithHooks([{ events: ['reply.received'] }]);
    await emit(ws.workspaceId, 'reply.received');
    await dispatchOutbox(t.db, { now: t.clock.now() });
    const [d] = await deliveriesOf(ws.workspaceId);
    return { ws, deliveryId: d.id };
  }
  const claimMine = async (deliveryId: string, leaseMs = 30_000) =>
    (await claimDueDeliveries(t.db, { now: t.clock.now(), limit: 1000, leaseMs })).filter((c) => c.id === deliveryId);

  it('a claim takes attempt 1, hides the delivery for the lease, and records the attempt row', async () => {
    const { deliveryId } = await oneDelivery();
    const [c] = await claimMine(deliveryId);
    expect(c).toMatchObject({ id: deliveryId, attempt: 1, lostAttempts: 0 });
    expect(await claimMine(deliveryId)).toEqual([]);
    const attempts = await t.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).execute();
    expect(attempts).toEqual([expect.objectContaining({ attempt: 1, finished_at: null, outcome: null })]);
    await completeAttempt(t.db, c, { outcome: 'success', status: 204, durationMs: 12, error: null }, t.clock.now());
    const d = await t.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', deliveryId).executeTakeFirstOrThrow();
    expect(d).toMatchObject({ state: 'delivered', attempts: 1, lease_token: null, last_status: 204 });
  });

  it('retry outcomes schedule +1 s then +4 s, and the third ends the delivery as failed', async () => {
    const { deliveryId } = await oneDelivery();
    const start = t.clock.now().getTime();
    const c1 = (await claimMine(deliveryId))[0];
    const r1 = await completeAttempt(t.db, c1, { outcome: 'retry', status: 503, durationMs: 5, error: 'HTTP 503' }, t.clock.now());
    expect(r1).toMatchObject({ state: 'pending', fenced: false });
    expect(r1.nextAttemptAt!.getTime()).toBe(start + 1000);
    t.clock.advance(999);
    expect(await claimMine(deliveryId)).toEqual([]);
    t.clock.advance(1);
    const c2 = (await claimMine(deliveryId))[0];
    expect(c2.attempt).toBe(2);
    const r2 = await completeAttempt(t.db, c2, { outcome: 'retry', status: null, durationMs: 5, error: 'timeout' }, t.clock.now());
    expect(r2.nextAttemptAt!.getTime()).toBe(start + 1000 + 4000);
    t.clock.advance(4000);
    const c3 = (await claimMine(deliveryId))[0];
    const r3 = await completeAttempt(t.db, c3, { outcome: 'retry', status: 429, durationMs: 5, error: 'HTTP 429' }, t.clock.now());
    expect(r3).toMatchObject({ state: 'failed', nextAttemptAt: null });
    t.clock.advance(60_000);
    expect(await claimMine(deliveryId)).toEqual([]);
  });

  it('an abandoned claim is taken over after its lease: attempt 2, attempt 1 marked lost, budget not used up', async () => {
    const { deliveryId } = await oneDelivery();
    const dead = (await claimMine(deliveryId, 5000))[0];
    t.clock.advance(4999);
    expect(await claimMine(deliveryId)).toEqual([]);
    t.clock.advance(1);
    const next = (await claimMine(deliveryId))[0];
    expect(next).toMatchObject({ attempt: 2, lostAttempts: 1 });
    const attempts = await t.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('attempt').execute();
    expect(attempts.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'lost'],
      [2, null],
    ]);
    // The dead worker wakes up late: its result is recorded on its own attempt but cannot move the delivery.
    const late = await completeAttempt(t.db, dead, { outcome: 'success', status: 200, durationMs: 1, error: null }, t.clock.now());
    expect(late.fenced).toBe(true);
    const d = await t.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', deliveryId).executeTakeFirstOrThrow();
    expect(d.state).toBe('pending');
    expect(d.lease_token).toBe(next.leaseToken);
    // A retry on the reclaimed attempt counts as the first completed attempt: +1 s, not +4 s.
    const r = await completeAttempt(t.db, next, { outcome: 'retry', status: 500, durationMs: 1, error: 'HTTP 500' }, t.clock.now());
    expect(r.nextAttemptAt!.getTime() - t.clock.now().getTime()).toBe(1000);
  });

  it(`a delivery whose claims keep dying fails once more than ${MAX_LOST_ATTEMPTS} claims are lost`, async () => {
    const { deliveryId } = await oneDelivery();
    for (let i = 0; i <= MAX_LOST_ATTEMPTS; i++) {
      expect(await claimMine(deliveryId, 2000)).toHaveLength(1);
      t.clock.advance(2000);
    }
    expect(await claimMine(deliveryId, 2000)).toEqual([]);
    const d = await t.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', deliveryId).executeTakeFirstOrThrow();
    expect(d).toMatchObject({ state: 'failed', last_error: 'lease_expired', lost_attempts: MAX_LOST_ATTEMPTS + 1 });
  });

  it('concurrent claimers split the queue: every delivery is claimed exactly once', async () => {
    // Earlier tests left deliveries due; lease them away so only this test's rows compete.
    while ((await claimDueDeliveries(t.db, { now: t.clock.now(), limit: 1000, leaseMs: 600_000 })).length > 0);
    const ws = await workspaceWithHooks([{ events: ['lead.accepted'] }]);
    for (let i = 0; i < 40; i++) await emit(ws.workspaceId, 'lead.accepted');
    await dispatchOutbox(t.db, { now: t.clock.now() });
    const batches = await Promise.all(Array.from({ length: 6 }, () => claimDueDeliveries(t.db, { now: t.clock.now(), limit: 10, leaseMs: 30_000 })));
    const mine = batches.flat().filter((c) => c.workspaceId === ws.workspaceId);
    const ids = mine.map((c) => c.id);
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
    const rows = await t.db
      .selectFrom('webhook_attempts')
      .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
      .select(['webhook_attempts.delivery_id', 'webhook_attempts.attempt'])
      .where('webhook_deliveries.workspace_id', '=', ws.workspaceId)
      .execute();
    expect(rows.length).toBe(ids.length);
    expect(rows.every((r) => r.attempt === 1)).toBe(true);
  });
});

describe('sealed message text in event data', () => {
  it('opens with the service key, is null (text unavailable) under another key, and leaves other fields alone', () => {
    const key = createTextCipher(randomBytes(32));
    const data = { replyId: 'r1', theirMessage: sealText(key, 'See you Tuesday'), draft: sealText(key, null), lead: { id: 'l1' }, note: { other: 'x' } };
    expect(JSON.stringify(data)).not.toContain('Tuesday');
    expect(openSealedData(JSON.stringify(data), key)).toEqual({
      replyId: 'r1',
      theirMessage: 'See you Tuesday',
      draft: null,
      lead: { id: 'l1' },
      note: { other: 'x' },
    });
    expect(openSealedData(data, createTextCipher(randomBytes(32)))).toMatchObject({ theirMessage: null, lead: { id: 'l1' } });
  });
});

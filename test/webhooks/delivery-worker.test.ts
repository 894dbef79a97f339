import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { startReceiver, tableResolver, type Receiver } from './receiver.js';
import { createTextCipher } from '../../src/lib/crypto.js';
import { newId } from '../../src/lib/ids.js';
import { enqueueEvent } from '../../src/webhooks/outbox.js';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.js';
import { verifyWebhook } from '../../src/webhooks/sign.js';

// Receivers are real HTTP servers on 127.0.0.1. The hook URLs name `receiver.test`, which the table
// resolver maps to loopback: allowed only because these tests run with OUTREACH_WEBHOOKS_ALLOW_INSECURE=1.
const resolver = tableResolver({ 'receiver.test': ['127.0.0.1'] });
const cipher = createTextCipher(randomBytes(32));
let t: TestApp;
let rx: Receiver;

beforeAll(async () => {
  t = await buildTestApp({ resolver, cipher, env: { OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1' } });
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

// The spec's 10 s timeout: receivers share this process's event loop with the embedded database, so a
// short timeout would turn a busy machine into spurious retries. The lease is on the fake clock.
const newWorker = (extra: Partial<Parameters<typeof createDeliveryWorker>[0]> = {}) =>
  createDeliveryWorker({ db: t.db, config: t.config, clock: t.clock, cipher, resolver, leaseMs: 30_000, ...extra });

/** A workspace with one hook on the given receiver path, and one committed event for it. */
async function scenario(path: string, event: 'lead.invited' | 'lead.messaged' = 'lead.invited') {
  const ws = await createWorkspaceWithKey(t, 'delivery');
  const hook = await t.services.webhooks.createWebhook(ws.workspaceId, { url: `http://receiver.test:${rx.port}${path}`, events: [event] });
  const data = { lead: { id: newId(), person: 'Ada Lovelace', stage: 'invited' } };
  const { id: eventId } = await t.db.transaction().execute((trx) => enqueueEvent(trx, { workspaceId: ws.workspaceId, event, data, createdAt: t.clock.now() }));
  return { ws, hook, data, eventId };
}

// Workers claim every due delivery of the shared database, so each test waits for its own path only.
const attemptsOf = async (hookId: string) =>
  t.db
    .selectFrom('webhook_attempts')
    .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
    .select([
      'webhook_attempts.attempt',
      'webhook_attempts.status',
      'webhook_attempts.outcome',
      'webhook_attempts.error',
      'webhook_attempts.started_at',
      'webhook_attempts.duration_ms',
      'webhook_deliveries.id as delivery_id',
    ])
    .where('webhook_deliveries.webhook_id', '=', hookId)
    .orderBy('webhook_attempts.attempt')
    .execute();
const deliveryOf = (hookId: string) => t.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', hookId).executeTakeFirstOrThrow();
const nowMs = () => t.clock.now().getTime();

describe('one delivery, end to end through a real receiver', () => {
  it('POSTs {id, event, createdAt, data} with the spec headers; the signature verifies with verifyWebhook and an independent HMAC', async () => {
    const path = `/ok/${newId()}`;
    const { hook, data } = await scenario(path);
    const w = newWorker();
    const { reports } = await w.runOnce();
    expect(reports.find((r) => r.webhookId === hook.id)).toMatchObject({ attempt: 1, outcome: 'success', status: 200, state: 'delivered' });

    const [req] = rx.on(path);
    const d = await deliveryOf(hook.id);
    expect(req.method).toBe('POST');
    expect(req.remote).toBe('127.0.0.1');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toMatch(/\/1$/);
    expect(req.headers['x-service-event']).toBe('lead.invited');
    expect(req.headers['x-service-delivery']).toBe(d.id);
    const body = JSON.parse(req.body);
    expect(body).toEqual({ id: d.id, event: 'lead.invited', createdAt: t.clock.now().toISOString(), data });
    expect(Object.keys(body)).toEqual(['id', 'event', 'createdAt', 'data']);

    const header = String(req.headers['x-service-signature']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(req.raw, header, hook.secret, { now: nowMs })).toEqual({ ok: true, timestamp: Math.floor(nowMs() / 1000) });
    // Independent of the service's code: HMAC-SHA256(secret, "<t>.<raw body>").
    const [, ts, hex] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)!;
    expect(createHmac('sha256', hook.secret).update(`${ts}.`).update(req.raw).digest('hex')).toBe(hex);
    // A tampered body, a stale timestamp and another secret all fail.
    expect(verifyWebhook(req.body.replace('Ada', 'Eve'), header, hook.secret, { now: nowMs })).toMatchObject({ ok: false, reason: 'signature_mismatch' });
    expect(verifyWebhook(req.raw, header, hook.secret, { now: () => nowMs() + 301_000 })).toMatchObject({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(verifyWebhook(req.raw, header, 'whsec_other', { now: nowMs })).toMatchObject({ ok: false });

    const attempts = await attemptsOf(hook.id);
    expect(attempts).toEqual([expect.objectContaining({ attempt: 1, status: 200, outcome: 'success', error: null })]);
    expect(attempts[0].duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('retry schedule on a fake clock: 503, +1 s 503, +4 s 503, then failed; same delivery id, fresh signature each attempt', async () => {
    const { hook } = await scenario('/flaky/3/503');
    const w = newWorker();
    const t0 = nowMs();
    await w.runOnce();
    let d = await deliveryOf(hook.id);
    expect(d).toMatchObject({ state: 'pending', attempts: 1, last_status: 503 });
    expect(d.next_attempt_at.getTime()).toBe(t0 + 1000);

    t.clock.advance(999);
    expect((await w.runOnce()).reports.filter((r) => r.webhookId === hook.id)).toEqual([]);
    t.clock.advance(1);
    await w.runOnce();
    d = await deliveryOf(hook.id);
    expect(d).toMatchObject({ state: 'pending', attempts: 2 });
    expect(d.next_attempt_at.getTime()).toBe(t0 + 1000 + 4000);

    t.clock.advance(3999);
    expect((await w.runOnce()).reports.filter((r) => r.webhookId === hook.id)).toEqual([]);
    t.clock.advance(1);
    await w.runOnce();
    d = await deliveryOf(hook.id);
    expect(d).toMatchObject({ state: 'failed', attempts: 3, last_status: 503 });
    t.clock.advance(60_000);
    expect((await w.runOnce()).reports.filter((r) => r.webhookId === hook.id)).toEqual([]);

    const attempts = await attemptsOf(hook.id);
    expect(attempts.map((a) => [a.attempt, a.status, a.outcome])).toEqual([
      [1, 503, 'retry'],
      [2, 503, 'retry'],
      [3, 503, 'retry'],
    ]);
    expect(attempts.map((a) => a.started_at.getTime() - t0)).toEqual([0, 1000, 5000]);

    const seen = rx.requests.filter((r) => r.headers['x-service-delivery'] === d.id);
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((r) => JSON.parse(r.body).id))).toEqual(new Set([d.id]));
    const sigs = seen.map((r) => String(r.headers['x-service-signature']));
    expect(new Set(sigs).size).toBe(3);
    expect(sigs.map((s) => Number(/^t=(\d+)/.exec(s)![1]))).toEqual([0, 1000, 5000].map((o) => Math.floor((t0 + o) / 1000)));
    for (const [i, r] of seen.entries()) {
      const at = t0 + [0, 1000, 5000][i];
      expect(verifyWebhook(r.raw, sigs[i], hook.secret, { now: () => at }).ok).toBe(true);
    }
  });

  it('a flaky receiver is delivered on the second attempt', async () => {
    const { hook } = await scenario('/flaky/1/500');
    const w = newWorker();
    await w.runOnce();
    t.clock.advance(1000);
    await w.runOnce();
    expect(await deliveryOf(hook.id)).toMatchObject({ state: 'delivered', attempts: 2, last_status: 200 });
  });

  it.each([400, 401, 404, 410, 422])('HTTP %i ends delivery after one attempt', async (status) => {
    const { hook } = await scenario(`/status/${status}`);
    const w = newWorker();
    await w.runOnce();
    t.clock.advance(10_000);
    await w.runOnce();
    expect(await deliveryOf(hook.id)).toMatchObject({ state: 'failed', attempts: 1, last_status: status, last_error: `HTTP ${status}` });
  });

  it('a redirect is not followed and ends delivery', async () => {
    const path = '/redirect/302';
    const { hook } = await scenario(path);
    const before = rx.on('/ok').length;
    await newWorker().runOnce();
    const d = await deliveryOf(hook.id);
    expect(d).toMatchObject({ state: 'failed', attempts: 1, last_status: 302 });
    expect(d.last_error).toMatch(/redirect_not_followed/);
    await new Promise((r) => setTimeout(r, 50));
    expect(rx.on('/ok').length).toBe(before);
  });

  it('a receiver that does not answer within the timeout is retried', async () => {
    const { hook } = await scenario('/hang');
    const started = Date.now();
    await newWorker({ timeoutMs: 300, leaseMs: 5000 }).runOnce();
    expect(Date.now() - started).toBeLessThan(5000);
    const [a] = await attemptsOf(hook.id);
    expect(a).toMatchObject({ attempt: 1, status: null, outcome: 'retry', error: 'timeout after 300ms' });
    expect(a.duration_ms).toBeGreaterThanOrEqual(250);
    expect(await deliveryOf(hook.id)).toMatchObject({ state: 'pending' });
    // Retried 1 s later in real life; here it is retired so later tests on this database do not wait on it.
    await t.db.updateTable('webhook_deliveries').set({ state: 'failed' }).where('webhook_id', '=', hook.id).execute();
  });

  it('a refused connection is retried', async () => {
    const ws = await createWorkspaceWithKey(t, 'refused');
    const closed = await startReceiver();
    await closed.close();
    const hook = await t.services.webhooks.createWebhook(ws.workspaceId, { url: `http://receiver.test:${closed.port}/`, events: ['lead.invited'] });
    await t.db.transaction().execute((trx) => enqueueEvent(trx, { workspaceId: ws.workspaceId, event: 'lead.invited', data: { lead: null } }));
    await newWorker().runOnce();
    const [a] = await attemptsOf(hook.id);
    expect(a).toMatchObject({ outcome: 'retry', status: null });
    expect(a.error).toMatch(/ECONNREFUSED/);
  });
});

describe('receiver URL re-checked at every attempt', () => {
  it('a name that rebinds to a private address after creation is refused without connecting', async () => {
    const strictResolver = tableResolver({ 'hooks.example.com': ['93.184.216.34'] });
    const strict = await buildTestApp({ handle: t.handle, resolver: strictResolver, cipher });
    try {
      const ws = await createWorkspaceWithKey(strict, 'rebind');
      const hook = await strict.services.webhooks.createWebhook(ws.workspaceId, { url: 'https://hooks.example.com/in', events: ['lead.invited'] });
      await t.db.transaction().execute((trx) => enqueueEvent(trx, { workspaceId: ws.workspaceId, event: 'lead.invited', data: {} }));
      strictResolver.table['hooks.example.com'] = ['10.0.0.7'];
      await createDeliveryWorker({ db: t.db, config: strict.config, clock: t.clock, cipher, resolver: strictResolver, timeoutMs: 1000 }).runOnce();
      expect(await deliveryOf(hook.id)).toMatchObject({ state: 'failed', attempts: 1, last_status: null, last_error: 'url_rejected: non_public_address' });
    } finally {
      await strict.close();
    }
  });

  it('with insecure mode off, a stored http loopback hook is refused at delivery and the receiver sees nothing', async () => {
    const path = `/ok/strict-${newId()}`;
    const { hook } = await scenario(path);
    const strictConfig = { ...t.config, webhooksAllowInsecure: false };
    await createDeliveryWorker({ db: t.db, config: strictConfig, clock: t.clock, cipher, resolver, timeoutMs: 1000 }).runOnce();
    expect(await deliveryOf(hook.id)).toMatchObject({ state: 'failed', last_error: 'url_rejected: not_https' });
    expect(rx.on(path)).toEqual([]);
  });

  it('a name that stops resolving is retried (DNS trouble may pass)', async () => {
    const flaky = tableResolver({ 'gone.test': ['127.0.0.1'] });
    const ws = await createWorkspaceWithKey(t, 'dns');
    const appWithFlaky = await buildTestApp({ handle: t.handle, resolver: flaky, cipher, env: { OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1' } });
    try {
      const hook = await appWithFlaky.services.webhooks.createWebhook(ws.workspaceId, { url: `http://gone.test:${rx.port}/ok`, events: ['lead.invited'] });
      await t.db.transaction().execute((trx) => enqueueEvent(trx, { workspaceId: ws.workspaceId, event: 'lead.invited', data: {} }));
      delete flaky.table['gone.test'];
      await newWorker({ resolver: flaky }).runOnce();
      expect(await deliveryOf(hook.id)).toMatchObject({ state: 'pending', last_error: 'url_rejected: dns_resolution_failed' });
      flaky.table['gone.test'] = ['127.0.0.1'];
      t.clock.advance(1000);
      await newWorker({ resolver: flaky }).runOnce();
      expect(await deliveryOf(hook.id)).toMatchObject({ state: 'delivered', attempts: 2 });
    } finally {
      await appWithFlaky.close();
    }
  });
});

describe('workers that die, and several workers', () => {
  it('a worker killed after claiming: after the lease another worker delivers, with the same delivery id', async () => {
    const path = `/ok/killed-${newId()}`;
    const { hook } = await scenario(path);
    const dying = newWorker();
    await dying.dispatch();
    const claims = await dying.claim(1000);
    const mine = claims.find((c) => c.webhookId === hook.id)!;
    expect(mine.attempt).toBe(1);
    // ...and the worker is gone: no request, no report.

    const survivor = newWorker();
    expect((await survivor.runOnce()).reports.filter((r) => r.webhookId === hook.id)).toEqual([]);
    t.clock.advance(30_000);
    const { reports } = await survivor.runOnce();
    expect(reports.find((r) => r.webhookId === hook.id)).toMatchObject({ attempt: 2, state: 'delivered' });
    const seen = rx.on(path);
    expect(seen).toHaveLength(1);
    expect(seen[0].headers['x-service-delivery']).toBe(mine.id);
    expect((await attemptsOf(hook.id)).map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'lost'],
      [2, 'success'],
    ]);
  });

  it('a worker that overran its lease after sending: the receiver may see the id twice (dedupe on it), the delivery is recorded once', async () => {
    const path = `/hold/${newId()}`;
    const { hook } = await scenario(path);
    const slow = newWorker();
    await slow.dispatch();
    const [claim] = (await slow.claim(1000)).filter((c) => c.webhookId === hook.id);
    const inFlight = slow.deliver(claim);
    await rx.waitFor(() => rx.on(path).length === 1);
    t.clock.advance(30_000);
    const other = newWorker();
    const second = other.runOnce();
    await rx.waitFor(() => rx.on(path).length === 2);
    rx.release(200);
    const [late, { reports }] = await Promise.all([inFlight, second]);
    expect(late.fenced).toBe(true);
    expect(reports.find((r) => r.webhookId === hook.id)).toMatchObject({ attempt: 2, state: 'delivered', fenced: false });
    const ids = rx.on(path).map((r) => r.headers['x-service-delivery']);
    expect(ids).toEqual([claim.id, claim.id]);
    expect(await deliveryOf(hook.id)).toMatchObject({ state: 'delivered', attempts: 2 });
  });

  it('two workers over many deliveries never make the same attempt twice', async () => {
    const ws = await createWorkspaceWithKey(t, 'many');
    const path = `/ok/many-${newId()}`;
    const hook = await t.services.webhooks.createWebhook(ws.workspaceId, { url: `http://receiver.test:${rx.port}${path}`, events: ['lead.messaged'] });
    await t.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 50; i++) await enqueueEvent(trx, { workspaceId: ws.workspaceId, event: 'lead.messaged', data: { n: i } });
    });
    const a = newWorker();
    const b = newWorker();
    await Promise.all([a.runOnce(7), b.runOnce(7), a.runOnce(7), b.runOnce(7)]);
    for (let i = 0; i < 10; i++) await Promise.all([a.runOnce(5), b.runOnce(5)]);
    const seen = rx.on(path).map((r) => String(r.headers['x-service-delivery']));
    expect(seen).toHaveLength(50);
    expect(new Set(seen).size).toBe(50);
    const rows = await t.db.selectFrom('webhook_deliveries').select(['state', 'attempts']).where('webhook_id', '=', hook.id).execute();
    expect(rows.every((r) => r.state === 'delivered' && r.attempts === 1)).toBe(true);
  });
});

describe('disabled subscriptions and secrets', () => {
  it('a delivery queued before the hook was deleted still completes; later events are not delivered', async () => {
    const path = `/ok/deleted-${newId()}`;
    const { ws, hook } = await scenario(path);
    const w = newWorker();
    await w.dispatch();
    await t.services.webhooks.deleteWebhook(ws.workspaceId, hook.id);
    await t.db.transaction().execute((trx) => enqueueEvent(trx, { workspaceId: ws.workspaceId, event: 'lead.invited', data: { after: true } }));
    await w.runOnce();
    const seen = rx.on(path);
    expect(seen).toHaveLength(1);
    expect(JSON.parse(seen[0].body).data).not.toHaveProperty('after');
  });

  it('a secret that cannot be opened with the configured key fails the delivery without sending', async () => {
    const path = `/ok/wrong-key-${newId()}`;
    const { hook } = await scenario(path);
    await newWorker({ cipher: createTextCipher(randomBytes(32)) }).runOnce();
    expect(await deliveryOf(hook.id)).toMatchObject({ state: 'failed', last_error: expect.stringMatching(/^secret_unavailable/) });
    expect(rx.on(path)).toEqual([]);
  });

  it('rejects a lease too short to cover an attempt', () => {
    expect(() => newWorker({ timeoutMs: 10_000, leaseMs: 15_000 })).toThrow(RangeError);
    expect(() => newWorker({ timeoutMs: 10_000, leaseMs: 21_000 })).not.toThrow();
  });
});

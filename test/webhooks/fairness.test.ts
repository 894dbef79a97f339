import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTextCipher } from '../../src/lib/crypto.js';
import { systemClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { createDeliveryWorker, DEFAULT_PER_SUBSCRIPTION } from '../../src/webhooks/delivery-worker.js';
import { enqueueEvents } from '../../src/webhooks/outbox.js';
import { startWorker, type RunningWorker } from '../../src/worker.js';
import { createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { startWebhookApp, tableResolver, type Receiver } from './receiver.js';

// Issue 13, defect 1: retries, lapsed leases and other subscriptions must not wait behind a backlog.
// The real loop (startWorker, system clock, real sleeps) against a local receiver; the bounds are
// generous because CI machines are loaded, and each would fail by a wide margin on the old claim order
// (global due-time order, no per-subscription cap), where these waited for most of the backlog.
const cipher = createTextCipher(randomBytes(32));
const resolver = tableResolver({ 'receiver.test': ['127.0.0.1'] });
const BACKLOG = 2000;

let t: TestApp, rx: Receiver, close: (() => Promise<void>) | undefined;
const workers: RunningWorker[] = [];

beforeAll(async () => ({ t, rx, close } = await startWebhookApp({ resolver, cipher })));
// Each test leaves a backlog behind on purpose; it must not become the next test's backlog.
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  await t.db.updateTable('webhook_deliveries').set({ state: 'failed', lease_token: null }).where('state', '=', 'pending').execute();
});
afterAll(async () => close?.());

function runWorker() {
  const w = startWorker({ db: t.db, config: t.config, cipher, resolver, leaseMs: 30_000 });
  workers.push(w);
  return w;
}

async function hookTo(path: string, events = ['lead.messaged']) {
  const ws = await createWorkspaceWithKey(t, 'fair');
  const hook = await t.services.webhooks.createWebhook(ws.workspaceId, { url: `http://receiver.test:${rx.port}${path}`, events });
  return { ws, hook };
}

/** `count` committed lead.messaged events; data.n numbers them, data.failFirst marks every `failEvery`-th. */
async function backlog(workspaceId: string, count: number, failEvery = 0) {
  await t.db.transaction().execute((trx) =>
    enqueueEvents(
      trx,
      Array.from({ length: count }, (_, n) => ({
        workspaceId,
        event: 'lead.messaged' as const,
        data: { n, ...(failEvery > 0 && n % failEvery === 0 ? { failFirst: true } : {}) },
      })),
    ),
  );
}

const deliveryIdsOf = (path: string) => rx.on(path).map((r) => String(r.headers['x-service-delivery']));

describe('timely webhook delivery under a backlog', () => {
  it(`a due retry goes out at its time (1 s after the failure, under 3 s) with ${BACKLOG} deliveries of the same subscription queued`, async () => {
    // As in the run: the receiver answers 503 to one delivery in ten (their first attempt).
    // 100 ms per answer and 16 in flight: at most 160 deliveries/s, so the backlog lasts over 12 s.
    const path = `/slow/100/retry-${newId()}`;
    const { ws, hook } = await hookTo(path);
    await backlog(ws.workspaceId, BACKLOG, 10);
    const started = performance.now();
    runWorker();
    await rx.waitFor(() => rx.on(path).length >= 400 && performance.now() - started >= 5000, 60_000);
    const snapshot = performance.now();
    const pending = await t.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('webhook_id', '=', hook.id)
      .where('state', '=', 'pending')
      .executeTakeFirstOrThrow();
    // The backlog is still there: what follows did not wait for it.
    expect(Number(pending.n)).toBeGreaterThan(BACKLOG / 2);
    const attemptsAt = new Map<string, number[]>();
    for (const r of rx.on(path).filter((x) => x.body.includes('"failFirst":true'))) {
      const id = String(r.headers['x-service-delivery']);
      attemptsAt.set(id, [...(attemptsAt.get(id) ?? []), r.at]);
    }
    // Every failed first attempt made at least 3 s before the snapshot has had its retry, 1 s after it.
    const due = [...attemptsAt.values()].filter(([first]) => first <= snapshot - 3000);
    expect(due.length).toBeGreaterThanOrEqual(5);
    for (const [first, second] of due) {
      expect(second).toBeDefined();
      expect(second - first).toBeGreaterThanOrEqual(950);
      expect(second - first).toBeLessThan(3000);
    }
  });

  it("a slow subscription holds at most its cap and does not delay another subscription's test ping", async () => {
    const slowPath = `/slow/1500/starve-${newId()}`;
    const slow = await hookTo(slowPath);
    await backlog(slow.ws.workspaceId, 400);
    const pingPath = `/ok/ping-${newId()}`;
    const other = await hookTo(pingPath);
    runWorker();
    await rx.waitFor(() => rx.on(slowPath).length >= DEFAULT_PER_SUBSCRIPTION, 30_000);
    const leased = await t.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('webhook_id', '=', slow.hook.id)
      .where('lease_token', 'is not', null)
      .executeTakeFirstOrThrow();
    expect(Number(leased.n)).toBeLessThanOrEqual(DEFAULT_PER_SUBSCRIPTION);

    const started = performance.now();
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${other.hook.id}/test`, headers: other.ws.auth });
    expect(res.statusCode).toBe(202);
    await rx.waitFor(() => rx.on(pingPath).length === 1, 30_000);
    expect(rx.on(pingPath)[0].at - started).toBeLessThan(3000);
    // The slow receiver was never sent more than its cap at once.
    expect(rx.on(slowPath).length).toBeLessThan(400);
  });

  it(`a lapsed lease is retaken promptly, ahead of ${BACKLOG} queued deliveries of the same subscription`, async () => {
    const path = `/slow/100/lease-${newId()}`;
    const { ws, hook } = await hookTo(path);
    await backlog(ws.workspaceId, BACKLOG);
    // A worker claims the oldest delivery with a 3 s lease, then dies without sending anything.
    const leaseMs = 3000;
    const dying = createDeliveryWorker({ db: t.db, config: t.config, clock: systemClock, cipher, resolver, timeoutMs: 1000, leaseMs });
    await dying.dispatch();
    const [lost] = await dying.claim(1);
    expect(lost).toMatchObject({ webhookId: hook.id, attempt: 1 });
    const claimedAt = performance.now();

    runWorker();
    await rx.waitFor(() => deliveryIdsOf(path).includes(lost.id), 60_000);
    const retaken = rx.on(path).find((r) => r.headers['x-service-delivery'] === lost.id)!;
    expect(retaken.at - claimedAt).toBeGreaterThanOrEqual(leaseMs - 50);
    expect(retaken.at - claimedAt).toBeLessThan(leaseMs + 2000);
    expect(rx.on(path).filter((r) => r.at <= retaken.at).length).toBeLessThan(BACKLOG / 2);
    const attempts = await t.db.selectFrom('webhook_attempts').select(['attempt', 'outcome']).where('delivery_id', '=', lost.id).orderBy('attempt').execute();
    expect(attempts[0]).toEqual({ attempt: 1, outcome: 'lost' });
    expect(attempts[1].attempt).toBe(2);
  });
});

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTextCipher } from '../../src/lib/crypto.js';
import { systemClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { createDeliveryWorker, DEFAULT_PER_SUBSCRIPTION } from '../../src/webhooks/delivery-worker.js';
import { enqueueEvents } from '../../src/webhooks/outbox.js';
import { startWorker, type RunningWorker } from '../../src/worker.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { startReceiver, tableResolver, type Receiver } from './receiver.js';

// Issue 13, defect 1: retries, lapsed leases and other subscriptions must not wait behind a backlog.
// The real loop (startWorker, system clock, real sleeps) against a local receiver; the bounds are
// generous because CI machines are loaded, and each would fail by a wide margin on the old claim order
// (global due-time order, no per-subscription cap), where these waited for most of the backlog.
const cipher = createTextCipher(randomBytes(32));
const resolver = tableResolver({ 'receiver.test': ['127.0.0.1'] });
const BACKLOG = 2000;

let t: TestApp;
let rx: Receiver;
const workers: RunningWorker[] = [];

beforeAll(async () => {
  t = await buildTestApp({ resolver, cipher, env: { OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1' } });
  rx = await startReceiver();
});
// Each test leaves a backlog behind on purpose; it must not become the next test's backlog.
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  await t.db.updateTable('webhook_deliveries').set({ state: 'failed', lease_token: null }).where('state', '=', 'pending').execute();
});
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

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

/** `count` committed lead.messaged events; data.n numbers them, data.failFirst marks the first `failing`. */
async function backlog(workspaceId: string, count: number, failing = 0) {
  await t.db.transaction().execute((trx) =>
    enqueueEvents(
      trx,
      // Distinct times, so the dispatcher (oldest first) puts the failing ones into the first batch.
      Array.from({ length: count }, (_, n) => ({
        workspaceId,
        event: 'lead.messaged' as const,
        data: { n, ...(n < failing ? { failFirst: true } : {}) },
        createdAt: new Date(Date.now() - 60_000 + n),
      })),
    ),
  );
}

const deliveryIdsOf = (path: string) => rx.on(path).map((r) => String(r.headers['x-service-delivery']));

describe('timely webhook delivery under a backlog', () => {
  it(`a due retry goes out at its time (1 s after the failure, under 3 s) with ${BACKLOG} deliveries of the same subscription queued`, async () => {
    const path = `/slow/40/retry-${newId()}`;
    const { ws } = await hookTo(path);
    await backlog(ws.workspaceId, BACKLOG, 10);
    runWorker();
    const dbg = setInterval(() => console.log('seen', rx.on(path).length, failingSeen().length), 1000);
    const failingSeen = () => rx.on(path).filter((r) => r.body.includes('"failFirst":true'));
    await rx.waitFor(() => failingSeen().length >= 20, 60_000);
    const seen = rx.on(path);
    const failing = failingSeen();
    const byDelivery = new Map<string, number[]>();
    for (const r of failing) byDelivery.set(String(r.headers['x-service-delivery']), [...(byDelivery.get(String(r.headers['x-service-delivery'])) ?? []), r.at]);
    expect(byDelivery.size).toBe(10);
    const gaps = [...byDelivery.values()].map(([first, second]) => second - first);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(950);
      expect(gap).toBeLessThan(3000);
    }
    // The backlog was still there when the retries went out: they did not wait for it.
    const lastRetry = Math.max(...[...byDelivery.values()].map(([, second]) => second));
    expect(seen.filter((r) => r.at <= lastRetry).length).toBeLessThan(BACKLOG / 2);
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

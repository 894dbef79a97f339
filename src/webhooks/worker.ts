import { performance } from 'node:perf_hooks';
import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { TextCipher } from '../lib/crypto.js';
import { resolveTextCipher } from '../lib/encryption-key.js';
import { findNextWork, pruneHistory } from './jobs.repository.js';
import type { OutboxSignal } from './outbox.js';
import { createDeliveryWorker, silentLogger, type AttemptReport, type DeliveryWorkerOptions, type WorkerLogger } from './delivery-worker.js';
import type { Resolver } from './safe-url.js';

export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

export interface StartWorkerOptions {
  db: Database;
  config: Config;
  clock?: Clock;
  /** Defaults to the service's text cipher for this configuration; it must match the API's to open secrets. */
  cipher?: TextCipher;
  resolver?: Resolver;
  logger?: WorkerLogger;
  /** Injectable so a test can run the loop on a fake clock (a sleep that advances it) or measure real gaps. */
  sleep?: Sleep;
  /** In-process wake-up after an event commits; other processes are found by polling. */
  signal?: OutboxSignal;
  /**
   * Attempts in flight at once. An attempt mostly waits on its receiver (a socket, no database
   * connection), so this can be generous; perSubscription keeps one receiver from taking them all.
   */
  concurrency?: number;
  perSubscription?: DeliveryWorkerOptions['perSubscription'];
  /** Longest idle wait between polls of the queue. */
  idlePollMs?: number;
  /** Finished deliveries and dispatched events older than this are deleted; 0 keeps them. */
  retentionMs?: number;
  timeoutMs?: DeliveryWorkerOptions['timeoutMs'];
  leaseMs?: DeliveryWorkerOptions['leaseMs'];
  maxResponseBytes?: DeliveryWorkerOptions['maxResponseBytes'];
  ca?: DeliveryWorkerOptions['ca'];
  /** Called after every attempt; tests use it to observe progress without polling the database. */
  onAttempt?: (report: AttemptReport) => void;
}

export interface RunningWorker {
  /** Stops claiming, waits for attempts in flight to be recorded, then resolves. */
  stop(): Promise<void>;
  /** Cuts the current wait short. */
  wake(): void;
}

const DEFAULT_CONCURRENCY = 64;
/** A quarter of the slots: 16 attempts per claim at the default concurrency. */
const CLAIM_BATCH_DIVISOR = 4;
const DEFAULT_IDLE_POLL_MS = 1000;
const DEFAULT_RETENTION_MS = 7 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;
const ERROR_BACKOFF_MS = 5000;
// Due deliveries the claim left alone belong to subscriptions at their in-flight cap, or are being claimed
// by another worker. Our own finishing attempts wake the loop; this short poll finds the rest, so a retry
// that falls due behind such a backlog still goes out well within a second of its time.
const CAPPED_POLL_MS = 200;
const DISPATCH_EVERY_MS = 250;

/**
 * Runs the dispatcher and the delivery loop until stop(). The loop never waits for a batch: it keeps up
 * to `concurrency` attempts in flight and claims again whenever one finishes (or a retry falls due), so a
 * slow receiver holds only its own slots, at most perSubscription of them. Any number of these may run against one
 * PostgreSQL database (in the server and as `outreach worker` processes): claims use FOR UPDATE SKIP
 * LOCKED and leases, so they share the queue without sending an attempt twice.
 */
export function startWorker(opts: StartWorkerOptions): RunningWorker {
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? silentLogger;
  const sleep = opts.sleep ?? realSleep;
  const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
  const claimBatch = Math.max(1, Math.floor(concurrency / CLAIM_BATCH_DIVISOR));
  const idlePollMs = opts.idlePollMs ?? DEFAULT_IDLE_POLL_MS;
  const retentionMs = opts.retentionMs ?? DEFAULT_RETENTION_MS;
  const worker = createDeliveryWorker({
    db: opts.db,
    config: opts.config,
    clock,
    cipher: opts.cipher ?? resolveTextCipher(opts.config),
    resolver: opts.resolver,
    logger,
    timeoutMs: opts.timeoutMs,
    leaseMs: opts.leaseMs,
    maxResponseBytes: opts.maxResponseBytes,
    perSubscription: opts.perSubscription,
    ca: opts.ca,
  });

  const stopController = new AbortController();
  let wakeController = new AbortController();
  let wakeRequested = false;
  const inflight = new Set<Promise<void>>();
  let lastPruneAt = 0;

  let dispatchWanted = true;
  let lastDispatchAt = 0;
  const wakeLoop = () => {
    wakeRequested = true;
    wakeController.abort();
  };
  /** From outside (an event committed in this process): look at the outbox and the queue now. */
  const wake = () => {
    dispatchWanted = true;
    wakeLoop();
  };

  if (opts.signal) {
    const signal = opts.signal;
    void (async () => {
      while (!stopController.signal.aborted) {
        await signal.next(stopController.signal);
        if (!stopController.signal.aborted) wake();
      }
    })();
  }

  function track(claimed: Parameters<typeof worker.deliver>[0]) {
    const p = worker
      .deliver(claimed)
      .then((report) => opts.onAttempt?.(report))
      .catch((err: unknown) => {
        // The lease brings the delivery back if this attempt could not be recorded.
        logger.error(
          { deliveryId: claimed.id, attempt: claimed.attempt, err: { type: (err as Error).name, message: (err as Error).message } },
          'webhook attempt could not be recorded',
        );
      })
      .finally(() => {
        inflight.delete(p);
        // A freed slot, or a retry now scheduled, may mean there is work to pick up.
        wakeLoop();
      });
    inflight.add(p);
  }

  async function maybePrune() {
    if (retentionMs <= 0) return;
    const now = clock.now().getTime();
    if (now - lastPruneAt < PRUNE_EVERY_MS) return;
    lastPruneAt = now;
    const pruned = await pruneHistory(opts.db, new Date(now - retentionMs), 1000);
    if (pruned.deliveries + pruned.events > 0) logger.debug(pruned, 'pruned webhook history');
  }

  async function pass(): Promise<number> {
    await maybePrune();
    // Finishing attempts wake the loop hundreds of times a second under load; the outbox only needs a
    // look when told (a commit in this process, wake()), when rows were seen waiting, or every so often.
    const now = performance.now();
    if (dispatchWanted || now - lastDispatchAt >= DISPATCH_EVERY_MS) {
      dispatchWanted = false;
      lastDispatchAt = now;
      await worker.dispatch();
    }
    const free = concurrency - inflight.size;
    // Claims go in batches: a claim is one transaction whatever its size, so claiming a slot at a time as each
    // attempt finishes made the claim, not the receiver, the limit (about 200 deliveries/s). With fewer than a
    // batch of slots free, finishing attempts wake us until there are enough; an idle worker claims at once.
    const claims = free >= claimBatch || (free > 0 && inflight.size === 0) ? await worker.claim(free) : [];
    for (const c of claims) track(c);
    // With the slots busy, only a finishing attempt (which wakes us) can let more work start.
    if (concurrency - inflight.size < claimBatch) return idlePollMs;
    // Attempts just started will wake us when they finish; meanwhile retries may fall due.
    if (claims.length > 0) return CAPPED_POLL_MS;
    const next = await findNextWork(opts.db);
    if (next.undispatched) {
      dispatchWanted = true;
      return 0;
    }
    if (!next.nextDeliveryAt) return idlePollMs;
    const wait = next.nextDeliveryAt.getTime() - clock.now().getTime();
    return Math.min(idlePollMs, wait > 0 ? wait : CAPPED_POLL_MS);
  }

  const loop = (async () => {
    while (!stopController.signal.aborted) {
      let delay: number;
      try {
        wakeRequested = false;
        delay = await pass();
      } catch (err) {
        logger.error({ err: { type: (err as Error).name, message: (err as Error).message } }, 'webhook worker pass failed');
        delay = Math.max(idlePollMs, ERROR_BACKOFF_MS);
      }
      if (stopController.signal.aborted) break;
      if (wakeRequested) continue;
      if (delay === 0) {
        // Yield so request handling on a shared embedded database gets its turn.
        await new Promise((r) => setImmediate(r));
        continue;
      }
      wakeController = new AbortController();
      await sleep(delay, AbortSignal.any([stopController.signal, wakeController.signal]));
    }
  })();

  let stopping: Promise<void> | null = null;
  return {
    wake,
    stop: () =>
      (stopping ??= (async () => {
        stopController.abort();
        await loop;
        await Promise.allSettled([...inflight]);
        await worker.close();
      })()),
  };
}

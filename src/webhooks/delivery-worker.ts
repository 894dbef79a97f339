import { performance } from 'node:perf_hooks';
import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { metrics, type DeliveryOutcomeLabel } from '../lib/metrics.js';
import type { TextCipher } from '../lib/crypto.js';
import { claimDueDeliveries, createCompletionBatcher, type AttemptResult, type ClaimedDelivery, type CompletedState } from './claims.js';
import { dispatchOutbox, DEFAULT_DISPATCH_BATCH } from './dispatcher.js';
import { openSealedData } from './outbox.js';
import { webhookSecretCodec } from '../modules/webhook-subscriptions/index.js';
import { buildDeliveryRequest, createReceiverAgents, DEFAULT_DELIVERY_TIMEOUT_MS, DEFAULT_MAX_RESPONSE_BYTES, deliverOnce } from './deliver.js';
import { checkReceiverUrl, systemResolver, type Resolver } from './safe-url.js';

/** The pino subset the worker uses; fields are ids, counts and reason codes, never URLs, secrets or bodies. */
export interface WorkerLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: WorkerLogger = { debug() {}, info() {}, warn() {}, error() {} };

export interface DeliveryWorkerOptions {
  db: Database;
  config: Pick<Config, 'webhooksAllowInsecure'>;
  clock: Clock;
  cipher: TextCipher;
  resolver?: Resolver;
  /** Per attempt: the receiver must answer within it (spec: 10 s). Also bounds each DNS check. */
  timeoutMs?: number;
  /**
   * How long a claim is exclusive. It must outlast one whole attempt (DNS check plus request), or a
   * slow but live worker would be taken for dead and the attempt repeated by another worker.
   */
  leaseMs?: number;
  maxResponseBytes?: number;
  /**
   * Attempts one subscription may have in flight at once, across all workers (their leases are counted):
   * a slow receiver holds at most this many of a worker's slots, and is not flooded either.
   */
  perSubscription?: number;
  /** Extra trust anchor, for tests against self-signed HTTPS receivers. */
  ca?: string | Buffer;
  logger?: WorkerLogger;
}

export interface AttemptReport {
  deliveryId: string;
  webhookId: string;
  attempt: number;
  outcome: AttemptResult['outcome'];
  status: number | null;
  state: CompletedState;
  nextAttemptAt: Date | null;
  /** The lease ran out and another claim took over; this attempt's result did not change the delivery. */
  fenced: boolean;
}

/** The `outcome` label of `outreach_webhook_deliveries_total` for one recorded attempt. */
export function deliveryOutcomeLabel(state: CompletedState, fenced: boolean): DeliveryOutcomeLabel {
  if (fenced) return 'fenced';
  if (state === 'delivered') return 'delivered';
  if (state === 'pending') return 'retry';
  if (state === 'failed') return 'failed';
  return 'other';
}

export const DEFAULT_LEASE_MS = 60_000;
export const DEFAULT_PER_SUBSCRIPTION = 16;

function withDeadline(resolver: Resolver, ms: number): Resolver {
  return (hostname) =>
    new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('dns lookup timed out')), ms);
      resolver(hostname).then(
        (addresses) => {
          clearTimeout(timer);
          resolve(addresses);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
}

/**
 * One worker's view of the delivery queue. Every step is a separate call so tests can stop between
 * them (claim, then "die" without reporting); the loop in src/worker.ts strings them together.
 */
export function createDeliveryWorker(opts: DeliveryWorkerOptions) {
  const { db, clock, cipher } = opts;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  const leaseMs = opts.leaseMs ?? Math.max(DEFAULT_LEASE_MS, 3 * timeoutMs);
  // DNS and the request are each bounded by timeoutMs; the rest is slack for the database writes.
  if (leaseMs < 2 * timeoutMs + 1000) throw new RangeError('leaseMs must be at least 2 * timeoutMs + 1000');
  const resolver = withDeadline(opts.resolver ?? systemResolver, timeoutMs);
  const logger = opts.logger ?? silentLogger;
  const perSubscription = opts.perSubscription ?? DEFAULT_PER_SUBSCRIPTION;
  const completions = createCompletionBatcher(db);
  const agents = createReceiverAgents();

  async function dispatch(batchSize = DEFAULT_DISPATCH_BATCH) {
    let events = 0;
    let deliveries = 0;
    for (;;) {
      const r = await dispatchOutbox(db, { now: clock.now(), batchSize });
      events += r.events;
      deliveries += r.deliveries;
      if (r.events < batchSize) return { events, deliveries };
    }
  }

  function claim(limit: number): Promise<ClaimedDelivery[]> {
    return claimDueDeliveries(db, { now: clock.now(), limit, leaseMs, perSubscription });
  }

  async function attempt(claimed: ClaimedDelivery): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const { payload } = claimed;
    if (payload.eventCreatedAt === null || payload.url === null || payload.sealedSecret === null) {
      return { outcome: 'fail', status: null, durationMs: elapsed(), error: 'subscription_or_event_missing' };
    }
    const secret = webhookSecretCodec.open(payload.sealedSecret, cipher);
    if (secret === null) return { outcome: 'fail', status: null, durationMs: elapsed(), error: 'secret_unavailable: cannot decrypt with the configured key' };

    // Checked again on every attempt and pinned: the answer that passed is the address we connect to,
    // so a name that turns private between attempts (DNS rebinding) is refused, not followed.
    const checked = await checkReceiverUrl(payload.url, { resolver, allowInsecure: opts.config.webhooksAllowInsecure });
    if (!checked.ok) {
      // A name that did not resolve may resolve next time; a URL that breaks the rules will not change.
      const outcome = checked.reason === 'dns_resolution_failed' ? 'retry' : 'fail';
      return { outcome, status: null, durationMs: elapsed(), error: `url_rejected: ${checked.reason}` };
    }

    const request = buildDeliveryRequest({
      deliveryId: claimed.id,
      event: claimed.event,
      createdAt: payload.eventCreatedAt.toISOString(),
      data: openSealedData(payload.eventData, cipher),
      secret,
      // Signed at send time, so a retry 4 s later still falls inside the receiver's 300 s window.
      nowSeconds: Math.floor(clock.now().getTime() / 1000),
    });
    return deliverOnce({
      url: checked.url,
      address: checked.address,
      body: request.body,
      headers: request.headers,
      timeoutMs,
      maxResponseBytes: opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
      agents,
    });
  }

  /** Makes the claimed attempt and records it; never throws for receiver trouble, only for database trouble. */
  async function deliver(claimed: ClaimedDelivery): Promise<AttemptReport> {
    let result: AttemptResult;
    try {
      result = await attempt(claimed);
    } catch (err) {
      // Our own failure (database hiccup mid-attempt): retried like a network error, within the budget.
      result = { outcome: 'retry', status: null, durationMs: 0, error: `worker_error: ${(err as Error).name}` };
    }
    const done = await completions.complete(claimed, result, clock.now());
    metrics().webhookDeliveries.inc({ outcome: deliveryOutcomeLabel(done.state, done.fenced) });
    const report: AttemptReport = {
      deliveryId: claimed.id,
      webhookId: claimed.webhookId,
      attempt: claimed.attempt,
      outcome: result.outcome,
      status: result.status,
      state: done.state,
      nextAttemptAt: done.nextAttemptAt,
      fenced: done.fenced,
    };
    const fields = {
      deliveryId: claimed.id,
      webhookId: claimed.webhookId,
      event: claimed.event,
      attempt: claimed.attempt,
      status: result.status,
      durationMs: result.durationMs,
    };
    if (done.fenced) logger.warn({ ...fields, error: result.error }, 'webhook attempt finished after its lease was taken over');
    else if (done.state === 'delivered') logger.debug(fields, 'webhook delivered');
    else if (done.state === 'pending')
      logger.info({ ...fields, error: result.error, nextAttemptAt: done.nextAttemptAt?.toISOString() }, 'webhook attempt failed; retry scheduled');
    else logger.warn({ ...fields, error: result.error }, 'webhook delivery failed');
    return report;
  }

  /**
   * Dispatch everything pending, then make the attempts due now (up to `limit`), and wait for all of
   * them: a step for tests on a fake clock. The running worker (worker.ts) never waits for a batch.
   */
  async function runOnce(limit = 100): Promise<{ dispatched: number; reports: AttemptReport[] }> {
    const { deliveries } = await dispatch();
    const claims = await claim(limit);
    const reports = await Promise.all(claims.map((c) => deliver(c)));
    return { dispatched: deliveries, reports };
  }

  /** Closes the kept-alive receiver connections; attempts after this connect anew. */
  const close = () => agents.close();

  return { dispatch, claim, deliver, runOnce, close, leaseMs, timeoutMs, perSubscription };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;

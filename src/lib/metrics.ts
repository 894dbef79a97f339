import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

// Prometheus series of the service (docs/metrics.md). A leaf: the engine, the webhook worker and the channels count
// through it, and the app serves it; it imports none of them. Series that read the database at scrape time take
// their readers from whoever owns the database (useSources), so no SQL lives here.
//
// Labels never carry ids, addresses or text: every label value is one of the fixed sets below (or a Fastify route
// template, which is code, not input). A value outside its set becomes `other`.

/** `outreach_steps_total{outcome}`: what recording a step decided (engine/step-metrics.ts maps the engine's outcomes). */
export const STEP_OUTCOMES = ['ok', 'failed', 'skipped', 'rate_limited', 'waiting', 'needs_person', 'other'] as const;
export type StepOutcomeLabel = (typeof STEP_OUTCOMES)[number];
/** Channels as labels (domain/vocabulary.ts CHANNELS, repeated here so the lib stays a leaf). */
export const CHANNEL_LABELS = ['linkedin', 'email', 'x', 'instagram', 'other'] as const;
export type ChannelLabel = (typeof CHANNEL_LABELS)[number];
/** `outreach_webhook_deliveries_total{outcome}`: one per attempt recorded. */
export const DELIVERY_OUTCOMES = ['delivered', 'retry', 'failed', 'fenced', 'other'] as const;
export type DeliveryOutcomeLabel = (typeof DELIVERY_OUTCOMES)[number];
/** `outreach_watcher_polls_total{result}`: one per account polled. */
export const WATCHER_RESULTS = ['ok', 'auth_failed', 'rate_limited', 'unreachable', 'unreadable', 'error', 'other'] as const;
export type WatcherResultLabel = (typeof WATCHER_RESULTS)[number];
const HTTP_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
/** The route label of a request no route matched (404s, refused URLs). */
export const UNMATCHED_ROUTE = 'unmatched';

/** `value` if it is one of `set`, else `other` (the last element of every set above). */
export function oneOf<T extends string>(set: readonly T[], value: string | null | undefined): T {
  return value != null && (set as readonly string[]).includes(value) ? (value as T) : set[set.length - 1];
}

/** What the database-backed gauges read at scrape time; given by the process that owns the database. */
export interface MetricsSources {
  /** Outbox events not yet dispatched plus deliveries not yet done, and the age in seconds of the oldest of them. */
  outbox(): Promise<{ pending: number; oldestAgeSeconds: number }>;
  /** Tasks waiting for a person. */
  tasksOpen(): Promise<number>;
  /** Queries waiting for a pooled connection (pg Pool `waitingCount`; 0 on the embedded database). */
  poolWaiting(): number;
}

/** A recorder for one route: observes a request's method, status and duration into cells bound to that route. */
export type RouteObserver = (method: string, statusCode: number, elapsedMs: number) => void;

type HttpLabels = { route: string; method: string; status_class: string };
interface HistogramCell {
  readonly labels: HttpLabels;
  /** Observations per bucket, not cumulative; the last slot is above the highest bound (+Inf only). */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}
interface ExportedValue {
  value: number;
  labels: Record<string, string | number>;
  metricName: string;
  sharedLabels?: HttpLabels;
}

/**
 * A histogram for the request path: prom-client's observe() builds a label hash string and a few objects on every
 * call (about 1.4 µs a request, measured), while here a request finds its cell once per route, method and status
 * class (RouteObserver) and then costs a bucket search and three additions. The registry reads it like one of its own
 * (name, help, type, get/getForPromString, reset): the same exposition lines prom-client's Histogram writes, which
 * test/observability/metrics.test.ts compares line for line.
 */
export class RequestHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly cells: HistogramCell[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  /** A cell for one label set; make it once and keep it (each call adds a series). */
  cell(labels: HttpLabels): HistogramCell {
    const cell: HistogramCell = { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
    this.cells.push(cell);
    return cell;
  }

  observe(cell: HistogramCell, seconds: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]) i++;
    cell.counts[i] += 1;
    cell.sum += seconds;
    cell.count += 1;
  }

  /** The registry's text export: `le` per bucket, the cell's labels shared by its lines (prom-client's own layout). */
  async getForPromString() {
    const values: ExportedValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const cell of this.cells) {
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += cell.counts[i];
        values.push({ value: acc, labels: { le: this.bounds[i] }, metricName: bucket, sharedLabels: cell.labels });
      }
      values.push({ value: cell.count, labels: { le: '+Inf' }, metricName: bucket, sharedLabels: cell.labels });
      values.push({ value: cell.sum, labels: {}, metricName: `${this.name}_sum`, sharedLabels: cell.labels });
      values.push({ value: cell.count, labels: {}, metricName: `${this.name}_count`, sharedLabels: cell.labels });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The registry's JSON export: every label on the value itself. */
  async get() {
    const data = await this.getForPromString();
    return { ...data, values: data.values.map(({ sharedLabels, ...v }) => ({ ...v, labels: { ...v.labels, ...sharedLabels } })) };
  }

  reset(): void {
    for (const cell of this.cells) {
      cell.counts.fill(0);
      cell.sum = 0;
      cell.count = 0;
    }
  }
}

export interface Metrics {
  readonly registry: Registry;
  readonly httpDuration: RequestHistogram;
  readonly enginePassDuration: Histogram;
  readonly steps: Counter<'channel' | 'outcome'>;
  readonly webhookDeliveries: Counter<'outcome'>;
  readonly watcherPolls: Counter<'channel' | 'result'>;
  readonly sentCopies: Counter<'result'>;
  readonly inboxIdleConnections: Gauge;
  readonly inboxIdleReconnects: Counter;
  readonly inboxIdleOldestSeconds: Gauge;
  readonly inboxPushSeconds: Histogram;
  /** A recorder for requests of `route` (a route template, or UNMATCHED_ROUTE). */
  routeObserver(route: string): RouteObserver;
  /** Points the database gauges at `sources` (the last caller wins); the returned function lets go of them. */
  useSources(sources: MetricsSources): () => void;
  /** Node's default metrics (heap, event loop lag, GC…): turned on once, by whoever serves the registry. */
  enableDefaultMetrics(): void;
}

const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const PASS_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** A fresh set of the service's series on a registry of its own (tests may make several; the process uses metrics()). */
export function createMetrics(): Metrics {
  const registry = new Registry();
  const httpDuration = new RequestHistogram('http_request_duration_seconds', 'HTTP requests by route template, method and status class', HTTP_BUCKETS);
  // Read like prom-client's own metrics (see RequestHistogram); its type names only prom-client's classes.
  registry.registerMetric(httpDuration as unknown as Histogram);
  const enginePassDuration = new Histogram({
    name: 'outreach_engine_pass_duration_seconds',
    help: 'Engine passes run by this process (watchers, observations, due steps, discovery), failed ones included',
    buckets: PASS_BUCKETS,
    registers: [registry],
  });
  const steps = new Counter({
    name: 'outreach_steps_total',
    help: 'Step outcomes the engine recorded, by channel and outcome',
    labelNames: ['channel', 'outcome'] as const,
    registers: [registry],
  });
  const webhookDeliveries = new Counter({
    name: 'outreach_webhook_deliveries_total',
    help: 'Webhook delivery attempts recorded, by outcome (delivered, retry scheduled, failed for good, fenced by a lost lease)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const watcherPolls = new Counter({
    name: 'outreach_watcher_polls_total',
    help: 'Inbox polls of connected accounts (mailboxes, X accounts, LinkedIn gateway accounts), by channel and result',
    labelNames: ['channel', 'result'] as const,
    registers: [registry],
  });

  const sentCopies = new Counter({
    name: 'outreach_sent_copies_total',
    help: 'Sent-folder copies of sent e-mail filed over IMAP, by result (filed, already_there, failed: retried later)',
    labelNames: ['result'] as const,
    registers: [registry],
  });

  let sources: MetricsSources | null = null;
  // IMAP IDLE (channels/email/inbox/idle.ts): what the listeners of this process hold, and how fast a push is applied.
  const inboxIdleConnections = new Gauge({
    name: 'outreach_inbox_idle_connections',
    help: 'IMAP connections this process holds in IDLE on a mailbox INBOX',
    registers: [registry],
  });
  const inboxIdleReconnects = new Counter({
    name: 'outreach_inbox_idle_reconnects_total',
    help: 'IDLE connections lost or refused and tried again later (with backoff and jitter)',
    registers: [registry],
  });
  const inboxIdleOldestSeconds = new Gauge({
    name: 'outreach_inbox_idle_oldest_seconds',
    help: 'Age of the oldest IDLE connection this process holds (set at each shard renewal)',
    registers: [registry],
  });
  const inboxPushSeconds = new Histogram({
    name: 'outreach_inbox_push_seconds',
    help: 'From the IMAP server announcing new mail (EXISTS) to the read that applied it having ended',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [registry],
  });
  // Both outbox gauges come from one query: the registry collects every series at once, so the second collect()
  // finds the first one's query still in flight and shares it.
  let outboxRead: Promise<{ pending: number; oldestAgeSeconds: number }> | null = null;
  const readOutbox = (from: MetricsSources) =>
    (outboxRead ??= from.outbox().finally(() => {
      outboxRead = null;
    }));
  // A gauge whose source fails (the database is away) reads NaN for that scrape rather than failing the whole scrape:
  // readiness says why; a stale number would only mislead.
  const scraped = (name: string, help: string, read: (from: MetricsSources) => Promise<number> | number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        if (!sources) return;
        try {
          this.set(await read(sources));
        } catch {
          this.set(Number.NaN);
        }
      },
    });
  // Read first: the registry starts every collect() at once, and the other gauges' own queries would otherwise be
  // counted as waiting (pg-pool queues even a request an idle connection will take on the next tick).
  scraped('outreach_db_pool_waiting', 'Queries waiting for a pooled PostgreSQL connection (0 on the embedded database)', (s) => s.poolWaiting());
  scraped(
    'outreach_outbox_pending',
    'Webhook events waiting for dispatch plus deliveries waiting for their receiver',
    async (s) => (await readOutbox(s)).pending,
  );
  scraped(
    'outreach_outbox_oldest_age_seconds',
    'Age of the oldest event or delivery still waiting (0 when none waits)',
    async (s) => (await readOutbox(s)).oldestAgeSeconds,
  );
  scraped('outreach_tasks_open', 'Tasks waiting for a person (steps the platform rules give to a person, replies to answer)', (s) => s.tasksOpen());

  let defaultsOn = false;
  return {
    registry,
    httpDuration,
    enginePassDuration,
    steps,
    webhookDeliveries,
    watcherPolls,
    sentCopies,
    inboxIdleConnections,
    inboxIdleReconnects,
    inboxIdleOldestSeconds,
    inboxPushSeconds,
    routeObserver(route) {
      // One cell per method and status class of this route, made on first use.
      const byMethod = new Map<string, HistogramCell[]>();
      const cellOf = (method: string, cls: number) => {
        let row = byMethod.get(method);
        if (!row) byMethod.set(method, (row = []));
        return (row[cls] ??= httpDuration.cell({ route, method, status_class: STATUS_CLASSES[cls] }));
      };
      return (method, statusCode, elapsedMs) => {
        const cls = Math.floor(statusCode / 100) - 1;
        if (cls < 0 || cls > 4) return;
        httpDuration.observe(cellOf(HTTP_METHODS.has(method) ? method : 'OTHER', cls), elapsedMs / 1000);
      };
    },
    useSources(given) {
      sources = given;
      return () => {
        if (sources === given) sources = null;
      };
    },
    enableDefaultMetrics() {
      if (defaultsOn) return;
      defaultsOn = true;
      collectDefaultMetrics({ register: registry });
    },
  };
}

let processMetrics: Metrics | null = null;

/** This process's series: what the engine, the workers and the channels count into, and what `/metrics` serves. */
export function metrics(): Metrics {
  return (processMetrics ??= createMetrics());
}

/** The registry as Prometheus text (content type: the registry's, `text/plain; version=0.0.4`). */
export async function metricsText(m: Metrics = metrics()): Promise<{ contentType: string; body: string }> {
  return { contentType: m.registry.contentType, body: await m.registry.metrics() };
}

export interface MetricsServer {
  /** The port bound (OUTREACH_METRICS_PORT=0 picks one). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * `/metrics` on a port of its own, without a token: bound to loopback unless OUTREACH_METRICS_HOST says otherwise,
 * so only the machine (or the network the operator chose) can read it. Anything else on that port is 404.
 */
export async function serveMetrics(opts: { host: string; port: number; metrics?: Metrics }): Promise<MetricsServer> {
  const m = opts.metrics ?? metrics();
  m.enableDefaultMetrics();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: 'not_found', message: 'only GET /metrics here' }));
      return;
    }
    metricsText(m).then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : body),
      () => res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: 'internal_error' })),
    );
  });
  // A scraper keeps its connection alive between scrapes; closing must not wait for it.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

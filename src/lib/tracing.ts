import { AsyncLocalStorage } from 'node:async_hooks';
import {
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type ContextManager,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import type { CompiledQuery, DatabaseConnection, Dialect, OperationNode, QueryResult } from 'kysely';
import type { LoggerOptions } from 'pino';
import { readFileSync } from 'node:fs';

/**
 * OpenTelemetry traces (docs/tracing.md). Spans are made here, explicitly, through @opentelemetry/api: the project is
 * ESM, where the SDK's monkey-patching instrumentations need loader hooks, and explicit spans name only what the
 * service chooses (route templates, statement kinds, channels), never ids, SQL text, parameters or message text.
 *
 * Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. When off, the hot paths pay
 * nothing: the request hooks, the SQL wrapper and the log mixin are not installed at all (they are decided once, when
 * the app, the database and the logger are made, so `startTracing` comes first in an entry point), and `withSpan`
 * costs one boolean test.
 *
 * When on, the cost that matters is the async context (what makes a SQL statement the child of its request): Node's
 * AsyncLocalStorage, once it holds anything, hooks every promise of the process. So only recorded spans are ever put
 * in context, and the storage is switched off again whenever none is open: with a 1 % sampler the other 99 requests
 * pay a sampling decision, not the hooks (OnDemandContextManager below).
 */

export const DEFAULT_SERVICE_NAME = 'workspace-outreach';
const TRACER_NAME = 'workspace-outreach';

let enabled = false;
let tracer: Tracer = trace.getTracer(TRACER_NAME);
let running: Tracing | null = null;

/** A span that records nothing, handed to `withSpan` callers while tracing is off. */
const NOOP_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

export interface Tracing {
  readonly enabled: boolean;
  /** Flushes the spans still queued (bounded: an unreachable collector never holds up a stop) and stops the SDK. */
  shutdown(): Promise<void>;
}

/** service.version: package.json's, two levels above this file in src/ and in dist/ alike. */
function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const OFF: Tracing = Object.freeze({ enabled: false, shutdown: async () => undefined });

/**
 * The OpenTelemetry context on an AsyncLocalStorage that is enabled only while a recorded span is open in it. Node's
 * AsyncLocalStorage (before AsyncContextFrame: Node 24, or 22 with --experimental-async-context-frame) installs a
 * hook on every promise the process makes from its first `run` until `disable()`: a per-request cost for every
 * request, sampled or not. Here `open()` / `close()` count the recorded spans put in context (a sampled request, a
 * recorded `withSpan`), and the last one's end disables the storage; the next `with` enables it again. Only recorded
 * spans enter the context, so nothing else keeps it on. With AsyncContextFrame the storage costs little, and it is
 * left on.
 */
class OnDemandContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  private openSpans = 0;
  private readonly switchOff: boolean;

  constructor() {
    const major = Number(process.versions.node.split('.')[0]);
    const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
    const frames = major >= 24 ? !flags.includes('--no-async-context-frame') : flags.includes('--experimental-async-context-frame');
    this.switchOff = !frames;
  }

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const cb = thisArg == null ? fn : (fn.bind(thisArg) as F);
    return this.storage.run(ctx, cb, ...args);
  }

  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    const run = (cb: () => unknown) => this.with(ctx, cb);
    return function (this: unknown, ...args: unknown[]) {
      return run(() => fn.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    this.openSpans = 0;
    return this;
  }

  /** A recorded span enters the context (its `with` follows). */
  open(): void {
    this.openSpans++;
  }

  /** That span ended: with none left open, the storage (and its promise hook) is switched off until the next one. */
  close(): void {
    if (--this.openSpans <= 0) {
      this.openSpans = 0;
      if (this.switchOff) this.storage.disable();
    }
  }
}

let contextManager: OnDemandContextManager | null = null;

/** Whether this process exports traces (startTracing found an endpoint). */
export const tracingEnabled = (): boolean => enabled;

/**
 * Starts the OpenTelemetry Node SDK with the OTLP/HTTP (JSON) trace exporter behind a batch span processor, when
 * OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set and neither OTEL_SDK_DISABLED=true nor
 * OTEL_TRACES_EXPORTER=none says otherwise; else does nothing. `env` decides whether; the SDK itself reads its standard
 * variables from process.env (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_*,
 * OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT…). Only traces: the SDK's default metrics and logs
 * exporters are turned off (metrics are Prometheus, logs are the JSON lines on stdout).
 * Call it first in an entry point, before the logger, the database and the app are made.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<Tracing> {
  if (running) return running;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || /(^|,)\s*none\s*(,|$)/i.test(env.OTEL_TRACES_EXPORTER ?? '');
  if (!endpoint || disabled) return OFF;
  // Loaded only when tracing is on: the SDK and its exporters cost start-up time that a process without traces skips.
  const [{ NodeSDK }, { OTLPTraceExporter }, { defaultResource, envDetector, hostDetector, resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  contextManager = new OnDemandContextManager();
  const sdk = new NodeSDK({
    contextManager,
    // The default name is a base that OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector, merged over it) replace.
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME, 'service.version': packageVersion() })),
    // Not the process detector: it would put the command line and the OS user in every export.
    resourceDetectors: [envDetector, hostDetector],
    // A batch span processor (OTEL_BSP_* tune it): spans are queued in memory and sent in the background, so a slow or
    // unreachable collector costs a request nothing; past the queue's size (2048) spans are dropped, never waited for.
    traceExporter: new OTLPTraceExporter(),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  tracer = trace.getTracer(TRACER_NAME, packageVersion());
  enabled = true;
  running = {
    enabled: true,
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)));
      try {
        await Promise.race([sdk.shutdown().catch(() => undefined), timeout]);
      } finally {
        clearTimeout(timer);
        enabled = false;
        running = null;
      }
    },
  };
  return running;
}

/** Marks a span failed by the error's class only: error messages may carry addresses or text that a span must not. */
function failSpan(span: Span, err: unknown): void {
  const e = err as { name?: unknown; code?: unknown } | null;
  const type = typeof e?.code === 'string' && /^[A-Z0-9_]{1,32}$/.test(e.code) ? e.code : typeof e?.name === 'string' ? e.name : 'Error';
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Runs `fn` in a span of its own (a child of the active recorded span, else a new trace as the sampler decides),
 * active for everything `fn` awaits: its SQL statements and channel calls become its children. A throw marks the span
 * failed (the error's class, not its message) and is rethrown. Off, or not sampled: `fn` runs as it is, out of context.
 */
export function withSpan<T>(name: string, attributes: Attributes | undefined, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!enabled) return fn(NOOP_SPAN);
  return runInSpan(tracer.startSpan(name, { attributes }), fn);
}

/** As `withSpan`, but only inside a recorded span: a channel call outside a sampled trace starts none of its own. */
export function withChildSpan<T>(name: string, attributes: Attributes | undefined, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!enabled || !trace.getActiveSpan()?.isRecording()) return fn(NOOP_SPAN);
  return runInSpan(tracer.startSpan(name, { attributes }), fn);
}

function runInSpan<T>(span: Span, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!span.isRecording() || !contextManager) return fn(span);
  const manager = contextManager;
  manager.open();
  return context.with(trace.setSpan(context.active(), span), async () => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
      manager.close();
    }
  });
}

// ---- the trace id in the log line ----

/** The ids of a request's span, set on that request's child logger (and so inherited by the loggers made from it). */
const kLogIds = Symbol('outreach.traceIds');
type WithLogIds = { [kLogIds]?: { traceId: string; spanId: string } };

/**
 * pino options that put `trace_id` and `span_id` in a log line written while a span records: the request's span for
 * every line of a request (Fastify's "incoming request" and "request completed" included, which are written outside
 * the request's context), else the active span (an engine pass). Nothing when tracing is off: no mixin at all.
 */
export function tracingLoggerOptions(): Pick<LoggerOptions, 'mixin'> {
  if (!enabled) return {};
  return {
    // pino merges the line's own fields into what this returns: a fresh object each time.
    mixin(_obj, _level, logger) {
      const ids = (logger as WithLogIds)[kLogIds];
      if (ids) return { trace_id: ids.traceId, span_id: ids.spanId };
      const span = trace.getActiveSpan();
      if (!span?.isRecording()) return {};
      const sc = span.spanContext();
      return { trace_id: sc.traceId, span_id: sc.spanId };
    },
  };
}

// ---- HTTP requests ----

const kRequestTrace = Symbol('outreach.requestTrace');
const REQUEST_CONTEXT_HOLD_MS = 30_000;
type WithRequestTrace = { [kRequestTrace]?: { span: Span; ctx: Context } };

/**
 * One server span per request, `HTTP <METHOD> <route template>` (`HTTP GET /api/v1/leads/:id`, never the URL with its
 * ids), continuing the caller's trace when the request carries a W3C `traceparent`. Attributes: http.request.method,
 * http.route, url.scheme, http.response.status_code (none when the client went away first); 5xx marks it failed. The
 * span is active for the request's hooks and handler, so its SQL statements are its children.
 *
 * Call it right after the Fastify instance is made, before any route: the span starts where Fastify makes the
 * request's logger (so the "incoming request" line already has the trace id), which a route takes when it is added.
 * A request the sampler leaves out costs a sampling decision and nothing more (no context, no listener, no log fields).
 */
export function registerRequestTracing(app: FastifyInstance): void {
  if (!enabled) return;
  const makeChildLogger = app.childLoggerFactory;
  app.setChildLoggerFactory(function (logger, bindings, opts, rawReq) {
    const child = makeChildLogger.call(this, logger, bindings, opts, rawReq);
    const parent = propagation.extract(ROOT_CONTEXT, rawReq.headers);
    const method = rawReq.method ?? 'GET';
    const span = tracer.startSpan(`HTTP ${method}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
    if (span.isRecording()) {
      (rawReq as WithRequestTrace)[kRequestTrace] = { span, ctx: trace.setSpan(parent, span) };
      const sc = span.spanContext();
      (child as WithLogIds)[kLogIds] = { traceId: sc.traceId, spanId: sc.spanId };
    }
    return child;
  });

  app.addHook('onRequest', (req, reply, done) => {
    const raw = req.raw as WithRequestTrace;
    const t = raw[kRequestTrace];
    if (!t || !contextManager) return done();
    // The template the router matched (`/api/v1/leads/:id`); none for a path no route has (404).
    const route = req.routeOptions.url;
    if (route) {
      t.span.updateName(`HTTP ${req.method} ${route}`);
      t.span.setAttribute('http.route', route);
    }
    t.span.setAttribute('url.scheme', req.protocol);
    // The span ends when the response does ('close' follows 'finish', and comes alone when the client went away):
    // a listener on sampled requests only, where onResponse and onRequestAbort hooks would run on every request.
    const manager = contextManager;
    manager.open();
    // A long response (an event stream, held for hours) keeps the context on for at most this long: past it the span
    // still ends with the response, but its later statements are children only while another kept span holds it on.
    let held = true;
    const release = () => {
      if (held) manager.close();
      held = false;
    };
    const timer = setTimeout(release, REQUEST_CONTEXT_HOLD_MS);
    timer.unref();
    reply.raw.once('close', () => {
      clearTimeout(timer);
      raw[kRequestTrace] = undefined;
      if (reply.raw.writableFinished) {
        const status = reply.raw.statusCode;
        t.span.setAttribute('http.response.status_code', status);
        if (status >= 500) {
          t.span.setAttribute('error.type', String(status));
          t.span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      t.span.end();
      release();
    });
    // The rest of the request runs in the span's context: later hooks, the handler, and the handler after a body is
    // read (Fastify's body parser resumes in the async scope it started in: test/observability/traces.test.ts).
    context.with(t.ctx, done);
  });
}

// ---- SQL statements ----

const KIND_OF_NODE: Readonly<Record<string, string>> = {
  SelectQueryNode: 'SELECT',
  InsertQueryNode: 'INSERT',
  UpdateQueryNode: 'UPDATE',
  DeleteQueryNode: 'DELETE',
  MergeQueryNode: 'MERGE',
};
// The first keyword of a statement, past blanks, comments and opening parentheses (one character at a time: no backtracking).
const FIRST_KEYWORD = /^(?:[\s(]|--[^\n]*|\/\*[\s\S]*?\*\/)*([A-Za-z]{1,20})/;

/** SELECT, INSERT, UPDATE, DELETE, MERGE from the query builder; the first keyword (BEGIN, WITH, CREATE…) of raw SQL. */
export function statementKind(query: Pick<CompiledQuery, 'query' | 'sql'>): string {
  return KIND_OF_NODE[query.query.kind] ?? FIRST_KEYWORD.exec(query.sql)?.[1].toUpperCase() ?? 'SQL';
}

type NodeLike = { kind: string; node?: NodeLike; table?: { identifier?: { name?: string } } | NodeLike; froms?: readonly NodeLike[] };

function tableName(node: NodeLike | undefined): string | undefined {
  const table = node?.kind === 'AliasNode' ? node.node : node;
  return table?.kind === 'TableNode' ? (table.table as { identifier?: { name?: string } }).identifier?.name : undefined;
}

/** The statement's table when the query builder made it (the name in the code, never a value); none for raw SQL. */
export function statementTable(node: OperationNode): string | undefined {
  const n = node as unknown as { kind: string; from?: NodeLike; into?: NodeLike; table?: NodeLike };
  switch (n.kind) {
    case 'SelectQueryNode':
    case 'DeleteQueryNode':
      return tableName(n.from?.froms?.[0]);
    case 'InsertQueryNode':
    case 'MergeQueryNode':
      return tableName(n.into);
    case 'UpdateQueryNode':
      return tableName(n.table);
    default:
      return undefined;
  }
}

const kTracedConnection = Symbol('outreach.tracedConnection');

function traceConnection(connection: DatabaseConnection): DatabaseConnection {
  const c = connection as DatabaseConnection & { [kTracedConnection]?: true };
  if (c[kTracedConnection]) return c;
  const execute: <R>(compiled: CompiledQuery, options?: Parameters<DatabaseConnection['executeQuery']>[1]) => Promise<QueryResult<R>> = c.executeQuery.bind(c);
  c.executeQuery = <R>(compiled: CompiledQuery, options?: Parameters<DatabaseConnection['executeQuery']>[1]): Promise<QueryResult<R>> => {
    // Only inside a recorded span (a sampled request, an engine pass): a statement outside one would be a trace of
    // its own, and the delivery worker's polls would flood the collector.
    const parent = trace.getActiveSpan();
    if (!parent?.isRecording()) return execute<R>(compiled, options);
    const kind = statementKind(compiled);
    const attributes: Attributes = { 'db.system.name': 'postgresql', 'db.operation.name': kind };
    const table = statementTable(compiled.query);
    if (table) attributes['db.collection.name'] = table;
    const span = tracer.startSpan(kind, { kind: SpanKind.CLIENT, attributes });
    return execute<R>(compiled, options).then(
      (result) => {
        span.end();
        return result;
      },
      (err: unknown) => {
        const code = (err as { code?: unknown })?.code;
        if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) span.setAttribute('db.response.status_code', code);
        failSpan(span, err);
        span.end();
        throw err;
      },
    );
  };
  c[kTracedConnection] = true;
  return c;
}

/**
 * The dialect with one CLIENT span per SQL statement, a child of the span active where the statement runs. Named by
 * the statement's kind only; attributes db.system.name, db.operation.name and db.collection.name (when the query
 * builder names the table). Never the SQL text, never a parameter. Off: the dialect itself, unchanged.
 */
export function traceDialect(dialect: Dialect): Dialect {
  if (!enabled) return dialect;
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver() {
      const driver = dialect.createDriver();
      const acquire = driver.acquireConnection.bind(driver);
      driver.acquireConnection = async (options) => traceConnection(await acquire(options));
      return driver;
    },
  };
}

// ---- channel calls ----

/** What tracing reads of a channel driver (src/channels/types.ts ChannelDriver; lib does not import channels). */
interface TraceableDriver {
  readonly channel: string;
  perform(action: { kind: string }, ctx?: unknown): Promise<{ outcome: string }>;
  confirm?(action: { kind: string }, ctx?: unknown): Promise<{ status: string }>;
  watch?(ctx: unknown): Promise<void>;
}

/**
 * The driver with a span around each call: `channel.perform` and `channel.confirm` (attributes outreach.channel,
 * outreach.action.kind, and the answer's outreach.outcome / outreach.delivery) and `channel.watch` (outreach.channel).
 * Nothing of the recipient or the message. Only inside a recorded span (an engine pass, a request). Off: the driver itself.
 */
export function traceChannelDriver<D extends TraceableDriver>(driver: D): D {
  if (!enabled) return driver;
  // Everything else (observe, prepare, close, a driver's own extras) is the driver's, through the prototype.
  const traced = Object.create(driver) as TraceableDriver;
  const channel = driver.channel;
  traced.perform = (action, ctx) =>
    withChildSpan('channel.perform', { 'outreach.channel': channel, 'outreach.action.kind': action.kind }, async (span) => {
      const result = await driver.perform(action, ctx);
      span.setAttribute('outreach.outcome', result.outcome);
      return result;
    });
  if (driver.confirm) {
    const confirm = driver.confirm.bind(driver);
    traced.confirm = (action, ctx) =>
      withChildSpan('channel.confirm', { 'outreach.channel': channel, 'outreach.action.kind': action.kind }, async (span) => {
        const check = await confirm(action, ctx);
        span.setAttribute('outreach.delivery', check.status);
        return check;
      });
  }
  if (driver.watch) {
    const watch = driver.watch.bind(driver);
    traced.watch = (ctx) => withChildSpan('channel.watch', { 'outreach.channel': channel }, () => watch(ctx));
  }
  return traced as D;
}

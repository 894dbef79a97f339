import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import type { CompiledQuery, DatabaseConnection, Dialect, OperationNode, QueryResult } from 'kysely';
import type { LoggerOptions } from 'pino';

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
import { contextManager, enabled, failSpan, tracer, withChildSpan } from './tracing-sdk.js';

export { DEFAULT_SERVICE_NAME, startTracing, tracingEnabled, withChildSpan, withSpan, type Tracing } from './tracing-sdk.js';

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

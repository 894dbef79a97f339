import { AsyncLocalStorage } from 'node:async_hooks';
import {
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  SpanStatusCode,
  context,
  trace,
  type Attributes,
  type Context,
  type ContextManager,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { readFileSync } from 'node:fs';

// The SDK side of tracing.ts: starting and stopping the OpenTelemetry SDK, the on-demand context, and the explicit
// spans (withSpan). tracing.ts is the face; the hooks for HTTP, SQL, channels and the log line are there.

export const DEFAULT_SERVICE_NAME = 'workspace-outreach';
const TRACER_NAME = 'workspace-outreach';

export let enabled = false;
export let tracer: Tracer = trace.getTracer(TRACER_NAME);
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

export let contextManager: OnDemandContextManager | null = null;

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
export function failSpan(span: Span, err: unknown): void {
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

// @workspace-outreach/client: the typed client of the service's HTTP API. Its only runtime dependency is
// openapi-fetch, and it uses only what browsers and Node 20+ share (fetch, AbortSignal, timers): no Node built-in,
// so its .d.ts needs no @types/node (test/package/client-package.test.ts). Webhook verification (node:crypto)
// stays in the server package.
import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths } from './openapi.js';

export type { paths, components, operations } from './openapi.js';

/** The typed client: `client.GET('/api/v1/x/leads/{id}', { params: { path: { id } } })` and so on for every path. */
export type OutreachClient = Client<paths>;

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retrying off). */
  maxRetries?: number;
  /** First backoff step; each retry doubles it, and a random fraction of it is waited ("full jitter"). Default 250 ms. */
  baseDelayMs?: number;
  /** Cap of one backoff wait. Default 10 s. */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for: the 429/503 answer is returned as is. Default 60 s. */
  maxRetryAfterMs?: number;
}

export interface RetryEvent {
  method: string;
  url: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** The status that caused the retry, or undefined for a network error or a timeout. */
  status?: number;
  error?: unknown;
  /** How long the client waits before the next attempt. */
  delayMs: number;
}

export interface ClientOptions {
  /** The service's address, for example `http://localhost:8080` (a trailing `/api/v1` is accepted). */
  baseUrl: string;
  /** A workspace key (`ows_…`), sent as `Authorization: Bearer`. */
  apiKey: string;
  /** Team selector: the client workspace id, sent as `X-Workspace-Client` on every call. */
  workspaceClient?: string;
  /** Time limit of one attempt, in ms (default 30 s). A timed-out read is retried; a timed-out mutation only when idempotent. */
  timeoutMs?: number;
  /** Retry policy, or `false` for a single attempt. */
  retry?: RetryOptions | false;
  /** Called before each retry (logging, metrics, tests). */
  onRetry?: (event: RetryEvent) => void;
  /** The fetch to use (default: the global fetch). */
  fetch?: typeof fetch;
  /** Extra headers sent on every call. */
  headers?: Record<string, string>;
}

const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);

// POST operations that read (they change nothing, so a retry is as safe as a GET's).
const READ_ONLY_POSTS = [/\/plays\/[^/]+\/candidates\/lookup$/, /\/x\/eligibility$/, /\/x\/users\/resolve$/];
// Mutations the spec makes idempotent by themselves: an import carries its requestId (a replay returns the stored
// result), and stopping a lead is idempotent. A decision is idempotent only with an Idempotency-Key.
const IDEMPOTENT_POSTS = [/\/plays\/[^/]+\/import$/, /\/x\/leads\/[^/]+\/stop$/];
const DECIDE = /\/replies\/[^/]+\/decide$/;

/** Whether a request may be sent again after an uncertain outcome (5xx, 429, network error, timeout). */
export function isRetrySafe(method: string, url: string, headers: Headers): boolean {
  const m = method.toUpperCase();
  if (m === 'GET' || m === 'HEAD' || m === 'OPTIONS') return true;
  if (m !== 'POST') return false;
  const path = new URL(url).pathname;
  if (READ_ONLY_POSTS.some((re) => re.test(path)) || IDEMPOTENT_POSTS.some((re) => re.test(path))) return true;
  return DECIDE.test(path) && headers.has('idempotency-key');
}

/** `Retry-After` in ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const sleep = (ms: number, signal: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** The reason an attempt is aborted when its per-attempt time is up. */
class AttemptTimeout extends Error {
  override name = 'TimeoutError';
}

/**
 * One attempt: `fetch` with a signal that aborts when the caller aborts or after `timeoutMs`, and an answer that
 * settles then even if the abort never reaches the fetch. The timer and the listener hold the attempt's controller
 * strongly until the attempt settles: a signal composed with `AbortSignal.any` and handed to a copied `Request` is
 * held only weakly, and after a garbage collection its abort can be lost and the request hang (nodejs/undici#4068,
 * nodejs/node#55428). Rejects with an `AttemptTimeout` when the time is up, or with the caller's abort reason.
 */
function attemptWithDeadline(
  baseFetch: typeof globalThis.fetch,
  request: Request,
  init: RequestInit | undefined,
  callerSignal: AbortSignal,
  timeoutMs: number,
): Promise<Response> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onCallerAbort: (() => void) | undefined;
  const deadline = new Promise<never>((_, reject) => {
    const stop = (reason: Error) => {
      controller.abort(reason);
      reject(reason);
    };
    if (callerSignal.aborted) return stop(callerSignal.reason as Error);
    onCallerAbort = () => stop(callerSignal.reason as Error);
    callerSignal.addEventListener('abort', onCallerAbort, { once: true });
    timer = setTimeout(() => stop(new AttemptTimeout(`attempt timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  const { signal } = controller;
  const sent = baseFetch(new Request(request, { signal }), init ? { ...init, signal } : undefined);
  // A fetch that fails after the deadline won is not an unhandled rejection.
  sent.catch(() => undefined);
  return Promise.race([sent, deadline]).finally(() => {
    clearTimeout(timer);
    if (onCallerAbort) callerSignal.removeEventListener('abort', onCallerAbort);
  });
}

/**
 * A fetch that applies the per-attempt timeout and the spec's retry rules: reads (and idempotent mutations)
 * are retried on 429 and 5xx, on network errors and on timeouts, with exponential backoff, full jitter and
 * `Retry-After`; other mutations are sent once.
 */
export function createRetryingFetch(options: Pick<ClientOptions, 'timeoutMs' | 'retry' | 'onRetry' | 'fetch'> = {}) {
  const baseFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const retry = options.retry === false ? { maxRetries: 0 } : (options.retry ?? {});
  const maxRetries = retry.maxRetries ?? 3;
  const baseDelayMs = retry.baseDelayMs ?? 250;
  const maxDelayMs = retry.maxDelayMs ?? 10_000;
  const maxRetryAfterMs = retry.maxRetryAfterMs ?? 60_000;

  return async function retryingFetch(request: Request, init?: RequestInit): Promise<Response> {
    const retrySafe = maxRetries > 0 && isRetrySafe(request.method, request.url, request.headers);
    const callerSignal = request.signal;
    for (let attempt = 1; ; attempt++) {
      const last = !retrySafe || attempt > maxRetries;
      // A request body can be read once: every attempt but the last sends a copy.
      const attemptRequest = last ? request : request.clone();
      let response: Response | undefined;
      let error: unknown;
      try {
        response = await attemptWithDeadline(baseFetch, attemptRequest, init, callerSignal, timeoutMs);
      } catch (err) {
        // The caller's own abort is final; a timeout or a network failure is retryable.
        if (callerSignal.aborted || last) throw err instanceof AttemptTimeout ? new Error(`request timed out after ${timeoutMs} ms`, { cause: err }) : err;
        error = err;
      }
      if (response && (last || !RETRYABLE_STATUS.has(response.status))) return response;

      const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
      let delayMs = Math.round(Math.random() * backoff);
      if (response) {
        const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
        if (retryAfter !== undefined) {
          if (retryAfter > maxRetryAfterMs) return response;
          delayMs = Math.max(delayMs, retryAfter);
        }
        // The body of an answer that will not be used is drained so that the connection can be reused.
        await response.body?.cancel().catch(() => undefined);
      }
      options.onRetry?.({ method: request.method, url: request.url, attempt, status: response?.status, error, delayMs });
      await sleep(delayMs, callerSignal);
    }
  };
}

/**
 * A typed client of the service's HTTP API (types generated from its OpenAPI document, runtime by openapi-fetch),
 * with the spec's retry rules and per-attempt timeouts.
 *
 *   const client = createClient({ baseUrl: 'http://localhost:8080', apiKey: process.env.OUTREACH_KEY! });
 *   const { data, error } = await client.GET('/api/v1/x/leads/{id}', { params: { path: { id } } });
 */
export function createClient(options: ClientOptions): OutreachClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  const headers: Record<string, string> = { ...options.headers, authorization: `Bearer ${options.apiKey}` };
  if (options.workspaceClient) headers['x-workspace-client'] = options.workspaceClient;
  return createFetchClient<paths>({ baseUrl, headers, fetch: createRetryingFetch(options) });
}

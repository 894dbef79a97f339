import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { signPayload } from './sign.js';

/** Waits before attempt 2 and attempt 3 (spec: retried twice, 1 s and 4 s later). */
export const RETRY_DELAYS_MS: readonly number[] = [1000, 4000];
export const MAX_ATTEMPTS = 3;

export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
export const WEBHOOK_USER_AGENT = 'OutreachService-Webhooks/1';

export type DeliveryOutcome = 'success' | 'retry' | 'fail';

export interface DeliverOnceArgs {
  url: URL;
  /** Address returned by checkReceiverUrl; the socket goes here, never to a fresh lookup. */
  address: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Overrides SNI and the name the certificate is checked against; defaults to url.hostname. */
  tlsServername?: string;
  /** Extra trust anchor, for tests against self-signed receivers. */
  ca?: string | Buffer;
  /** Keep-alive connections shared across attempts (a delivery worker's); without it each attempt connects anew. */
  agents?: ReceiverAgents;
}

/**
 * Keep-alive connections to receivers, one undici Agent per everything a socket is pinned to: the origin, the
 * checked address, the TLS name and trust. A name that resolves elsewhere on a later attempt gets another key, so
 * a reused socket always goes to an address that passed the check. Idle sockets are closed after a second, well
 * inside the usual server keep-alive (Node 5 s, nginx 75 s), so a receiver closing an idle socket under us is rare;
 * when it happens the attempt fails as a network error and is retried like one. Bounded: the least recently used
 * agent is closed past `max`.
 */
export interface ReceiverAgents {
  agentFor(args: { url: URL; address: string; servername: string; ca?: string | Buffer; timeoutMs: number }): Agent;
  close(): Promise<void>;
}

export const RECEIVER_KEEP_ALIVE_MS = 1000;

export function createReceiverAgents(opts: { max?: number } = {}): ReceiverAgents {
  const max = opts.max ?? 256;
  const agents = new Map<string, Agent>();
  return {
    agentFor({ url, address, servername, ca, timeoutMs }) {
      const key = `${url.origin}|${address}|${servername}|${ca === undefined ? '' : 'ca'}|${timeoutMs}`;
      let agent = agents.get(key);
      if (agent) {
        agents.delete(key);
      } else {
        agent = newAgent({ address, servername, ca, timeoutMs, keepAliveMs: RECEIVER_KEEP_ALIVE_MS });
        if (agents.size >= max) {
          const [oldestKey, oldest] = agents.entries().next().value as [string, Agent];
          agents.delete(oldestKey);
          void oldest.close().catch(() => undefined);
        }
      }
      agents.set(key, agent);
      return agent;
    },
    async close() {
      const all = [...agents.values()];
      agents.clear();
      await Promise.all(all.map((a) => a.close().catch(() => undefined)));
    },
  };
}

function newAgent(args: { address: string; servername: string; ca?: string | Buffer; timeoutMs: number; keepAliveMs: number | null }): Agent {
  return new Agent({
    connect: {
      lookup: pinnedLookup(args.address),
      // SNI must not carry an IP address (RFC 6066), and Node warns if it does.
      ...(isIP(args.servername) === 0 ? { servername: args.servername } : {}),
      ...(args.ca !== undefined ? { ca: args.ca } : {}),
      timeout: args.timeoutMs,
    },
    headersTimeout: args.timeoutMs,
    bodyTimeout: args.timeoutMs,
    ...(args.keepAliveMs === null
      ? // An agent of its own for one delivery: keeping sockets around only leaks them.
        { pipelining: 0 }
      : { pipelining: 1, keepAliveTimeout: args.keepAliveMs, keepAliveMaxTimeout: args.keepAliveMs }),
  });
}

export interface DeliveryResult {
  outcome: DeliveryOutcome;
  status: number | null;
  durationMs: number;
  error: string | null;
}

export function classifyStatus(status: number): DeliveryOutcome {
  if (status >= 200 && status < 300) return 'success';
  if (status === 429 || (status >= 500 && status < 600)) return 'retry';
  // Includes 3xx: the spec forbids following redirects, and retrying one would
  // just get the same redirect again.
  return 'fail';
}

function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address) === 6 ? 6 : 4;
  return (_hostname, options, callback) => {
    // net.connect asks for the array form when happy-eyeballs is enabled.
    if (options && options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    // Messages from net/tls/undici describe the connection only; the request
    // and response bodies never appear in them.
    return code ? `${code}: ${err.message}` : `${err.name}: ${err.message}`;
  }
  return 'unknown_error';
}

export async function deliverOnce(args: DeliverOnceArgs): Promise<DeliveryResult> {
  const timeoutMs = args.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  const maxResponseBytes = args.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);

  if (isIP(args.address) === 0) {
    return { outcome: 'fail', status: null, durationMs: elapsed(), error: 'invalid_pinned_address' };
  }

  const servername = args.tlsServername ?? args.url.hostname;
  const shared = args.agents?.agentFor({ url: args.url, address: args.address, servername, ca: args.ca, timeoutMs });
  const agent = shared ?? newAgent({ address: args.address, servername, ca: args.ca, timeoutMs, keepAliveMs: null });

  // One deadline covering connect, headers and body: the per-phase undici
  // timeouts above would otherwise let a slow receiver take several multiples.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('delivery timeout')), timeoutMs);

  try {
    let status: number;
    let responseBody: AsyncIterable<Buffer> & { destroy(err?: Error): unknown };
    try {
      const res = await request(args.url, {
        method: 'POST',
        dispatcher: agent,
        headers: args.headers,
        body: args.body,
        signal: controller.signal,
      });
      status = res.statusCode;
      responseBody = res.body;
    } catch (err) {
      const error = controller.signal.aborted ? `timeout after ${timeoutMs}ms` : describeError(err);
      return { outcome: 'retry', status: null, durationMs: elapsed(), error };
    }

    // The receiver already answered; the body is drained only so the peer sees
    // an orderly read, and is capped so a hostile receiver cannot stream forever.
    let received = 0;
    try {
      for await (const chunk of responseBody) {
        received += chunk.length;
        if (received >= maxResponseBytes) break;
      }
    } catch {
      // A broken or timed-out body does not change the status the receiver gave.
    } finally {
      responseBody.destroy();
    }

    const outcome = classifyStatus(status);
    let error: string | null = null;
    if (outcome !== 'success') {
      error = status >= 300 && status < 400 ? `redirect_not_followed: HTTP ${status}` : `HTTP ${status}`;
    }
    return { outcome, status, durationMs: elapsed(), error };
  } finally {
    clearTimeout(timer);
    if (!shared) await agent.destroy().catch(() => undefined);
  }
}

export interface BuildDeliveryRequestArgs {
  deliveryId: string;
  event: string;
  createdAt: string;
  data: unknown;
  secret: string;
  nowSeconds: number;
}

export function buildDeliveryRequest(args: BuildDeliveryRequestArgs): {
  body: string;
  headers: Record<string, string>;
} {
  const body = JSON.stringify({
    id: args.deliveryId,
    event: args.event,
    createdAt: args.createdAt,
    // JSON.stringify drops undefined keys; receivers are promised a data field.
    data: args.data === undefined ? null : args.data,
  });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': WEBHOOK_USER_AGENT,
      'x-service-event': args.event,
      'x-service-delivery': args.deliveryId,
      // Signed over the exact string sent, so it must be computed after stringify.
      'x-service-signature': signPayload(args.secret, body, args.nowSeconds),
    },
  };
}

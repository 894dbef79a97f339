import { randomBytes } from 'node:crypto';
import { linkedinPublicIdOf } from '../../domain/linkedin-profile.js';
import { request } from 'undici';

/**
 * Where the LinkedIn gateway (Unipile API v1) lives for this installation: the account's DSN base
 * (`https://apiN.unipile.com:PORT`, OUTREACH_LINKEDIN_GATEWAY_URL), the API key sent as `X-API-KEY`
 * (OUTREACH_LINKEDIN_GATEWAY_KEY) and how long one call may take.
 */
export interface GatewaySettings {
  url: string;
  key: string;
  timeoutMs: number;
}

/** One answer of the gateway. `retryAfterSeconds` is Unipile's `retry-after` header (on its own 429s). */
export interface GatewayAnswer<T = unknown> {
  status: number;
  body: T | null;
  retryAfterSeconds: number | null;
}

/** Unipile's problem document (RFC 7807): `type` is `errors/…`, `api/…` or `provider/…`. */
export interface GatewayProblem {
  type?: string;
  title?: string;
  detail?: string;
  status?: number;
}

/** An answer larger than this is not read: no gateway page of chats, messages or relations comes near it. */
export const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

/** The call never got a whole answer: timeout, refused connection, reset, or an oversized body. Retryable by nature. */
export class GatewayTransportError extends Error {
  readonly code = 'linkedin_gateway_unreachable';
  constructor(readonly reason: 'timeout' | 'connection' | 'too_large') {
    super(`LinkedIn gateway: ${reason === 'timeout' ? 'no answer within the timeout' : reason === 'too_large' ? 'answer too large' : 'the connection failed'}`);
  }
}

export type GatewayQuery = Record<string, string | number | undefined>;

export interface GatewayRequest {
  query?: GatewayQuery;
  json?: unknown;
  /** Sent as multipart/form-data (Unipile's chat routes take only that); a repeated field is an array. */
  form?: Record<string, string | string[]>;
}

/** A multipart/form-data body of text fields (RFC 7578), with a random boundary. */
export function multipartBody(fields: Record<string, string | string[]>): { body: Buffer; contentType: string } {
  const boundary = `----outreach${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name.replace(/"/g, '%22')}"\r\n\r\n`));
      parts.push(Buffer.from(v, 'utf8'), Buffer.from('\r\n'));
    }
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

const header = (h: Record<string, string | string[] | undefined>, name: string) => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

/** `retry-after` as seconds (a number, or an HTTP date); null when absent or unreadable. */
function retryAfterOf(value: string | undefined, now: number): number | null {
  if (!value) return null;
  const n = Number(value);
  if (Number.isFinite(n) && n >= 0) return Math.ceil(n);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * One call to the gateway. Never throws on an HTTP status (the caller maps Unipile's answers); only a transport
 * failure throws (GatewayTransportError). The key is never part of an error, nor is any message text.
 */
export async function gatewayCall<T = unknown>(
  settings: GatewaySettings,
  method: 'GET' | 'POST',
  path: string,
  opts: GatewayRequest = {},
): Promise<GatewayAnswer<T>> {
  // Joined, not resolved: `new URL('/api/…', base)` would drop a path the base URL has.
  const url = new URL(settings.url.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { 'x-api-key': settings.key, accept: 'application/json' };
  let body: string | Buffer | undefined;
  if (opts.form) {
    const m = multipartBody(opts.form);
    headers['content-type'] = m.contentType;
    body = m.body;
  } else if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  let res;
  try {
    res = await request(url, { method, headers, body, headersTimeout: settings.timeoutMs, bodyTimeout: settings.timeoutMs });
  } catch (err) {
    throw transportError(err);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_RESPONSE_BYTES) {
        res.body.destroy();
        throw new GatewayTransportError('too_large');
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof GatewayTransportError) throw err;
    throw transportError(err);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let parsed: T | null;
  try {
    parsed = text ? (JSON.parse(text) as T) : null;
  } catch {
    parsed = null;
  }
  return { status: res.statusCode, body: parsed, retryAfterSeconds: retryAfterOf(header(res.headers, 'retry-after'), Date.now()) };
}

function transportError(err: unknown): GatewayTransportError {
  const e = err as { code?: string; name?: string };
  const timedOut = e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.name === 'TimeoutError';
  return new GatewayTransportError(timedOut ? 'timeout' : 'connection');
}

/**
 * A short, stable code for a refusal the engine records (`lastError`): Unipile's problem `type` without its thrower
 * (`errors/cannot_resend_yet` → `linkedin_cannot_resend_yet`), else the status. Never the detail text.
 */
export function refusalCode(status: number, body: unknown): string {
  const type = ((body ?? {}) as GatewayProblem).type;
  const last = typeof type === 'string' ? type.split('/').pop() : undefined;
  const clean = last
    ?.toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .slice(0, 60);
  return clean ? `linkedin_${clean}` : `linkedin_gateway_${status}`;
}

/**
 * The public identifier in a LinkedIn profile URL (`https://de.linkedin.com/in/Julien-Crepieux/?trk=x` →
 * `julien-crepieux`), which Unipile's "Retrieve a profile" takes; null for anything that is not a profile. The rule
 * is domain/linkedin-profile.ts's, the one identity (domain/identity.ts) keys people by.
 */
export function publicIdentifierOf(linkedinUrl: string | null | undefined): string | null {
  return linkedinPublicIdOf(linkedinUrl);
}

/** A timestamp as Unipile gives it (ISO text, or epoch seconds or milliseconds); null when unreadable. */
export function gatewayTime(value: unknown): Date | null {
  if (typeof value === 'number' && Number.isFinite(value)) return new Date(value < 1e12 ? value * 1000 : value);
  if (typeof value === 'string' && value) {
    const t = Date.parse(value);
    return Number.isNaN(t) ? null : new Date(t);
  }
  return null;
}

import { request } from 'undici';

/** Where the X API v2 lives and how long one call may take (OUTREACH_X_API_URL, OUTREACH_X_TIMEOUT_MS). */
export interface XApiSettings {
  apiUrl: string;
  timeoutMs: number;
}

/** One answer of the X API, with its rate-limit window (`x-rate-limit-remaining`, `x-rate-limit-reset`). */
export interface XAnswer<T = unknown> {
  status: number;
  body: T | null;
  remaining: number | null;
  /** When the route's 15-minute window resets (from `x-rate-limit-reset`, epoch seconds). */
  resetAt: Date | null;
}

/** X's problem document (request-level failure) and partial `errors` array. */
export interface XProblem {
  title?: string;
  detail?: string;
  type?: string;
  errors?: { title?: string; detail?: string; type?: string; message?: string }[];
}

/** The call never got an HTTP answer: timeout, refused connection, reset. Retryable by nature. */
export class XTransportError extends Error {
  readonly code = 'x_unreachable';
  constructor(readonly timedOut: boolean) {
    super(timedOut ? 'X API: no answer within the timeout' : 'X API: the connection failed');
  }
}

const header = (h: Record<string, string | string[] | undefined>, name: string) => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * One call to the X API v2 with a user's (or the app's) bearer token. Never throws on an HTTP status: the caller
 * maps X's answers; only a transport failure throws (XTransportError). The token is never part of an error.
 */
export async function xCall<T = unknown>(
  settings: XApiSettings,
  token: string,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  opts: { query?: Record<string, string | number | undefined>; json?: unknown; signal?: AbortSignal } = {},
): Promise<XAnswer<T>> {
  // Joined, not resolved: `new URL('/2/…', base)` would drop a path the base URL has.
  const url = new URL(settings.apiUrl.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  try {
    const res = await request(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(opts.json !== undefined && { 'content-type': 'application/json' }),
      },
      body: opts.json !== undefined ? JSON.stringify(opts.json) : undefined,
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      signal: opts.signal,
    });
    const text = await res.body.text();
    let body: T | null = null;
    try {
      body = text ? (JSON.parse(text) as T) : null;
    } catch {
      body = null;
    }
    const remaining = Number(header(res.headers, 'x-rate-limit-remaining'));
    const reset = Number(header(res.headers, 'x-rate-limit-reset'));
    return {
      status: res.statusCode,
      body,
      remaining: Number.isFinite(remaining) && header(res.headers, 'x-rate-limit-remaining') !== undefined ? remaining : null,
      resetAt: Number.isFinite(reset) && reset > 0 ? new Date(reset * 1000) : null,
    };
  } catch (err) {
    const e = err as { code?: string; name?: string };
    if (opts.signal?.aborted) throw err;
    throw new XTransportError(e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.name === 'TimeoutError');
  }
}

/** The words of X's problem document, for matching ("not permitted") and for a short, token-free lastError. */
export function problemText(body: unknown): string {
  const p = (body ?? {}) as XProblem;
  return [p.title, p.detail, ...(p.errors ?? []).map((e) => e.detail ?? e.message ?? e.title)].filter(Boolean).join(' ');
}

/** Seconds until `resetAt` (at least 1), or `fallback` when X did not say. */
export function secondsUntil(resetAt: Date | null, now: Date, fallback = 900): number {
  if (!resetAt) return fallback;
  return Math.max(1, Math.ceil((resetAt.getTime() - now.getTime()) / 1000));
}

/** The X app's OAuth 2.0 client (OUTREACH_X_CLIENT_ID, OUTREACH_X_CLIENT_SECRET), confidential: HTTP Basic. */
export interface XOauthClient extends XApiSettings {
  clientId: string;
  clientSecret: string;
}

/**
 * One form POST to X's OAuth 2.0 endpoints (`/2/oauth2/token`, `/2/oauth2/revoke`) with the app's credentials in
 * HTTP Basic. Answers the status and the parsed JSON body (null when there is none); a transport failure throws
 * XTransportError. Neither the credentials nor the form (codes, tokens) are ever part of an error.
 */
export async function xOauthPost<T = unknown>(client: XOauthClient, path: string, form: Record<string, string>): Promise<{ status: number; body: T | null }> {
  try {
    const res = await request(`${client.apiUrl.replace(/\/+$/, '')}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ ...form, client_id: client.clientId }).toString(),
      headersTimeout: client.timeoutMs,
      bodyTimeout: client.timeoutMs,
    });
    const body = (await res.body.json().catch(() => null)) as T | null;
    return { status: res.statusCode, body };
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new XTransportError(code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT');
  }
}

import { request, type Dispatcher } from 'undici';
/**
 * Public-data provider contract (SPEC "Public-data reads", /x/users/resolve, /x/eligibility).
 *
 * Providers only read public identity and follow relationships; they never send anything.
 * Every failure that is the provider's fault surfaces as ProviderUnavailableError (or its
 * ProviderTimeoutError subclass) so callers can map it to 503 / null results without
 * inspecting transport details.
 */

export interface PublicUser {
  xUserId: string;
  username: string;
  name: string | null;
  /** The public profile, when the provider read it (the X provider asks for it); shown where candidates are reviewed. */
  profile?: PublicProfile;
}

/** What a person reviewing candidates judges by; every field null when the provider did not say. */
export interface PublicProfile {
  bio: string | null;
  location: string | null;
  followersCount: number | null;
  /** https only; the console's server fetches it, never the browser. */
  profileImageUrl: string | null;
  /** The pinned post (X API v2 `pinned_tweet_id` expansion), else null. */
  lastPost: { text: string; createdAt: string | null } | null;
}

/** Bounds a profile field from a provider's answer: longer text is cut, anything not a string is null. */
export function boundedText(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  return text === '' ? null : Array.from(text).slice(0, max).join('');
}

/** A picture URL the server may fetch later: an absolute https URL of reasonable length, else null. */
export function httpsUrlOrNull(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2000) return null;
  try {
    return new URL(value).protocol === 'https:' ? value : null;
  } catch {
    return null;
  }
}

export type FollowAnswer = {
  follows: true | false | null;
  checkedAt: string | null;
  reason: string | null;
  evidence: string | null;
};

export interface FollowerRef {
  username?: string;
  xUserId?: string;
}

/**
 * A bare string is the target's user id. The object form lets callers that know the
 * connected account's handle (the eligibility endpoint always does) pass it along, because
 * handle-keyed relationship APIs cannot answer from an id alone.
 */
export type FollowTarget = string | { xUserId: string; username?: string | null };

export interface FollowerSnapshot {
  userIds: string[];
  users: PublicUser[];
  /** false when the provider had more followers than the limit or the listing was cut short. */
  complete: boolean;
  checkedAt: string;
}

export interface PublicDataProvider {
  readonly name: 'sandbox' | 'http' | 'x';
  /** null = not found / unverifiable; throws ProviderUnavailableError on provider trouble. */
  resolveHandle(handle: string, signal?: AbortSignal): Promise<PublicUser | null>;
  /** Direct relationship evidence: true, verified false, or null with a reason. */
  follows(follower: FollowerRef, target: FollowTarget, signal?: AbortSignal): Promise<FollowAnswer>;
  /** Bounded: never returns more than opts.limit ids. */
  followerSnapshot(targetUserId: string, opts: { limit: number }, signal?: AbortSignal): Promise<FollowerSnapshot>;
  /**
   * The refusal this read would get without asking anyone (a spent rate window), or null when it may go out. The
   * service asks before charging energy, so a read the provider refuses locally costs nothing.
   */
  closedFor?(read: 'resolve_handle' | 'follower_snapshot'): ProviderUnavailableError | null;
}

/** Injected time and randomness (tests, simulations); each defaults to the real one. */
export interface ProviderClockOptions {
  now?: () => Date;
  random?: () => number;
}

/** `evidence` values, so the API layer and both providers agree on the vocabulary. */
export const EVIDENCE = {
  profile: 'public_profile',
  relationship: 'public_relationship',
  snapshot: 'follower_snapshot',
} as const;

/** `reason` values a FollowAnswer with follows = null may carry. */
export const FOLLOW_REASON = {
  userNotFound: 'user_not_found',
  invalidHandle: 'invalid_handle',
  handleRequired: 'handle_required',
  targetHandleRequired: 'target_handle_required',
  /** The follower was not among the followers read, and the listing was bounded or cut short. */
  notInSnapshot: 'not_in_follower_snapshot',
} as const;

export interface ProviderErrorOptions {
  reason?: string;
  status?: number;
  cause?: unknown;
  /** Seconds until the provider will answer again (a closed rate-limit window), when known. */
  retryAfterSeconds?: number;
}

export class ProviderUnavailableError extends Error {
  // Timeouts keep the same code on purpose: callers that branch on `code` must treat a slow
  // provider exactly like an unavailable one (503 / null result).
  readonly code = 'provider_unavailable' as const;
  /** Short machine-readable detail such as 'http_503', 'malformed_json', 'redirect', 'timeout'. */
  readonly reason: string;
  readonly status: number | undefined;
  /** Seconds to wait before asking again (reason 'rate_limited'); undefined when unknown. */
  readonly retryAfterSeconds: number | undefined;

  constructor(message: string, opts: ProviderErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ProviderUnavailableError';
    this.reason = opts.reason ?? 'unavailable';
    this.status = opts.status;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }
}

export class ProviderTimeoutError extends ProviderUnavailableError {
  readonly timeout = true as const;

  constructor(message = 'public-data provider timed out', opts: Omit<ProviderErrorOptions, 'reason' | 'retryAfterSeconds'> = {}) {
    super(message, { ...opts, reason: 'timeout' });
    this.name = 'ProviderTimeoutError';
  }
}

export function isProviderUnavailable(err: unknown): err is ProviderUnavailableError {
  return err instanceof ProviderUnavailableError;
}

const HANDLE_RE = /^@?[A-Za-z0-9_]{1,15}$/;
const USER_ID_RE = /^[1-9][0-9]{0,19}$/;

/** Lower-cased handle without '@', or null when it cannot be a handle at all. */
export function normalizeHandle(handle: string): string | null {
  if (typeof handle !== 'string') return null;
  const trimmed = handle.trim();
  if (!HANDLE_RE.test(trimmed)) return null;
  return (trimmed.startsWith('@') ? trimmed.slice(1) : trimmed).toLowerCase();
}

export function isValidHandle(handle: unknown): handle is string {
  return typeof handle === 'string' && HANDLE_RE.test(handle);
}

export function isUserId(value: unknown): value is string {
  return typeof value === 'string' && USER_ID_RE.test(value);
}

export function targetUserIdOf(target: FollowTarget): string {
  return typeof target === 'string' ? target : target.xUserId;
}

export function targetHandleOf(target: FollowTarget): string | null {
  if (typeof target === 'string' || target.username == null) return null;
  return normalizeHandle(target.username);
}

export function nullAnswer(reason: string, checkedAt: string | null = null): FollowAnswer {
  return { follows: null, checkedAt, reason, evidence: null };
}

/**
 * The follower's normalized handle, or the answer when there is none. Relationship checks ask by handle only: a
 * handle-keyed API would need one more paid lookup per id-only lead, and the spec routes numeric-id leads through
 * the bounded follower snapshot (where absence is null, never false), so an id-only follower is answered
 * "unknown". Both providers answer so, so eligibility cannot come to rely on a sandbox-only capability.
 */
export function followerHandleOf(follower: FollowerRef): string | FollowAnswer {
  if (follower.username === undefined) return nullAnswer(FOLLOW_REASON.handleRequired);
  return normalizeHandle(follower.username) ?? nullAnswer(FOLLOW_REASON.invalidHandle);
}

/**
 * Translates an aborted signal into the provider error family, so an outer request budget
 * (AbortSignal.timeout) reads as a timeout and any other cancellation as unavailable.
 */
export function abortError(signal: AbortSignal): ProviderUnavailableError {
  const reason: unknown = signal.reason;
  if (reason instanceof ProviderUnavailableError) return reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return new ProviderTimeoutError('public-data request budget exceeded', { cause: reason });
  }
  return new ProviderUnavailableError('public-data request aborted', { reason: 'aborted', cause: reason });
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

/** setTimeout that rejects with the provider error family when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) {
    throwIfAborted(signal);
    return Promise.resolve();
  }
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A provider answer's body as text, never more than `maxBytes`: past the cap the connection is dropped (`destroy`)
 * and the read fails as the provider's fault (`response_too_large`), so a huge or endless answer cannot fill memory.
 */
export async function readCappedBody(body: AsyncIterable<Buffer>, destroy: () => void, maxBytes: number, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      destroy();
      throw new ProviderUnavailableError(`${what} response too large`, { reason: 'response_too_large' });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** An undici error that means the provider took too long (headers or body), as opposed to refusing or failing. */
export function isUndiciTimeout(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && TIMEOUT_CODES.has(code);
}

/** A provider setting that must be a non-negative number; `fallback` when unset. Thrown at construction, never per read. */
export function nonNegativeSetting(provider: string, value: number | undefined, fallback: number, label: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new Error(`public-data ${provider} provider: ${label} must be a non-negative number`);
  return value;
}

/** A provider's base URL from its setting: http(s) only, and ending in `/` so relative paths resolve under it. */
export function providerBaseUrl(provider: string, setting: string, value: string): URL {
  let base: URL;
  try {
    base = new URL(value);
  } catch {
    throw new Error(`public-data ${provider} provider: ${setting} is not a valid URL`);
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new Error(`public-data ${provider} provider: ${setting} must be http(s)`);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return base;
}

/**
 * One GET to a provider within a whole-request budget (headers and body) and the caller's abort signal. `timedOut()`
 * tells the budget running out from the caller giving up; undici never follows redirects here, so a 3xx comes back
 * as it is.
 */
export function providerGet(url: URL | string, opts: { headers: Record<string, string>; dispatcher?: Dispatcher; signal?: AbortSignal; timeoutMs: number }) {
  const timer = AbortSignal.timeout(opts.timeoutMs);
  const response = request(url, {
    method: 'GET',
    headers: opts.headers,
    dispatcher: opts.dispatcher,
    signal: opts.signal ? AbortSignal.any([opts.signal, timer]) : timer,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
  return { response, timedOut: (err: unknown) => timer.aborted || isUndiciTimeout(err) };
}

import type { Dispatcher } from 'undici';
import { twitterApiIoMapping, type WireMapping, type WireRequest, type WireResponse } from './http-mapping.js';
import {
  abortError,
  EVIDENCE,
  FOLLOW_REASON,
  followerHandleOf,
  nonNegativeSetting,
  normalizeHandle,
  nullAnswer,
  providerBaseUrl,
  providerGet,
  ProviderTimeoutError,
  ProviderUnavailableError,
  readCappedBody,
  sleep,
  targetHandleOf,
  throwIfAborted,
} from './provider.js';
import type { FollowAnswer, FollowerRef, FollowerSnapshot, FollowTarget, ProviderClockOptions, PublicDataProvider, PublicUser } from './provider.js';

export interface HttpProviderConfig extends ProviderClockOptions {
  baseUrl: string;
  apiKey: string;
  /** Budget for one HTTP attempt, headers and body together. */
  timeoutMs?: number;
  /** Extra attempts after a 5xx or network failure; 4xx, redirects and timeouts are never retried. */
  retries?: number;
  /** First backoff step; doubles per retry, plus up to the same amount of jitter. */
  backoffMs?: number;
  dispatcher?: Dispatcher;
  mapping?: WireMapping;
  /** Upper bound on pages one follower snapshot may read, whatever the limit. */
  maxSnapshotPages?: number;
  /** Upper bound on a response body; larger bodies are provider trouble, not data. */
  maxResponseBytes?: number;
}

export interface HttpProvider extends PublicDataProvider {
  readonly name: 'http';
}

const DEFAULTS = {
  timeoutMs: 5000,
  retries: 2,
  backoffMs: 100,
  maxSnapshotPages: 20,
  maxResponseBytes: 2 * 1024 * 1024,
};

/** Marks a failure that another attempt might fix; never escapes this module. */
class Transient extends Error {
  constructor(readonly error: ProviderUnavailableError) {
    super(error.message);
  }
}

const positive = (value: number | undefined, fallback: number, label: string) => nonNegativeSetting('http', value, fallback, label);

export function createHttpProvider(config: HttpProviderConfig): HttpProvider {
  // Ends in `/`: relative resolution below would otherwise drop the last path segment of the base.
  const base = providerBaseUrl('http', 'baseUrl', config.baseUrl);
  if (typeof config.apiKey !== 'string' || config.apiKey === '') {
    throw new Error('public-data http provider: apiKey is required');
  }

  const timeoutMs = positive(config.timeoutMs, DEFAULTS.timeoutMs, 'timeoutMs') || DEFAULTS.timeoutMs;
  const retries = Math.floor(positive(config.retries, DEFAULTS.retries, 'retries'));
  const backoffMs = positive(config.backoffMs, DEFAULTS.backoffMs, 'backoffMs');
  const maxPages = Math.max(1, Math.floor(positive(config.maxSnapshotPages, DEFAULTS.maxSnapshotPages, 'maxSnapshotPages')));
  const maxBytes = positive(config.maxResponseBytes, DEFAULTS.maxResponseBytes, 'maxResponseBytes');
  const mapping = config.mapping ?? twitterApiIoMapping;
  const now = config.now ?? (() => new Date());
  const random = config.random ?? Math.random;
  const headers = { accept: 'application/json', ...mapping.authHeaders(config.apiKey) };

  function urlFor(req: WireRequest): URL {
    const url = new URL(req.path, base);
    for (const [k, v] of Object.entries(req.query)) url.searchParams.set(k, v);
    return url;
  }

  async function attempt(req: WireRequest, signal: AbortSignal | undefined): Promise<WireResponse> {
    // undici's request() never follows redirects (v7 only does so through the redirect
    // interceptor, and rejects a non-zero maxRedirections), so a 3xx arrives here as-is.
    const get = providerGet(urlFor(req), { headers, dispatcher: config.dispatcher, signal, timeoutMs });
    try {
      const res = await get.response;
      const status = res.statusCode;
      const interpreted = (status >= 200 && status <= 299) || mapping.interpretedStatuses.includes(status);
      if (!interpreted) {
        await res.body.dump().catch(() => undefined);
        if (status >= 300 && status <= 399) {
          // A redirect could carry the API key header to another host; refuse rather than follow.
          throw new ProviderUnavailableError(`public-data provider answered with a redirect (${status})`, {
            reason: 'redirect',
            status,
          });
        }
        const err = new ProviderUnavailableError(`public-data provider answered ${status}`, {
          reason: `http_${status}`,
          status,
        });
        throw status >= 500 ? new Transient(err) : err;
      }
      const text = await readCappedBody(res.body, () => res.body.destroy(), maxBytes, 'public-data');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new ProviderUnavailableError('public-data provider returned malformed JSON', {
          reason: 'malformed_json',
          status,
        });
      }
      return { status, body };
    } catch (err) {
      if (err instanceof Transient || err instanceof ProviderUnavailableError) throw err;
      if (signal?.aborted) throw abortError(signal);
      if (get.timedOut(err)) {
        throw new ProviderTimeoutError(`public-data provider did not answer within ${timeoutMs} ms`, { cause: err });
      }
      throw new Transient(new ProviderUnavailableError('public-data provider could not be reached', { reason: 'network', cause: err }));
    }
  }

  async function call(req: WireRequest, signal: AbortSignal | undefined): Promise<WireResponse> {
    for (let n = 0; ; n++) {
      throwIfAborted(signal);
      try {
        return await attempt(req, signal);
      } catch (err) {
        if (!(err instanceof Transient)) throw err;
        if (n >= retries) throw err.error;
        const step = backoffMs * 2 ** n;
        await sleep(step + random() * step, signal);
      }
    }
  }

  function stripAt(handle: string): string {
    const trimmed = handle.trim();
    return trimmed.startsWith('@') ? trimmed.slice(1) : trimmed;
  }

  async function resolveHandle(handle: string, signal?: AbortSignal): Promise<PublicUser | null> {
    const key = normalizeHandle(handle);
    if (key === null) return null;
    const result = mapping.userInfo.parse(await call(mapping.userInfo.request(stripAt(handle)), signal));
    if (result.kind === 'not_found') return null;
    // Resolution is an exact lookup: a vendor that answers with some other account (renamed
    // handle, fuzzy match) has not verified the handle that was asked for.
    if (normalizeHandle(result.user.username) !== key) return null;
    return result.user;
  }

  async function follows(follower: FollowerRef, target: FollowTarget, signal?: AbortSignal): Promise<FollowAnswer> {
    // The relationship endpoint is keyed by screen names.
    const followerHandle = followerHandleOf(follower);
    if (typeof followerHandle !== 'string') return followerHandle;
    const targetHandle = targetHandleOf(target);
    if (targetHandle === null) return nullAnswer(FOLLOW_REASON.targetHandleRequired);
    const result = mapping.followCheck.parse(await call(mapping.followCheck.request(stripAt(follower.username!), targetHandle), signal));
    const checkedAt = now().toISOString();
    if (result.kind === 'not_found') return nullAnswer(FOLLOW_REASON.userNotFound, checkedAt);
    return { follows: result.following, checkedAt, reason: null, evidence: EVIDENCE.relationship };
  }

  async function followerSnapshot(targetUserId: string, opts: { limit: number }, signal?: AbortSignal): Promise<FollowerSnapshot> {
    const limit = Number.isFinite(opts.limit) ? Math.max(0, Math.floor(opts.limit)) : 0;
    const checkedAt = now().toISOString();
    if (limit === 0) return { userIds: [], users: [], complete: false, checkedAt };

    const users = new Map<string, PublicUser>();
    const seenCursors = new Set<string>();
    let cursor: string | null = null;
    let complete = false;
    // Unusable entries mean an absent id might just have been unreadable.
    let lossy = false;
    for (let page = 0; page < maxPages; page++) {
      let parsed;
      try {
        parsed = mapping.followers.parse(await call(mapping.followers.request(targetUserId, cursor), signal));
      } catch (err) {
        // Followers already seen remain valid presence evidence; only the first page failing
        // means there is nothing to report.
        if (page === 0) throw err;
        break;
      }
      let truncated = false;
      for (const user of parsed.users) {
        if (users.size >= limit) {
          truncated = true;
          break;
        }
        users.set(user.xUserId, user);
      }
      if (parsed.dropped > 0) lossy = true;
      if (truncated) break;
      if (!parsed.hasNext) {
        complete = !lossy;
        break;
      }
      if (users.size >= limit) break;
      // A missing or repeating cursor would loop forever or re-read the same page.
      if (parsed.nextCursor === null || seenCursors.has(parsed.nextCursor)) break;
      seenCursors.add(parsed.nextCursor);
      cursor = parsed.nextCursor;
    }
    const list = [...users.values()];
    return { userIds: list.map((u) => u.xUserId), users: list, complete, checkedAt };
  }

  return { name: 'http', resolveHandle, follows, followerSnapshot };
}

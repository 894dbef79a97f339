import type { Dispatcher } from 'undici';
import * as contract from './provider.js';
import { PROFILE_QUERY, followersPageOf, lookedUpUserOf, malformed, type FollowersPage, type XBody } from './x-parse.js';
import type { FollowAnswer, FollowerRef, FollowerSnapshot, FollowTarget, ProviderClockOptions, PublicDataProvider, PublicUser } from './provider.js';

/**
 * The `x` public-data provider: public reads from the real X API v2 with the app's Bearer Token (app-only auth).
 *
 * - resolveHandle → `GET /2/users/by/username/{username}` (X answers 200 with an `errors` array when nobody has the
 *   handle). Both user reads ask for the public profile too (PROFILE_QUERY): bio, location, follower count,
 *   picture URL and the pinned post.
 * - followerSnapshot → `GET /2/users/{id}/followers?max_results=1000`, following `meta.next_token`.
 * - follows → X v2 has no relationship endpoint for two arbitrary users, so the answer comes from the target's
 *   follower listing, read page by page and bounded (`maxFollowerScan`).
 *
 * X's rate windows are tracked per route family from `x-rate-limit-remaining` / `x-rate-limit-reset`: once a
 * family's window is spent, calls fail at once with reason `rate_limited` (and `retryAfterSeconds`) instead of
 * spending a request X would refuse. Nothing is retried here: every request counts against a small window.
 * The answers' shapes (users, profiles, follower pages) are read in x-parse.ts.
 */

export interface XProviderConfig extends Pick<ProviderClockOptions, 'now'> {
  /** X API v2 base URL (OUTREACH_X_API_URL), e.g. https://api.x.com. */
  apiUrl: string;
  /** The X app's Bearer Token (OUTREACH_PUBLICDATA_KEY). Sent only as a header; never part of an error. */
  bearerToken: string;
  /** Budget for one HTTP call, headers and body each (OUTREACH_X_TIMEOUT_MS). */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
  /** How many of a target's followers `follows` may read before answering null (default 15,000: 15 pages). */
  maxFollowerScan?: number;
  /** How long the follower listing read for `follows` is reused for further `follows` on the same target. */
  followerListingTtlMs?: number;
  /** Upper bound on a response body; larger bodies are provider trouble, not data. */
  maxResponseBytes?: number;
}

export type XRouteFamily = 'followers' | 'by-username' | 'other';

export interface XRateWindow {
  remaining: number;
  /** Epoch seconds at which the window resets. */
  resetAt: number;
}

export interface XProvider extends PublicDataProvider {
  readonly name: 'x';
  /** The last rate window seen per route family (diagnostics, tests). */
  rateWindows(): Partial<Record<XRouteFamily, XRateWindow>>;
}

const DEFAULTS = {
  timeoutMs: 10_000,
  maxFollowerScan: 15_000,
  followerListingTtlMs: 60_000,
  maxResponseBytes: 4 * 1024 * 1024,
};

/** X's largest page for the followers endpoint. */
const PAGE_SIZE = 1000;
/** Targets whose follower listing `follows` keeps in memory at once. */
const MAX_LISTINGS = 20;

interface FollowerListing {
  ids: Set<string>;
  next: string | null;
  seenTokens: Set<string>;
  pages: number;
  /** No further page exists (or the target does not exist). */
  done: boolean;
  /** Some entries could not be read, so absence proves nothing. */
  lossy: boolean;
  notFound: boolean;
  startedAt: number;
  checkedAt: string;
}

const nonNegative = (value: number | undefined, fallback: number, label: string) => contract.nonNegativeSetting('x', value, fallback, label);

function headerOf(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function familyOf(path: string): XRouteFamily {
  if (/\/followers$/.test(path)) return 'followers';
  if (path.startsWith('/2/users/by/username/')) return 'by-username';
  return 'other';
}

export function createXProvider(config: XProviderConfig): XProvider {
  contract.providerBaseUrl('x', 'apiUrl', config.apiUrl); // validates the setting; paths are joined to `root` below
  if (typeof config.bearerToken !== 'string' || config.bearerToken === '') {
    throw new Error('public-data x provider: bearerToken is required (OUTREACH_PUBLICDATA_KEY)');
  }
  // Joined, not resolved: `new URL('/2/…', base)` would drop a path the base URL has.
  const root = config.apiUrl.replace(/\/+$/, '');
  const timeoutMs = nonNegative(config.timeoutMs, DEFAULTS.timeoutMs, 'timeoutMs') || DEFAULTS.timeoutMs;
  const maxFollowerScan = Math.max(1, Math.floor(nonNegative(config.maxFollowerScan, DEFAULTS.maxFollowerScan, 'maxFollowerScan')));
  const listingTtlMs = nonNegative(config.followerListingTtlMs, DEFAULTS.followerListingTtlMs, 'followerListingTtlMs');
  const maxBytes = nonNegative(config.maxResponseBytes, DEFAULTS.maxResponseBytes, 'maxResponseBytes');
  const now = config.now ?? (() => new Date());
  const headers = { accept: 'application/json', authorization: `Bearer ${config.bearerToken}` };

  const windows = new Map<XRouteFamily, XRateWindow>();

  function rateLimited(family: XRouteFamily, resetAt: number | null, status?: number): contract.ProviderUnavailableError {
    const wait = resetAt === null ? undefined : Math.max(1, Math.ceil(resetAt - now().getTime() / 1000));
    const when = wait === undefined ? '' : `; it reopens in ${wait} s`;
    return new contract.ProviderUnavailableError(`X API rate limit reached for ${family} requests${when}`, {
      reason: 'rate_limited',
      status,
      retryAfterSeconds: wait,
    });
  }

  /** The refusal while the family's window is spent (no request is wasted on a certain 429), else null. */
  function closedWindow(family: XRouteFamily): contract.ProviderUnavailableError | null {
    const w = windows.get(family);
    if (!w) return null;
    if (w.resetAt <= now().getTime() / 1000) {
      windows.delete(family);
      return null;
    }
    return w.remaining <= 0 ? rateLimited(family, w.resetAt) : null;
  }
  function checkWindow(family: XRouteFamily): void {
    const closed = closedWindow(family);
    if (closed) throw closed;
  }

  function recordWindow(family: XRouteFamily, resHeaders: Record<string, string | string[] | undefined>): number | null {
    const remainingText = headerOf(resHeaders, 'x-rate-limit-remaining');
    const resetText = headerOf(resHeaders, 'x-rate-limit-reset');
    const remaining = remainingText === undefined ? NaN : Number(remainingText);
    const reset = resetText === undefined ? NaN : Number(resetText);
    if (!Number.isFinite(reset) || reset <= 0) return null;
    if (Number.isFinite(remaining)) windows.set(family, { remaining, resetAt: reset });
    return reset;
  }

  /** One GET against X; answers the parsed 200 body or throws the provider error family. */
  async function getJson(path: string, query: Record<string, string | undefined>, signal: AbortSignal | undefined): Promise<XBody> {
    contract.throwIfAborted(signal);
    const family = familyOf(path);
    checkWindow(family);
    const url = new URL(root + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);

    const get = contract.providerGet(url, { headers, dispatcher: config.dispatcher, signal, timeoutMs });
    try {
      const res = await get.response;
      const status = res.statusCode;
      const resetAt = recordWindow(family, res.headers);
      if (status !== 200) {
        await res.body.dump().catch(() => undefined);
        if (status === 429) {
          // Whatever the remaining header said, the window is closed until its reset.
          if (resetAt !== null) windows.set(family, { remaining: 0, resetAt });
          throw rateLimited(family, resetAt, status);
        }
        if (status === 401 || status === 403) {
          throw new contract.ProviderUnavailableError(`X API refused the app's bearer token (${status})`, { reason: 'unauthorized', status });
        }
        if (status >= 300 && status <= 399) {
          // A redirect could carry the bearer token to another host; refuse rather than follow.
          throw new contract.ProviderUnavailableError(`X API answered with a redirect (${status})`, { reason: 'redirect', status });
        }
        throw new contract.ProviderUnavailableError(`X API answered ${status}`, { reason: `http_${status}`, status });
      }
      const text = await contract.readCappedBody(res.body, () => res.body.destroy(), maxBytes, 'X API');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new contract.ProviderUnavailableError('X API returned malformed JSON', { reason: 'malformed_json', status });
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw malformed('body');
      return body;
    } catch (err) {
      if (err instanceof contract.ProviderUnavailableError) throw err;
      if (signal?.aborted) throw contract.abortError(signal);
      if (get.timedOut(err)) {
        throw new contract.ProviderTimeoutError(`X API did not answer within ${timeoutMs} ms`, { cause: err });
      }
      throw new contract.ProviderUnavailableError('X API could not be reached', { reason: 'network', cause: err });
    }
  }

  async function followersPage(targetUserId: string, token: string | null, signal: AbortSignal | undefined): Promise<FollowersPage> {
    const body = await getJson(
      `/2/users/${encodeURIComponent(targetUserId)}/followers`,
      { max_results: String(PAGE_SIZE), pagination_token: token ?? undefined, ...PROFILE_QUERY },
      signal,
    );
    return followersPageOf(body);
  }

  async function resolveHandle(handle: string, signal?: AbortSignal): Promise<PublicUser | null> {
    const key = contract.normalizeHandle(handle);
    if (key === null) return null;
    const trimmed = handle.trim();
    const username = trimmed.startsWith('@') ? trimmed.slice(1) : trimmed;
    const body = await getJson(`/2/users/by/username/${encodeURIComponent(username)}`, PROFILE_QUERY, signal);
    const user = lookedUpUserOf(body);
    if (user === null) return null;
    // Resolution is an exact lookup: another account in the answer has not verified the handle asked for.
    return contract.normalizeHandle(user.username) === key ? user : null;
  }

  async function followerSnapshot(targetUserId: string, opts: { limit: number }, signal?: AbortSignal): Promise<FollowerSnapshot> {
    const limit = Number.isFinite(opts.limit) ? Math.max(0, Math.floor(opts.limit)) : 0;
    const checkedAt = now().toISOString();
    if (limit === 0 || !contract.isUserId(targetUserId)) return { userIds: [], users: [], complete: false, checkedAt };

    const users = new Map<string, PublicUser>();
    const seenTokens = new Set<string>();
    // Pages shorter than max_results are allowed by X; this only stops a listing that never ends.
    const maxPages = Math.ceil(limit / PAGE_SIZE) * 2;
    let token: string | null = null;
    let complete = false;
    let lossy = false;
    for (let n = 0; n < maxPages; n++) {
      // Any failure fails the snapshot: a rate-limited listing is not a smaller answer, it is no answer yet.
      const page = await followersPage(targetUserId, token, signal);
      if (page.notFound) break;
      if (page.dropped > 0) lossy = true;
      let truncated = false;
      for (const user of page.users) {
        if (users.has(user.xUserId)) continue;
        if (users.size >= limit) {
          truncated = true;
          break;
        }
        users.set(user.xUserId, user);
      }
      if (truncated) break;
      if (page.next === null) {
        complete = !lossy;
        break;
      }
      if (users.size >= limit || seenTokens.has(page.next)) break;
      seenTokens.add(page.next);
      token = page.next;
    }
    const list = [...users.values()];
    return { userIds: list.map((u) => u.xUserId), users: list, complete, checkedAt };
  }

  // The follower listings `follows` has read, resumable: a batch of checks against one target reads each page once.
  const listings = new Map<string, FollowerListing>();
  const locks = new Map<string, Promise<unknown>>();

  function listingFor(targetUserId: string): FollowerListing {
    const current = listings.get(targetUserId);
    const at = now().getTime();
    if (current && at - current.startedAt < listingTtlMs) return current;
    const fresh: FollowerListing = {
      ids: new Set(),
      next: null,
      seenTokens: new Set(),
      pages: 0,
      done: false,
      lossy: false,
      notFound: false,
      startedAt: at,
      checkedAt: new Date(at).toISOString(),
    };
    listings.delete(targetUserId);
    if (listingTtlMs > 0) {
      listings.set(targetUserId, fresh);
      while (listings.size > MAX_LISTINGS) listings.delete(listings.keys().next().value as string);
    }
    return fresh;
  }

  /** Runs one check per target at a time, so concurrent checks share pages instead of reading them twice. */
  function serialized<T>(key: string, run: () => Promise<T>): Promise<T> {
    const previous = locks.get(key) ?? Promise.resolve();
    const p = previous.catch(() => undefined).then(run);
    locks.set(key, p);
    void p
      .finally(() => {
        if (locks.get(key) === p) locks.delete(key);
      })
      .catch(() => undefined);
    return p;
  }

  async function scanFor(targetUserId: string, followerId: string, signal: AbortSignal | undefined): Promise<FollowAnswer> {
    const listing = listingFor(targetUserId);
    const maxPages = Math.ceil(maxFollowerScan / PAGE_SIZE) * 2;
    while (!listing.ids.has(followerId) && !listing.done && listing.ids.size < maxFollowerScan && listing.pages < maxPages) {
      const page = await followersPage(targetUserId, listing.next, signal);
      listing.pages++;
      listing.checkedAt = now().toISOString();
      if (page.notFound) {
        listing.notFound = true;
        listing.done = true;
        break;
      }
      if (page.dropped > 0) listing.lossy = true;
      let truncated = false;
      for (const user of page.users) {
        if (listing.ids.has(user.xUserId)) continue;
        if (listing.ids.size >= maxFollowerScan) {
          truncated = true;
          break;
        }
        listing.ids.add(user.xUserId);
      }
      if (truncated) {
        // The bound cut this page short: the rest of the listing stays unread, so absence proves nothing.
        listing.lossy = true;
        listing.done = true;
      } else if (page.next === null) {
        listing.done = true;
      } else if (listing.seenTokens.has(page.next)) {
        listing.lossy = true;
        listing.done = true;
      } else {
        listing.seenTokens.add(page.next);
        listing.next = page.next;
      }
    }
    const checkedAt = listing.checkedAt;
    if (listing.ids.has(followerId)) return { follows: true, checkedAt, reason: null, evidence: contract.EVIDENCE.snapshot };
    if (listing.notFound) return contract.nullAnswer(contract.FOLLOW_REASON.userNotFound, checkedAt);
    if (listing.done && !listing.lossy) return { follows: false, checkedAt, reason: null, evidence: contract.EVIDENCE.snapshot };
    return contract.nullAnswer(contract.FOLLOW_REASON.notInSnapshot, checkedAt);
  }

  async function follows(follower: FollowerRef, target: FollowTarget, signal?: AbortSignal): Promise<FollowAnswer> {
    let followerId: string;
    if (contract.isUserId(follower.xUserId)) {
      followerId = follower.xUserId;
    } else if (follower.username !== undefined) {
      if (contract.normalizeHandle(follower.username) === null) return contract.nullAnswer(contract.FOLLOW_REASON.invalidHandle);
      const user = await resolveHandle(follower.username, signal);
      if (user === null) return contract.nullAnswer(contract.FOLLOW_REASON.userNotFound, now().toISOString());
      followerId = user.xUserId;
    } else {
      return contract.nullAnswer(contract.FOLLOW_REASON.handleRequired);
    }
    const targetUserId = contract.targetUserIdOf(target);
    if (!contract.isUserId(targetUserId)) return contract.nullAnswer(contract.FOLLOW_REASON.userNotFound, now().toISOString());
    return serialized(targetUserId, () => scanFor(targetUserId, followerId, signal));
  }

  return {
    name: 'x',
    resolveHandle,
    follows,
    followerSnapshot,
    closedFor: (read) => closedWindow(read === 'resolve_handle' ? 'by-username' : 'followers'),
    rateWindows: () => Object.fromEntries(windows),
  };
}

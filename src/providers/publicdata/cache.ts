import {
  normalizeHandle,
  targetHandleOf,
  targetUserIdOf,
  type FollowAnswer,
  type FollowerSnapshot,
  type PublicDataProvider,
  type PublicUser,
} from './provider.js';

export interface TtlCacheOptions {
  ttlMs: number;
  /** Entry cap; the least recently written entry is evicted first. */
  max: number;
  now?: () => number;
}

export interface TtlCache<T> {
  get(key: string): T | undefined;
  has(key: string): boolean;
  set(key: string, value: T): void;
  delete(key: string): boolean;
  clear(): void;
  readonly size: number;
  /**
   * Returns the cached value or runs `load` once per key even under concurrent callers.
   * Rejections are never cached: a provider outage must not be remembered as an answer.
   */
  getOrLoad(key: string, load: () => Promise<T>): Promise<T>;
}

export function createTtlCache<T>(opts: TtlCacheOptions): TtlCache<T> {
  const ttlMs = Math.max(0, opts.ttlMs);
  const max = Math.max(0, Math.floor(opts.max));
  const now = opts.now ?? Date.now;
  const entries = new Map<string, { value: T; expiresAt: number }>();
  const inflight = new Map<string, Promise<T>>();

  function live(key: string): { value: T } | undefined {
    const entry = entries.get(key);
    if (!entry) return undefined;
    if (now() >= entry.expiresAt) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  }

  function set(key: string, value: T): void {
    if (ttlMs === 0 || max === 0) return;
    entries.delete(key);
    entries.set(key, { value, expiresAt: now() + ttlMs });
    while (entries.size > max) {
      const oldest = entries.keys().next().value as string;
      entries.delete(oldest);
    }
  }

  return {
    get: (key) => live(key)?.value,
    has: (key) => live(key) !== undefined,
    set,
    delete: (key) => entries.delete(key),
    clear: () => {
      entries.clear();
      inflight.clear();
    },
    get size() {
      return entries.size;
    },
    getOrLoad(key, load) {
      const hit = live(key);
      if (hit) return Promise.resolve(hit.value);
      const pending = inflight.get(key);
      if (pending) return pending;
      const p = load()
        .then((value) => {
          if (inflight.get(key) === p) set(key, value);
          return value;
        })
        .finally(() => {
          if (inflight.get(key) === p) inflight.delete(key);
        });
      inflight.set(key, p);
      return p;
    },
  };
}

export interface CachedProviderOptions {
  ttlMs: number;
  max?: number;
  now?: () => number;
}

/**
 * Wraps a provider with the short per-instance reuse the spec allows for eligibility.
 * Answers keep their original checkedAt, so a reused answer still states when the
 * evidence was observed rather than when it was served. Concurrent identical calls share
 * one in-flight request, so they also share the first caller's abort signal; eligibility
 * works sequentially, which makes that acceptable.
 */
export function withCache<P extends PublicDataProvider>(provider: P, opts: CachedProviderOptions): P {
  const max = opts.max ?? 1000;
  const cacheOpts = { ttlMs: opts.ttlMs, max, now: opts.now };
  const resolves = createTtlCache<PublicUser | null>(cacheOpts);
  const follows = createTtlCache<FollowAnswer>(cacheOpts);
  // Snapshots are large (up to `limit` users each), so far fewer of them are kept.
  const snapshots = createTtlCache<FollowerSnapshot>({ ...cacheOpts, max: Math.min(max, 50) });

  const wrapped: PublicDataProvider = {
    name: provider.name,
    resolveHandle(handle, signal) {
      const key = normalizeHandle(handle);
      if (key === null) return provider.resolveHandle(handle, signal);
      return resolves.getOrLoad(key, () => provider.resolveHandle(handle, signal)).then(cloneUser);
    },
    follows(follower, target, signal) {
      const handle = follower.username === undefined ? null : normalizeHandle(follower.username);
      if (handle === null) return provider.follows(follower, target, signal);
      const key = `${handle}>${targetUserIdOf(target)}@${targetHandleOf(target) ?? ''}`;
      return follows.getOrLoad(key, () => provider.follows(follower, target, signal)).then((a) => ({ ...a }));
    },
    followerSnapshot(targetUserId, snapOpts, signal) {
      const key = `${targetUserId}:${snapOpts.limit}`;
      return snapshots
        .getOrLoad(key, () => provider.followerSnapshot(targetUserId, snapOpts, signal))
        .then((s) => ({ ...s, userIds: [...s.userIds], users: s.users.map((u) => ({ ...u })) }));
    },
  };
  const refreshable = provider as unknown as { refresh?: () => Promise<void> };
  if (typeof refreshable.refresh === 'function') {
    // A refreshed world invalidates every remembered answer.
    (wrapped as unknown as { refresh: () => Promise<void> }).refresh = async () => {
      await refreshable.refresh!.call(provider);
      resolves.clear();
      follows.clear();
      snapshots.clear();
    };
  }
  // Any other provider-specific members stay reachable through the prototype.
  return Object.setPrototypeOf(wrapped, provider) as P;
}

function cloneUser(user: PublicUser | null): PublicUser | null {
  return user ? { ...user } : null;
}

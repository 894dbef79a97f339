import { performance } from 'node:perf_hooks';
import type { Role } from '../../domain/vocabulary.js';

/**
 * What a request needs to know before it may touch tenant data: the key behind a hash, a workspace's X-channel
 * switch, and the Team links of a home workspace. Held in the process so that a warm request makes no round trip
 * for them (docs/foundation.md, "Authentication cache").
 *
 * Correctness rules:
 * - Every entry lives at most TTL_MS (a safety net for writes that bypass the services, e.g. an operator's SQL).
 * - Writers invalidate: directly in this process, and through PostgreSQL NOTIFY in every other process.
 * - With a listener (PostgreSQL, several processes), nothing is cached unless the listening connection is up;
 *   when it drops, the whole cache is dropped, so a missed notification can never keep a revoked key alive.
 * - A read that raced with an invalidation is not stored (the epoch check), so a revocation is never overwritten by
 *   the row read just before it.
 * - Absence is never cached: random keys and unknown Team links cost a query but take no memory.
 */
export const AUTH_CACHE_TTL_MS = 5_000;
export const AUTH_CACHE_MAX_ENTRIES = 10_000;

export interface CachedKey {
  keyId: string;
  homeWorkspaceId: string;
  /** The key's role (docs/roles.md): all it may do at home, and at most what a Team link allows elsewhere. */
  role: Role;
  /** Epoch milliseconds, checked against the clock on every request, so an expiry takes effect at its instant. */
  expiresAt: number | null;
  revoked: boolean;
}

export interface CachedWorkspace {
  xChannelEnabled: boolean;
}

/** A bounded map that forgets the least recently used entry first and every entry after its time to live. */
export class LruCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    if (hit.expires <= this.now()) return undefined;
    this.entries.set(key, hit);
    return hit.value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expires: this.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  deleteWhere(match: (key: string, value: V) => boolean): void {
    for (const [k, e] of this.entries) if (match(k, e.value)) this.entries.delete(k);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The messages carried on the notification channel; anything unrecognised drops the whole cache. */
export const authChange = {
  key: (keyId: string) => `key:${keyId}`,
  teamLinks: (ownerWorkspaceId: string) => `team:${ownerWorkspaceId}`,
  workspace: (workspaceId: string) => `workspace:${workspaceId}`,
};

export interface AuthChangeListener {
  close(): Promise<void>;
}

/** Opens the listening connection; `onDrop` fires once when it is lost (never after close). */
export type ListenForAuthChanges = (handlers: { onMessage(payload: string): void; onDrop(): void }) => Promise<AuthChangeListener>;

export interface AuthCacheOptions {
  /** Absent on a single-process database (PGlite): writers in this process invalidate directly. */
  listen?: ListenForAuthChanges;
  ttlMs?: number;
  maxEntries?: number;
  /** Reports listener trouble; never given a key or a hash. */
  onListenerError?: (err: unknown) => void;
}

export function createAuthCache(options: AuthCacheOptions = {}) {
  const ttl = Math.min(options.ttlMs ?? AUTH_CACHE_TTL_MS, AUTH_CACHE_TTL_MS);
  const max = Math.min(options.maxEntries ?? AUTH_CACHE_MAX_ENTRIES, AUTH_CACHE_MAX_ENTRIES);
  const keys = new LruCache<CachedKey>(max, ttl);
  const workspaces = new LruCache<CachedWorkspace>(max, ttl);
  /** `<home workspace id>><client workspace id>` → the role of that Team link (present links only). */
  const teamLinks = new LruCache<Role>(max, ttl);

  type State = 'direct' | 'idle' | 'connecting' | 'live' | 'retrying' | 'closed';
  let state: State = options.listen ? 'idle' : 'direct';
  let listener: AuthChangeListener | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  let retryDelayMs = 100;
  /** Bumped by every invalidation; a fill that started under an older epoch is discarded. */
  let epoch = 0;

  function clearAll() {
    epoch++;
    keys.clear();
    workspaces.clear();
    teamLinks.clear();
  }

  function apply(message: string) {
    epoch++;
    const sep = message.indexOf(':');
    const kind = message.slice(0, sep);
    const id = message.slice(sep + 1);
    if (kind === 'key') keys.deleteWhere((_hash, k) => k.keyId === id);
    else if (kind === 'team') teamLinks.deleteWhere((pair) => pair.startsWith(`${id}>`));
    else if (kind === 'workspace') workspaces.delete(id);
    else clearAll();
  }

  function connect() {
    if (!options.listen || state === 'closed' || state === 'connecting' || state === 'live') return;
    state = 'connecting';
    let dropped = false;
    options
      .listen({
        onMessage: apply,
        onDrop: () => {
          if (dropped) return;
          dropped = true;
          listener = null;
          clearAll();
          if (state !== 'closed') scheduleRetry();
        },
      })
      .then(
        (l) => {
          if (state === 'closed' || dropped) {
            void l.close().catch(() => undefined);
            return;
          }
          listener = l;
          retryDelayMs = 100;
          // Anything cached before the connection was up may have missed a notification.
          clearAll();
          state = 'live';
        },
        (err) => {
          options.onListenerError?.(err);
          if (state !== 'closed') scheduleRetry();
        },
      );
  }

  function scheduleRetry() {
    state = 'retrying';
    retryTimer = setTimeout(() => {
      retryTimer = null;
      if (state === 'retrying') {
        state = 'idle';
        connect();
      }
    }, retryDelayMs);
    retryTimer.unref();
    retryDelayMs = Math.min(retryDelayMs * 2, AUTH_CACHE_TTL_MS);
  }

  /** The cache serves and stores only while invalidations are sure to arrive. */
  function active(): boolean {
    if (state === 'direct' || state === 'live') return true;
    if (state === 'idle') connect();
    return false;
  }

  /** Reads through the cache: `load` runs on a miss and its non-null result is kept unless an invalidation raced it. */
  function through<V>(cache: LruCache<V>, key: string, load: () => Promise<V | undefined>): Promise<V | undefined> | V {
    if (!active()) return load();
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const startedAt = epoch;
    return load().then((value) => {
      if (value !== undefined && startedAt === epoch && active()) cache.set(key, value);
      return value;
    });
  }

  return {
    key: (hash: string, load: () => Promise<CachedKey | undefined>) => through(keys, hash, load),
    workspace: (workspaceId: string, load: () => Promise<CachedWorkspace | undefined>) => through(workspaces, workspaceId, load),
    teamLink: (homeWorkspaceId: string, clientWorkspaceId: string, load: () => Promise<Role | undefined>) =>
      through(teamLinks, `${homeWorkspaceId}>${clientWorkspaceId}`, load),
    /** Applies one change message in this process (the same messages other processes receive by NOTIFY). */
    invalidate: apply,
    clear: clearAll,
    /** Starts the listener ahead of the first request (it also starts lazily). */
    start: () => void active(),
    get live() {
      return state === 'direct' || state === 'live';
    },
    sizes: () => ({ keys: keys.size, workspaces: workspaces.size, teamLinks: teamLinks.size }),
    async close() {
      state = 'closed';
      if (retryTimer) clearTimeout(retryTimer);
      clearAll();
      const l = listener;
      listener = null;
      await l?.close().catch(() => undefined);
    },
  };
}

export type AuthCache = ReturnType<typeof createAuthCache>;

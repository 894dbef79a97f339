import {
  EVIDENCE,
  FOLLOW_REASON,
  ProviderUnavailableError,
  followerHandleOf,
  normalizeHandle,
  nullAnswer,
  sleep,
  targetUserIdOf,
  throwIfAborted,
  type FollowTarget,
  type ProviderClockOptions,
  type PublicDataProvider,
  type PublicUser,
} from './provider.js';

/** The `publicData` section of a world file (contracts/world-file.md); every list defaults to empty. */
export interface SandboxWorld {
  users?: PublicUser[];
  follows?: { follower: string; followed: string }[];
  unavailable?: string[];
}

export type SandboxWorldSource = SandboxWorld | (() => Promise<SandboxWorld>);

export interface SandboxOptions extends ProviderClockOptions {
  latencyMs?: number;
  /** Probability in [0, 1] that a call fails with ProviderUnavailableError('injected_failure'). */
  failureRate?: number;
}

export interface SandboxProvider extends PublicDataProvider {
  readonly name: 'sandbox';
  /** Re-reads the world source; a function source is what makes this meaningful. */
  refresh(): Promise<void>;
}

interface WorldIndex {
  byHandle: Map<string, PublicUser>;
  byId: Map<string, PublicUser>;
  followEdges: Set<string>;
  followersOf: Map<string, string[]>;
  unavailable: Set<string>;
}

function edgeKey(follower: string, followed: string): string {
  return `${follower}>${followed}`;
}

function indexWorld(world: SandboxWorld): WorldIndex {
  const byHandle = new Map<string, PublicUser>();
  const byId = new Map<string, PublicUser>();
  for (const raw of world.users ?? []) {
    const user: PublicUser = { xUserId: String(raw.xUserId), username: raw.username, name: raw.name ?? null };
    const handle = normalizeHandle(user.username);
    if (handle !== null && !byHandle.has(handle)) byHandle.set(handle, user);
    if (!byId.has(user.xUserId)) byId.set(user.xUserId, user);
  }
  const followEdges = new Set<string>();
  const followersOf = new Map<string, string[]>();
  for (const { follower, followed } of world.follows ?? []) {
    const key = edgeKey(String(follower), String(followed));
    if (followEdges.has(key)) continue;
    followEdges.add(key);
    const list = followersOf.get(String(followed)) ?? [];
    list.push(String(follower));
    followersOf.set(String(followed), list);
  }
  const unavailable = new Set<string>();
  for (const handle of world.unavailable ?? []) {
    // Entries need not be valid handles; fall back to plain lower-casing so "@Ghost" and odd
    // spellings in hand-written world files still take effect.
    unavailable.add(normalizeHandle(handle) ?? handle.replace(/^@/, '').toLowerCase());
  }
  return { byHandle, byId, followEdges, followersOf, unavailable };
}

export function createSandboxProvider(source: SandboxWorldSource, opts: SandboxOptions = {}): SandboxProvider {
  const latencyMs = Math.max(0, opts.latencyMs ?? 0);
  const failureRate = Math.min(1, Math.max(0, opts.failureRate ?? 0));
  const random = opts.random ?? Math.random;
  const now = opts.now ?? (() => new Date());

  let index: WorldIndex | null = typeof source === 'function' ? null : indexWorld(source);
  // Shared so concurrent first calls hit the loader (often a database read) only once.
  let loading: Promise<WorldIndex> | null = null;
  // A refresh must not be satisfied by a load that started before it, nor be overwritten by one.
  let generation = 0;

  function load(): Promise<WorldIndex> {
    if (typeof source !== 'function') {
      index = indexWorld(source);
      return Promise.resolve(index);
    }
    const mine = ++generation;
    const attempt: Promise<WorldIndex> = Promise.resolve()
      .then(() => source())
      .then((loaded) => {
        const built = indexWorld(loaded);
        if (mine === generation) index = built;
        return built;
      })
      .catch((err: unknown) => {
        throw new ProviderUnavailableError('sandbox world could not be loaded', {
          reason: 'world_unavailable',
          cause: err,
        });
      })
      .finally(() => {
        if (loading === attempt) loading = null;
      });
    loading = attempt;
    return attempt;
  }

  function world(): Promise<WorldIndex> {
    if (index) return Promise.resolve(index);
    return loading ?? load();
  }

  /** Latency first, then the failure draw: one random() per call keeps runs reproducible. */
  async function simulate(signal: AbortSignal | undefined): Promise<WorldIndex> {
    throwIfAborted(signal);
    await sleep(latencyMs, signal);
    if (failureRate > 0 && random() < failureRate) {
      throw new ProviderUnavailableError('sandbox public-data provider failed (injected)', {
        reason: 'injected_failure',
      });
    }
    return world();
  }

  function assertAvailable(w: WorldIndex, handle: string | null): void {
    if (handle !== null && w.unavailable.has(handle)) {
      throw new ProviderUnavailableError('sandbox public-data provider is unavailable for this handle', {
        reason: 'unavailable_handle',
        status: 503,
      });
    }
  }

  const checkedAt = (): string => now().toISOString();

  // Method signatures come from PublicDataProvider (through SandboxProvider).
  return {
    name: 'sandbox',

    async refresh(): Promise<void> {
      // The previous index keeps serving until the new one is built, so a failed refresh
      // degrades to slightly stale data rather than to an outage.
      await load();
    },

    async resolveHandle(handle, signal) {
      const w = await simulate(signal);
      const key = normalizeHandle(handle);
      if (key === null) return null;
      assertAvailable(w, key);
      const user = w.byHandle.get(key);
      return user ? { ...user } : null;
    },

    async follows(follower, target, signal) {
      const w = await simulate(signal);
      // By handle only, like the http provider (see followerHandleOf).
      const handle = followerHandleOf(follower);
      if (typeof handle !== 'string') return handle;
      assertAvailable(w, handle);
      const targetId = targetUserIdOf(target);
      assertAvailable(w, targetHandleFromWorld(w, target, targetId));
      const user = w.byHandle.get(handle);
      if (!user) return nullAnswer(FOLLOW_REASON.userNotFound, checkedAt());
      return {
        follows: w.followEdges.has(edgeKey(user.xUserId, targetId)),
        checkedAt: checkedAt(),
        reason: null,
        evidence: EVIDENCE.relationship,
      };
    },

    async followerSnapshot(targetUserId, opts, signal) {
      const w = await simulate(signal);
      assertAvailable(w, targetHandleFromWorld(w, targetUserId, targetUserId));
      const limit = Number.isFinite(opts.limit) ? Math.max(0, Math.floor(opts.limit)) : 0;
      const all = w.followersOf.get(targetUserId) ?? [];
      const userIds = all.slice(0, limit);
      const users = userIds.flatMap((id) => {
        const user = w.byId.get(id);
        return user ? [{ ...user }] : [];
      });
      return { userIds, users, complete: all.length <= limit, checkedAt: checkedAt() };
    },
  };
}

function targetHandleFromWorld(w: WorldIndex, target: FollowTarget, targetId: string): string | null {
  const known = w.byId.get(targetId);
  if (known) return normalizeHandle(known.username);
  if (typeof target !== 'string' && target.username != null) return normalizeHandle(target.username);
  return null;
}

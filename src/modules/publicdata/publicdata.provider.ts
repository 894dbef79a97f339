import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { createPublicDataProvider, type PublicDataProvider, type PublicUser, type SandboxProvider } from '../../providers/publicdata/index.js';
import { loadSandboxWorld, saveProfiles } from './publicdata.repository.js';

/**
 * How old the sandbox's copy of the publicdata_* tables may get before a read reloads it. A world
 * file seeded by the CLI (another process) or by the admin route is then seen within seconds
 * without either having to know about this process.
 */
export const SANDBOX_WORLD_MAX_AGE_MS = 5_000;

type Refreshable = PublicDataProvider & { refresh(): Promise<void> };

/** The deployment's provider: the http or x client from configuration, or the sandbox over the seeded world. */
export function createConfiguredProvider(deps: { db: Database; config: Config; clock: Clock }): PublicDataProvider {
  const { publicData, x } = deps.config;
  // The `x` provider talks to the same X API v2 as the X channel (OUTREACH_X_API_URL, OUTREACH_X_TIMEOUT_MS).
  const target = publicData.kind === 'x' ? { url: x.apiUrl, timeoutMs: x.timeoutMs } : { url: publicData.url ?? undefined, timeoutMs: undefined };
  const provider = createPublicDataProvider(
    { kind: publicData.kind, url: target.url, key: publicData.key ?? undefined, timeoutMs: target.timeoutMs },
    () => loadSandboxWorld(deps.db),
    { sandbox: { now: () => deps.clock.now() } },
  );
  return provider.name === 'sandbox' ? reloadingWhenStale(provider as SandboxProvider, SANDBOX_WORLD_MAX_AGE_MS) : savingProfiles(provider, deps.db);
}

/**
 * Keeps the public profiles a real provider returns with its users (x_profiles), so the review page shows them with
 * the candidates in one query. Best effort: a failed write never fails the read it came with. (The sandbox needs
 * none of this: the world file writes its profiles when it is loaded.)
 */
export function savingProfiles(provider: PublicDataProvider, db: Database): PublicDataProvider {
  const save = (users: PublicUser[]) => saveProfiles(db, users).catch(() => undefined);
  return {
    name: provider.name,
    closedFor: provider.closedFor?.bind(provider),
    follows: (follower, target, signal) => provider.follows(follower, target, signal),
    async resolveHandle(handle, signal) {
      const user = await provider.resolveHandle(handle, signal);
      if (user) await save([user]);
      return user;
    },
    async followerSnapshot(targetUserId, opts, signal) {
      const snapshot = await provider.followerSnapshot(targetUserId, opts, signal);
      await save(snapshot.users);
      return snapshot;
    },
  };
}

function reloadingWhenStale(provider: Refreshable, maxAgeMs: number): Refreshable {
  let loadedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<void> | null = null;

  function refresh(): Promise<void> {
    pending ??= provider
      .refresh()
      .then(() => {
        loadedAt = Date.now();
      })
      .finally(() => {
        pending = null;
      });
    return pending;
  }

  async function fresh(): Promise<void> {
    if (Date.now() - loadedAt < maxAgeMs) return;
    // A failed reload keeps answering from the previous world; the read itself reports trouble
    // only when no world was ever loaded.
    await refresh().catch(() => undefined);
  }

  return {
    name: provider.name,
    refresh,
    async resolveHandle(handle, signal) {
      await fresh();
      return provider.resolveHandle(handle, signal);
    },
    async follows(follower, target, signal) {
      await fresh();
      return provider.follows(follower, target, signal);
    },
    async followerSnapshot(targetUserId, opts, signal) {
      await fresh();
      return provider.followerSnapshot(targetUserId, opts, signal);
    },
  };
}

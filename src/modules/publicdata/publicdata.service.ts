import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, notFound } from '../../lib/errors.js';
import {
  EVIDENCE,
  ProviderTimeoutError,
  createTtlCache,
  isProviderUnavailable,
  normalizeHandle,
  type FollowAnswer,
  type FollowerSnapshot,
  type PublicDataProvider,
  type PublicUser,
} from '../../providers/publicdata/index.js';
import type { EnergyAction, EnergyService } from '../energy/index.js';
import * as repo from './publicdata.repository.js';
import { createAvatarService } from './avatars.js';
import type { Resolver } from '../../webhooks/safe-url.js';
import type { EligibilityInput, EligibilityOutput, EligibilityResultRow } from './publicdata.schemas.js';

export const PROVIDER = 'publicdata' as const;

/** Upper bound on the follower snapshot one eligibility request may read for numeric-id leads. */
export const SNAPSHOT_LIMIT = 5000;

/** `reason` values this service adds to the provider's own (user_not_found, ...). */
export const REASON = {
  timeBudget: 'time_budget_exceeded',
  energy: 'energy_exhausted',
  providerUnavailable: 'provider_unavailable',
  providerTimeout: 'provider_timeout',
  notInSnapshot: 'not_in_follower_snapshot',
  userNotFound: 'user_not_found',
} as const;

interface Identity {
  user: PublicUser;
  checkedAt: string;
}

class EnergyExhausted extends Error {
  constructor(readonly nextRefillAt: Date | null) {
    super('energy exhausted');
  }
}

export interface PublicDataServiceDeps {
  db: Database;
  config: Config;
  clock: Clock;
  energy: EnergyService;
  provider: PublicDataProvider;
  /** DNS for the profile pictures' safe-URL check (tests); the system resolver otherwise. */
  resolver?: Resolver;
}

function unknownIdentity(code: 'identity_unknown' | 'provider_unavailable', reason: string, wait?: number): AppError {
  const message = code === 'identity_unknown' ? 'the profile could not be verified' : 'the public-data provider is unavailable; identity is unknown';
  // A provider whose rate window is spent (the x provider) says when it opens again: passed on as Retry-After.
  return new AppError(
    503,
    code,
    message,
    { status: 'unknown', user: null, provider: PROVIDER, sendsMessages: false, reason, ...(wait !== undefined && { retryAfterSeconds: wait }) },
    wait !== undefined ? { 'retry-after': String(wait) } : {},
  );
}

/** Seconds until a provider with a spent rate window answers again, when it said (whole seconds, at least 1). */
function providerWait(err: unknown): number | undefined {
  const wait = (err as { retryAfterSeconds?: number } | null)?.retryAfterSeconds;
  return typeof wait === 'number' && wait > 0 ? Math.ceil(wait) : undefined;
}

function providerReason(err: unknown): string {
  return err instanceof ProviderTimeoutError ? REASON.providerTimeout : REASON.providerUnavailable;
}

export function createPublicDataService(deps: PublicDataServiceDeps) {
  const { db, clock, energy, provider } = deps;
  // The service's clock, not wall time, so a test can age entries past the TTL.
  const cacheOpts = { ttlMs: deps.config.publicData.cacheTtlSeconds * 1000, now: () => clock.now().getTime() };
  // Keys start with the workspace: public data is the same for everyone, but a shared entry would
  // let one tenant read another's lookups from checkedAt and ride on energy it did not spend.
  const identities = createTtlCache<Identity | null>({ ...cacheOpts, max: 10_000 });
  const relationships = createTtlCache<FollowAnswer>({ ...cacheOpts, max: 10_000 });
  // Snapshots hold up to SNAPSHOT_LIMIT users each.
  const snapshots = createTtlCache<FollowerSnapshot>({ ...cacheOpts, max: 50 });

  /**
   * Only a real provider read is charged; callers reach this after missing the cache. A read the provider would refuse
   * without asking anyone (a spent rate window) fails before the charge, so waiting out a window costs nothing.
   */
  async function paidRead<T>(workspaceId: string, action: EnergyAction, read: string, fn: () => Promise<T>): Promise<T> {
    if (read === 'resolve_handle' || read === 'follower_snapshot') {
      const closed = provider.closedFor?.(read);
      if (closed) throw closed;
    }
    const charged = await energy.charge(workspaceId, { action, read });
    if (!charged.ok) throw new EnergyExhausted(charged.nextRefillAt);
    return fn();
  }

  async function resolve(workspaceId: string, username: string) {
    const handle = normalizeHandle(username);
    if (handle === null) throw unknownIdentity('identity_unknown', REASON.userNotFound);
    let identity: Identity | null;
    try {
      identity = await identities.getOrLoad(`${workspaceId}|${handle}`, () =>
        paidRead(workspaceId, 'resolve', 'resolve_handle', async () => {
          const user = await provider.resolveHandle(username);
          return user && { user, checkedAt: clock.now().toISOString() };
        }),
      );
    } catch (err) {
      if (err instanceof EnergyExhausted) throw energy.exhaustedError(err);
      if (isProviderUnavailable(err)) throw unknownIdentity('provider_unavailable', providerReason(err), providerWait(err));
      throw err;
    }
    if (!identity) throw unknownIdentity('identity_unknown', REASON.userNotFound);
    const { user, checkedAt } = identity;
    return {
      status: 'resolved' as const,
      user: { xUserId: user.xUserId, username: user.username, name: user.name, checkedAt, evidence: EVIDENCE.profile },
      provider: PROVIDER,
      sendsMessages: false as const,
    };
  }

  async function eligibility(workspaceId: string, input: EligibilityInput): Promise<EligibilityOutput> {
    const accountHandle = normalizeHandle(input.account);
    const account = accountHandle === null ? undefined : await repo.findXAccountByHandle(db, workspaceId, accountHandle);
    if (!account) throw notFound('account');
    const accountUserId = account.user_id;
    const target = { xUserId: accountUserId, username: account.handle };
    const snapshotKey = `${workspaceId}|${accountUserId}`;

    // One budget for the whole request; aborting it also cancels the provider call in flight.
    const budget = AbortSignal.timeout(deps.config.publicData.eligibilityBudgetMs);
    let energyGone = false;
    let snapshot: { checkedAt: string; ids: Set<string> } | null = null;
    // A snapshot that failed is not fetched again in the same request: that keeps a batch of
    // numeric ids to one provider read (and one charge) however the provider behaves.
    let snapshotFailure: string | null = null;

    let snapshotWait: number | undefined;
    const unknown = (xUserId: string | null, reason: string, retryAfterSeconds?: number): Omit<EligibilityResultRow, 'reference' | 'xUsername'> => ({
      xUserId,
      followsAccount: null,
      checkedAt: null,
      reason,
      evidence: null,
      ...(retryAfterSeconds !== undefined && { retryAfterSeconds }),
    });
    const gate = (): string | null => (budget.aborted ? REASON.timeBudget : energyGone ? REASON.energy : null);
    const failure = (err: unknown): string => {
      if (err instanceof EnergyExhausted) {
        energyGone = true;
        return REASON.energy;
      }
      if (budget.aborted) return REASON.timeBudget;
      if (isProviderUnavailable(err)) return providerReason(err);
      throw err;
    };

    async function byHandle(xUsername: string) {
      const handle = normalizeHandle(xUsername)!;
      // The relationship answer carries no id; a recent resolve of the same handle supplies it free.
      const xUserId = identities.get(`${workspaceId}|${handle}`)?.user.xUserId ?? null;
      const key = `${workspaceId}|${handle}>${accountUserId}`;
      let answer = relationships.get(key);
      if (!answer) {
        const blocked = gate();
        if (blocked) return unknown(xUserId, blocked);
        try {
          answer = await relationships.getOrLoad(key, () =>
            paidRead(workspaceId, 'enrich', 'follows', () => provider.follows({ username: xUsername }, target, budget)),
          );
        } catch (err) {
          const reason = failure(err);
          return unknown(xUserId, reason, reason === REASON.providerUnavailable ? providerWait(err) : undefined);
        }
      }
      return {
        xUserId: answer.reason === REASON.userNotFound ? null : xUserId,
        followsAccount: answer.follows,
        checkedAt: answer.checkedAt,
        reason: answer.reason,
        evidence: answer.evidence,
      };
    }

    async function byUserId(xUserId: string) {
      if (!snapshot) {
        let loaded = snapshots.get(snapshotKey);
        if (!loaded) {
          if (snapshotFailure) return unknown(xUserId, snapshotFailure, snapshotWait);
          const blocked = gate();
          if (blocked) return unknown(xUserId, blocked);
          try {
            loaded = await snapshots.getOrLoad(snapshotKey, () =>
              paidRead(workspaceId, 'enrich', 'follower_snapshot', () => provider.followerSnapshot(accountUserId, { limit: SNAPSHOT_LIMIT }, budget)),
            );
          } catch (err) {
            const reason = failure(err);
            if (reason === REASON.providerUnavailable || reason === REASON.providerTimeout) snapshotFailure = reason;
            if (reason === REASON.providerUnavailable) snapshotWait = providerWait(err);
            return unknown(xUserId, reason, snapshotWait);
          }
        }
        snapshot = { checkedAt: loaded.checkedAt, ids: new Set(loaded.userIds) };
      }
      // A bounded snapshot cannot prove absence, so a missing id stays unknown, never false.
      const present = snapshot.ids.has(xUserId);
      return {
        xUserId,
        followsAccount: present ? true : null,
        checkedAt: snapshot.checkedAt,
        reason: present ? null : REASON.notInSnapshot,
        evidence: EVIDENCE.snapshot,
      };
    }

    const results: EligibilityResultRow[] = [];
    for (const lead of input.leads) {
      const row: EligibilityResultRow = 'xUsername' in lead ? await byHandle(lead.xUsername) : await byUserId(lead.xUserId);
      if (lead.reference !== undefined) row.reference = lead.reference;
      if ('xUsername' in lead) row.xUsername = lead.xUsername;
      results.push(row);
    }
    return { account: account.handle, results, provider: PROVIDER, sendsMessages: false };
  }

  /** Re-reads the sandbox world (after seeding) and forgets every remembered answer. */
  async function refreshWorld(): Promise<void> {
    const refreshable = provider as PublicDataProvider & { refresh?: () => Promise<void> };
    if (typeof refreshable.refresh === 'function') await refreshable.refresh();
    identities.clear();
    relationships.clear();
    snapshots.clear();
  }

  const avatars = createAvatarService(deps);

  return { resolve, eligibility, refreshWorld, candidateAvatar: avatars.candidateAvatar };
}

export type PublicDataService = ReturnType<typeof createPublicDataService>;

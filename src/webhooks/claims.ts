import type { Database } from '../db/database.js';
import { newId } from '../lib/ids.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS, type DeliveryOutcome } from './deliver.js';
import * as repo from './jobs.repository.js';

/**
 * Claims that never report back (the worker died or hung past its lease) do not use up the retry
 * budget, because the receiver may never have been contacted, but only this many are tolerated: a
 * delivery that reliably kills its worker must not be retried forever.
 */
export const MAX_LOST_ATTEMPTS = 2;

const MAX_ERROR_LENGTH = 500;

export interface ClaimedDelivery {
  id: string;
  workspaceId: string;
  webhookId: string;
  eventId: string;
  event: string;
  /** 1-based and unique per delivery: the number this claim records its attempt under. */
  attempt: number;
  /** Earlier claims that never reported; attempt - lostAttempts is this attempt's place in the retry budget. */
  lostAttempts: number;
  leaseToken: string;
  leaseExpiresAt: Date;
  /** Read with the claim, so an attempt needs no further query: the event (null if pruned) and the subscription. */
  payload: { eventData: unknown; eventCreatedAt: Date | null; url: string | null; sealedSecret: string | null };
}

export interface AttemptResult {
  outcome: DeliveryOutcome;
  status: number | null;
  durationMs: number;
  error: string | null;
}

/**
 * Wait before the next attempt, or null when the budget is spent. `completed` counts the attempts that
 * reported, this one included: after the first 1 s, after the second 4 s, after the third nothing.
 */
export function retryDelayMs(completed: number): number | null {
  if (completed < 1 || completed >= MAX_ATTEMPTS) return null;
  return RETRY_DELAYS_MS[completed - 1] ?? null;
}

/** With no cap given, a claim is limited by its batch size only (tests that split a queue between claimers). */
export const UNCAPPED = 1_000_000_000;

/**
 * Claims up to `limit` due deliveries for one worker, fairly across subscriptions and at most
 * `perSubscription` in flight per subscription (see lockDueDeliveries). Each claim takes a fresh attempt
 * number (the unique key on attempts makes a second claim of the same number fail rather than send twice),
 * a fencing token and a lease; while the lease runs no other worker sees the row as due.
 */
export async function claimDueDeliveries(
  db: Database,
  opts: { now: Date; limit: number; leaseMs: number; perSubscription?: number },
): Promise<ClaimedDelivery[]> {
  if (opts.limit <= 0) return [];
  const { now } = opts;
  const leaseExpiresAt = new Date(now.getTime() + opts.leaseMs);
  return db.transaction().execute(async (trx) => {
    const rows = await repo.lockDueDeliveries(trx, now, opts.limit, opts.perSubscription ?? UNCAPPED);
    const claimed: ClaimedDelivery[] = [];
    for (const row of rows) {
      let lost = row.lost_attempts;
      if (row.lease_token !== null) {
        // Still holding a token means the previous claim never reported: its worker is gone.
        await repo.markAttemptLost(trx, row.id, row.attempts, now, 'lease_expired: the worker did not report back');
        lost += 1;
        if (lost > MAX_LOST_ATTEMPTS) {
          await repo.updateDelivery(trx, row.id, {
            state: 'failed',
            lost_attempts: lost,
            lease_token: null,
            lease_expires_at: null,
            last_status: null,
            last_error: 'lease_expired',
            completed_at: now,
          });
          continue;
        }
      }
      claimed.push({
        id: row.id,
        workspaceId: row.workspace_id,
        webhookId: row.webhook_id,
        eventId: row.event_id,
        event: row.event,
        attempt: row.attempts + 1,
        lostAttempts: lost,
        leaseToken: newId(),
        leaseExpiresAt,
        payload: {
          eventData: row.event_data,
          eventCreatedAt: row.event_created_at === null ? null : new Date(row.event_created_at),
          url: row.url,
          sealedSecret: row.secret,
        },
      });
    }
    await repo.markClaimed(trx, claimed, leaseExpiresAt);
    await repo.insertAttempts(
      trx,
      claimed.map((c) => ({ id: newId(), delivery_id: c.id, attempt: c.attempt, started_at: now })),
    );
    return claimed;
  });
}

export type CompletedState = 'delivered' | 'pending' | 'failed';
export interface Completion {
  state: CompletedState;
  nextAttemptAt: Date | null;
  fenced: boolean;
}

function finished(claim: ClaimedDelivery, result: AttemptResult, now: Date): repo.FinishedAttempt {
  const error = result.error === null ? null : result.error.slice(0, MAX_ERROR_LENGTH);
  let state: CompletedState;
  let nextAttemptAt: Date | null = null;
  if (result.outcome === 'success') state = 'delivered';
  else if (result.outcome === 'fail') state = 'failed';
  else {
    const delay = retryDelayMs(claim.attempt - claim.lostAttempts);
    if (delay === null) state = 'failed';
    else {
      state = 'pending';
      nextAttemptAt = new Date(now.getTime() + delay);
    }
  }
  return {
    deliveryId: claim.id,
    attempt: claim.attempt,
    leaseToken: claim.leaseToken,
    outcome: result.outcome,
    status: result.status,
    durationMs: Math.max(0, Math.round(result.durationMs)),
    error,
    finishedAt: now,
    state,
    nextAttemptAt,
  };
}

/**
 * Records what attempts saw and moves their deliveries on, in one transaction. The attempt row is
 * always written (it is what happened); a delivery only changes while its claim still holds the lease
 * token, so a worker that overran its lease and was replaced cannot overwrite its successor's state.
 */
export async function completeAttempts(db: Database, done: Array<{ claim: ClaimedDelivery; result: AttemptResult; now: Date }>): Promise<Completion[]> {
  const items = done.map((d) => finished(d.claim, d.result, d.now));
  const moved = await db.transaction().execute((trx) => repo.recordFinishedAttempts(trx, items));
  return items.map((i) => ({ state: i.state, nextAttemptAt: i.nextAttemptAt, fenced: !moved.has(i.deliveryId) }));
}

export async function completeAttempt(db: Database, claim: ClaimedDelivery, result: AttemptResult, now: Date): Promise<Completion> {
  const [completion] = await completeAttempts(db, [{ claim, result, now }]);
  return completion;
}

/**
 * Group commit for completions: while one batch is being written, finishing attempts queue up and go
 * in the next one. An idle worker writes each completion at once; a busy one writes hundreds per
 * transaction instead of one transaction each.
 */
export function createCompletionBatcher(db: Database, maxBatch = 500) {
  type Pending = { claim: ClaimedDelivery; result: AttemptResult; now: Date; resolve: (c: Completion) => void; reject: (e: unknown) => void };
  let queue: Pending[] = [];
  let writing = false;
  async function drain() {
    writing = true;
    try {
      while (queue.length > 0) {
        const batch = queue.slice(0, maxBatch);
        queue = queue.slice(batch.length);
        try {
          const results = await completeAttempts(db, batch);
          batch.forEach((p, i) => p.resolve(results[i]));
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      writing = false;
    }
  }
  return {
    complete(claim: ClaimedDelivery, result: AttemptResult, now: Date): Promise<Completion> {
      return new Promise<Completion>((resolve, reject) => {
        queue.push({ claim, result, now, resolve, reject });
        if (!writing) void drain();
      });
    },
  };
}

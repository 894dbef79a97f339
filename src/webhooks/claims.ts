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

/**
 * Claims up to `limit` due deliveries for one worker. Each claim takes a fresh attempt number (the
 * unique key on attempts makes a second claim of the same number fail rather than send twice), a
 * fencing token and a lease; while the lease runs no other worker sees the row as due.
 */
export async function claimDueDeliveries(
  db: Database,
  opts: { now: Date; limit: number; leaseMs: number },
): Promise<ClaimedDelivery[]> {
  if (opts.limit <= 0) return [];
  const { now } = opts;
  const leaseExpiresAt = new Date(now.getTime() + opts.leaseMs);
  return db.transaction().execute(async (trx) => {
    const rows = await repo.lockDueDeliveries(trx, now, opts.limit);
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
      const attempt = row.attempts + 1;
      const leaseToken = newId();
      await repo.updateDelivery(trx, row.id, {
        attempts: attempt,
        lost_attempts: lost,
        lease_token: leaseToken,
        lease_expires_at: leaseExpiresAt,
        next_attempt_at: leaseExpiresAt,
      });
      await repo.insertAttempt(trx, { id: newId(), delivery_id: row.id, attempt, started_at: now });
      claimed.push({
        id: row.id,
        workspaceId: row.workspace_id,
        webhookId: row.webhook_id,
        eventId: row.event_id,
        event: row.event,
        attempt,
        lostAttempts: lost,
        leaseToken,
        leaseExpiresAt,
      });
    }
    return claimed;
  });
}

export type CompletedState = 'delivered' | 'pending' | 'failed';

/**
 * Records what one attempt saw and moves the delivery on. The attempt row is always written (it is
 * what happened); the delivery only changes while this claim still holds the lease token, so a worker
 * that overran its lease and was replaced cannot overwrite its successor's state.
 */
export async function completeAttempt(
  db: Database,
  claim: ClaimedDelivery,
  result: AttemptResult,
  now: Date,
): Promise<{ state: CompletedState; nextAttemptAt: Date | null; fenced: boolean }> {
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
  return db.transaction().execute(async (trx) => {
    await repo.finishAttempt(trx, claim.id, claim.attempt, {
      outcome: result.outcome,
      status: result.status,
      duration_ms: Math.max(0, Math.round(result.durationMs)),
      error,
      finished_at: now,
    });
    const updated = await repo.updateDelivery(
      trx,
      claim.id,
      {
        state,
        lease_token: null,
        lease_expires_at: null,
        last_status: result.status,
        last_error: error,
        ...(nextAttemptAt ? { next_attempt_at: nextAttemptAt } : {}),
        completed_at: state === 'pending' ? null : now,
      },
      { leaseToken: claim.leaseToken },
    );
    return { state, nextAttemptAt, fenced: !updated };
  });
}

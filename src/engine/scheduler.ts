import type { EngineConfig } from '../config/config.js';
import type { Database } from '../db/database.js';
import { mapLimit } from '../lib/map-limit.js';
import { withTxRetry } from '../lib/tx-retry.js';
import { confirmDelivery } from '../channels/confirm.js';
import type { ChannelRegistry } from '../channels/descriptor.js';
import { emptySummary, type ActionResult, type ChannelDrivers, type DeliveryCheck, type PassSummary } from '../channels/types.js';
import { claimBatch } from './claim.js';
import type { ClaimBudgets } from './pacing.js';
import { checkOutcome, resultOutcome, type PlannedSend } from './outcomes.js';
import { addRecordCounts, recordOutcomes } from './record.js';
import { countStepOutcomes } from './step-metrics.js';
import type { TextCipher } from '../lib/crypto.js';

interface SchedulerDeps {
  db: Database;
  config: EngineConfig;
  drivers: ChannelDrivers;
  /** Encrypts a task's text (a step that became a person's task). */
  cipher: TextCipher;
  channels: ChannelRegistry;
  /** What the claim reserves beyond the account's pacing (engine/pacing.ts ClaimBudgets). */
  budgets: ClaimBudgets;
}

/** A batch: claim (one transaction), send through the drivers (no transaction), record (one transaction). */
export function createScheduler(deps: SchedulerDeps) {
  const { db, config, drivers } = deps;

  async function perform(send: PlannedSend, claimedAt: Date): Promise<ActionResult> {
    try {
      return await drivers.forChannel(send.action.channel).perform(send.action, { claim: { at: claimedAt } });
    } catch {
      // A driver that throws tells us nothing about delivery beyond "not confirmed"; retry as transient.
      return { outcome: 'failed', error: 'driver_error', retryable: true };
    }
  }

  // A provider that does not answer in time is a provider that cannot say; the finished sends of the batch wait for this.
  const confirm = (check: PlannedSend): Promise<DeliveryCheck> => confirmDelivery(drivers.forChannel(check.action.channel), check.action);

  async function processBatch(now: Date, summary: PassSummary): Promise<number> {
    const { claimed, sends, checks, recorded } = await claimBatch(deps, now, summary);
    countStepOutcomes(deps.channels, recorded);
    if (sends.length === 0 && checks.length === 0) return claimed;
    const [results, verdicts] = await Promise.all([mapLimit(sends, 32, (s) => perform(s, now)), mapLimit(checks, 8, confirm)]);
    // A send names the account it went from (a mailbox): the pass summary counts it under its channel.
    sends.forEach((s, i) => {
      const r = results[i];
      if (r.outcome !== 'ok' || !r.sentFrom) return;
      const into = (summary.channels[s.channel.channel] ??= {}) as Record<string, { sent?: number }>;
      const counts = (into[r.sentFrom] ??= s.channel.emptyCounts?.() ?? {});
      counts.sent = (counts.sent ?? 0) + 1;
    });
    const outcomes = [...sends.map((s, i) => resultOutcome(config, s, results[i], now)), ...checks.map((c, i) => checkOutcome(config, c, verdicts[i], now))];
    // Counted after the commit, so a transaction retried after a deadlock counts its outcomes once: each try counts
    // into a summary of its own, and only the one that committed is added to the pass's.
    const { applied, counted } = await withTxRetry(() =>
      db.transaction().execute(async (trx) => {
        const counted = emptySummary();
        return { applied: await recordOutcomes(trx, outcomes, now, counted, deps.cipher, deps.channels), counted };
      }),
    );
    countStepOutcomes(deps.channels, applied);
    addRecordCounts(summary, counted);
    return claimed;
  }

  /**
   * Works through every due lead; several loops share the work through SKIP LOCKED. `clock` gives each batch its
   * time: the claim's in-flight mark is its lease (OUTREACH_ENGINE_INFLIGHT_LEASE), so it must be when the batch was
   * claimed, not when a long pass began, or another worker would find a claim made late in the pass already stale and
   * check it over while its send is still on the way (docs/engine.md "Leases"). `progress` is called after each batch.
   * One loop starts; another joins (up to OUTREACH_ENGINE_CONCURRENCY) each time a loop claims a full batch, so a
   * pass with little due is not claimed over by every loop, each ending on an empty claim.
   */
  async function runSteps(clock: () => Date, summary: PassSummary, progress?: () => void) {
    const maxBatches = 100_000;
    let batches = 0;
    const running: Promise<void>[] = [];
    const loop = async () => {
      while (batches < maxBatches) {
        batches += 1;
        const done = await processBatch(clock(), summary);
        // A batch done is the loop's heartbeat (engine/heartbeat.ts): a long pass that moves on is not stalled.
        progress?.();
        if (done === 0) return;
        if (done >= config.batchSize && running.length < config.concurrency) start();
      }
    };
    // Every loop's failure is held by its promise (none goes unhandled); the first, in start order, is thrown.
    const start = () => {
      const p = loop();
      p.catch(() => undefined);
      running.push(p);
    };
    start();
    // Loops that join later are in `running` before the one that started them ends.
    for (let i = 0; i < running.length; i++) await running[i];
  }

  return { runSteps };
}

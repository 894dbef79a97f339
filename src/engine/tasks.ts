import type { Database } from '../db/database.js';
import type { EngineConfig } from '../config/config.js';
import type { TextCipher } from '../lib/crypto.js';
import { storedSteps } from '../domain/stored-steps.js';
import type { StepTaskRef } from '../domain/tasks.js';
import { accountBudgetKey, xAccountBudgetKey, type BudgetKey } from '../domain/budgets.js';
import { reserveBudgets } from '../domain/budgets.repository.js';
import { localDay, safeZone } from '../domain/time.js';
import { emptySummary } from '../channels/types.js';
import { localOutcome, resultOutcome, type Outcome } from './outcomes.js';
import { recordOutcomes } from './record.js';
import * as sql from './sql/index.js';
import { bucketOf, isXFollow, X_KINDS } from './steps.js';

// A step task's end (docs/tasks.md): done by a person, the step is recorded exactly as the engine's own send of it
// would be (same ledger action, same webhook event, the lead moves on), with `via: "task"`; skipped, it is recorded
// `skipped` and the sequence goes on. The tasks module calls these through the engine's facade, in its transaction,
// with the task row already locked and closed.

export type { StepTaskRef };

/** `counted`: the channel driver already took the unit on its own budget (the console's X click, within its cap). */
export type StepTaskClose = { done: true; by: string; externalId: string | null; counted: boolean } | { done: false; by: string };

/** The lead no longer holds this step (it moved on, or its sequence changed): nothing is recorded. */
export type StepTaskResult = 'recorded' | 'stale';

export function createTaskSteps(deps: { config: EngineConfig; cipher: TextCipher }) {
  const { config, cipher } = deps;

  /**
   * What the person did counts on the account's budgets, as the engine's send would have (issue 25's ledger):
   * uncapped here, since it already happened; the engine's next automated step then waits if the day is full.
   */
  async function countOnBudgets(trx: Database, row: NonNullable<Awaited<ReturnType<typeof sql.readTaskLead>>>, now: Date) {
    const step = row.steps[row.current_step];
    const keys: BudgetKey[] = [];
    if (X_KINDS.has(step.kind)) {
      if (row.x_account_user_id && (step.kind === 'x_dm' || isXFollow(step)))
        keys.push(xAccountBudgetKey(row.workspace_id, row.x_account_user_id, step.kind === 'x_dm' ? 'dms' : 'follows', now));
    } else {
      const bucket = bucketOf(step.kind);
      if (bucket && row.account_id) {
        const day = localDay(now, safeZone(row.time_zone));
        keys.push(accountBudgetKey(row.workspace_id, row.account_id, bucket, day));
        if (bucket !== 'actions') keys.push(accountBudgetKey(row.workspace_id, row.account_id, 'actions', day));
      }
    }
    if (keys.length > 0)
      await reserveBudgets(
        trx,
        keys.map((key) => ({ key, n: 1, cap: null, at: now })),
      );
  }

  async function closeStepTask(trx: Database, task: StepTaskRef, how: StepTaskClose, now: Date): Promise<StepTaskResult> {
    const row = await sql.readTaskLead(trx, task.workspaceId, task.leadId);
    if (!row || row.sequence_id !== task.sequenceId || row.current_step !== task.stepIndex) return 'stale';
    row.steps = storedSteps(row.steps) as typeof row.steps;
    const step = row.steps[row.current_step];
    if (!step) return 'stale';
    const note = { via: 'task', taskId: task.id, by: how.by };
    let outcome: Outcome;
    if (how.done) {
      const send = { row, step, key: task.idempotencyKey, variantKey: task.variantKey, units: 0, release: null };
      outcome = resultOutcome(config, send, { outcome: 'ok', externalId: how.externalId }, now, note);
      if (!how.counted) await countOnBudgets(trx, row, now);
    } else {
      outcome = localOutcome(row, step, 'skipped', { step: row.current_step, kind: step.kind, reason: 'task_skipped', ...note }, now);
    }
    // The lead holds no in-flight mark while its task is open: the record names none.
    const record = { ...outcome.record, expect_key: row.inflight_key, expect_at: row.inflight_at ? new Date(row.inflight_at).toISOString() : null };
    await recordOutcomes(trx, [{ ...outcome, record }], now, emptySummary(), cipher);
    return 'recorded';
  }

  return {
    /** A person did the step (API/MCP record it; the console's button performed it first). */
    completeStepTask: (trx: Database, task: StepTaskRef, by: string, externalId: string | null, now: Date, opts: { counted?: boolean } = {}) =>
      closeStepTask(trx, task, { done: true, by, externalId, counted: opts.counted ?? false }, now),
    /** A person chose not to do it: `skipped`, and the sequence goes on. */
    skipStepTask: (trx: Database, task: StepTaskRef, by: string, now: Date) => closeStepTask(trx, task, { done: false, by }, now),
  };
}

export type TaskSteps = ReturnType<typeof createTaskSteps>;

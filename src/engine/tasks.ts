import type { Database } from '../db/database.js';
import type { EngineConfig } from '../config/config.js';
import type { TextCipher } from '../lib/crypto.js';
import { storedSteps } from '../domain/stored-steps.js';
import type { StepTaskRef, UncertainTaskRef } from '../domain/tasks.js';
import { isUncontacted } from '../domain/uncontacted.js';
import { newId } from '../lib/ids.js';
import { budgetsOf, type BudgetKey } from '../domain/budgets.js';
import { reserveBudgets } from '../domain/budgets.repository.js';
import { appendLedger, type StepAction, type StepNote } from '../domain/ledger.js';
import { emptySummary } from '../channels/types.js';
import { localOutcome, resultOutcome, senderOf, type Outcome } from './outcomes.js';
import { recordOutcomes } from './record.js';
import * as sql from './sql/index.js';
import { channelOfKind, invites, isMessageStep, stageAfter, type Step } from './steps.js';
import type { ChannelRegistry } from '../channels/descriptor.js';

// A step task's end (docs/tasks.md): done by a person, the step is recorded exactly as the engine's own send of it
// would be (same ledger action, same webhook event, the lead moves on), with `via: "task"`; skipped, it is recorded
// `skipped` and the sequence goes on. An uncertain send's answer (Mark as sent, Send anyway, Leave it) is recorded
// here too. The tasks module calls these through the engine's facade, in its transaction, with the task row already
// locked and closed.

export type { StepTaskRef, UncertainTaskRef };

/**
 * A person's answer to an uncertain send (docs/tasks.md "Uncertain sends"): it arrived (`marked_sent`), it was sent
 * again with a fresh key (`sent_anyway`, with what the driver answered), or it is left as recorded (`left`).
 */
export type UncertainAnswer =
  { answer: 'marked_sent'; by: string } | { answer: 'sent_anyway'; by: string; error: string | null } | { answer: 'left'; by: string };

/** `counted`: the channel driver already took the unit on its own budget (the console's X click, within its cap). */
export type StepTaskClose = { done: true; by: string; externalId: string | null; counted: boolean } | { done: false; by: string };

/** The lead no longer holds this step (it moved on, or its sequence changed): nothing is recorded. */
export type StepTaskResult = 'recorded' | 'stale';

export function createTaskSteps(deps: { config: EngineConfig; cipher: TextCipher; channels: ChannelRegistry }) {
  const { config, cipher, channels } = deps;

  /** Counts one unit on each key (uncapped: what it counts already happened). */
  async function count(trx: Database, keys: BudgetKey[], now: Date) {
    if (keys.length > 0)
      await reserveBudgets(
        trx,
        keys.map((key) => ({ key, n: 1, cap: null, at: now })),
      );
  }

  /**
   * What the person did counts on the account's budgets, as the engine's send would have (issue 25's ledger):
   * uncapped here, since it already happened; the engine's next automated step then waits if the day is full.
   */
  async function countOnBudgets(trx: Database, row: NonNullable<Awaited<ReturnType<typeof sql.readTaskLead>>>, now: Date) {
    const step = row.steps[row.current_step];
    await count(trx, budgetsOf(channels.ofStepKind(step.kind), step, senderOf(row), now), now);
  }

  /**
   * One answer to an uncertain send, in the tasks service's transaction (the task already locked and closed). It
   * arrived, or went again: one ledger entry for the step's action (`recovered`, `by`; no units, the interrupted
   * claim was charged), and a first contact's milestone and stage, as the send would have set them. Left: the step
   * stays as recorded. Then the lead's `last_error` clears unless another uncertain send of it waits for a person.
   */
  async function answerUncertainTask(trx: Database, task: UncertainTaskRef, how: UncertainAnswer, now: Date): Promise<void> {
    const lead = await sql.readTaskLead(trx, channels, task.workspaceId, task.leadId);
    if (!lead) return;
    if (how.answer !== 'left') {
      const error = how.answer === 'sent_anyway' ? how.error : null;
      await appendLedger(trx, [
        {
          id: newId(),
          workspaceId: task.workspaceId,
          leadId: task.leadId,
          at: now,
          // The task stored the step's action (steps.ts activityActionOf) when it opened.
          action: task.action as StepAction,
          outcome: error ? 'failed' : 'ok',
          units: 0,
          detail: {
            step: task.stepIndex,
            kind: task.kind,
            channel: task.channel,
            recovered: how.answer,
            by: how.by,
            taskId: task.id,
            ...(error && { reason: error, final: true }),
          },
          accountId: task.accountId,
        },
      ]);
      if (!error) await markFirstContact(trx, lead, task, now);
      // A send again is a new send: it counts on the messaging account's budgets (uncapped: it already happened); a
      // platform account's own budgets were counted by its driver when it sent.
      if (how.answer === 'sent_anyway' && !error) {
        const step = { kind: task.kind, actions: task.actions } as unknown as Step;
        const sender = { ...senderOf(lead), accountId: task.accountId, accountUserId: null };
        await count(trx, budgetsOf(channels.ofStepKind(task.kind), step, sender, now), now);
      }
    }
    await sql.clearUncertainError(trx, task.leadId, now);
  }

  /**
   * The milestone the step sets (invited, messaged, followed) when the lead has none yet: what the uncertain send was
   * is now known to have reached them, so a first contact counts as one (stage, funnel). A lead already contacted that
   * way keeps its history; no webhook event is sent for a past step.
   */
  async function markFirstContact(trx: Database, lead: NonNullable<Awaited<ReturnType<typeof sql.readTaskLead>>>, task: UncertainTaskRef, now: Date) {
    const step = { kind: task.kind, actions: task.actions } as unknown as Step;
    const ch = channelOfKind(channels, step.kind);
    const column = invites(ch, step) ? (ch.invitedColumn ?? null) : isMessageStep(ch, step) ? 'messaged_at' : null;
    if (!column || lead[column]) return;
    const from = isUncontacted(lead) || (lead.stage === 'skipped' && isUncontacted({ ...lead, stage: 'queued' })) ? 'queued' : lead.stage;
    await sql.markFirstContact(trx, {
      leadId: task.leadId,
      column,
      stage: stageAfter(ch, step, from, !!lead.messaged_at),
      channel: column === 'messaged_at' ? task.channel : null,
      now,
    });
  }

  async function closeStepTask(trx: Database, task: StepTaskRef, how: StepTaskClose, now: Date): Promise<StepTaskResult> {
    const row = await sql.readTaskLead(trx, channels, task.workspaceId, task.leadId);
    if (!row || row.sequence_id !== task.sequenceId || row.current_step !== task.stepIndex) return 'stale';
    row.steps = storedSteps(row.steps) as typeof row.steps;
    const step = row.steps[row.current_step];
    if (!step) return 'stale';
    const note: StepNote = { via: 'task', taskId: task.id, by: how.by };
    let outcome: Outcome;
    if (how.done) {
      const send = { row, step, key: task.idempotencyKey, variantKey: task.variantKey, units: 0, release: null, channel: channelOfKind(channels, step.kind) };
      outcome = resultOutcome(config, send, { outcome: 'ok', externalId: how.externalId }, now, note);
      if (!how.counted) await countOnBudgets(trx, row, now);
    } else {
      outcome = localOutcome(
        channelOfKind(channels, step.kind),
        row,
        step,
        'skipped',
        { step: row.current_step, kind: step.kind, reason: 'task_skipped', ...note },
        now,
      );
    }
    // The lead holds no in-flight mark while its task is open: the record names none.
    const record = { ...outcome.record, expect_key: row.inflight_key, expect_at: row.inflight_at ? new Date(row.inflight_at).toISOString() : null };
    await recordOutcomes(trx, [{ ...outcome, record }], now, emptySummary(), cipher, channels);
    return 'recorded';
  }

  return {
    /** A person did the step (API/MCP record it; the console's button performed it first). */
    completeStepTask: (trx: Database, task: StepTaskRef, by: string, externalId: string | null, now: Date, opts: { counted?: boolean } = {}) =>
      closeStepTask(trx, task, { done: true, by, externalId, counted: opts.counted ?? false }, now),
    /** A person chose not to do it: `skipped`, and the sequence goes on. */
    skipStepTask: (trx: Database, task: StepTaskRef, by: string, now: Date) => closeStepTask(trx, task, { done: false, by }, now),
    /** A person said an uncertain send arrived (Mark as sent), or sent it again (Send anyway, with the driver's error or null). */
    completeUncertainTask: (trx: Database, task: UncertainTaskRef, how: Exclude<UncertainAnswer, { answer: 'left' }>, now: Date) =>
      answerUncertainTask(trx, task, how, now),
    /** A person left an uncertain send as recorded (Leave it). */
    dismissUncertainTask: (trx: Database, task: UncertainTaskRef, by: string, now: Date) => answerUncertainTask(trx, task, { answer: 'left', by }, now),
  };
}

export type TaskSteps = ReturnType<typeof createTaskSteps>;

import type { EngineConfig } from '../config/config.js';
import { isUncontacted } from '../domain/uncontacted.js';
import type { ActionResult, DeliveryCheck } from '../channels/types.js';
import type { PacingRelease } from './pacing.js';
import type { ClaimedRow, LeadRecord } from './sql/rows.js';
import type { StepAction, StepDetail, StepNote } from '../domain/ledger.js';
import type { ActivityOutcome, Channel } from '../domain/vocabulary.js';
import type { ChannelDescriptor, StepEvent } from '../channels/descriptor.js';
import { activityActionOf, bucketOf, contacts, delayMs, eventOf, invites, isMessageStep, sendsAsAccountUser, stageAfter, type Step } from './steps.js';
import { localDay, safeZone } from '../domain/time.js';
import { profileUrlOf, UNCERTAIN_DELIVERY, uncertainTaskKey, type NewTask } from '../domain/tasks.js';
import { newId } from '../lib/ids.js';
import { fallsThrough, isBranching } from '../domain/branches.js';

// What the engine decides for one claimed lead, as plain values: the send it prepares and the record each
// result leads to. No I/O here; the claim and record steps (claim.ts, record.ts) write what these decide.

type Row = ClaimedRow;

/** The settings an outcome depends on. */
export type OutcomeRules = Pick<EngineConfig, 'observeIntervalSeconds' | 'observeDays' | 'maxAttempts' | 'retryMinutes'>;

export interface Outcome {
  row: Row;
  record: LeadRecord;
  /** The step's ledger entry (domain/ledger.ts), written with the record. */
  activity: { action: StepAction; outcome: ActivityOutcome; units: number; detail: StepDetail; accountId: string | null } | null;
  event: StepEvent | null;
  refundUnits: number;
  release: PacingRelease | null;
  tally: 'actions' | 'skipped' | 'failed' | null;
  /** The step became a person's task (domain/policy.ts): opened with the record; the lead's lane waits for it. */
  task?: NewTask;
  /**
   * An uncertain send's task (docs/tasks.md "Uncertain sends"): opened with the record, it holds nothing. Apart from
   * `task` so the step still counts as failed (step-metrics.ts), not as a step handed to a person.
   */
  uncertainTask?: NewTask;
}

/** What recording a step's result needs of its send (a completed task has no driver action). */
export type SendRecord = Pick<PlannedSend, 'row' | 'step' | 'key' | 'variantKey' | 'units' | 'release' | 'channel'>;

const DAY = 86_400_000;

function steadyRecord(row: Row): LeadRecord {
  return {
    id: row.id,
    expect_key: row.inflight_key,
    expect_at: row.inflight_at ? new Date(row.inflight_at).toISOString() : null,
    stage: row.stage,
    current_step: row.current_step,
    next_action_at: null,
    automation_stopped: false,
    invited_at: null,
    messaged_at: null,
    followed_at: null,
    last_error: null,
    step_attempts: row.step_attempts,
    step_waits: row.step_waits,
    observe_next_at: null,
    observe_until: null,
    last_message_channel: null,
    last_activity_at: null,
    waiting_for: null,
    branch_at: null,
    branch_allowed: null,
  };
}

/**
 * Moves past step `index`: the next one is due its delayDays later; after the last, the sequence is done. A branching
 * step (domain/branches.ts) is left for its edges instead: the lead waits at it from `now`, decided in the record's
 * transaction (engine/record.ts, engine/branching.ts), with `allowed` (whether the engine could do the step for this
 * person) kept for its edges.
 */
function advanced(row: Row, index: number, now: Date, stage = row.stage, allowed: boolean | null = null): Partial<LeadRecord> {
  if (isBranching(row.steps[index])) {
    const at = now.toISOString();
    return {
      current_step: index,
      next_action_at: at,
      automation_stopped: false,
      step_attempts: 0,
      step_waits: 0,
      stage,
      waiting_for: 'branch',
      branch_at: at,
      branch_allowed: allowed,
    };
  }
  const next = row.steps[index + 1];
  const done = next === undefined;
  return {
    current_step: index + 1,
    next_action_at: done ? null : new Date(now.getTime() + delayMs(next)).toISOString(),
    automation_stopped: done,
    step_attempts: 0,
    step_waits: 0,
    stage: done && isUncontacted({ ...row, stage }) ? 'skipped' : stage,
  };
}

export { prepareSend, senderOf, type PlannedSend } from './prepare.js';
import { prepareSend, type PlannedSend } from './prepare.js';

/** The messaging account a step's ledger entry and task name: none for a step sent as a platform account. */
function accountFor(ch: ChannelDescriptor, row: Row): string | null {
  return sendsAsAccountUser(ch) ? null : row.account_id;
}

export function localOutcome(
  ch: ChannelDescriptor | undefined,
  row: Row,
  step: Step | undefined,
  kind: 'skipped' | 'opted_out' | 'done' | 'uncertain',
  detail: StepDetail,
  now: Date,
): Outcome {
  const base = steadyRecord(row);
  let record: LeadRecord;
  if (kind === 'opted_out') {
    record = { ...base, stage: isUncontacted(row) ? 'skipped' : row.stage, automation_stopped: true, next_action_at: null };
  } else if (kind === 'done') {
    record = { ...base, stage: isUncontacted(row) ? 'skipped' : row.stage, automation_stopped: true, next_action_at: null };
  } else {
    // A skipped step is one the engine could not do for this person (the `allowed` condition reads false).
    record = { ...base, ...advanced(row, row.current_step, now, row.stage, kind === 'skipped' ? false : null) };
  }
  const activity =
    kind === 'done' || !step || !ch
      ? null
      : {
          action: activityActionOf(ch, step, !!row.messaged_at),
          outcome: kind === 'uncertain' ? ('failed' as const) : ('skipped' as const),
          units: 0,
          detail,
          accountId: accountFor(ch, row),
        };
  return { row, record, activity, event: null, refundUnits: 0, release: null, tally: activity ? (kind === 'uncertain' ? 'failed' : 'skipped') : null };
}

export function resultOutcome(config: OutcomeRules, send: SendRecord, result: ActionResult, now: Date, note: StepNote = {}): Outcome {
  const { row, step, channel: ch } = send;
  if (result.outcome === 'needs_person' && fallsThrough(step)) {
    // A step with an `allowed` edge falls through instead of becoming a task: skipped, its charge and reservation back.
    const o = localOutcome(ch, row, step, 'skipped', { step: row.current_step, kind: step.kind, channel: ch.channel, reason: result.reason }, now);
    return { ...o, record: { ...o.record, expect_key: send.key, expect_at: now.toISOString() }, refundUnits: send.units, release: send.release };
  }
  if (result.outcome === 'needs_person') {
    // Nothing left: the reservation and the energy go back, and the step waits for a person (the driver found that
    // the platform's rules need one, e.g. an X DM to someone who never wrote to the account).
    const task = taskOutcome(send as PlannedSend, result.reason, now);
    return { ...task, record: { ...task.record, expect_key: send.key, expect_at: now.toISOString() }, refundUnits: send.units, release: send.release };
  }
  const index = row.current_step;
  const already = !!row.messaged_at;
  const channel = ch.channel;
  const base = { ...steadyRecord(row), expect_key: send.key, expect_at: now.toISOString() };
  const detail: StepDetail = { step: index, kind: step.kind, channel, ...(send.variantKey && { variant: send.variantKey }), ...note };
  const accountId = accountFor(ch, row);
  const action = activityActionOf(ch, step, already);
  if (result.outcome === 'ok') {
    const contact = contacts(ch, step);
    const message = isMessageStep(ch, step);
    // The invitation's milestone: the column its channel names (invited_at for an invite, followed_at for a follow).
    const invited = invites(ch, step) ? ch.invitedColumn : undefined;
    const record: LeadRecord = {
      ...base,
      ...advanced(row, index, now, stageAfter(ch, step, row.stage, already), true),
      invited_at: invited === 'invited_at' ? now.toISOString() : null,
      messaged_at: message ? now.toISOString() : null,
      followed_at: invited === 'followed_at' ? now.toISOString() : null,
      observe_next_at: contact ? new Date(now.getTime() + config.observeIntervalSeconds * 1000).toISOString() : null,
      observe_until: contact ? new Date(now.getTime() + config.observeDays * DAY).toISOString() : null,
      last_message_channel: message ? channel : null,
      last_activity_at: now.toISOString(),
    };
    return {
      row,
      record,
      activity: { action, outcome: 'ok', units: send.units, detail: result.noteOmitted ? { ...detail, noteOmitted: result.noteOmitted } : detail, accountId },
      event: eventOf(ch, step),
      refundUnits: 0,
      release: null,
      tally: 'actions',
    };
  }
  if (result.outcome === 'uncertain') {
    // The provider may have it (the connection lost inside the transaction): as after a crash, never repeated, the
    // units stay spent, and a person decides. The claim's mark names this send's key.
    const o = uncertainOutcome(ch, { ...row, inflight_key: send.key }, step, now);
    return { ...o, record: { ...o.record, expect_key: send.key, expect_at: now.toISOString() } };
  }
  const limited = result.outcome === 'rate_limited';
  const error = limited ? 'rate_limited' : result.error;
  // A rate limit, or an account that cannot act now (waitSeconds), is the sending side's pacing, not the lead's
  // trouble: the step waits, and the try is counted in step_waits, not in the lead's attempts, so it never fails the
  // lead nor uses up OUTREACH_ENGINE_MAX_ATTEMPTS.
  const waitSeconds = limited ? result.retryAfterSeconds : result.waitSeconds;
  const waiting = waitSeconds !== undefined;
  const attempts = waiting ? row.step_attempts : row.step_attempts + 1;
  const waits = waiting ? row.step_waits + 1 : row.step_waits;
  const permanent = !waiting && result.outcome === 'failed' && (!result.retryable || attempts >= config.maxAttempts);
  const retryAt = new Date(now.getTime() + (waiting ? Math.max(1, waitSeconds) * 1000 : config.retryMinutes * 60_000));
  const record: LeadRecord = permanent
    ? { ...base, stage: 'failed', automation_stopped: true, next_action_at: null, last_error: error, step_attempts: attempts, step_waits: waits }
    : { ...base, next_action_at: retryAt.toISOString(), last_error: error, step_attempts: attempts, step_waits: waits };
  return {
    row,
    record,
    activity: {
      action,
      outcome: 'failed',
      units: 0,
      detail: { ...detail, reason: error, attempt: attempts + waits, ...(permanent ? { final: true } : { retryAt: retryAt.toISOString() }) },
      accountId,
    },
    event: null,
    refundUnits: send.units,
    release: send.release,
    tally: 'failed',
  };
}

/**
 * A send an admission `stop` rule refused for good before any budget was taken (src/domain/admission.ts: a
 * suppressed address): recorded exactly as the driver's refusal of it would be (a final failure under `error`),
 * but nothing was reserved or charged, so nothing is given back.
 */
export function refusedOutcome(config: OutcomeRules, send: Omit<PlannedSend, 'units' | 'release'>, error: string, now: Date): Outcome {
  const o = resultOutcome(config, { ...send, units: 0, release: null }, { outcome: 'failed', error, retryable: false }, now);
  // Never marked in flight: the record names the claim as steadyRecord does (the lead's own mark, none).
  const { expect_key, expect_at } = steadyRecord(send.row);
  return { ...o, record: { ...o.record, expect_key, expect_at } };
}

/**
 * A send a crashed worker left in flight, once its driver has said what became of it: sent is recorded as
 * the success it was (charged at the original claim), not sent is due again at once with its charge and
 * reservation given back, and unknown is recorded as uncertain and never repeated.
 */
export function checkOutcome(config: OutcomeRules, check: PlannedSend, verdict: DeliveryCheck, now: Date): Outcome {
  const { row, step, channel: ch } = check;
  if (verdict.status === 'sent') return resultOutcome(config, check, { outcome: 'ok', externalId: verdict.externalId }, now, { recovered: 'confirmed_sent' });
  if (verdict.status === 'unknown') {
    const uncertain = uncertainOutcome(ch, row, step, now);
    // The check re-leased the mark at `now`; the record must name that claim, not the crashed one.
    return { ...uncertain, record: { ...uncertain.record, expect_at: now.toISOString() } };
  }
  return {
    row,
    record: { ...steadyRecord(row), expect_key: check.key, expect_at: now.toISOString(), next_action_at: now.toISOString() },
    activity: {
      action: activityActionOf(ch, step, !!row.messaged_at),
      outcome: 'failed',
      units: 0,
      detail: {
        step: row.current_step,
        kind: step.kind,
        channel: ch.channel,
        reason: 'interrupted',
        confirmed: 'not_sent',
        retryAt: now.toISOString(),
      },
      accountId: accountFor(ch, row),
    },
    event: null,
    refundUnits: check.units,
    release: check.release,
    tally: 'failed',
  };
}

/**
 * The step goes to a person as a task (docs/tasks.md): nothing is sent, the lead's lane waits (no next action) until
 * the task is done or skipped, and nothing is charged: pacing and caps count it when it is completed.
 */
export function taskOutcome(send: Omit<PlannedSend, 'units' | 'release'>, reason: string, now: Date): Outcome {
  const { row, step, action, channel: ch } = send;
  const task: NewTask = {
    id: newId(),
    ...stepTaskFields(ch, row, step),
    source: 'step',
    stepIndex: row.current_step,
    variantKey: send.variantKey,
    subject: action.subject,
    text: action.text,
    actions: action.actions,
    reason,
    idempotencyKey: send.key,
    dueAt: now,
  };
  return {
    row,
    record: { ...steadyRecord(row), next_action_at: null, last_error: null },
    activity: null,
    event: null,
    refundUnits: 0,
    release: null,
    tally: null,
    task,
  };
}

/**
 * A send nobody can confirm (a crash left it in flight; its driver answers `unknown` or cannot be asked): the ledger
 * says failed `uncertain_delivery` and the sequence moves on, never repeating it (that could double-contact). A person
 * decides what became of it: a task of source `uncertain` opens (it does not hold the lane), and the lead's
 * `last_error` says `uncertain_delivery` until they answer (domain/lanes.ts `advance` keeps it; docs/tasks.md).
 */
export function uncertainOutcome(ch: ChannelDescriptor | undefined, row: Row, step: Step | undefined, now: Date): Outcome {
  const o = localOutcome(ch, row, step, 'uncertain', { step: row.current_step, kind: step?.kind, reason: UNCERTAIN_DELIVERY }, now);
  const task = ch && step && row.inflight_key ? uncertainTask(ch, row, step, row.inflight_key, now) : undefined;
  // Without its step (the sequence lost it) there is nothing to show a person: the entry alone records it, as before.
  return task ? { ...o, record: { ...o.record, last_error: UNCERTAIN_DELIVERY }, uncertainTask: task } : o;
}

/** The person's task for an uncertain send: what was sent (rendered again when it can be), keyed on the step's key. */
function uncertainTask(ch: ChannelDescriptor, row: Row, step: Step, stepKey: string, now: Date): NewTask {
  const prepared = prepareSend(ch, row, step, now);
  return {
    id: newId(),
    ...stepTaskFields(ch, row, step),
    source: 'uncertain',
    stepIndex: row.inflight_step ?? row.current_step,
    variantKey: prepared.ok ? prepared.send.variantKey : row.variant_key,
    subject: prepared.ok ? prepared.send.action.subject : null,
    text: prepared.ok ? prepared.send.action.text : null,
    actions: Array.isArray(step.actions) ? step.actions : [],
    reason: UNCERTAIN_DELIVERY,
    idempotencyKey: uncertainTaskKey(stepKey),
    dueAt: now,
  };
}

/** What a task of a lead's step says of the lead, the step and its channel: the same for a step's task and an uncertain send's. */
function stepTaskFields(ch: ChannelDescriptor, row: Row, step: Step) {
  // A task names a built-in channel today (domain/tasks.ts NewTask); a runtime channel's name is stored as it is.
  const channel = ch.channel as Channel;
  return {
    workspaceId: row.workspace_id,
    leadId: row.id,
    sequenceId: row.sequence_id,
    replyId: null,
    decision: null,
    kind: step.kind,
    channel,
    action: activityActionOf(ch, step, !!row.messaged_at),
    accountId: accountFor(ch, row),
    xAccountUserId: sendsAsAccountUser(ch) ? row.x_account_user_id : null,
    profileUrl: profileUrlOf(ch.profileUrl, row),
  };
}

/** The reservation the claim of this lead's in-flight send made (recorded with the mark; older marks: recomputed). */
export function inflightRelease(ch: ChannelDescriptor, row: Row, step: Step): PacingRelease | null {
  if (row.inflight_release) return row.inflight_release;
  const bucket = bucketOf(ch, step);
  if (!bucket || !row.account_id || !row.inflight_at) return null;
  return { workspaceId: row.workspace_id, accountId: row.account_id, localDay: localDay(new Date(row.inflight_at), safeZone(row.time_zone)), bucket };
}

import type { EngineConfig } from '../config/config.js';
import { isUncontacted } from '../domain/uncontacted.js';
import type { ActionResult, DeliveryCheck, OutboundAction } from '../channels/types.js';
import type { PacingRelease } from './pacing.js';
import { recipientOf } from '../channels/recipients.js';
import type { ClaimedRow, LeadRecord } from './sql/rows.js';
import type { StepAction, StepDetail, StepNote } from '../domain/ledger.js';
import type { ActivityOutcome, Channel } from '../domain/vocabulary.js';
import type { ChannelDescriptor, StepEvent } from '../channels/descriptor.js';
import { activityActionOf, bucketOf, contacts, delayMs, eventOf, invites, isMessageStep, sendsAsAccountUser, stageAfter, type Step } from './steps.js';
import { renderTemplate, type RenderResult } from '../domain/templates.js';
import { localDay, safeZone } from '../domain/time.js';
import type { Sender } from '../domain/budgets.js';
import { pickVariant } from './variants.js';
import { profileUrlOf, UNCERTAIN_DELIVERY, uncertainTaskKey, type NewTask } from '../domain/tasks.js';
import { newId } from '../lib/ids.js';

// What the engine decides for one claimed lead, as plain values: the send it prepares and the record each
// result leads to. No I/O here; the claim and record steps (claim.ts, record.ts) write what these decide.

type Row = ClaimedRow;

/** The settings an outcome depends on. */
export type OutcomeRules = Pick<EngineConfig, 'observeIntervalSeconds' | 'observeDays' | 'maxAttempts' | 'retryMinutes'>;

export interface PlannedSend {
  row: Row;
  step: Step;
  key: string;
  variantKey: string | null;
  units: number;
  release: PacingRelease | null;
  action: OutboundAction;
  /** The step's channel (channels/descriptor.ts). */
  channel: ChannelDescriptor;
}

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
  };
}

/** Moves past step `index`: the next one is due its delayDays later; after the last, the sequence is done. */
function advanced(row: Row, index: number, now: Date, stage = row.stage): Partial<LeadRecord> {
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

/** The messaging account a step's ledger entry and task name: none for a step sent as a platform account. */
function accountFor(ch: ChannelDescriptor, row: Row): string | null {
  return sendsAsAccountUser(ch) ? null : row.account_id;
}

/**
 * Why a step's text cannot go to this lead, for the skipped step's ledger detail: `missing_template_value` and
 * `unknown_placeholder` name the `field`; `broken_placeholder` (issue 39 §3: text still holding another tool's
 * placeholder, an unclosed one, or one brought in by the lead's data) also names the `token`. The step is skipped, never
 * sent with it, like a missing value (claim.ts records every refusal of prepareSend as a skipped step; the tasks of
 * docs/tasks.md are for steps a platform keeps from the engine, and would carry the same broken text).
 */
function renderFailure(r: Exclude<RenderResult, { ok: true }>): Pick<StepDetail, 'reason' | 'field' | 'token'> {
  return r.reason === 'broken_placeholder' ? { reason: r.reason, field: r.field, token: r.token } : { reason: r.reason, field: r.field };
}

/** The sender a claimed lead's step goes out through (domain/budgets.ts Sender). */
export function senderOf(row: Row): Sender {
  return {
    workspaceId: row.workspace_id,
    accountId: row.account_id,
    accountUserId: row.x_account_user_id,
    timeZone: row.time_zone,
    warmupStartedAt: row.warmup_started_at ? new Date(row.warmup_started_at) : null,
    delivery: row.delivery,
  };
}

/** The send this step makes for the lead (templates rendered, variant picked), or why it is skipped. */
export function prepareSend(
  ch: ChannelDescriptor,
  row: Row,
  step: Step,
  now: Date,
): { ok: true; send: Omit<PlannedSend, 'units' | 'release'> } | { ok: false; detail: StepDetail } {
  const base = { step: row.current_step, kind: step.kind };
  const recipient = recipientOf(row);
  const missing = ch.missingAddress?.(recipient) ?? null;
  if (missing) return { ok: false, detail: { ...base, reason: missing } };
  const fields = {
    person: row.person,
    company: row.company,
    title: row.title,
    email: row.email,
    username: row.username,
    linkedinUrl: row.linkedin_url,
    custom: row.custom,
  };
  let variantKey: string | null = null;
  let template = step.message ?? null;
  if (Array.isArray(step.variants) && step.variants.length > 0) {
    const v = pickVariant(step.variants, row.id, row.sequence_id, row.variant_key);
    if (v) {
      variantKey = v.key;
      template = v.messageTmpl;
    }
  }
  if (isMessageStep(ch, step) && !template?.trim()) return { ok: false, detail: { ...base, reason: 'empty_message' } };
  let text: string | null = null;
  if (template) {
    const r = renderTemplate(template, fields);
    if (!r.ok) return { ok: false, detail: { ...base, ...renderFailure(r), ...(variantKey && { variant: variantKey }) } };
    text = r.text;
  }
  let subject: string | null = null;
  if (ch.subject && step.subject) {
    const r = renderTemplate(step.subject, fields);
    if (!r.ok) return { ok: false, detail: { ...base, ...renderFailure(r), in: 'subject' } };
    subject = r.text;
  }
  // Per lead, sequence and step: a follow-up sequence's step 0 is a new action, not a repeat of the first sequence's.
  const key = `${row.id}:${row.sequence_id}:${row.current_step}`;
  const asUser = sendsAsAccountUser(ch);
  return {
    ok: true,
    send: {
      row,
      step,
      key,
      variantKey,
      channel: ch,
      action: {
        workspaceId: row.workspace_id,
        accountId: asUser ? null : row.account_id,
        accountUserId: asUser ? row.x_account_user_id : null,
        kind: step.kind,
        channel: ch.channel,
        recipient,
        subject,
        text,
        actions: Array.isArray(step.actions) ? step.actions : [],
        idempotencyKey: key,
        at: now,
        // Every try of this step so far, waits included (the sandbox's scripted rate limits count them).
        attempt: row.step_attempts + row.step_waits,
      },
    },
  };
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
    record = { ...base, ...advanced(row, row.current_step, now) };
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
      ...advanced(row, index, now, stageAfter(ch, step, row.stage, already)),
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
      activity: { action, outcome: 'ok', units: send.units, detail, accountId },
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

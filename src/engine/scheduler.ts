import type { EngineConfig } from '../config/config.js';
import type { Database } from '../db/database.js';
import { newId } from '../lib/ids.js';
import { effectiveBalance, utcDayStart, type BillingStatus } from '../modules/energy/energy.service.js';
import { confirmDelivery } from './channels/confirm.js';
import type { ActionResult, ChannelDrivers, DeliveryCheck, OutboundAction } from './channels/types.js';
import * as repo from './engine.repository.js';
import { releaseReservations, reservePacing, type PacingBucket, type PacingRelease, type PacingRequest } from './pacing.js';
import { recipientOf } from './recipients.js';
import { enqueueEvents, eventLead } from '../webhooks/outbox.js';
import {
  activityActionOf,
  bucketOf,
  channelOf,
  contacts,
  delayMs,
  eventOf,
  isXFollow,
  MESSAGE_KINDS,
  stageAfter,
  X_KINDS,
  type Step,
} from './steps.js';
import { renderTemplate } from './templates.js';
import { localDay, safeZone } from './time.js';
import { pickVariant } from './variants.js';

export interface PassSummary {
  /** Steps that went out (outcome ok). */
  actions: number;
  skipped: number;
  failed: number;
  repliesDetected: number;
  /** Steps that were due but wait for pacing, sending hours or energy. */
  deferred: number;
  /** Acceptances and follow-backs recorded. */
  observations: number;
  /** New candidates saved by Play discovery. */
  discovered: number;
}

export const emptySummary = (): PassSummary => ({ actions: 0, skipped: 0, failed: 0, repliesDetected: 0, deferred: 0, observations: 0, discovered: 0 });

interface SchedulerDeps {
  db: Database;
  config: EngineConfig;
  drivers: ChannelDrivers;
}

type Row = repo.ClaimedRow;

interface PlannedSend {
  row: Row;
  step: Step;
  key: string;
  variantKey: string | null;
  units: number;
  release: PacingRelease | null;
  action: OutboundAction;
}

interface Outcome {
  row: Row;
  record: repo.LeadRecord;
  activity: Omit<repo.ActivityInsert, 'id' | 'workspace_id' | 'lead_id' | 'created_at'> | null;
  event: { event: 'lead.invited' | 'lead.messaged' | 'lead.emailed'; channel?: 'x' } | null;
  refundUnits: number;
  release: PacingRelease | null;
  tally: 'actions' | 'skipped' | 'failed' | null;
}

const DAY = 86_400_000;

const untouched = (row: Row) =>
  (row.stage === 'queued' || row.stage === 'resolving') && !row.invited_at && !row.messaged_at && !row.followed_at && !row.connected_at;

function steadyRecord(row: Row): repo.LeadRecord {
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
    observe_next_at: null,
    observe_until: null,
    last_message_channel: null,
    last_activity_at: null,
  };
}

/** Moves past step `index`: the next one is due its delayDays later; after the last, the sequence is done. */
function advanced(row: Row, index: number, now: Date, stage = row.stage): Partial<repo.LeadRecord> {
  const next = row.steps[index + 1];
  const done = next === undefined;
  return {
    current_step: index + 1,
    next_action_at: done ? null : new Date(now.getTime() + delayMs(next)).toISOString(),
    automation_stopped: done,
    step_attempts: 0,
    stage: done && untouched({ ...row, stage }) ? 'skipped' : stage,
  };
}

const detailOf = (o: Record<string, unknown>) => JSON.stringify(o);

export function createScheduler(deps: SchedulerDeps) {
  const { db, config, drivers } = deps;

  function accountFor(row: Row, step: Step): string | null {
    return X_KINDS.has(step.kind) ? null : row.account_id;
  }

  function prepare(row: Row, step: Step, now: Date): { ok: true; send: Omit<PlannedSend, 'units' | 'release'> } | { ok: false; detail: Record<string, unknown> } {
    const base = { step: row.current_step, kind: step.kind };
    if (step.kind === 'email' && !row.email) return { ok: false, detail: { ...base, reason: 'missing_email' } };
    if (X_KINDS.has(step.kind) && !row.x_user_id) return { ok: false, detail: { ...base, reason: 'missing_x_user_id' } };
    const fields = { person: row.person, company: row.company, title: row.title, email: row.email, username: row.username, linkedinUrl: row.linkedin_url };
    let variantKey: string | null = null;
    let template = step.message ?? null;
    if (Array.isArray(step.variants) && step.variants.length > 0) {
      const v = pickVariant(step.variants, row.id, row.sequence_id, row.variant_key);
      if (v) {
        variantKey = v.key;
        template = v.messageTmpl;
      }
    }
    if (MESSAGE_KINDS.has(step.kind) && !template?.trim()) return { ok: false, detail: { ...base, reason: 'empty_message' } };
    let text: string | null = null;
    if (template) {
      const r = renderTemplate(template, fields);
      if (!r.ok) return { ok: false, detail: { ...base, reason: r.reason, field: r.field, ...(variantKey && { variant: variantKey }) } };
      text = r.text;
    }
    let subject: string | null = null;
    if (step.kind === 'email' && step.subject) {
      const r = renderTemplate(step.subject, fields);
      if (!r.ok) return { ok: false, detail: { ...base, reason: r.reason, field: r.field, in: 'subject' } };
      subject = r.text;
    }
    // Per lead, sequence and step: a follow-up sequence's step 0 is a new action, not a repeat of the first sequence's.
    const key = `${row.id}:${row.sequence_id}:${row.current_step}`;
    const channel = channelOf(step.kind);
    return {
      ok: true,
      send: {
        row,
        step,
        key,
        variantKey,
        action: {
          workspaceId: row.workspace_id,
          accountId: X_KINDS.has(step.kind) ? null : row.account_id,
          accountUserId: X_KINDS.has(step.kind) ? row.x_account_user_id : null,
          kind: step.kind,
          channel,
          recipient: recipientOf(row),
          subject,
          text,
          actions: Array.isArray(step.actions) ? step.actions : [],
          idempotencyKey: key,
          at: now,
          attempt: row.step_attempts,
        },
      },
    };
  }

  function localOutcome(row: Row, step: Step | undefined, kind: 'skipped' | 'opted_out' | 'done' | 'uncertain', detail: Record<string, unknown>, now: Date): Outcome {
    const base = steadyRecord(row);
    let record: repo.LeadRecord;
    if (kind === 'opted_out') {
      record = { ...base, stage: untouched(row) ? 'skipped' : row.stage, automation_stopped: true, next_action_at: null };
    } else if (kind === 'done') {
      record = { ...base, stage: untouched(row) ? 'skipped' : row.stage, automation_stopped: true, next_action_at: null };
    } else {
      record = { ...base, ...advanced(row, row.current_step, now) };
    }
    const activity =
      kind === 'done' || !step
        ? null
        : {
            action: activityActionOf(step, !!row.messaged_at),
            outcome: kind === 'uncertain' ? ('failed' as const) : ('skipped' as const),
            units: 0,
            detail: detailOf(detail),
            account_id: accountFor(row, step),
          };
    return { row, record, activity, event: null, refundUnits: 0, release: null, tally: activity ? (kind === 'uncertain' ? 'failed' : 'skipped') : null };
  }

  function resultOutcome(send: PlannedSend, result: ActionResult, now: Date, note: Record<string, unknown> = {}): Outcome {
    const { row, step } = send;
    const index = row.current_step;
    const already = !!row.messaged_at;
    const channel = channelOf(step.kind);
    const base = { ...steadyRecord(row), expect_key: send.key, expect_at: now.toISOString() };
    const detail: Record<string, unknown> = { step: index, kind: step.kind, channel, ...(send.variantKey && { variant: send.variantKey }), ...note };
    const account_id = accountFor(row, step);
    const action = activityActionOf(step, already);
    if (result.outcome === 'ok') {
      const contact = contacts(step);
      const record: repo.LeadRecord = {
        ...base,
        ...advanced(row, index, now, stageAfter(step, row.stage, already)),
        invited_at: step.kind === 'connect' ? now.toISOString() : null,
        messaged_at: MESSAGE_KINDS.has(step.kind) ? now.toISOString() : null,
        followed_at: isXFollow(step) ? now.toISOString() : null,
        observe_next_at: contact ? new Date(now.getTime() + config.observeIntervalSeconds * 1000).toISOString() : null,
        observe_until: contact ? new Date(now.getTime() + config.observeDays * DAY).toISOString() : null,
        last_message_channel: MESSAGE_KINDS.has(step.kind) ? channel : null,
        last_activity_at: now.toISOString(),
      };
      return {
        row,
        record,
        activity: { action, outcome: 'ok', units: send.units, detail: detailOf(detail), account_id },
        event: eventOf(step),
        refundUnits: 0,
        release: null,
        tally: 'actions',
      };
    }
    const attempts = row.step_attempts + 1;
    const limited = result.outcome === 'rate_limited';
    const error = limited ? 'rate_limited' : result.error;
    const permanent = (!limited && !result.retryable) || attempts >= config.maxAttempts;
    const retryAt = new Date(now.getTime() + (limited ? Math.max(1, result.retryAfterSeconds) * 1000 : config.retryMinutes * 60_000));
    const record: repo.LeadRecord = permanent
      ? { ...base, stage: 'failed', automation_stopped: true, next_action_at: null, last_error: error, step_attempts: attempts }
      : { ...base, next_action_at: retryAt.toISOString(), last_error: error, step_attempts: attempts };
    return {
      row,
      record,
      activity: {
        action,
        outcome: 'failed',
        units: 0,
        detail: detailOf({ ...detail, reason: error, attempt: attempts, ...(permanent ? { final: true } : { retryAt: retryAt.toISOString() }) }),
        account_id,
      },
      event: null,
      refundUnits: send.units,
      release: send.release,
      tally: 'failed',
    };
  }

  /**
   * A send a crashed worker left in flight, once its driver has said what became of it: sent is recorded as
   * the success it was (charged at the original claim), not sent is due again at once with its charge and
   * reservation given back, and unknown is recorded as uncertain and never repeated.
   */
  function checkOutcome(check: PlannedSend, verdict: DeliveryCheck, now: Date): Outcome {
    const { row, step } = check;
    if (verdict.status === 'sent') return resultOutcome(check, { outcome: 'ok', externalId: verdict.externalId }, now, { recovered: 'confirmed_sent' });
    if (verdict.status === 'unknown') {
      const uncertain = uncertainOutcome(row, step, now);
      // The check re-leased the mark at `now`; the record must name that claim, not the crashed one.
      return { ...uncertain, record: { ...uncertain.record, expect_at: now.toISOString() } };
    }
    return {
      row,
      record: { ...steadyRecord(row), expect_key: check.key, expect_at: now.toISOString(), next_action_at: now.toISOString() },
      activity: {
        action: activityActionOf(step, !!row.messaged_at),
        outcome: 'failed',
        units: 0,
        detail: detailOf({ step: row.current_step, kind: step.kind, channel: channelOf(step.kind), reason: 'interrupted', confirmed: 'not_sent', retryAt: now.toISOString() }),
        account_id: accountFor(row, step),
      },
      event: null,
      refundUnits: check.units,
      release: check.release,
      tally: 'failed',
    };
  }

  function uncertainOutcome(row: Row, step: Step | undefined, now: Date): Outcome {
    // The driver may or may not have acted before the crash; repeating could double-contact.
    return localOutcome(row, step, 'uncertain', { step: row.current_step, kind: step?.kind, reason: 'uncertain_delivery' }, now);
  }

  /** The reservation the claim of this lead's in-flight send made (recorded with the mark; older marks: recomputed). */
  function inflightRelease(row: Row, step: Step): PacingRelease | null {
    if (row.inflight_release) return row.inflight_release;
    const bucket = bucketOf(step.kind);
    if (!bucket || !row.account_id || !row.inflight_at) return null;
    return { workspaceId: row.workspace_id, accountId: row.account_id, localDay: localDay(new Date(row.inflight_at), safeZone(row.time_zone)), bucket };
  }

  /** Lead, ledger, outbox and reservation refunds of a set of outcomes: all in the caller's one transaction. */
  async function record(trx: Database, outcomes: Outcome[], now: Date, summary: PassSummary) {
    if (outcomes.length === 0) return;
    const recorded = await repo.recordLeads(trx, outcomes.map((o) => o.record), now);
    const byId = new Map(recorded.map((r) => [r.id, r]));
    const applied = outcomes.filter((o) => byId.has(o.row.id));
    await repo.insertActivities(
      trx,
      applied
        .filter((o) => o.activity)
        .map((o) => ({ id: newId(), workspace_id: o.row.workspace_id, lead_id: o.row.id, created_at: now, ...o.activity! })),
    );
    await enqueueEvents(
      trx,
      applied.flatMap((o) => {
        if (!o.event) return [];
        const data: Record<string, unknown> = { lead: eventLead(byId.get(o.row.id)!) };
        if (o.event.channel) data.channel = o.event.channel;
        return [{ workspaceId: o.row.workspace_id, event: o.event.event, data, createdAt: now }];
      }),
    );
    const refunds = new Map<string, number>();
    for (const o of applied) if (o.refundUnits > 0) refunds.set(o.row.workspace_id, (refunds.get(o.row.workspace_id) ?? 0) + o.refundUnits);
    // Counters before the workspace row: the claim transaction takes them in that order too.
    await releaseReservations(trx, applied.flatMap((o) => (o.release ? [o.release] : [])));
    await repo.refundEnergy(trx, refunds);
    for (const o of applied) if (o.tally) summary[o.tally] += 1;
  }

  /** Claim transaction: decide every claimed lead, reserve budgets, mark sends in flight. */
  async function claimBatch(now: Date, summary: PassSummary): Promise<{ claimed: number; sends: PlannedSend[]; checks: PlannedSend[] }> {
    return db.transaction().execute(async (trx) => {
      const rows = await repo.claimDue(trx, {
        now,
        staleBefore: new Date(now.getTime() - config.inflightLeaseSeconds * 1000),
        limit: config.batchSize,
        units: config.unitsPerAction,
        dayStart: utcDayStart(now),
      });
      if (rows.length === 0) return { claimed: 0, sends: [], checks: [] };
      const local: Outcome[] = [];
      const checks: PlannedSend[] = [];
      const waits: string[] = [];
      const candidates: Omit<PlannedSend, 'units' | 'release'>[] = [];
      for (const row of rows) {
        const steps = Array.isArray(row.steps) ? row.steps : [];
        row.steps = steps;
        const step = steps[row.current_step];
        if (row.inflight_key) {
          const inflight = steps[row.inflight_step ?? row.current_step];
          const prepared = inflight && drivers.forChannel(channelOf(inflight.kind)).confirm ? prepare(row, inflight, now) : null;
          if (prepared?.ok) {
            const key = row.inflight_key;
            checks.push({ ...prepared.send, key, action: { ...prepared.send.action, idempotencyKey: key }, units: config.unitsPerAction, release: inflightRelease(row, inflight) });
          } else {
            local.push(uncertainOutcome(row, inflight, now));
          }
        } else if (!step) {
          local.push(localOutcome(row, undefined, 'done', {}, now));
        } else if (row.identity_opted_out) {
          local.push(localOutcome(row, step, 'opted_out', { step: row.current_step, kind: step.kind, reason: 'identity_opted_out' }, now));
        } else if (step.kind === 'message' && row.invited_at && !row.connected_at) {
          waits.push(row.id);
        } else {
          const prepared = prepare(row, step, now);
          if (prepared.ok) candidates.push(prepared.send);
          else local.push(localOutcome(row, step, 'skipped', prepared.detail, now));
        }
      }

      const deferred: { id: string; at: string }[] = [];
      const sends: PlannedSend[] = [];
      const units = config.unitsPerAction;
      // Pacing first, then energy: the workspace row is the hottest lock, so it is taken last and held
      // only for the few statements before commit.
      const requests: PacingRequest[] = [];
      for (const c of candidates) {
        const bucket = bucketOf(c.step.kind);
        if (bucket && c.row.account_id) {
          requests.push({ key: c.row.id, workspaceId: c.row.workspace_id, accountId: c.row.account_id, timeZone: c.row.time_zone, warmupStartedAt: c.row.warmup_started_at ? new Date(c.row.warmup_started_at) : null, bucket });
        }
      }
      const decisions = await reservePacing(trx, config.pacing, requests, now);
      const paced: (Omit<PlannedSend, 'units'>)[] = [];
      for (const c of candidates) {
        const d = decisions.get(c.row.id);
        if (d && !d.granted) deferred.push({ id: c.row.id, at: d.retryAt.toISOString() });
        else {
          const bucket = bucketOf(c.step.kind) as PacingBucket;
          paced.push({ ...c, release: d?.granted ? { workspaceId: c.row.workspace_id, accountId: c.row.account_id!, localDay: d.localDay, bucket } : null });
        }
      }
      const budgets = new Map<string, { row: { billing_status: string; energy_balance: number; energy_daily_refill: number; energy_refilled_at: Date }; available: number; left: number; used: number }>();
      if (units > 0 && paced.length > 0) {
        for (const w of await repo.lockWorkspaceEnergy(trx, [...new Set(paced.map((c) => c.row.workspace_id))])) {
          const available = effectiveBalance({ ...w, energy_refilled_at: new Date(w.energy_refilled_at), billing_status: w.billing_status as BillingStatus }, now);
          budgets.set(w.id, { row: w, available, left: Math.floor(available / units), used: 0 });
        }
      }
      const nextRefill = new Date(utcDayStart(now).getTime() + DAY).toISOString();
      const unaffordable: PacingRelease[] = [];
      for (const c of paced) {
        const b = budgets.get(c.row.workspace_id);
        if (units > 0 && (!b || b.left <= 0)) {
          deferred.push({ id: c.row.id, at: nextRefill });
          if (c.release) unaffordable.push(c.release);
          continue;
        }
        if (b) {
          b.left -= 1;
          b.used += 1;
        }
        sends.push({ ...c, units });
      }
      await releaseReservations(trx, unaffordable);
      for (const [id, b] of budgets) {
        if (b.used === 0) continue;
        const due = new Date(b.row.energy_refilled_at).getTime() < utcDayStart(now).getTime() && b.row.billing_status !== 'canceled';
        await repo.writeWorkspaceEnergy(trx, id, b.available - b.used * units, due ? now : new Date(b.row.energy_refilled_at));
      }

      // Checks keep their key and take a fresh lease, so no other worker asks (or records) them meanwhile.
      await repo.markInflight(
        trx,
        [
          ...sends.map((s) => ({ id: s.row.id, key: s.key, step: s.row.current_step, variant_key: s.variantKey, release: s.release })),
          // A check re-leases the mark but keeps the original claim's reservation (stored, or recomputed from its time).
          ...checks.map((s) => ({ id: s.row.id, key: s.key, step: s.row.current_step, variant_key: s.variantKey, release: s.release })),
        ],
        now,
      );
      await repo.reschedule(trx, deferred);
      await repo.setWaitingForAccept(trx, waits, now);
      await record(trx, local, now, summary);
      summary.deferred += deferred.length;
      return { claimed: rows.length, sends, checks };
    });
  }

  async function perform(send: PlannedSend): Promise<ActionResult> {
    try {
      return await drivers.forChannel(send.action.channel).perform(send.action);
    } catch {
      // A driver that throws tells us nothing about delivery beyond "not confirmed"; retry as transient.
      return { outcome: 'failed', error: 'driver_error', retryable: true };
    }
  }

  // A provider that does not answer in time is a provider that cannot say; the finished sends of the batch wait for this.
  const confirm = (check: PlannedSend): Promise<DeliveryCheck> => confirmDelivery(drivers.forChannel(check.action.channel), check.action);

  async function processBatch(now: Date, summary: PassSummary): Promise<number> {
    const { claimed, sends, checks } = await claimBatch(now, summary);
    if (sends.length === 0 && checks.length === 0) return claimed;
    const [results, verdicts] = await Promise.all([mapLimit(sends, 32, perform), mapLimit(checks, 8, confirm)]);
    const outcomes = [...sends.map((s, i) => resultOutcome(s, results[i], now)), ...checks.map((c, i) => checkOutcome(c, verdicts[i], now))];
    await withTxRetry(() => db.transaction().execute((trx) => record(trx, outcomes, now, summary)));
    return claimed;
  }

  /** Works through every due lead; several loops share the work through SKIP LOCKED. */
  async function runSteps(now: Date, summary: PassSummary) {
    const maxBatches = 100_000;
    let batches = 0;
    const loop = async () => {
      while (batches < maxBatches) {
        batches += 1;
        if ((await processBatch(now, summary)) === 0) return;
      }
    };
    await Promise.all(Array.from({ length: config.concurrency }, loop));
  }

  return { runSteps };
}

export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Deadlocks and serialization failures are retried: the transaction is all-or-nothing, so a retry is safe. */
export async function withTxRetry<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (i >= attempts || (code !== '40P01' && code !== '40001')) throw err;
      await new Promise((r) => setTimeout(r, 10 * i));
    }
  }
}


import type { EngineConfig } from '../config/config.js';
import { storedSteps } from '../domain/stored-steps.js';
import type { Database } from '../db/database.js';
import { sendingZone, sendsAtThisHour, type AdmissionContext } from '../domain/admission.js';
import { afterSpending, effectiveBalance, nextUtcDayStart } from '../domain/energy.js';
import type { ChannelDrivers } from '../channels/types.js';
import {
  inflightRelease,
  localOutcome,
  prepareSend,
  refusedOutcome,
  senderOf,
  taskOutcome,
  uncertainOutcome,
  type Outcome,
  type OutcomeRules,
  type PlannedSend,
} from './outcomes.js';
import { deliveryOf } from '../domain/policy.js';
import { fallsThrough } from '../domain/branches.js';
import type { TextCipher } from '../lib/crypto.js';
import {
  releaseReservations,
  reservePacing,
  sendingWindowRetryAt,
  type PacingBucket,
  type PacingRelease,
  type PacingRequest,
  type ClaimBudgets,
} from './pacing.js';
import { recordOutcomes } from './record.js';
import { decideBranches } from './branching.js';
import type { PassSummary } from '../channels/types.js';
import * as sql from './sql/index.js';
import type { ClaimedRow, WorkspaceEnergyRow } from './sql/rows.js';
import { bucketOf, channelOfKind } from './steps.js';
import type { BudgetAsk, ChannelRegistry, ResolvedBudget } from '../channels/descriptor.js';
import { budgetKeyText, budgetsOf, nextUtcDay, type BudgetKey } from '../domain/budgets.js';
import { lockBudgets, readBudgetUsage, reserveBudgets } from '../domain/budgets.repository.js';
import { addLocalDays, safeZone, zonedTime } from '../domain/time.js';

// The claim transaction, as the five steps it takes: classify the claimed leads (the admission list's rules,
// src/domain/admission.ts: `hold` ones in the claim's SQL, `stop` and `wait` ones here), reserve the accounts' send
// budgets, charge energy, mark the sends in flight, record the rest. Budgets come before energy: the workspace row is
// the hottest lock, so it is taken last and held only for the few statements before commit.

type ClaimSettings = Pick<EngineConfig, 'inflightLeaseSeconds' | 'batchSize' | 'unitsPerAction' | 'pacing'> & OutcomeRules;

/** A send that passed the lead's own checks and still needs budget. */
type Candidate = Omit<PlannedSend, 'units' | 'release'>;
/** A candidate that holds its pacing reservation (null: an unpaced step) and still needs energy. */
type Paced = Omit<PlannedSend, 'units'>;
/** A due step that waits: for pacing, sending hours or energy. */
interface Deferral {
  id: string;
  at: string;
}

interface Classified {
  /** Sends a crashed worker left in flight, to ask their driver about. */
  checks: PlannedSend[];
  /** Leads decided without sending: done, opted out, suppressed, skipped, uncertain. */
  local: Outcome[];
  /** Message steps waiting for a pending invite's acceptance. */
  waits: string[];
  /** Steps outside their sending hours (the lead's or the account's zone), moved to the next opening. */
  deferred: Deferral[];
  candidates: Candidate[];
}

/**
 * What each claimed lead needs: a delivery check, a local decision, a wait for acceptance or for the sending hours,
 * or a send. The admission list's `stop` rules arrive as columns of the claim's SQL; its `wait` rule is checked here.
 */
function classifyClaimed(
  rows: ClaimedRow[],
  channels: { drivers: ChannelDrivers; registry: ChannelRegistry },
  config: ClaimSettings,
  admission: AdmissionContext,
): Classified {
  const { drivers, registry } = channels;
  const { now } = admission;
  const units = config.unitsPerAction;
  const out: Classified = { checks: [], local: [], waits: [], deferred: [], candidates: [] };
  for (const row of rows) {
    const steps = storedSteps(row.steps) as typeof row.steps;
    row.steps = steps;
    const step = steps[row.current_step];
    if (row.inflight_key) {
      const inflight = steps[row.inflight_step ?? row.current_step];
      const ch = inflight && channelOfKind(registry, inflight.kind);
      const prepared = inflight && drivers.forChannel(ch.channel).confirm ? prepareSend(ch, row, inflight, now) : null;
      if (prepared?.ok) {
        const key = row.inflight_key;
        // `at` is when the interrupted attempt began: a driver looking for it at the provider searches from there.
        const at = row.inflight_at ? new Date(row.inflight_at) : now;
        out.checks.push({
          ...prepared.send,
          key,
          action: { ...prepared.send.action, idempotencyKey: key, at },
          units,
          release: inflightRelease(ch, row, inflight),
        });
      } else {
        out.local.push(uncertainOutcome(ch, row, inflight, now));
      }
    } else if (!step) {
      out.local.push(localOutcome(undefined, row, undefined, 'done', { step: row.current_step }, now));
    } else if (row.identity_opted_out) {
      out.local.push(
        localOutcome(
          channelOfKind(registry, step.kind),
          row,
          step,
          'opted_out',
          { step: row.current_step, kind: step.kind, reason: 'identity_opted_out' },
          now,
        ),
      );
    } else if (channelOfKind(registry, step.kind).waitsForAcceptance?.(step, row, row.delivery)) {
      // The step waits for its channel's invitation to be accepted (channels/descriptor.ts `waitsForAcceptance`).
      out.waits.push(row.id);
    } else {
      const ch = channelOfKind(registry, step.kind);
      const prepared = prepareSend(ch, row, step, now);
      if (!prepared.ok) out.local.push(localOutcome(ch, row, step, 'skipped', prepared.detail, now));
      else if (row.address_suppressed) out.local.push(refusedOutcome(config, prepared.send, 'address_suppressed', now));
      else {
        // The platform policy (domain/policy.ts): a person's step becomes a task now, whatever the hour (a person
        // does it in their own working time); an X DM may go alone only if the person wrote first (the driver looks).
        const delivery = deliveryOf(step.kind, ch.channel, row.delivery);
        // The hours are read in the lead's zone or the account's (admission.ts `sendingZone`), and so is the retry.
        const zone = { accountTimeZone: row.time_zone, leadTimeZone: row.lead_time_zone, sendInLeadHours: row.send_in_lead_hours };
        // A step with an `allowed` edge (domain/branches.ts) falls through to that edge rather than becoming a task.
        if (delivery.by === 'person' && fallsThrough(step))
          out.local.push(
            localOutcome(ch, row, step, 'skipped', { step: row.current_step, kind: step.kind, channel: ch.channel, reason: delivery.reason }, now),
          );
        else if (delivery.by === 'person') out.local.push(taskOutcome(prepared.send, delivery.reason, now));
        else if (!sendsAtThisHour({ step, ...zone }, admission))
          out.deferred.push({ id: row.id, at: sendingWindowRetryAt(config.pacing, sendingZone(zone), now).toISOString() });
        else {
          if (delivery.by === 'engine_if_they_wrote_first') prepared.send.action.onlyIfTheyWroteFirst = true;
          out.candidates.push(prepared.send);
        }
      }
    }
  }
  return out;
}

/** Reserves each paced candidate's budgets on its messaging account (the ledger); the ones that do not fit wait. */
async function reservePacingFor(trx: Database, rules: ClaimSettings['pacing'], candidates: Candidate[], now: Date) {
  const requests: PacingRequest[] = [];
  for (const c of candidates) {
    const bucket = bucketOf(c.channel, c.step);
    if (bucket && c.row.account_id) {
      requests.push({
        key: c.row.id,
        workspaceId: c.row.workspace_id,
        accountId: c.row.account_id,
        timeZone: c.row.time_zone,
        warmupStartedAt: c.row.warmup_started_at ? new Date(c.row.warmup_started_at) : null,
        bucket,
      });
    }
  }
  const decisions = await reservePacing(trx, rules, requests, now);
  const paced: Paced[] = [];
  const deferred: Deferral[] = [];
  for (const c of candidates) {
    const d = decisions.get(c.row.id);
    if (d && !d.granted) deferred.push({ id: c.row.id, at: d.retryAt.toISOString() });
    else {
      const bucket = bucketOf(c.channel, c.step) as PacingBucket;
      paced.push({ ...c, release: d?.granted ? { workspaceId: c.row.workspace_id, accountId: c.row.account_id!, localDay: d.localDay, bucket } : null });
    }
  }
  return { paced, deferred };
}

/** When a full budget of these keys has room again: the start of the next day of the first full key's window. */
function nextWindowAt(key: BudgetKey, timeZone: string | null, now: Date): Date {
  if (key.window === 'utc_day') return nextUtcDay(now);
  const zone = safeZone(timeZone);
  const next = addLocalDays(now, zone, 1);
  return zonedTime(next.year, next.month, next.day, 0, zone);
}

/**
 * Reserves, in the claim's transaction, every budget a send's channel names beyond its messaging account's (those are
 * the pacing's): `budgetsOf`'s keys, each capped by `capOf`, and those only the database can name (the descriptor's
 * `resolveBudgets`, through `resolve`: e-mail's sending mailbox and its recipient's domain). The keys a kept send
 * holds join its reservation (`release.channelKeys`), so whatever gives the pacing back (no energy, a failed or
 * rate-limited send, a task, a crash's recovery) gives them back too. A send one of whose budgets is full waits for
 * that window's next day and gives its pacing reservation back.
 */
async function reserveChannelBudgets(trx: Database, paced: Paced[], now: Date, budgets: ClaimBudgets) {
  const kept: Paced[] = [];
  const deferred: Deferral[] = [];
  const giveBack: PacingRelease[] = [];
  const wanted: ResolvedBudget[][] = paced.map((c) =>
    budgetsOf(c.channel, c.step, senderOf(c.row), now)
      .filter((k) => k.scope !== 'account')
      .map((key) => ({ key, cap: budgets.capOf(c.channel, key), nextAt: nextWindowAt(key, c.row.time_zone, now) })),
  );
  // Those only the database names: one ask per channel for its sends of the batch.
  for (const channel of new Set(paced.map((c) => c.channel))) {
    const at = paced.flatMap((c, i) => (c.channel === channel ? [i] : []));
    const resolved = await budgets.resolve(
      channel,
      trx,
      at.map((i) => askOf(paced[i], now)),
    );
    at.forEach((i, j) => wanted[i].push(...(resolved[j] ?? [])));
  }
  // Every row the batch may take, created and locked at once in key order (after the pacing's account rows), so two
  // workers claiming for the same senders queue instead of deadlocking. Under that lock the batch is decided in
  // memory, send by send (each all or nothing), from what each window has used, and the grants are written at once.
  const distinct = new Map(wanted.flat().map((b) => [budgetKeyText(b.key), b]));
  await lockBudgets(
    trx,
    [...distinct.values()].map((b) => b.key),
  );
  const used = await readBudgetUsage(
    trx,
    [...distinct.values()].map((b) => b.key),
  );
  const taken = new Map<string, number>();
  const room = (b: ResolvedBudget) => b.cap === null || (used.get(budgetKeyText(b.key)) ?? 0) + (taken.get(budgetKeyText(b.key)) ?? 0) + 1 <= b.cap;
  for (const [i, c] of paced.entries()) {
    const items = wanted[i];
    const full = items.find((b) => !room(b));
    if (full) {
      deferred.push({ id: c.row.id, at: full.nextAt.toISOString() });
      if (c.release) giveBack.push(c.release);
      continue;
    }
    for (const b of items) taken.set(budgetKeyText(b.key), (taken.get(budgetKeyText(b.key)) ?? 0) + 1);
    kept.push(items.length === 0 ? c : { ...c, release: { ...(c.release ?? { workspaceId: c.row.workspace_id }), channelKeys: items.map((b) => b.key) } });
  }
  const grants = [...taken].map(([k, n]) => ({ key: distinct.get(k)!.key, n, cap: distinct.get(k)!.cap, at: now }));
  const granted = await reserveBudgets(trx, grants);
  // The rows are locked: a grant decided here cannot be refused. Should one be, nothing of this batch's is kept.
  if (granted.some((g) => !g)) throw new Error('a channel budget locked by this claim refused a grant decided under the lock');
  await releaseReservations(trx, giveBack);
  return { paced: kept, deferred };
}

/** What a channel's `resolveBudgets` is asked about one claimed send. */
const askOf = (c: Paced, now: Date): BudgetAsk => ({
  workspaceId: c.row.workspace_id,
  leadId: c.row.id,
  accountId: c.action.accountId,
  kind: c.step.kind,
  recipient: c.action.recipient,
  at: now,
});

/**
 * Debits `units` per send from its workspace under the workspace row lock, with the refill rule of
 * src/domain/energy.ts. A send its workspace cannot afford waits for the next refill and gives its pacing
 * reservation back.
 */
async function chargeEnergy(trx: Database, paced: Paced[], units: number, now: Date) {
  const budgets = new Map<string, { row: WorkspaceEnergyRow; left: number; used: number }>();
  if (units > 0 && paced.length > 0) {
    for (const w of await sql.lockWorkspaceEnergy(trx, [...new Set(paced.map((c) => c.row.workspace_id))])) {
      budgets.set(w.id, { row: w, left: Math.floor(effectiveBalance(w, now) / units), used: 0 });
    }
  }
  const nextRefill = nextUtcDayStart(now).toISOString();
  const sends: PlannedSend[] = [];
  const deferred: Deferral[] = [];
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
    const spent = afterSpending(b.row, b.used * units, now);
    await sql.writeWorkspaceEnergy(trx, id, spent.energy_balance, spent.energy_refilled_at);
  }
  return { sends, deferred };
}

/** Checks keep their key and take a fresh lease, so no other worker asks (or records) them meanwhile. */
async function markInFlight(trx: Database, sends: PlannedSend[], checks: PlannedSend[], now: Date) {
  await sql.markInflight(
    trx,
    [
      ...sends.map((s) => ({ id: s.row.id, key: s.key, step: s.row.current_step, variant_key: s.variantKey, release: s.release })),
      // A check re-leases the mark but keeps the original claim's reservation (stored, or recomputed from its time).
      ...checks.map((s) => ({ id: s.row.id, key: s.key, step: s.row.current_step, variant_key: s.variantKey, release: s.release })),
    ],
    now,
  );
}

/** Everything the claim decided without a driver: waits move to their time, local outcomes are recorded. */
async function recordClaimDecisions(
  trx: Database,
  c: { deferred: Deferral[]; waits: string[]; local: Outcome[] },
  now: Date,
  summary: PassSummary,
  cipher: TextCipher,
  channels: ChannelRegistry,
) {
  await sql.reschedule(trx, c.deferred);
  await sql.waitForAccept(trx, c.waits, now);
  const recorded = await recordOutcomes(trx, c.local, now, summary, cipher, channels);
  summary.deferred += c.deferred.length;
  return recorded;
}

/** Claim transaction: decide every claimed lead, reserve budgets, mark sends in flight. Commits before any driver runs. */
export async function claimBatch(
  deps: {
    db: Database;
    config: ClaimSettings;
    drivers: ChannelDrivers;
    cipher: TextCipher;
    channels: ChannelRegistry;
    /** The caps of a channel's budget keys, and the budgets only the database can name (engine/pacing.ts ClaimBudgets). */
    budgets: ClaimBudgets;
  },
  now: Date,
  summary: PassSummary,
): Promise<{ claimed: number; sends: PlannedSend[]; checks: PlannedSend[]; recorded: Outcome[] }> {
  const { db, config, drivers } = deps;
  const units = config.unitsPerAction;
  return db.transaction().execute(async (trx) => {
    const admission: AdmissionContext = { now, unitsPerAction: units, sendingWindow: config.pacing };
    const rows = await sql.claimDue(trx, {
      now,
      staleBefore: new Date(now.getTime() - config.inflightLeaseSeconds * 1000),
      limit: config.batchSize,
      admission,
      channels: deps.channels,
    });
    if (rows.length === 0) return { claimed: 0, sends: [], checks: [], recorded: [] };
    // A lead without a sender keeps the one the claim gave it (domain/claim-layout.ts).
    await sql.assignSenders(trx, rows);
    // Leads waiting at a branching step take an edge or keep waiting (engine/branching.ts); the rest have a step due.
    const atBranch = (r: ClaimedRow) => r.waiting_for === 'branch' && !r.inflight_key;
    const branched = await decideBranches(
      trx,
      deps.channels,
      rows.filter((r) => atBranch(r)).map((r) => ({ ...r, steps: storedSteps(r.steps) as typeof r.steps })),
      now,
    );
    if (branched.taken.length > 0) summary.branched = (summary.branched ?? 0) + branched.taken.length;
    const due = rows.filter((r) => !atBranch(r));
    const { checks, local, waits, deferred, candidates } = classifyClaimed(due, { drivers, registry: deps.channels }, config, admission);
    const pacing = await reservePacingFor(trx, config.pacing, candidates, now);
    const budgets = await reserveChannelBudgets(trx, pacing.paced, now, deps.budgets);
    const energy = await chargeEnergy(trx, budgets.paced, units, now);
    await markInFlight(trx, energy.sends, checks, now);
    const allDeferred = [...deferred, ...pacing.deferred, ...budgets.deferred, ...energy.deferred];
    const recorded = await recordClaimDecisions(trx, { deferred: allDeferred, waits, local }, now, summary, deps.cipher, deps.channels);
    // Skips decided by the claim itself (no driver): counted by the caller once this transaction has committed.
    return { claimed: rows.length, sends: energy.sends, checks, recorded };
  });
}

import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import type { LeadStage } from '../db/schema.js';
import type { PacingRelease } from './pacing.js';
import type { Step } from './steps.js';

// The engine's SQL. Bulk writes go through jsonb_to_recordset so a batch of leads is one statement.

/** A lead as both the step claim and the watch read it: who the person is and what the engine has done so far. */
export interface LeadContactRow {
  id: string;
  workspace_id: string;
  person: string | null;
  company: string | null;
  title: string | null;
  email: string | null;
  linkedin_url: string | null;
  x_user_id: string | null;
  username: string | null;
  account_id: string | null;
  x_account_user_id: string | null;
  invited_at: Date | null;
  connected_at: Date | null;
  messaged_at: Date | null;
  followed_at: Date | null;
  followed_back_at: Date | null;
  replied_at: Date | null;
  last_message_channel: string | null;
  sandbox: Record<string, unknown> | null;
}

export interface ClaimedRow extends LeadContactRow {
  sequence_id: string;
  stage: LeadStage;
  current_step: number;
  variant_key: string | null;
  inflight_key: string | null;
  inflight_step: number | null;
  inflight_at: Date | null;
  inflight_release: PacingRelease | null;
  step_attempts: number;
  steps: Step[];
  time_zone: string | null;
  warmup_started_at: Date | null;
  identity_opted_out: boolean;
}

const energyAvailable = (dayStart: Date) => sql`(CASE WHEN w.energy_refilled_at < ${dayStart.toISOString()}::timestamptz AND w.billing_status <> 'canceled'
  THEN GREATEST(w.energy_balance, w.energy_daily_refill) ELSE w.energy_balance END)`;

/**
 * Locks up to `limit` due leads that every gate lets through, skipping rows another worker holds. Leads
 * the gates stop (paused or unapproved sequence, inactive billing, no energy, no connected sender) are not
 * touched at all: they keep their place and run when the gate opens.
 */
export async function claimDue(trx: Database, p: { now: Date; staleBefore: Date; limit: number; units: number; dayStart: Date }): Promise<ClaimedRow[]> {
  const now = p.now.toISOString();
  const kind = sql`(s.steps -> l.current_step ->> 'kind')`;
  const xAccount = sql`COALESCE(l.account_user_id, p.account_user_id)`;
  const { rows } = await sql<ClaimedRow>`
    SELECT l.id, l.workspace_id, l.person, l.company, l.title, l.email, l.linkedin_url, l.x_user_id, l.username,
      l.account_id, ${xAccount} AS x_account_user_id, l.sequence_id, l.stage, l.current_step, l.variant_key,
      l.invited_at, l.connected_at, l.messaged_at, l.followed_at, l.followed_back_at, l.replied_at, l.last_message_channel,
      l.inflight_key, l.inflight_step, l.inflight_at, l.inflight_release, l.step_attempts, COALESCE(l.sandbox, c.sandbox) AS sandbox,
      s.steps, ma.time_zone, ma.warmup_started_at,
      (EXISTS (SELECT 1 FROM leads o WHERE o.workspace_id = l.workspace_id AND o.opted_out_at IS NOT NULL AND o.email IS NOT NULL
                 AND l.email IS NOT NULL AND lower(o.email) = lower(l.email))
       OR EXISTS (SELECT 1 FROM leads o WHERE o.workspace_id = l.workspace_id AND o.opted_out_at IS NOT NULL AND o.linkedin_url IS NOT NULL
                 AND l.linkedin_url IS NOT NULL AND lower(o.linkedin_url) = lower(l.linkedin_url))
       OR EXISTS (SELECT 1 FROM leads o WHERE o.workspace_id = l.workspace_id AND o.opted_out_at IS NOT NULL AND o.x_user_id IS NOT NULL
                 AND o.x_user_id = l.x_user_id)) AS identity_opted_out
    FROM leads l
    JOIN sequences s ON s.id = l.sequence_id AND s.workspace_id = l.workspace_id
    JOIN workspaces w ON w.id = l.workspace_id
    LEFT JOIN plays p ON p.id = l.play_id
    LEFT JOIN candidates c ON c.id = l.candidate_id
    LEFT JOIN messaging_accounts ma ON ma.id = l.account_id AND ma.workspace_id = l.workspace_id
    WHERE l.automation_stopped = false AND l.next_action_at IS NOT NULL AND l.next_action_at <= ${now}::timestamptz
      AND (l.inflight_key IS NULL OR l.inflight_at < ${p.staleBefore.toISOString()}::timestamptz)
      AND (l.snoozed_until IS NULL OR l.snoozed_until <= ${now}::timestamptz)
      AND l.opted_out_at IS NULL
      AND s.status = 'active' AND s.approved_revision = s.revision
      AND w.billing_status IN ('active', 'trialing')
      AND (l.inflight_key IS NOT NULL OR ${energyAvailable(p.dayStart)} >= ${p.units}::int)
      AND (
        l.current_step >= jsonb_array_length(s.steps)
        OR CASE WHEN ${kind} IN ('x_dm', 'x_engage')
             THEN w.x_channel_enabled AND EXISTS (SELECT 1 FROM x_accounts xa WHERE xa.workspace_id = l.workspace_id AND xa.user_id = ${xAccount})
             ELSE ma.stored_status = 'connected' END
      )
    ORDER BY l.next_action_at, l.id
    LIMIT ${p.limit}
    FOR UPDATE OF l SKIP LOCKED`.execute(trx);
  return rows;
}

/** `release`: the pacing reservation the claim holds for this send, kept with the mark for crash recovery. */
export async function markInflight(
  trx: Database,
  rows: { id: string; key: string; step: number; variant_key: string | null; release: PacingRelease | null }[],
  now: Date,
) {
  if (rows.length === 0) return;
  await sql`UPDATE leads l SET inflight_key = v.key, inflight_step = v.step, inflight_at = ${now.toISOString()}::timestamptz,
      inflight_release = v.release, variant_key = COALESCE(v.variant_key, l.variant_key), updated_at = ${now.toISOString()}::timestamptz
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(id uuid, key text, step int, variant_key text, release jsonb)
    WHERE l.id = v.id`.execute(trx);
}

export async function reschedule(trx: Database, rows: { id: string; at: string }[]) {
  if (rows.length === 0) return;
  await sql`UPDATE leads l SET next_action_at = v.at
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(id uuid, at timestamptz)
    WHERE l.id = v.id`.execute(trx);
}

export async function setWaitingForAccept(trx: Database, ids: string[], now: Date) {
  if (ids.length === 0) return;
  await sql`UPDATE leads SET waiting_for = 'accept', next_action_at = NULL, updated_at = ${now.toISOString()}::timestamptz
    WHERE id IN (${sql.join(ids.map((id) => sql`${id}::uuid`))})`.execute(trx);
}

interface EnergyRow {
  id: string;
  billing_status: string;
  energy_balance: number;
  energy_daily_refill: number;
  energy_refilled_at: Date;
}

export async function lockWorkspaceEnergy(trx: Database, workspaceIds: string[]): Promise<EnergyRow[]> {
  const out: EnergyRow[] = [];
  // One at a time in id order: the same order in every worker, so they queue instead of deadlocking.
  for (const id of [...workspaceIds].sort()) {
    const { rows } = await sql<EnergyRow>`SELECT id, billing_status, energy_balance, energy_daily_refill, energy_refilled_at
      FROM workspaces WHERE id = ${id}::uuid FOR UPDATE`.execute(trx);
    if (rows[0]) out.push(rows[0]);
  }
  return out;
}

export async function writeWorkspaceEnergy(trx: Database, id: string, balance: number, refilledAt: Date) {
  await sql`UPDATE workspaces SET energy_balance = ${balance}, energy_refilled_at = ${refilledAt.toISOString()}::timestamptz WHERE id = ${id}::uuid`.execute(trx);
}

export async function refundEnergy(trx: Database, refunds: Map<string, number>) {
  for (const id of [...refunds.keys()].sort()) {
    const units = refunds.get(id)!;
    if (units > 0) await sql`UPDATE workspaces SET energy_balance = energy_balance + ${units} WHERE id = ${id}::uuid`.execute(trx);
  }
}

/** New values for a lead after one step attempt; milestones only fill when still empty. */
export interface LeadRecord {
  id: string;
  /** The in-flight mark this record belongs to: its key and claim time. A worker whose claim was superseded
   * (lease expired, lead re-claimed under the same key) matches nothing, so its late result changes nothing. */
  expect_key: string | null;
  expect_at: string | null;
  stage: LeadStage;
  current_step: number;
  next_action_at: string | null;
  automation_stopped: boolean;
  invited_at: string | null;
  messaged_at: string | null;
  followed_at: string | null;
  last_error: string | null;
  step_attempts: number;
  observe_next_at: string | null;
  observe_until: string | null;
  last_message_channel: string | null;
  last_activity_at: string | null;
}

export interface RecordedLead {
  id: string;
  person: string | null;
  company: string | null;
  title: string | null;
  email: string | null;
  linkedin_url: string | null;
  account_id: string | null;
  sequence_id: string | null;
  stage: LeadStage;
}

/**
 * Applies step outcomes, but only to leads still holding the in-flight key the caller claimed (a lead
 * reclaimed by another worker after its lease is that worker's to record). What happened meanwhile wins:
 * a stop keeps automation stopped, a detected reply keeps the lead frozen in `replied`.
 */
export async function recordLeads(trx: Database, records: LeadRecord[], now: Date): Promise<RecordedLead[]> {
  if (records.length === 0) return [];
  const { rows } = await sql<RecordedLead>`
    UPDATE leads l SET
      stage = CASE WHEN l.replied_at IS NOT NULL THEN l.stage ELSE v.stage END,
      current_step = v.current_step,
      -- A reply or stop recorded while the send was in flight set automation_stopped, which wins. A replied lead whose
      -- follow-up sequence was started (reply decision) runs again: its earlier reply must not stop the new lane.
      next_action_at = CASE WHEN l.automation_stopped THEN NULL ELSE v.next_action_at END,
      automation_stopped = l.automation_stopped OR v.automation_stopped,
      invited_at = COALESCE(l.invited_at, v.invited_at),
      messaged_at = COALESCE(l.messaged_at, v.messaged_at),
      followed_at = COALESCE(l.followed_at, v.followed_at),
      last_error = COALESCE(v.last_error, l.last_error),
      step_attempts = v.step_attempts,
      waiting_for = NULL,
      observe_next_at = CASE WHEN l.automation_stopped AND l.replied_at IS NOT NULL THEN NULL ELSE COALESCE(l.observe_next_at, v.observe_next_at) END,
      observe_until = GREATEST(l.observe_until, v.observe_until),
      last_message_channel = COALESCE(v.last_message_channel, l.last_message_channel),
      last_activity_at = COALESCE(v.last_activity_at, l.last_activity_at),
      inflight_key = NULL, inflight_step = NULL, inflight_at = NULL, inflight_release = NULL,
      updated_at = ${now.toISOString()}::timestamptz
    FROM jsonb_to_recordset(${JSON.stringify(records)}::jsonb) AS v(
      id uuid, expect_key text, expect_at timestamptz, stage text, current_step int, next_action_at timestamptz, automation_stopped boolean,
      invited_at timestamptz, messaged_at timestamptz, followed_at timestamptz, last_error text, step_attempts int,
      observe_next_at timestamptz, observe_until timestamptz, last_message_channel text, last_activity_at timestamptz)
    WHERE l.id = v.id AND l.inflight_key IS NOT DISTINCT FROM v.expect_key AND l.inflight_at IS NOT DISTINCT FROM v.expect_at
    RETURNING l.id, l.person, l.company, l.title, l.email, l.linkedin_url, l.account_id, l.sequence_id, l.stage`.execute(trx);
  return rows;
}

export interface ActivityInsert {
  id: string;
  workspace_id: string;
  created_at: Date;
  action: string;
  outcome: 'ok' | 'skipped' | 'failed';
  units: number;
  detail: string;
  account_id: string | null;
  lead_id: string | null;
}

export async function insertActivities(trx: Database, rows: ActivityInsert[]) {
  for (let i = 0; i < rows.length; i += 1000) await trx.insertInto('activity').values(rows.slice(i, i + 1000)).execute();
}

// ---- observations ----

export interface WatchedRow extends LeadContactRow {
  sequence_id: string | null;
  watchable: boolean;
  /** Newest reply on record (out-of-office ones included); drivers re-report it on every poll. */
  last_reply_at: Date | null;
}

/** Takes leads whose watch is due and pushes their next look `interval` ahead (or ends the watch). */
/**
 * Lead `l` answered (a real reply, not an out-of-office one) and has not been contacted since: it is frozen, so it
 * is neither watched nor open to another reply. A reply decision that puts it into a follow-up sequence makes the
 * engine contact it again, and from then on a new answer is detected like the first one.
 */
const FROZEN_BY_ANSWER = sql`EXISTS (SELECT 1 FROM (SELECT GREATEST(l.replied_at, (SELECT max(r.replied_at) FROM replies r
    WHERE r.workspace_id = l.workspace_id AND r.lead_id = l.id AND r.classification <> 'out_of_office')) AS answered_at) x
  WHERE x.answered_at IS NOT NULL AND (l.last_activity_at IS NULL OR l.last_activity_at <= x.answered_at))`;

export async function claimWatched(trx: Database, p: { now: Date; limit: number; intervalSeconds: number }): Promise<WatchedRow[]> {
  const now = p.now.toISOString();
  const { rows } = await sql<WatchedRow>`
    WITH due AS (
      SELECT l.id, ${FROZEN_BY_ANSWER} AS frozen FROM leads l
      WHERE l.observe_next_at IS NOT NULL AND l.observe_next_at <= ${now}::timestamptz
      ORDER BY l.observe_next_at, l.id LIMIT ${p.limit}
      FOR UPDATE SKIP LOCKED
    ), bumped AS (
      UPDATE leads l SET observe_next_at = CASE
          WHEN due.frozen OR l.opted_out_at IS NOT NULL THEN NULL
          WHEN l.observe_until IS NULL OR ${now}::timestamptz + make_interval(secs => ${p.intervalSeconds}) > l.observe_until THEN NULL
          ELSE ${now}::timestamptz + make_interval(secs => ${p.intervalSeconds}) END
      FROM due WHERE l.id = due.id
      RETURNING l.*, due.frozen
    )
    SELECT b.id, b.workspace_id, b.person, b.company, b.title, b.email, b.linkedin_url, b.x_user_id, b.username, b.account_id,
      COALESCE(b.account_user_id, p.account_user_id) AS x_account_user_id, b.sequence_id,
      b.invited_at, b.connected_at, b.messaged_at, b.followed_at, b.followed_back_at, b.replied_at, b.last_message_channel,
      COALESCE(b.sandbox, c.sandbox) AS sandbox, (NOT b.frozen AND b.opted_out_at IS NULL) AS watchable,
      (SELECT max(r.replied_at) FROM replies r WHERE r.workspace_id = b.workspace_id AND r.lead_id = b.id) AS last_reply_at
    FROM bumped b LEFT JOIN plays p ON p.id = b.play_id LEFT JOIN candidates c ON c.id = b.candidate_id`.execute(trx);
  return rows;
}

export async function markAccepted(trx: Database, leadId: string, at: Date, now: Date): Promise<RecordedLead | undefined> {
  const { rows } = await sql<RecordedLead>`
    UPDATE leads SET connected_at = ${at.toISOString()}::timestamptz,
      stage = CASE WHEN stage IN ('queued', 'resolving', 'invited') THEN 'accepted' ELSE stage END,
      next_action_at = CASE WHEN waiting_for = 'accept' AND NOT automation_stopped THEN ${now.toISOString()}::timestamptz ELSE next_action_at END,
      waiting_for = NULL, last_activity_at = ${at.toISOString()}::timestamptz, updated_at = ${now.toISOString()}::timestamptz
    WHERE id = ${leadId}::uuid AND connected_at IS NULL
    RETURNING id, person, company, title, email, linkedin_url, account_id, sequence_id, stage`.execute(trx);
  return rows[0];
}

export async function markFollowedBack(trx: Database, leadId: string, at: Date, now: Date): Promise<RecordedLead | undefined> {
  const { rows } = await sql<RecordedLead>`
    UPDATE leads SET followed_back_at = ${at.toISOString()}::timestamptz,
      stage = CASE WHEN stage IN ('queued', 'resolving', 'invited') THEN 'accepted' ELSE stage END,
      last_activity_at = ${at.toISOString()}::timestamptz, updated_at = ${now.toISOString()}::timestamptz
    WHERE id = ${leadId}::uuid AND followed_back_at IS NULL
    RETURNING id, person, company, title, email, linkedin_url, account_id, sequence_id, stage`.execute(trx);
  return rows[0];
}

/** Freezes the lead: its sequence stops for good, `replied` is its stage, an unsubscribe opts the identity out. */
export async function markReplied(
  trx: Database,
  p: { leadId: string; at: Date; now: Date; sentiment: string; optOut: boolean },
): Promise<(RecordedLead & { workspace_booking_link: string | null }) | undefined> {
  const at = p.at.toISOString();
  const { rows } = await sql<RecordedLead & { workspace_booking_link: string | null }>`
    UPDATE leads l SET replied_at = COALESCE(l.replied_at, ${at}::timestamptz), stage = 'replied', automation_stopped = true, next_action_at = NULL,
      waiting_for = NULL, observe_next_at = NULL, reply_sentiment = ${p.sentiment},
      opted_out_at = CASE WHEN ${p.optOut} THEN COALESCE(l.opted_out_at, ${at}::timestamptz) ELSE l.opted_out_at END,
      last_activity_at = ${at}::timestamptz, updated_at = ${p.now.toISOString()}::timestamptz
    FROM workspaces w
    WHERE l.id = ${p.leadId}::uuid AND w.id = l.workspace_id AND NOT ${FROZEN_BY_ANSWER}
      AND NOT EXISTS (SELECT 1 FROM replies r WHERE r.workspace_id = l.workspace_id AND r.lead_id = l.id AND r.replied_at >= ${at}::timestamptz)
    RETURNING l.id, l.person, l.company, l.title, l.email, l.linkedin_url, l.account_id, l.sequence_id, l.stage, w.booking_link AS workspace_booking_link`.execute(trx);
  return rows[0];
}

/** Replies the engine settles itself (out-of-office) are stored decided, so they never enter the pending queue. */
export interface SettledReply {
  decision: string;
  by: string;
  snoozedUntil: Date | null;
}

export async function insertReply(
  trx: Database,
  r: {
    id: string;
    workspaceId: string;
    leadId: string;
    channel: string;
    classification: string;
    theirMessage: string | null;
    draft: string | null;
    repliedAt: Date;
    now: Date;
    settled?: SettledReply;
  },
) {
  await trx
    .insertInto('replies')
    .values({
      id: r.id,
      workspace_id: r.workspaceId,
      lead_id: r.leadId,
      channel: r.channel,
      classification: r.classification,
      their_message: r.theirMessage,
      draft: r.draft,
      replied_at: r.repliedAt,
      created_at: r.now,
      ...(r.settled && {
        state: 'decided' as const,
        decision: r.settled.decision,
        decided_at: r.now,
        decided_by: r.settled.by,
        snoozed_until: r.settled.snoozedUntil,
      }),
    })
    .execute();
}

/**
 * An out-of-office auto-reply pauses the lead until `resumeAt` instead of freezing it. Guarded twice: a lead
 * that really replied is left alone, and an auto-reply already on record (drivers report it again on every
 * poll) is not applied a second time. True when it applied.
 */
export async function snoozeForAutoReply(trx: Database, p: { leadId: string; at: Date; resumeAt: Date; now: Date }): Promise<boolean> {
  const at = p.at.toISOString();
  const resume = p.resumeAt.toISOString();
  const { rows } = await sql<{ id: string }>`
    UPDATE leads l SET snoozed_until = GREATEST(COALESCE(l.snoozed_until, ${resume}::timestamptz), ${resume}::timestamptz),
      next_action_at = CASE WHEN l.next_action_at IS NULL THEN NULL ELSE GREATEST(l.next_action_at, ${resume}::timestamptz) END,
      last_activity_at = GREATEST(COALESCE(l.last_activity_at, ${at}::timestamptz), ${at}::timestamptz),
      updated_at = ${p.now.toISOString()}::timestamptz
    WHERE l.id = ${p.leadId}::uuid AND NOT ${FROZEN_BY_ANSWER}
      AND NOT EXISTS (SELECT 1 FROM replies r WHERE r.workspace_id = l.workspace_id AND r.lead_id = l.id AND r.replied_at >= ${at}::timestamptz)
    RETURNING l.id`.execute(trx);
  return rows.length > 0;
}

// ---- discovery ----

export async function scheduleDiscovery(db: Database, now: Date) {
  await sql`INSERT INTO engine_discovery (workspace_id, play_id, next_run_at)
    SELECT p.workspace_id, p.id, ${now.toISOString()}::timestamptz FROM plays p
    WHERE p.kind = 'followers' AND p.status = 'active' AND p.account_user_id IS NOT NULL
    ON CONFLICT DO NOTHING`.execute(db);
}

export interface DuePlay {
  workspace_id: string;
  play_id: string;
  account_user_id: string;
  handle: string | null;
}

export async function claimDueDiscovery(trx: Database, now: Date, intervalSeconds: number, limit: number): Promise<DuePlay[]> {
  const n = now.toISOString();
  const { rows } = await sql<DuePlay>`
    WITH due AS (
      SELECT d.workspace_id, d.play_id FROM engine_discovery d
      JOIN plays p ON p.id = d.play_id AND p.workspace_id = d.workspace_id
      JOIN workspaces w ON w.id = d.workspace_id
      WHERE d.next_run_at <= ${n}::timestamptz AND p.status = 'active' AND p.kind = 'followers' AND p.account_user_id IS NOT NULL
        AND w.billing_status IN ('active', 'trialing')
      ORDER BY d.next_run_at LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED
    ), bumped AS (
      UPDATE engine_discovery d SET next_run_at = ${n}::timestamptz + make_interval(secs => ${intervalSeconds}), last_run_at = ${n}::timestamptz, runs = d.runs + 1
      FROM due WHERE d.workspace_id = due.workspace_id AND d.play_id = due.play_id
      RETURNING d.workspace_id, d.play_id
    )
    SELECT b.workspace_id, b.play_id, p.account_user_id, xa.handle
    FROM bumped b JOIN plays p ON p.id = b.play_id
    LEFT JOIN x_accounts xa ON xa.workspace_id = b.workspace_id AND xa.user_id = p.account_user_id`.execute(trx);
  return rows;
}

export async function existingCandidateIds(trx: Database, workspaceId: string, playId: string, xUserIds: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < xUserIds.length; i += 1000) {
    const rows = await trx
      .selectFrom('candidates')
      .select('x_user_id')
      .where('workspace_id', '=', workspaceId)
      .where('play_id', '=', playId)
      .where('x_user_id', 'in', xUserIds.slice(i, i + 1000))
      .execute();
    for (const r of rows) found.add(r.x_user_id);
  }
  return found;
}

export async function insertDiscoveryBatch(
  trx: Database,
  p: { batchId: string; workspaceId: string; playId: string; now: Date; candidates: { id: string; xUserId: string; username: string | null; name: string | null }[] },
): Promise<Set<string>> {
  await trx.insertInto('candidate_batches').values({ id: p.batchId, workspace_id: p.workspaceId, play_id: p.playId, source: 'discovery', request_id: null, created_at: p.now }).execute();
  const inserted = new Set<string>();
  for (let i = 0; i < p.candidates.length; i += 1000) {
    const rows = await trx
      .insertInto('candidates')
      .values(
        p.candidates.slice(i, i + 1000).map((c) => ({
          id: c.id,
          workspace_id: p.workspaceId,
          play_id: p.playId,
          batch_id: p.batchId,
          x_user_id: c.xUserId,
          username: c.username,
          name: c.name,
          status: 'proposed' as const,
          review_decision: null,
          reviewed_at: null,
          reviewed_by: null,
          sandbox: null,
          created_at: p.now,
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .execute();
    for (const r of rows) inserted.add(r.id);
  }
  return inserted;
}

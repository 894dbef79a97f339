import { sql, type RawBuilder } from 'kysely';
import { CLAIMED_LEAD_FROM, LEAD_ACCOUNT_USER, claimAdmissionSources } from '../../domain/claim-layout.js';
import { createChannelRegistry, type ChannelRegistry } from '../../channels/index.js';
import type { Database } from '../../db/database.js';
import { admissionBlocksSql, admissionHoldSql, type AdmissionContext } from '../../domain/admission.js';
import type { ClaimedRow } from './rows.js';
import { senderDeliverySql } from './senders.js';

/**
 * Locks up to `limit` due leads that every `hold` rule of the admission list (src/domain/admission.ts) lets
 * through, skipping rows another worker holds. Leads a hold rule stops (paused or unapproved sequence, inactive
 * billing, no energy, no connected sender, stopped, snoozed or opted-out lead) are not touched at all: they keep their
 * place and run when the rule clears. The `stop` rules come back as columns named after them, for the claim to
 * record; the `wait` rule (sending hours) is applied by the claim in TypeScript.
 */
// The claim's layout (FROM, aliases, the sender a lead without one gets) is the domain's: domain/claim-layout.ts.
export { CLAIMED_LEAD_FROM, LEAD_ACCOUNT_USER, claimAdmissionSources } from '../../domain/claim-layout.js';

/**
 * The claim's columns (ClaimedRow without the admission `stop` columns): what a step needs to know about its lead.
 * `accountUser` is the platform account the lead's steps go through when its channel sends as one; `delivery` how the
 * step's sender reaches its platform (senders.ts). `steps`: the sequence's steps in every row (one lead's read), or
 * none (a batch's claim reads them once per sequence: withSequenceSteps).
 */
export const claimedLeadColumns = (
  accountUser: RawBuilder<string | null>,
  delivery: RawBuilder<string>,
  steps: 'each row' | 'none' = 'each row',
) => sql`SELECT l.id, l.workspace_id, l.person, l.company, l.title, l.email, l.linkedin_url, l.x_user_id, l.username,
      -- The account the step goes through: the lead's own, else the one the claim gives it (domain/claim-layout.ts).
      COALESCE(l.account_id, ma.id) AS account_id, ${accountUser} AS x_account_user_id,
      (l.account_id IS NULL AND ma.id IS NOT NULL) AS account_assigned,
      (l.account_user_id IS NULL AND p.account_user_id IS NULL AND ${accountUser} IS NOT NULL) AS account_user_assigned, l.sequence_id, l.stage, l.current_step, l.variant_key,
      l.invited_at, l.connected_at, l.messaged_at, l.followed_at, l.followed_back_at, l.replied_at, l.last_message_channel,
      l.inflight_key, l.inflight_step, l.inflight_at, l.inflight_release, l.step_attempts, l.step_waits, COALESCE(l.sandbox, c.sandbox) AS sandbox,
      ${steps === 'each row' ? sql`s.steps,` : sql``} s.revision AS sequence_revision, ma.time_zone, ma.warmup_started_at,
      -- The sending hours' zone (domain/admission.ts sendingZone): the lead's own when its sequence sends in it.
      l.time_zone AS lead_time_zone, s.send_in_lead_hours,
      -- The lead's custom fields, for {{custom.<name>}} (domain/custom-fields.ts).
      l.custom,
      -- A branching step's edges (domain/branches.ts) read these saved facts.
      l.waiting_for, l.branch_at, l.branch_allowed, l.meeting_booked_at, l.last_error,
      -- The platform policy (domain/policy.ts) reads how the step's sender reaches its platform.
      ${delivery} AS delivery`;

/** Lead `l` is due at `now` (ISO 8601) and not in flight, or in flight since before `staleBefore` (its lease ran out). */
const dueNow = (now: string, staleBefore: string) =>
  sql<boolean>`l.next_action_at IS NOT NULL AND l.next_action_at <= ${now}::timestamptz
    AND (l.inflight_key IS NULL OR l.inflight_at < ${staleBefore}::timestamptz)`;

/**
 * The first `limit` due leads in claim order (next_action_at, id) that no other worker holds, locked: those the
 * claim's own due test lets through, before any admission rule. Reads the due index alone (leads_due, in its order),
 * so it costs the window, not every lead waiting; locked, so the windows of claims running at once do not overlap
 * (a window another claim had just read would be all locked leads, and its claim would look past them). `at` is the
 * lead's next_action_at as text, exact to the microsecond, to go on after it.
 */
async function dueWindow(trx: Database, p: { now: string; staleBefore: string; limit: number }): Promise<{ id: string; at: string }[]> {
  // automation_stopped = false: the due index's predicate (and the admission rule `stopped`), so the index is read.
  const { rows } = await sql<{ id: string; at: string }>`SELECT l.id, l.next_action_at::text AS at FROM leads l
    WHERE l.automation_stopped = false AND ${dueNow(p.now, p.staleBefore)}
    ORDER BY l.next_action_at, l.id
    LIMIT ${p.limit}
    FOR UPDATE OF l SKIP LOCKED`.execute(trx);
  return rows;
}

/**
 * Locks up to `limit` due leads that every `hold` rule lets through (see above), in claim order (next_action_at,
 * id), skipping leads another worker holds. The first `limit` due leads are read from the due index, and the claim's
 * full statement (the joins, the admission rules, FOR UPDATE SKIP LOCKED) runs on those leads only: a claim costs the
 * leads it looks at, not every lead due (10,000 due leads are not joined and sorted for each batch of 500), and
 * nothing due costs one small read. Only when some of them were held or locked and more are due does the full
 * statement look past them, in claim order, for the rest: held leads never stand in front of the others, and a
 * million held leads cost what they cost before, once.
 */
export async function claimDue(
  trx: Database,
  p: { now: Date; staleBefore: Date; limit: number; admission: AdmissionContext; channels?: ChannelRegistry },
): Promise<ClaimedRow[]> {
  const window = await dueWindow(trx, { now: p.now.toISOString(), staleBefore: p.staleBefore.toISOString(), limit: p.limit });
  if (window.length === 0) return [];
  const claimed = await claimAmong(trx, p, { ids: window.map((w) => w.id) });
  if (window.length < p.limit || claimed.length >= p.limit) return claimed;
  const last = window[window.length - 1];
  return [...claimed, ...(await claimAmong(trx, p, { after: last, limit: p.limit - claimed.length }))];
}

/**
 * The claim's full statement: among the leads `ids`, or the first `limit` after the lead `after` in claim order, those
 * still due and let through by every hold rule, locked, in claim order.
 */
async function claimAmong(
  trx: Database,
  p: { now: Date; staleBefore: Date; admission: AdmissionContext; channels?: ChannelRegistry },
  among: { ids: string[] } | { after: { at: string; id: string }; limit: number },
): Promise<ClaimedRow[]> {
  const accountUser = LEAD_ACCOUNT_USER;
  const src = claimAdmissionSources(accountUser);
  const which =
    'ids' in among
      ? sql`l.id = ANY(${`{${among.ids.join(',')}}`}::uuid[])`
      : sql`(l.next_action_at, l.id) > (${among.after.at}::timestamptz, ${among.after.id}::uuid)`;
  const { rows } = await sql<Omit<ClaimedRow, 'steps'>>`
    ${claimedLeadColumns(accountUser, senderDeliverySql(p.channels ?? createChannelRegistry(), accountUser), 'none')},
      ${admissionBlocksSql('identity_opted_out', src, p.admission)} AS identity_opted_out,
      ${admissionBlocksSql('address_suppressed', src, p.admission)} AS address_suppressed
    ${CLAIMED_LEAD_FROM}
    WHERE ${which} AND ${dueNow(p.now.toISOString(), p.staleBefore.toISOString())}
      AND ${admissionHoldSql(src, p.admission)}
    ORDER BY l.next_action_at, l.id
    ${'limit' in among ? sql`LIMIT ${among.limit}` : sql``}
    FOR UPDATE OF l SKIP LOCKED`.execute(trx);
  return withSequenceSteps(trx, rows);
}

/**
 * Gives each claimed lead its sequence's steps, read once per sequence rather than in each of a batch's rows (a
 * sequence's steps, its texts and variants, are often kilobytes, and a batch is hundreds of leads of a few
 * sequences). The rows share one frozen copy per sequence: no reader may change a step. A lead whose sequence changed
 * revision between the claim and this read (edited in between, by another transaction) is left out of the batch: its
 * claim read the steps of the old revision, and it stays due, for the next claim to take with the new ones.
 */
export async function withSequenceSteps(trx: Database, rows: Omit<ClaimedRow, 'steps'>[]): Promise<ClaimedRow[]> {
  if (rows.length === 0) return [];
  // Each sequence once, by its workspace and id (a batch spans workspaces).
  const keys = [...new Map(rows.map((r) => [r.sequence_id, r.workspace_id])).entries()];
  // Steps that are not a JSON array (a damaged row, JSON text stored as a string) read as none, as the claim's own
  // rules read them (`step_kinds`, migration 0054): the step sent is always the step the rules judged.
  const { rows: seqs } = await sql<{ id: string; revision: number; steps: ClaimedRow['steps'] }>`
    SELECT s.id, s.revision, CASE WHEN jsonb_typeof(s.steps) = 'array' THEN s.steps ELSE '[]'::jsonb END AS steps FROM sequences s
    JOIN unnest(${`{${keys.map(([, w]) => w).join(',')}}`}::uuid[], ${`{${keys.map(([id]) => id).join(',')}}`}::uuid[]) AS k(workspace_id, id)
      ON s.workspace_id = k.workspace_id AND s.id = k.id`.execute(trx);
  const byId = new Map(seqs.map((s) => [s.id, s]));
  for (const s of seqs) deepFreeze(s.steps);
  const out: ClaimedRow[] = [];
  for (const r of rows as ClaimedRow[]) {
    const seq = byId.get(r.sequence_id);
    if (!seq || seq.revision !== r.sequence_revision) continue;
    r.steps = seq.steps;
    out.push(r);
  }
  return out;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  for (const v of Object.values(value)) deepFreeze(v);
  Object.freeze(value);
}

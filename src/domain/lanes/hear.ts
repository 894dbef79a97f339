import { sql, type RawBuilder } from 'kysely';
import type { Selectable } from 'kysely';
import type { Database } from '../../db/database.js';
import type { LeadStage, LeadsTable } from '../../db/schema.js';
import type { LaneLead } from './send.js';

// The lane transitions of what is heard from a person: the watch after a contact, an acceptance, a follow-back, a
// first contact confirmed by a person, a reply, an out-of-office (src/engine/observe.ts, src/engine/tasks.ts, the
// reply decisions of modules/replies).

/**
 * Lead `l` answered (a real reply, not an out-of-office one) and has not been contacted since: it is frozen, so it
 * is neither watched nor open to another reply. A reply decision that puts it into a follow-up sequence makes the
 * engine contact it again, and from then on a new answer is detected like the first one.
 */
export const FROZEN_BY_ANSWER = sql`EXISTS (SELECT 1 FROM (SELECT GREATEST(l.replied_at, (SELECT max(r.replied_at) FROM replies r
    WHERE r.workspace_id = l.workspace_id AND r.lead_id = l.id AND r.classification <> 'out_of_office')) AS answered_at) x
  WHERE x.answered_at IS NOT NULL AND (l.last_activity_at IS NULL OR l.last_activity_at <= x.answered_at))`;

/** Lead `l` has no reply on record at or after `at` (ISO 8601): what an earlier message says yields to a later answer. */
export const noReplySince = (at: string) =>
  sql`NOT EXISTS (SELECT 1 FROM replies r WHERE r.workspace_id = l.workspace_id AND r.lead_id = l.id AND r.replied_at >= ${at}::timestamptz)`;

/** The SET of lead `l` seen active at `at` (ISO 8601; last_activity_at only moves forward), written at `now`. */
export const touchedAt = (at: string, now: Date) =>
  sql`last_activity_at = GREATEST(COALESCE(l.last_activity_at, ${at}::timestamptz), ${at}::timestamptz),
      updated_at = ${now.toISOString()}::timestamptz`;

/**
 * The watch claim's write (src/engine/sql/claimWatched.ts), as a statement for its CTE: each lead of the CTE `due`
 * (columns `id`, `frozen`: FROZEN_BY_ANSWER) is next looked at `intervalSeconds` after `now`, or no more once it is
 * frozen, opted out or past `observe_until`. Returns `l.*` and `due.frozen`.
 */
export function rewatchSql(p: { now: Date; intervalSeconds: number }): RawBuilder<unknown> {
  const now = p.now.toISOString();
  return sql`UPDATE leads l SET observe_next_at = CASE
          WHEN due.frozen OR l.opted_out_at IS NOT NULL THEN NULL
          WHEN l.observe_until IS NULL OR ${now}::timestamptz + make_interval(secs => ${p.intervalSeconds}) > l.observe_until THEN NULL
          ELSE ${now}::timestamptz + make_interval(secs => ${p.intervalSeconds}) END
      FROM due WHERE l.id = due.id
      RETURNING l.*, due.frozen`;
}

/**
 * The watch claim's postponement: a lead whose simulated people have nothing to report before `at` is next looked at
 * then (null: no more, until the engine reaches the person again and watches anew), but only while its watch is still
 * the one the claim at `claimedAt` set (`claimedAt` + `intervalSeconds`), so a contact made since keeps its own; and
 * never past `observe_until`, where the watch ends. One statement for the batch. Answers how many leads it moved.
 */
export async function postponeWatch(trx: Database, p: { claimedAt: Date; intervalSeconds: number; leads: { id: string; at: Date | null }[] }): Promise<number> {
  if (p.leads.length === 0) return 0;
  const doc = JSON.stringify(p.leads.map((l) => ({ id: l.id, at: l.at?.toISOString() ?? null })));
  const { rows } = await sql<{ id: string }>`UPDATE leads l SET observe_next_at = CASE
        WHEN v.at IS NULL OR l.observe_until IS NULL OR v.at > l.observe_until THEN NULL ELSE v.at END
      FROM jsonb_to_recordset(${doc}::jsonb) AS v(id uuid, at timestamptz)
      WHERE l.id = v.id AND l.observe_next_at = ${p.claimedAt.toISOString()}::timestamptz + make_interval(secs => ${p.intervalSeconds})
      RETURNING l.id`.execute(trx);
  return rows.length;
}

/**
 * A person's message went out (a reply decision sent, or its task done by hand): the lead is messaged (the first time
 * kept), active at `at`, and watched for the answer on `channel` from `next` until `until` (as the engine watches
 * after its own sends). Answers the lead's row; throws when the lead is not in the workspace.
 */
export async function watchAfterContact(
  trx: Database,
  p: { workspaceId: string; leadId: string; channel: string; next: Date; until: Date; at: Date },
): Promise<Selectable<LeadsTable>> {
  return trx
    .updateTable('leads')
    .set((eb) => ({
      updated_at: p.at,
      messaged_at: eb.fn.coalesce('messaged_at', eb.val(p.at)),
      last_activity_at: p.at,
      last_message_channel: p.channel,
      observe_next_at: eb.fn.coalesce('observe_next_at', eb.val(p.next)),
      observe_until: eb.fn('greatest', [eb.ref('observe_until'), eb.val(p.until)]),
    }))
    .where('workspace_id', '=', p.workspaceId)
    .where('id', '=', p.leadId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * A reply decision `snooze`: nothing is sent to the lead until `until`. Answers the lead's row; throws when the lead
 * is not in the workspace.
 */
export async function snooze(trx: Database, p: { workspaceId: string; leadId: string; until: Date; now: Date }): Promise<Selectable<LeadsTable>> {
  return trx
    .updateTable('leads')
    .set({ updated_at: p.now, snoozed_until: p.until })
    .where('workspace_id', '=', p.workspaceId)
    .where('id', '=', p.leadId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** An answer to an invitation heard for one lead: the lead, and when the person answered. */
export interface HeardAnswer {
  leadId: string;
  at: Date;
}

const answersDoc = (answers: HeardAnswer[]) => JSON.stringify(answers.map((a) => ({ id: a.leadId, at: a.at.toISOString() })));

/**
 * The invites were accepted, each at its own `at`: a message step waiting for it is due at once (`now`), and so is a
 * branch waiting on its edges (an `accepted` edge may now hold: domain/branches.ts). One statement for the batch; a
 * lead named twice takes its first answer. Answers the leads changed (those already on record are left out).
 */
export async function markAccepted(trx: Database, answers: HeardAnswer[], now: Date): Promise<LaneLead[]> {
  if (answers.length === 0) return [];
  const { rows } = await sql<LaneLead>`
    UPDATE leads l SET connected_at = v.at,
      stage = CASE WHEN l.stage IN ('queued', 'resolving', 'invited') THEN 'accepted' ELSE l.stage END,
      next_action_at = CASE WHEN l.waiting_for IN ('accept', 'branch') AND NOT l.automation_stopped THEN ${now.toISOString()}::timestamptz ELSE l.next_action_at END,
      waiting_for = CASE WHEN l.waiting_for = 'accept' THEN NULL ELSE l.waiting_for END, last_activity_at = v.at, updated_at = ${now.toISOString()}::timestamptz
    FROM (SELECT DISTINCT ON (id) id, at FROM jsonb_to_recordset(${answersDoc(answers)}::jsonb) AS x(id uuid, at timestamptz) ORDER BY id, at) v
    WHERE l.id = v.id AND l.connected_at IS NULL
    RETURNING l.id, l.person, l.company, l.title, l.email, l.linkedin_url, l.account_id, l.sequence_id, l.stage`.execute(trx);
  return rows;
}

/**
 * The people followed the X account back, each at its own `at`: an early lane counts as `accepted`, and a branch
 * waiting on its edges is due at once (`now`). One statement for the batch; a lead named twice takes its first
 * answer. Answers the leads changed (those already on record are left out).
 */
export async function markFollowedBack(trx: Database, answers: HeardAnswer[], now: Date): Promise<LaneLead[]> {
  if (answers.length === 0) return [];
  const { rows } = await sql<LaneLead>`
    UPDATE leads l SET followed_back_at = v.at,
      stage = CASE WHEN l.stage IN ('queued', 'resolving', 'invited') THEN 'accepted' ELSE l.stage END,
      next_action_at = CASE WHEN l.waiting_for = 'branch' AND NOT l.automation_stopped THEN ${now.toISOString()}::timestamptz ELSE l.next_action_at END,
      last_activity_at = v.at, updated_at = ${now.toISOString()}::timestamptz
    FROM (SELECT DISTINCT ON (id) id, at FROM jsonb_to_recordset(${answersDoc(answers)}::jsonb) AS x(id uuid, at timestamptz) ORDER BY id, at) v
    WHERE l.id = v.id AND l.followed_back_at IS NULL
    RETURNING l.id, l.person, l.company, l.title, l.email, l.linkedin_url, l.account_id, l.sequence_id, l.stage`.execute(trx);
  return rows;
}

/**
 * A first contact now known to have happened (a person's answer to an uncertain send, docs/tasks.md): its milestone
 * (only while still empty), the stage it leads to, the channel it went on.
 */
export async function markFirstContact(
  trx: Database,
  p: { leadId: string; column: 'invited_at' | 'messaged_at' | 'followed_at'; stage: LeadStage; channel: string | null; now: Date },
): Promise<void> {
  const at = p.now.toISOString();
  await sql`UPDATE leads SET ${sql.ref(p.column)} = ${at}::timestamptz, stage = ${p.stage},
      last_message_channel = COALESCE(${p.channel}, last_message_channel), last_activity_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
    WHERE id = ${p.leadId}::uuid AND ${sql.ref(p.column)} IS NULL`.execute(trx);
}

/**
 * Freezes the lead: its sequence stops for good, `replied` is its stage. (A reply that asks to stop is an opt-out too,
 * written by `optOut`, never here.) Undefined when the lead is already frozen or a reply at or after `at` is on record.
 */
export async function markReplied(trx: Database, p: { leadId: string; at: Date; now: Date; sentiment: string }): Promise<LaneLead | undefined> {
  const at = p.at.toISOString();
  const { rows } = await sql<LaneLead>`
    UPDATE leads l SET replied_at = COALESCE(l.replied_at, ${at}::timestamptz), stage = 'replied', automation_stopped = true, next_action_at = NULL,
      waiting_for = NULL, observe_next_at = NULL, reply_sentiment = ${p.sentiment},
      last_activity_at = ${at}::timestamptz, updated_at = ${p.now.toISOString()}::timestamptz
    WHERE l.id = ${p.leadId}::uuid AND NOT ${FROZEN_BY_ANSWER}
      AND ${noReplySince(at)}
    RETURNING l.id, l.person, l.company, l.title, l.email, l.linkedin_url, l.account_id, l.sequence_id, l.stage`.execute(trx);
  return rows[0];
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
      ${touchedAt(at, p.now)}
    WHERE l.id = ${p.leadId}::uuid AND NOT ${FROZEN_BY_ANSWER}
      AND ${noReplySince(at)}
    RETURNING l.id`.execute(trx);
  return rows.length > 0;
}

import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { LeadStage } from '../../db/schema.js';
import { uncontactedSql } from '../uncontacted.js';
import { FROZEN_BY_ANSWER, noReplySince, touchedAt } from './hear.js';

// The lane transitions that end a lane: a stop, an opt-out, a leaver notice, a hard bounce. A lane nobody has been
// contacted on yet (domain/uncontacted.ts) ends `skipped` on a stop and an opt-out.

/**
 * Stops the given lanes (POST /x/leads/{id}/stop, and a lead merged into its twin: docs/sequences-and-leads.md "Two
 * leads, one person"): automation stopped, nothing due, an uncontacted queued lane `skipped`. Returns only the lanes
 * that changed, so a repeated stop touches nothing and the caller can tell a first stop from a replay.
 */
export async function stop(trx: Database, workspaceId: string, leadIds: string[], now: Date): Promise<{ id: string; account_id: string | null }[]> {
  if (leadIds.length === 0) return [];
  const uncontactedQueued = uncontactedSql();
  return trx
    .updateTable('leads')
    .set({
      automation_stopped: true,
      next_action_at: null,
      branch_at: null,
      stage: sql<LeadStage>`CASE WHEN ${uncontactedQueued} THEN 'skipped' ELSE stage END`,
      updated_at: now,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', leadIds)
    .where((eb) => eb.or([eb('automation_stopped', '=', false), eb('next_action_at', 'is not', null), uncontactedQueued]))
    .returning(['id', 'account_id'])
    .execute();
}

/**
 * Opts the given (locked) leads out (domain/opt-out.ts decides which): `opted_out_at`, every automation on them
 * stopped (nothing due, nothing watched), and an uncontacted lane ends `skipped`, as a stop leaves it. A lead already
 * opted out is left alone.
 */
export async function optOut(trx: Database, p: { workspaceId: string; leadIds: string[]; at: Date; now: Date }): Promise<void> {
  if (p.leadIds.length === 0) return;
  await trx
    .updateTable('leads')
    .set({
      opted_out_at: p.at,
      automation_stopped: true,
      next_action_at: null,
      observe_next_at: null,
      branch_at: null,
      stage: sql<LeadStage>`CASE WHEN ${uncontactedSql()} THEN 'skipped' ELSE stage END`,
      updated_at: p.now,
    })
    .where('workspace_id', '=', p.workspaceId)
    .where('id', 'in', p.leadIds)
    .where('opted_out_at', 'is', null)
    .execute();
}

/**
 * A leaver notice ("no longer with the company"): the lane stops for good, never snoozed and resumed. The lead fails
 * with `last_error = 'left_company'` (its sequence cannot reach the person there any more). False when the lead was
 * already past it (frozen by an answer, or a later reply on record).
 */
export async function stopForLeaver(trx: Database, p: { leadId: string; at: Date; now: Date }): Promise<boolean> {
  const at = p.at.toISOString();
  const { rows } = await sql<{ id: string }>`
    UPDATE leads l SET stage = 'failed', last_error = 'left_company', automation_stopped = true, next_action_at = NULL,
      waiting_for = NULL, observe_next_at = NULL, snoozed_until = NULL, branch_at = NULL,
      ${touchedAt(at, p.now)}
    WHERE l.id = ${p.leadId}::uuid AND NOT ${FROZEN_BY_ANSWER}
      AND ${noReplySince(at)}
    RETURNING l.id`.execute(trx);
  return rows.length > 0;
}

/**
 * The lead waits at a branching step one of whose edges looks for a bounce (domain/branches.ts): a bounce routes it
 * instead of failing it. SQL over the leads row `l`.
 */
const ROUTES_BOUNCE = sql<boolean>`(l.waiting_for = 'branch' AND EXISTS (SELECT 1 FROM sequences s,
  jsonb_array_elements(CASE WHEN jsonb_typeof(s.steps -> l.current_step -> 'next') = 'array' THEN s.steps -> l.current_step -> 'next' ELSE '[]'::jsonb END) e
  WHERE s.id = l.sequence_id AND jsonb_typeof(e -> 'if') = 'object' AND (e -> 'if') ? 'bounced'))`;

/**
 * A hard bounce. The lead fails for good with `lastError: "bounced"` (`failed`), unless it waits at a branch that looks
 * for a bounce: then it keeps `lastError: "bounced"` as the fact its edges read and is decided at once (`routed`).
 * Null when it had already failed so (or was already routed).
 */
export async function failBounced(trx: Database, p: { workspaceId: string; leadId: string; now: Date }): Promise<'failed' | 'routed' | null> {
  const now = p.now.toISOString();
  const { rows } = await sql<{ routed: boolean }>`
    UPDATE leads l SET
      stage = CASE WHEN x.routes THEN l.stage ELSE 'failed' END,
      last_error = 'bounced',
      automation_stopped = CASE WHEN x.routes THEN l.automation_stopped ELSE true END,
      next_action_at = CASE WHEN x.routes AND NOT l.automation_stopped THEN ${now}::timestamptz ELSE NULL END,
      observe_next_at = NULL,
      branch_at = CASE WHEN x.routes THEN l.branch_at ELSE NULL END,
      updated_at = ${now}::timestamptz
    FROM (SELECT ${ROUTES_BOUNCE} AS routes FROM leads l WHERE l.workspace_id = ${p.workspaceId}::uuid AND l.id = ${p.leadId}::uuid) x
    WHERE l.workspace_id = ${p.workspaceId}::uuid AND l.id = ${p.leadId}::uuid
      AND (l.stage <> 'failed' OR l.last_error IS NULL OR l.last_error <> 'bounced')
      AND NOT (x.routes AND l.last_error IS NOT DISTINCT FROM 'bounced')
    RETURNING x.routes AS routed`.execute(trx);
  if (rows.length === 0) return null;
  return rows[0].routed ? 'routed' : 'failed';
}

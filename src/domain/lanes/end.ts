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
      waiting_for = NULL, observe_next_at = NULL, snoozed_until = NULL,
      ${touchedAt(at, p.now)}
    WHERE l.id = ${p.leadId}::uuid AND NOT ${FROZEN_BY_ANSWER}
      AND ${noReplySince(at)}
    RETURNING l.id`.execute(trx);
  return rows.length > 0;
}

/** A hard bounce: the lead fails for good with `lastError: "bounced"`; false when it had already failed so. */
export async function failBounced(trx: Database, p: { workspaceId: string; leadId: string; now: Date }): Promise<boolean> {
  const res = await trx
    .updateTable('leads')
    .set({ stage: 'failed', last_error: 'bounced', automation_stopped: true, next_action_at: null, observe_next_at: null, updated_at: p.now })
    .where('workspace_id', '=', p.workspaceId)
    .where('id', '=', p.leadId)
    .where((eb) => eb.or([eb('stage', '<>', 'failed'), eb('last_error', 'is', null), eb('last_error', '<>', 'bounced')]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows ?? 0) > 0;
}

import type { Selectable } from 'kysely';
import type { Database } from '../../db/database.js';
import type { LeadsTable } from '../../db/schema.js';

// A lane entering a sequence, in its one home: a new lead created in one (a file import, a Play's enrollment), an
// existing lead enrolled, a replied lead moved to the follow-up sequence. All four take `enteringLane`.

/** The lane columns of a lead entering a sequence. */
export interface EnteringLane {
  sequence_id: string;
  current_step: 0;
  next_action_at: Date;
  automation_stopped: false;
  /** No branch is pending in a sequence just entered (domain/lanes/branch.ts). */
  branch_at: null;
  waiting_for: null;
}

/**
 * A lane entering sequence `sequenceId`: its first step, due at `at`, automation on. The engine claims a lead with a
 * sequence and a due `next_action_at` (engine/sql/claimDue.ts). A new lead takes these values in its insert
 * (modules/leads import, modules/plays enrollment); an existing one through `enterSequence` or `switchSequence`.
 */
export function enteringLane(sequenceId: string, at: Date): EnteringLane {
  return { sequence_id: sequenceId, current_step: 0, next_action_at: at, automation_stopped: false, branch_at: null, waiting_for: null };
}

/**
 * Enrolls existing leads that are in no sequence yet into `sequenceId` on account `accountId` (whose mailbox sends their
 * e-mail steps; null: none), due at `at`. A lead already in a sequence is left alone. Answers how many entered.
 */
export async function enterSequence(
  trx: Database,
  p: { workspaceId: string; leadIds: readonly string[]; sequenceId: string; accountId: string | null; at: Date },
): Promise<number> {
  if (p.leadIds.length === 0) return 0;
  const res = await trx
    .updateTable('leads')
    .set({ ...enteringLane(p.sequenceId, p.at), account_id: p.accountId, updated_at: p.at })
    .where('workspace_id', '=', p.workspaceId)
    .where('id', 'in', p.leadIds)
    .where('sequence_id', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/**
 * Moves a lead, from whatever sequence it is in, into `sequenceId` (a reply decision's follow-up sequence), due at `at`:
 * a new A/B arm is drawn and a reply snooze no longer holds it. Answers the lead's row; throws when the lead is not in
 * the workspace.
 */
export async function switchSequence(
  trx: Database,
  p: { workspaceId: string; leadId: string; sequenceId: string; at: Date; now: Date },
): Promise<Selectable<LeadsTable>> {
  return trx
    .updateTable('leads')
    .set({ updated_at: p.now, ...enteringLane(p.sequenceId, p.at), snoozed_until: null, variant_key: null })
    .where('workspace_id', '=', p.workspaceId)
    .where('id', '=', p.leadId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

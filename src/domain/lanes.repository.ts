import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import type { LeadStage } from '../db/schema.js';
import { uncontactedSql } from './uncontacted.js';

// The one writer of a lane's stop (POST /x/leads/{id}/stop, and a lead merged into its twin: docs/sequences-and-leads.md
// "Two leads, one person"): automation stopped, nothing due, an uncontacted queued lane `skipped`.

// A lane nobody has been contacted on yet (src/domain/uncontacted.ts).
const uncontactedQueued = uncontactedSql();

/**
 * Stops the given lanes and returns only those that changed, so a repeated stop touches nothing and
 * the caller can tell a first stop from a replay.
 */
export async function stopLanes(db: Database, workspaceId: string, leadIds: string[], now: Date) {
  if (leadIds.length === 0) return [];
  return db
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

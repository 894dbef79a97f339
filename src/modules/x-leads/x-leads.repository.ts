import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { LeadStage } from '../../db/schema.js';
import { uncontactedSql } from '../../domain/uncontacted.js';

const LEAD_COLUMNS = [
  'id',
  'x_user_id',
  'username',
  'account_id',
  'account_user_id',
  'play_id',
  'sequence_id',
  'stage',
  'automation_stopped',
  'current_step',
  'next_action_at',
  'followed_at',
  'followed_back_at',
  'messaged_at',
  'replied_at',
  'opted_out_at',
] as const;

export type XLeadRow = NonNullable<Awaited<ReturnType<typeof findLead>>>;

export async function findLead(db: Database, workspaceId: string, leadId: string) {
  return db.selectFrom('leads').select(LEAD_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', leadId).executeTakeFirst();
}

/**
 * Locks the lead and every other lane of the same social-network identity in id order, so two stops of
 * different lanes of one person queue behind each other instead of deadlocking.
 */
export async function lockLeadLanes(db: Database, workspaceId: string, leadId: string) {
  const rows = await db
    .selectFrom('leads')
    .select(['id'])
    .where('workspace_id', '=', workspaceId)
    .where((eb) =>
      eb.or([
        eb('id', '=', leadId),
        eb('x_user_id', '=', eb.selectFrom('leads as l').select('l.x_user_id').where('l.workspace_id', '=', workspaceId).where('l.id', '=', leadId)),
      ]),
    )
    .orderBy('id')
    .forUpdate()
    .execute();
  return rows.map((r) => r.id);
}

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

export async function insertActivities(
  db: Database,
  rows: {
    id: string;
    workspace_id: string;
    created_at: Date;
    action: string;
    outcome: 'ok';
    units: number;
    detail: string;
    account_id: string | null;
    lead_id: string;
  }[],
) {
  if (rows.length === 0) return;
  await db.insertInto('activity').values(rows).execute();
}

import type { Database } from '../../db/database.js';

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

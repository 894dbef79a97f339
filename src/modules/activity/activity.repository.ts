import { sql, type ExpressionBuilder } from 'kysely';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import type { ActivityOutcome } from '../../domain/vocabulary.js';

export interface ActivityFilters {
  account?: string;
  actions?: string[];
  outcome?: ActivityOutcome;
  since?: Date;
}

function where(workspaceId: string, f: ActivityFilters) {
  return (eb: ExpressionBuilder<DB, 'activity'>) =>
    eb.and([
      eb('activity.workspace_id', '=', workspaceId),
      ...(f.actions ? [eb('activity.action', 'in', f.actions)] : []),
      ...(f.account ? [eb('activity.account_id', '=', f.account)] : []),
      ...(f.outcome ? [eb('activity.outcome', '=', f.outcome)] : []),
      ...(f.since ? [eb('activity.created_at', '>=', f.since)] : []),
    ]);
}

export async function countActivity(db: Database, workspaceId: string, f: ActivityFilters) {
  const row = await db
    .selectFrom('activity')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(where(workspaceId, f))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function listActivity(db: Database, workspaceId: string, f: ActivityFilters, limit: number) {
  return db
    .selectFrom('activity')
    .leftJoin('leads', (join) => join.onRef('leads.id', '=', 'activity.lead_id').onRef('leads.workspace_id', '=', 'activity.workspace_id'))
    .select([
      'activity.id',
      'activity.created_at',
      'activity.action',
      'activity.outcome',
      'activity.units',
      'activity.detail',
      'activity.account_id',
      'activity.lead_id',
      'leads.id as joined_lead_id',
      'leads.person',
      'leads.company',
      'leads.linkedin_url',
    ])
    .where(where(workspaceId, f))
    .orderBy('activity.created_at', 'desc')
    .orderBy('activity.id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * The one code path allowed to remove ledger entries: the append-only trigger refuses any other
 * DELETE, so the permission is scoped to this transaction. Batches keep each lock short.
 */
export async function deleteExpired(db: Database, before: Date, batchSize: number) {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('outreach.activity_retention', 'on', true)`.execute(trx);
    const result = await sql`
      DELETE FROM activity WHERE id IN (SELECT id FROM activity WHERE created_at < ${before} LIMIT ${batchSize})`.execute(trx);
    return Number(result.numAffectedRows ?? 0);
  });
}

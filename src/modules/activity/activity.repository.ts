import { sql, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import type { ActivityOutcome } from '../../domain/vocabulary.js';

export interface ActivityFilters {
  account?: string;
  actions?: string[];
  outcome?: ActivityOutcome;
  since?: Date;
  /** The entries of one lead (the lead page's timeline). */
  leadId?: string;
  /** Entries whose lead's name matches: already escaped for LIKE with a backslash as the escape character. */
  leadPattern?: string;
}

/** Where a keyset page starts: the entries older (or newer) than the entry `id`, in (created_at, id) order. */
export interface ActivityCursor {
  direction: 'older' | 'newer';
  id: string;
}

function where(workspaceId: string, f: ActivityFilters) {
  return (eb: ExpressionBuilder<DB, 'activity'>) =>
    eb.and([
      eb('activity.workspace_id', '=', workspaceId),
      ...(f.actions ? [eb('activity.action', 'in', f.actions)] : []),
      ...(f.account ? [eb('activity.account_id', '=', f.account)] : []),
      ...(f.outcome ? [eb('activity.outcome', '=', f.outcome)] : []),
      ...(f.since ? [eb('activity.created_at', '>=', f.since)] : []),
      ...(f.leadId ? [eb('activity.lead_id', '=', f.leadId)] : []),
      ...(f.leadPattern !== undefined
        ? [
            eb(
              'activity.lead_id',
              'in',
              eb
                .selectFrom('leads as named')
                .select('named.id')
                .where('named.workspace_id', '=', workspaceId)
                .where(sql<SqlBool>`named.person ILIKE ${f.leadPattern} ESCAPE '\\'`),
            ),
          ]
        : []),
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

/**
 * One page, newest first. With a cursor, the page is the `limit` entries just older (or just newer) than the cursor's
 * entry, compared as the pair (created_at, id): keyset, so a deep page costs what the first does and an entry written
 * meanwhile never shifts one onto two pages. The cursor's own row gives the pair, at the database's full precision.
 */
export async function listActivity(db: Database, workspaceId: string, f: ActivityFilters, limit: number, cursor?: ActivityCursor) {
  const newer = cursor?.direction === 'newer';
  const at = cursor
    ? sql<SqlBool>`(activity.created_at, activity.id) ${sql.raw(newer ? '>' : '<')} (SELECT c.created_at, c.id FROM activity c WHERE c.workspace_id = ${workspaceId} AND c.id = ${cursor.id})`
    : null;
  const rows = await db
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
    .$if(at !== null, (qb) => qb.where(at!))
    .orderBy('activity.created_at', newer ? 'asc' : 'desc')
    .orderBy('activity.id', newer ? 'asc' : 'desc')
    .limit(limit)
    .execute();
  // A newer page is read oldest first (the entries just above the cursor) and shown newest first like every page.
  return newer ? rows.reverse() : rows;
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

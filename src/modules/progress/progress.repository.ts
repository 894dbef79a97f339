import type { Database } from '../../db/database.js';

/** Ledger entries of the period by outcome; an index-only range over activity_recent_cover. */
export async function ledgerCounts(db: Database, workspaceId: string, since: Date) {
  const row = await db
    .selectFrom('activity')
    .select((eb) => [
      eb.fn.countAll<number>().filterWhere('outcome', '=', 'ok').as('ok'),
      eb.fn.countAll<number>().filterWhere('outcome', '=', 'failed').as('failed'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('created_at', '>=', since)
    .executeTakeFirst();
  return { ok: Number(row?.ok ?? 0), failed: Number(row?.failed ?? 0) };
}

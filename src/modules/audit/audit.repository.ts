import type { Database } from '../../db/database.js';
import type { AuditEventsTable } from '../../db/schema.js';

export interface NewAuditRow extends Omit<AuditEventsTable, 'detail' | 'at'> {
  at: Date;
  detail: Record<string, unknown>;
}

/** Appends one entry; the table is never updated or deleted from. */
export async function insertAuditEvent(db: Database, row: NewAuditRow): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({ ...row, detail: JSON.stringify(row.detail) })
    .execute();
}

/** Newest first, keyset-paged by (at, id); each filter has its index (migration 0047). */
export async function listAuditEvents(
  db: Database,
  workspaceId: string,
  f: { actorId?: string; action?: string; from?: Date; to?: Date; before?: { at: Date; id: string }; limit: number },
) {
  let q = db.selectFrom('audit_events').selectAll().where('workspace_id', '=', workspaceId);
  if (f.actorId) q = q.where('actor_id', '=', f.actorId);
  if (f.action) q = q.where('action', '=', f.action);
  if (f.from) q = q.where('at', '>=', f.from);
  if (f.to) q = q.where('at', '<', f.to);
  if (f.before) {
    const b = f.before;
    q = q.where((eb) => eb.or([eb('at', '<', b.at), eb.and([eb('at', '=', b.at), eb('id', '<', b.id)])]));
  }
  return q.orderBy('at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
}

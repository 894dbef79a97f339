import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/**
 * A position in a workspace's stream order: (txid, seq) of an outbox row, as decimal text (both are bigint; text
 * keeps them exact whatever their size). `txid` is the inserting transaction's id, `seq` the outbox's sequence
 * number (migration 0040; docs/webhooks.md "Event stream order").
 */
export interface StreamCursor {
  txid: string;
  seq: string;
}

/** A PostgreSQL snapshot (pg_snapshot as text, `xmin:xmax:xip,...`) and its xmin and xmax, as decimal text. */
export interface StreamSnapshot {
  snapshot: string;
  xmin: string;
  xmax: string;
}

/** The position of one of the workspace's stream events (not a subscription's test ping), or undefined. */
export async function findStreamCursor(db: Database, workspaceId: string, eventId: string): Promise<(StreamCursor & { id: string }) | undefined> {
  return db
    .selectFrom('outbox_events')
    .select(['id', sql<string>`txid::text`.as('txid'), sql<string>`seq::text`.as('seq')])
    .where('id', '=', eventId)
    .where('workspace_id', '=', workspaceId)
    .where('webhook_id', 'is', null)
    .executeTakeFirst();
}

/**
 * The database's current snapshot: a stream opened now delivers the events its snapshot does not see (their
 * transactions had not committed when it was taken).
 */
export async function currentStreamSnapshot(db: Database): Promise<StreamSnapshot> {
  const { rows } = await sql<StreamSnapshot>`
    SELECT s::text AS snapshot, pg_snapshot_xmin(s)::text AS xmin, pg_snapshot_xmax(s)::text AS xmax
    FROM (SELECT pg_current_snapshot() AS s) AS current`.execute(db);
  return rows[0];
}

/**
 * Up to `limit` stream events of one workspace after `after` in (txid, seq) order, oldest first, whose inserting
 * transaction is older than the reading statement's snapshot xmin: every such transaction has ended, so the rows up
 * to there are final and a later read never finds one before its cursor. With `notVisibleIn` (a pg_snapshot as
 * text), only rows that snapshot did not see. Events addressed to one subscription (test pings) are left out.
 */
export async function listStreamEvents(db: Database, workspaceId: string, after: StreamCursor, limit: number, notVisibleIn?: string) {
  let query = db
    .selectFrom('outbox_events')
    .select(['id', 'event', 'data', 'created_at', sql<string>`txid::text`.as('txid'), sql<string>`seq::text`.as('seq')])
    .where('workspace_id', '=', workspaceId)
    // An event addressed to one subscription (the test ping of POST /webhooks/{id}/test) is not a workspace event.
    .where('webhook_id', 'is', null)
    .where(sql<boolean>`(txid, seq) > (${after.txid}::bigint, ${after.seq}::bigint)`)
    .where(sql<boolean>`txid < (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint)`);
  if (notVisibleIn !== undefined) query = query.where(sql<boolean>`NOT pg_visible_in_snapshot(txid::text::xid8, ${notVisibleIn}::pg_snapshot)`);
  return query.orderBy('txid', 'asc').orderBy('seq', 'asc').limit(limit).execute();
}

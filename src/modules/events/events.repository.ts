import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/**
 * A position in a workspace's stream order (created_at, id). `at` is created_at as PostgreSQL text, to the
 * microsecond, so that a resumed stream compares positions exactly (a JavaScript Date keeps milliseconds only).
 */
export interface StreamCursor {
  id: string;
  at: string;
  createdAt: Date;
}

/** The position of one of the workspace's stream events (not a subscription's test ping), or undefined. */
export async function findStreamCursor(db: Database, workspaceId: string, eventId: string): Promise<StreamCursor | undefined> {
  const row = await db
    .selectFrom('outbox_events')
    .select(['id', 'created_at', sql<string>`created_at::text`.as('at')])
    .where('id', '=', eventId)
    .where('workspace_id', '=', workspaceId)
    .where('webhook_id', 'is', null)
    .executeTakeFirst();
  return row && { id: row.id, at: row.at, createdAt: new Date(row.created_at) };
}

/**
 * Outbox events of one workspace created at or after `since`, oldest first (the event stream reads them); with
 * `after`, only those after that position in (created_at, id) order.
 */
export async function listOutboxEventsSince(db: Database, workspaceId: string, since: Date, limit: number, after?: StreamCursor) {
  let query = db
    .selectFrom('outbox_events')
    .select(['id', 'event', 'data', 'created_at', sql<string>`created_at::text`.as('at')])
    .where('workspace_id', '=', workspaceId)
    .where('created_at', '>=', since)
    // An event addressed to one subscription (the test ping of POST /webhooks/{id}/test) is not a workspace event.
    .where('webhook_id', 'is', null);
  if (after) query = query.where(sql<boolean>`(created_at, id) > (${after.at}::timestamptz, ${after.id}::uuid)`);
  return query.orderBy('created_at', 'asc').orderBy('id', 'asc').limit(limit).execute();
}

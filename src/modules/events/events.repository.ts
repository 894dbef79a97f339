import type { Database } from '../../db/database.js';

/** Outbox events of one workspace created at or after `since`, oldest first (the event stream reads them). */
export async function listOutboxEventsSince(db: Database, workspaceId: string, since: Date, limit: number) {
  return (
    db
      .selectFrom('outbox_events')
      .select(['id', 'event', 'data', 'created_at'])
      .where('workspace_id', '=', workspaceId)
      .where('created_at', '>=', since)
      // An event addressed to one subscription (the test ping of POST /webhooks/{id}/test) is not a workspace event.
      .where('webhook_id', 'is', null)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(limit)
      .execute()
  );
}

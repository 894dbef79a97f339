import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// The event stream (GET /events/stream, `outreach listen`) reads one workspace's recent workspace events every
// 500 ms per listener: (workspace_id, created_at, id) in its order, for events not addressed to one subscription.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE INDEX outbox_events_workspace_stream ON outbox_events (workspace_id, created_at, id) WHERE webhook_id IS NULL;
  `,
  );
}

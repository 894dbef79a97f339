import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/** Every active followers Play with an X account gets a discovery schedule (due at once when new). */
export async function scheduleDiscovery(db: Database, now: Date) {
  await sql`INSERT INTO engine_discovery (workspace_id, play_id, next_run_at)
    SELECT p.workspace_id, p.id, ${now.toISOString()}::timestamptz FROM plays p
    WHERE p.kind = 'followers' AND p.status = 'active' AND p.account_user_id IS NOT NULL
    ON CONFLICT DO NOTHING`.execute(db);
}

import { sql, type Kysely } from 'kysely';

// The pacing reservation a send's claim made ({workspaceId, accountId, localDay, bucket}), kept with the in-flight
// mark: crash recovery gives back exactly that reservation, however long the recovery takes, whichever worker
// (and lease) ends up doing it, and whatever happened to the lead's account or time zone since.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE leads ADD COLUMN inflight_release jsonb`.execute(db);
}

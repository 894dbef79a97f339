import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// DMs and follows sent per connected X account per UTC day: the real X driver's daily caps (docs/x-channel.md).
// A send reserves one unit with a conditional upsert (never past the cap, whatever the concurrency) and gives it back
// when X did not act (a refusal or a rate limit).
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE x_account_days (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      user_id text NOT NULL,
      day date NOT NULL,
      dms integer NOT NULL DEFAULT 0,
      follows integer NOT NULL DEFAULT 0,
      PRIMARY KEY (workspace_id, user_id, day)
    );
  `,
  );
}

import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Tries of a step that only waited on the sending side (a rate limit, an X account disconnected, a mailbox whose
// login was refused): counted apart from step_attempts, so they never use up the lead's attempts
// (OUTREACH_ENGINE_MAX_ATTEMPTS); both reset when the step is done.
// And a "Connect X account" started in the console is bound to that console session (its id's hash): X's redirect
// completes it only in the same browser, so a connect link cannot be handed to someone else to approve.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE leads ADD COLUMN step_waits integer NOT NULL DEFAULT 0;
    ALTER TABLE x_oauth_states ADD COLUMN session_id_hash text;
  `,
  );
}

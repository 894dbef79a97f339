import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// A Calendly endpoint may hold the webhook subscription this service created at Calendly for it (docs/meetings.md
// "Subscribing from here"): the subscription's URI and scope, when it was made, and the personal access token that
// made it (encrypted with the installation's key, as mailbox passwords are), kept so that rotating the secret or
// removing the endpoint can replace or delete the subscription. All null: the subscription, if any, was made by hand.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE meeting_endpoints
      ADD COLUMN subscription_uri text,
      ADD COLUMN subscription_scope text CHECK (subscription_scope IN ('user', 'organization')),
      ADD COLUMN subscription_token text,
      ADD COLUMN subscribed_at timestamptz;
  `,
  );
}

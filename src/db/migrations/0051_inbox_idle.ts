import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// IMAP IDLE sharded by lease (docs/email.md "Replies heard at once: IDLE"). Each worker that listens names itself in
// `inbox_listeners` while it lives (`seen_at` renewed every third of the lease); a mailbox held in IDLE names its
// listener (`idle_owner`) until `idle_until`, renewed the same way, so a crashed worker's mailboxes are free again once
// its lease runs out. `imap_idle` is false once the server showed it lacks IDLE (the mailbox is then polled only).
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE inbox_listeners (
      id text PRIMARY KEY,
      seen_at timestamptz NOT NULL
    );
    ALTER TABLE mailboxes ADD COLUMN idle_owner text;
    ALTER TABLE mailboxes ADD COLUMN idle_until timestamptz;
    ALTER TABLE mailboxes ADD COLUMN imap_idle boolean;
    CREATE INDEX mailboxes_idle_owner ON mailboxes (idle_owner) WHERE idle_owner IS NOT NULL;
    `,
  );
}

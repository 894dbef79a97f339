import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// E-mails sent per mailbox per local day (the mailbox's account's time zone). A send reserves one unit with a
// conditional upsert (never past the day's cap, whatever the concurrency) and gives it back when SMTP refused the
// message. It caps a mailbox even when it sends for leads of other accounts (the workspace's pool, docs/email.md).
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE mailbox_days (
      mailbox_id text NOT NULL REFERENCES mailboxes(id) ON DELETE CASCADE,
      local_day date NOT NULL,
      sent integer NOT NULL DEFAULT 0,
      PRIMARY KEY (mailbox_id, local_day)
    );
  `,
  );
}

import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Issue 26, inbound mail that cannot poison, spoof or exhaust the inbox watcher (docs/email.md):
// - replies.their_message_truncated: the stored reply text was cut (at 20,000 characters), as `reply.received`
//   already says of its own copy with `theirMessageTruncated`;
// - email_messages.recipient: the address one of our e-mails went to, so a bounce that names its Message-ID fails
//   and suppresses that address, never one the report's text names (NULL on rows written before: the lead's address);
// - mailboxes.trusted_authserv_id: the authserv-id whose Authentication-Results headers the watcher believes for this
//   mailbox, besides its provider's own (world-file contract, "Mailboxes").
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE replies ADD COLUMN their_message_truncated boolean NOT NULL DEFAULT false;
    ALTER TABLE email_messages ADD COLUMN recipient text;
    ALTER TABLE mailboxes ADD COLUMN trusted_authserv_id text;
  `,
  );
}

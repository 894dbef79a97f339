import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Durable Sent copies (docs/email.md "Sent folder"): a message sent from a mailbox with a sent folder owes a copy from
// the moment its acceptance is recorded, in the same UPDATE. The exact bytes sent ride along encrypted from the
// transaction's start record (`sent_copy_raw`, cleared once filed), and the inbox loop files owed copies over IMAP,
// searching the folder for the Message-ID first, so a copy is never appended twice. A failure is retried with backoff
// (`sent_copy_attempts`, `sent_copy_next_at`: null while due at once, `sent_copy_error`), never dropped.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE email_messages ADD COLUMN sent_copy text;
    ALTER TABLE email_messages ADD COLUMN sent_copy_raw text;
    ALTER TABLE email_messages ADD COLUMN sent_copy_attempts integer NOT NULL DEFAULT 0;
    ALTER TABLE email_messages ADD COLUMN sent_copy_next_at timestamptz;
    ALTER TABLE email_messages ADD COLUMN sent_copy_error text;
    CREATE INDEX email_messages_sent_copy_due ON email_messages (sent_copy_next_at NULLS FIRST) WHERE sent_copy = 'owed';
    `,
  );
}

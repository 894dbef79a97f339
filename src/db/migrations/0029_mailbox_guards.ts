import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Issue 29 §3, reputation guards per mailbox (docs/deliverability.md):
// - email_messages.bounced_at / complained_at: a hard bounce or an abuse complaint (ARF) tied to this message of ours;
//   bounce_cleared: a person resumed the mailbox since, so this bounce no longer counts towards pausing it;
// - mailboxes.paused_at / paused_reason / paused_detail: the mailbox stopped sending (too many hard bounces among its
//   last sends, or a complaint) until a person resumes it;
// - the index reads a mailbox's last 100 sends, newest first.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE email_messages ADD COLUMN bounced_at timestamptz;
    ALTER TABLE email_messages ADD COLUMN complained_at timestamptz;
    ALTER TABLE email_messages ADD COLUMN bounce_cleared boolean NOT NULL DEFAULT false;
    ALTER TABLE mailboxes ADD COLUMN paused_at timestamptz;
    ALTER TABLE mailboxes ADD COLUMN paused_reason text CHECK (paused_reason IN ('bounces','complaints'));
    ALTER TABLE mailboxes ADD COLUMN paused_detail text;
    CREATE INDEX email_messages_mailbox_sent ON email_messages (mailbox_id, sent_at DESC) WHERE direction = 'out';
  `,
  );
}

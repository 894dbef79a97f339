import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Issue 31 §1, crash-honest e-mail (docs/email.md "What a crash can cost"):
// - email_messages.delivery: how far an outgoing message is known to have gone. `started`: a connection's SMTP
//   transaction took it (the server accepted RCPT TO and DATA, the message text had not been sent yet); `accepted`: the
//   server answered the message with 250; `marked_sent`: a person said it arrived. Inbound rows have none. A row exists
//   only once a transaction started, so a step with no row was never handed to a server.
// - email_messages.accepted_at / smtp_queue_id: when the 250 came and the queue id it named (bounded, may be null).
// - x_dm_sends (issue 31 §4): an X DM's request about to leave, written just before the POST and answered with X's
//   dm_event_id; a step whose key has no row never reached X, so a crash before it is `not_sent` without asking X.
// Rows written before this migration were stored before the hand-off: those older than an hour were long settled by
// the engine's check (and were threaded on), so they count as accepted; newer ones are `started` and are checked.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE email_messages ADD COLUMN delivery text CHECK (delivery IN ('started','accepted','marked_sent'));
    ALTER TABLE email_messages ADD COLUMN accepted_at timestamptz;
    ALTER TABLE email_messages ADD COLUMN smtp_queue_id text;
    UPDATE email_messages SET delivery = CASE WHEN sent_at < now() - interval '1 hour' THEN 'accepted' ELSE 'started' END,
      accepted_at = CASE WHEN sent_at < now() - interval '1 hour' THEN sent_at END
      WHERE direction = 'out';
    CREATE TABLE x_dm_sends (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      idempotency_key text NOT NULL,
      account_user_id text NOT NULL,
      started_at timestamptz NOT NULL,
      answered_at timestamptz,
      dm_event_id text,
      PRIMARY KEY (workspace_id, idempotency_key)
    );
  `,
  );
}

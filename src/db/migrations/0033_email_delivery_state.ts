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
//   A send in flight as this runs was started by code that wrote no mark: it gets an unanswered mark, so its check
//   asks X as before instead of reading the missing mark as "never left".
// Rows written before this migration were stored before the hand-off, whatever became of them. They count as
// accepted, except those the record cannot vouch for: a step still in flight (a lead's inflight_key: the engine's
// check decides it from the sent folder) and a step the ledger already called uncertain (never threaded on).
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE email_messages ADD COLUMN delivery text CHECK (delivery IN ('started','accepted','marked_sent'));
    ALTER TABLE email_messages ADD COLUMN accepted_at timestamptz;
    ALTER TABLE email_messages ADD COLUMN smtp_queue_id text;
    UPDATE email_messages SET delivery = 'accepted', accepted_at = sent_at WHERE direction = 'out';
    UPDATE email_messages e SET delivery = 'started', accepted_at = NULL
      WHERE e.direction = 'out' AND (
        EXISTS (SELECT 1 FROM leads l WHERE l.id = e.lead_id AND l.inflight_key = e.idempotency_key)
        OR EXISTS (SELECT 1 FROM activity a WHERE a.lead_id = e.lead_id AND a.outcome = 'failed'
          AND a.detail LIKE '%"uncertain_delivery"%' AND e.idempotency_key LIKE '%:' || (a.detail::jsonb ->> 'step'))
      );
    CREATE TABLE x_dm_sends (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      idempotency_key text NOT NULL,
      account_user_id text NOT NULL,
      started_at timestamptz NOT NULL,
      answered_at timestamptz,
      dm_event_id text,
      PRIMARY KEY (workspace_id, idempotency_key)
    );
    INSERT INTO x_dm_sends (workspace_id, idempotency_key, account_user_id, started_at)
      SELECT workspace_id, inflight_key, COALESCE(account_user_id, ''), COALESCE(inflight_at, now()) FROM leads
      WHERE inflight_key IS NOT NULL
      ON CONFLICT DO NOTHING;
  `,
  );
}

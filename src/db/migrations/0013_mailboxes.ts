import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// The real e-mail channel (world-file "Mailboxes"): one mailbox per messaging account, the Message-IDs we sent
// (threading, reply matching and crash recovery through the sent folder), each mailbox's INBOX position, the
// inbound messages already handled (once across restarts and concurrent workers), and the workspace's
// suppressed addresses (bounced or unsubscribed).
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE mailboxes (
      id text PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      account_id text NOT NULL UNIQUE REFERENCES messaging_accounts(id) ON DELETE CASCADE,
      address text NOT NULL,
      display_name text,
      smtp_url_enc text NOT NULL,
      imap_url_enc text NOT NULL,
      sent_folder text,
      health text NOT NULL DEFAULT 'unknown' CHECK (health IN ('unknown','ok','auth_failed','unreachable')),
      health_detail text,
      health_checked_at timestamptz,
      imap_uidvalidity bigint,
      imap_last_uid bigint NOT NULL DEFAULT 0,
      next_poll_at timestamptz NOT NULL DEFAULT now(),
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX mailboxes_workspace ON mailboxes (workspace_id, id);
    CREATE INDEX mailboxes_due_poll ON mailboxes (next_poll_at);

    ALTER TABLE leads ADD COLUMN mailbox_id text REFERENCES mailboxes(id) ON DELETE SET NULL;

    CREATE TABLE email_messages (
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      message_id text NOT NULL,
      lead_id uuid NOT NULL,
      mailbox_id text REFERENCES mailboxes(id) ON DELETE SET NULL,
      idempotency_key text NOT NULL,
      subject text,
      direction text NOT NULL DEFAULT 'out' CHECK (direction IN ('out','in')),
      sent_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, message_id)
    );
    CREATE UNIQUE INDEX email_messages_idempotency ON email_messages (workspace_id, idempotency_key);
    CREATE INDEX email_messages_lead ON email_messages (workspace_id, lead_id, sent_at);

    CREATE TABLE email_inbound_seen (
      mailbox_id text NOT NULL REFERENCES mailboxes(id) ON DELETE CASCADE,
      uidvalidity bigint NOT NULL,
      uid bigint NOT NULL,
      outcome text NOT NULL,
      seen_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (mailbox_id, uidvalidity, uid)
    );

    CREATE TABLE suppressed_addresses (
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      address text NOT NULL,
      reason text NOT NULL CHECK (reason IN ('bounced','unsubscribed')),
      lead_id uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, address)
    );
  `,
  );
}

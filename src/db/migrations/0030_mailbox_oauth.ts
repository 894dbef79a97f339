import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Issue 29 §1, mailboxes connected with OAuth 2.0 (docs/email.md "Connect Google or Microsoft 365"):
// - mailboxes.oauth_provider / oauth_tokens_enc / oauth_expires_at: the provider, the access and refresh tokens
//   (one encrypted JSON value, never returned or logged) and when the access token lapses; NULL for a password mailbox;
// - mailbox_oauth_states: a pending "Connect Google mailbox" or "Connect Microsoft 365 mailbox", single use for ten
//   minutes, with its encrypted PKCE verifier, the account it is for, and any per-mailbox SMTP and IMAP hosts.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE mailboxes ADD COLUMN oauth_provider text CHECK (oauth_provider IN ('google','microsoft'));
    ALTER TABLE mailboxes ADD COLUMN oauth_tokens_enc text;
    ALTER TABLE mailboxes ADD COLUMN oauth_expires_at timestamptz;
    CREATE TABLE mailbox_oauth_states (
      state text PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      provider text NOT NULL CHECK (provider IN ('google','microsoft')),
      account_id text,
      code_verifier text NOT NULL,
      redirect_uri text NOT NULL,
      smtp_url text,
      imap_url text,
      session_id_hash text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX mailbox_oauth_states_expiry ON mailbox_oauth_states (expires_at);
  `,
  );
}

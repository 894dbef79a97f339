import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// One table of pending OAuth connects for every channel (issue 41: src/channels/oauth/). X's (0018) and the mailbox
// connect's (0030) states were two tables with the same life: a single-use state, an encrypted PKCE verifier, the
// redirect URI, the console session that started it, ten minutes. `flow` says whose it is (`x`, `mailbox`); what
// only one flow keeps (the mailbox's provider, account and server overrides) is in `details`. Pending connects are
// carried over, so a person half-way through a connect during the upgrade can finish it.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE oauth_states (
      state text PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      flow text NOT NULL,
      code_verifier text NOT NULL,
      redirect_uri text NOT NULL,
      session_id_hash text,
      details jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX oauth_states_expires ON oauth_states (expires_at);
    INSERT INTO oauth_states (state, workspace_id, flow, code_verifier, redirect_uri, session_id_hash, details, created_at, expires_at)
      SELECT state, workspace_id, 'x', code_verifier, redirect_uri, session_id_hash, '{}'::jsonb, created_at, expires_at FROM x_oauth_states;
    INSERT INTO oauth_states (state, workspace_id, flow, code_verifier, redirect_uri, session_id_hash, details, created_at, expires_at)
      SELECT state, workspace_id, 'mailbox', code_verifier, redirect_uri, session_id_hash,
        jsonb_build_object('provider', provider, 'accountId', account_id, 'smtpUrl', smtp_url, 'imapUrl', imap_url), created_at, expires_at
      FROM mailbox_oauth_states;
    DROP TABLE x_oauth_states;
    DROP TABLE mailbox_oauth_states;
  `,
  );
}

import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// One table of pending OAuth connects for every channel (issue 41: src/channels/oauth/). X's (0018) and the mailbox
// connect's (0030) states were two tables with the same life: a single-use state, an encrypted PKCE verifier, the
// redirect URI, the console session that started it, ten minutes. X's table becomes the shared one in place (its
// rows stay where they are); `flow` says whose a row is (`x`, `mailbox`), and what only one flow keeps (the
// mailbox's provider, account and server overrides) is in `details`. The mailbox's pending connects are carried
// over, so a person half-way through a connect during the upgrade can finish it.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE x_oauth_states RENAME TO oauth_states;
    ALTER TABLE oauth_states RENAME CONSTRAINT x_oauth_states_pkey TO oauth_states_pkey;
    ALTER TABLE oauth_states RENAME CONSTRAINT x_oauth_states_workspace_id_fkey TO oauth_states_workspace_id_fkey;
    ALTER INDEX x_oauth_states_expires RENAME TO oauth_states_expires;
    ALTER TABLE oauth_states ADD COLUMN flow text NOT NULL DEFAULT 'x';
    ALTER TABLE oauth_states ADD COLUMN details jsonb NOT NULL DEFAULT '{}'::jsonb;
    ALTER TABLE oauth_states ALTER COLUMN flow DROP DEFAULT;
    ALTER TABLE oauth_states ALTER COLUMN details DROP DEFAULT;
    INSERT INTO oauth_states (state, workspace_id, flow, code_verifier, redirect_uri, session_id_hash, details, created_at, expires_at)
      SELECT state, workspace_id, 'mailbox', code_verifier, redirect_uri, session_id_hash,
        jsonb_build_object('provider', provider, 'accountId', account_id, 'smtpUrl', smtp_url, 'imapUrl', imap_url), created_at, expires_at
      FROM mailbox_oauth_states;
    DROP TABLE mailbox_oauth_states;
  `,
  );
}

import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// The web console's sign-ins. Only SHA-256 hashes of the browser's session id and of a login link's token are
// stored, so a database read gives no way in. A session made with a key is bound to that key (revoking or
// expiring the key ends it); a session made from an operator's login link has no key (key_id NULL).
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE console_sessions (
      id_hash text PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      key_id uuid REFERENCES api_keys(id) ON DELETE CASCADE,
      selected_workspace_id uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
    CREATE TABLE console_login_links (
      token_hash text PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    );
  `,
  );
}

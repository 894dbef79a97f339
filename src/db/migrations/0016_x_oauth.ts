import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// The OAuth 2.0 user tokens of a connected X account, encrypted at rest (lib/crypto.ts). One row per X account;
// a refresh takes this row FOR UPDATE, so two workers never spend the same (rotating) refresh token.
// disconnected_at is set when X refuses a refresh: the account needs a person to connect it again.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE x_account_oauth (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      user_id text NOT NULL,
      access_token text NOT NULL,
      refresh_token text NOT NULL,
      expires_at timestamptz NOT NULL,
      scopes text NOT NULL DEFAULT '',
      disconnected_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, user_id)
    );
  `,
  );
}

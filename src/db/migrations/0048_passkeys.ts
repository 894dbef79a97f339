import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Passkeys (WebAuthn credentials) people register to sign in to the console without a link (docs/roles.md
// "Passkeys"). A passkey signs its person in to the workspace it was registered in. The challenge of a ceremony in
// progress is kept for 5 minutes under the SHA-256 of a random ticket the browser holds in a cookie; it is spent once.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE passkeys (
      id text PRIMARY KEY,
      person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      public_key text NOT NULL,
      counter bigint NOT NULL,
      transports text[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz
    );
    CREATE INDEX passkeys_person ON passkeys (person_id);

    CREATE TABLE webauthn_challenges (
      ticket_hash text PRIMARY KEY,
      challenge text NOT NULL,
      person_id uuid REFERENCES people(id) ON DELETE CASCADE,
      workspace_id uuid REFERENCES workspaces(id) ON DELETE CASCADE,
      expires_at timestamptz NOT NULL
    );
  `,
  );
}

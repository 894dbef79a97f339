import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// People, their role in each workspace, the one-time links that invite them or sign them in, and the audit trail
// (docs/roles.md). A person is one e-mail address in the installation; a membership gives them a role in one
// workspace. Only SHA-256 hashes of link tokens are stored, like login links.
//
// The audit trail is append-only (no UPDATE or DELETE is ever issued on it) and lives apart from the activity ledger,
// whose list of actions the spec closes: sign-ins, invitations, role changes, keys, connects, webhooks, suppression
// removals, approvals and activations. It is kept at least as long as the ledger (nothing prunes either).
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE people (
      id uuid PRIMARY KEY,
      email text NOT NULL,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX people_email ON people (lower(email));

    CREATE TABLE workspace_members (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner','admin','member')),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, person_id)
    );

    CREATE TABLE person_links (
      token_hash text PRIMARY KEY,
      purpose text NOT NULL CHECK (purpose IN ('invite','sign_in')),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      email text NOT NULL,
      role text CHECK (role IN ('owner','admin','member')),
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    );
    CREATE INDEX person_links_workspace ON person_links (workspace_id, created_at);

    ALTER TABLE console_sessions ADD COLUMN person_id uuid REFERENCES people(id) ON DELETE CASCADE;
    CREATE INDEX console_sessions_person ON console_sessions (person_id) WHERE person_id IS NOT NULL;

    CREATE TABLE audit_events (
      workspace_id uuid NOT NULL,
      id uuid NOT NULL,
      at timestamptz NOT NULL,
      actor_kind text NOT NULL CHECK (actor_kind IN ('person','key','operator','engine')),
      actor_id text,
      actor_label text NOT NULL,
      action text NOT NULL,
      subject text,
      detail jsonb NOT NULL,
      PRIMARY KEY (workspace_id, id)
    );
    CREATE INDEX audit_events_at ON audit_events (workspace_id, at DESC, id DESC);
    CREATE INDEX audit_events_actor ON audit_events (workspace_id, actor_id, at DESC, id DESC);
    CREATE INDEX audit_events_action ON audit_events (workspace_id, action, at DESC, id DESC);
  `,
  );
}

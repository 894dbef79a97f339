import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// The real X channel (docs/x-channel.md):
// - x_oauth_states: one pending "Connect X account" per row. The state is the key; the PKCE verifier is encrypted;
//   a row is deleted when it is used (single use) and is worthless after expires_at (10 minutes).
// - x_account_oauth gains the account's pause after X answered 429 (rate_limited_until, shared by every worker),
//   and the watcher's position: the newest DM event id handled, the next DM poll, the next follower check (X allows
//   15 follower reads per 15 minutes) and a poll lease.
// - x_dm_events_seen: each DM event is applied once, across restarts and concurrent workers (inserted in the same
//   transaction that applies it).
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE x_oauth_states (
      state text PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      code_verifier text NOT NULL,
      redirect_uri text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX x_oauth_states_expires ON x_oauth_states (expires_at);
    ALTER TABLE x_account_oauth ADD COLUMN rate_limited_until timestamptz;
    ALTER TABLE x_account_oauth ADD COLUMN dm_newest_event_id text;
    ALTER TABLE x_account_oauth ADD COLUMN next_poll_at timestamptz NOT NULL DEFAULT now();
    ALTER TABLE x_account_oauth ADD COLUMN poll_lease_until timestamptz;
    ALTER TABLE x_account_oauth ADD COLUMN followers_next_at timestamptz NOT NULL DEFAULT now();
    ALTER TABLE x_account_oauth ADD COLUMN connected_at timestamptz NOT NULL DEFAULT now();
    CREATE INDEX leads_awaiting_follow_back ON leads (workspace_id, followed_at) WHERE followed_at IS NOT NULL AND followed_back_at IS NULL;
    CREATE INDEX x_account_oauth_due ON x_account_oauth (next_poll_at) WHERE disconnected_at IS NULL;
    CREATE TABLE x_dm_events_seen (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      account_user_id text NOT NULL,
      event_id text NOT NULL,
      lead_id uuid,
      seen_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, account_user_id, event_id)
    );
  `,
  );
}

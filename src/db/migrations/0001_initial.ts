import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// One plain-PostgreSQL schema for both engines. Every tenant table leads its keys and indexes with
// workspace_id so that a Citus deployment can distribute by it and every tenant query is an index range.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE workspaces (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      x_channel_enabled boolean NOT NULL DEFAULT true,
      booking_link text,
      follow_up_sequence_id uuid,
      billing_plan text NOT NULL DEFAULT 'growth',
      billing_status text NOT NULL DEFAULT 'active'
        CHECK (billing_status IN ('active','trialing','past_due','canceled')),
      energy_balance integer NOT NULL DEFAULT 1000 CHECK (energy_balance >= 0),
      energy_daily_refill integer NOT NULL DEFAULT 1000 CHECK (energy_daily_refill >= 0),
      energy_refilled_at timestamptz NOT NULL DEFAULT now(),
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE team_links (
      owner_workspace_id uuid NOT NULL REFERENCES workspaces(id),
      client_workspace_id uuid NOT NULL REFERENCES workspaces(id),
      role text NOT NULL CHECK (role IN ('owner','admin','member')),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (owner_workspace_id, client_workspace_id),
      CHECK (owner_workspace_id <> client_workspace_id)
    );

    CREATE TABLE api_keys (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      key_hash text NOT NULL UNIQUE,
      prefix text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      revoked_at timestamptz
    );
    CREATE INDEX api_keys_workspace ON api_keys (workspace_id);

    CREATE TABLE x_accounts (
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      user_id text NOT NULL,
      handle text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, user_id)
    );
    CREATE UNIQUE INDEX x_accounts_handle ON x_accounts (workspace_id, lower(handle));

    CREATE TABLE messaging_accounts (
      id text PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      name text NOT NULL,
      mode text NOT NULL DEFAULT 'linkedin',
      stored_status text NOT NULL DEFAULT 'connected',
      time_zone text NOT NULL DEFAULT 'UTC',
      connected_at timestamptz,
      warmup_started_at timestamptz,
      account_score integer,
      relations_count integer,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX messaging_accounts_workspace ON messaging_accounts (workspace_id, id);

    CREATE TABLE sequences (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      name text NOT NULL,
      status text NOT NULL CHECK (status IN ('draft','active','paused','archived')),
      revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
      approved_revision integer,
      approved_at timestamptz,
      channels text[] NOT NULL DEFAULT '{}',
      steps jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX sequences_workspace ON sequences (workspace_id, created_at, id);

    CREATE TABLE plays (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      name text NOT NULL,
      kind text NOT NULL DEFAULT 'followers',
      status text NOT NULL CHECK (status IN ('active','paused','archived')),
      revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
      sequence_id uuid REFERENCES sequences(id),
      account_user_id text,
      review_api_enabled boolean NOT NULL DEFAULT true,
      autopilot boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX plays_workspace ON plays (workspace_id, created_at, id);

    CREATE TABLE candidate_batches (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      play_id uuid NOT NULL REFERENCES plays(id),
      source text NOT NULL CHECK (source IN ('discovery','import','seed')),
      request_id text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX candidate_batches_play ON candidate_batches (workspace_id, play_id);

    CREATE TABLE import_requests (
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      play_id uuid NOT NULL REFERENCES plays(id),
      request_id text NOT NULL,
      payload_hash text NOT NULL,
      batch_id uuid NOT NULL REFERENCES candidate_batches(id),
      response jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, play_id, request_id)
    );

    CREATE TABLE candidates (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      play_id uuid NOT NULL REFERENCES plays(id),
      batch_id uuid REFERENCES candidate_batches(id),
      x_user_id text NOT NULL,
      username text,
      name text,
      status text NOT NULL CHECK (status IN ('proposed','approved','imported','rejected')),
      review_decision text CHECK (review_decision IN ('good_fit','not_a_good_fit')),
      reviewed_at timestamptz,
      reviewed_by text,
      sandbox jsonb,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX candidates_identity ON candidates (workspace_id, play_id, x_user_id);
    CREATE INDEX candidates_page ON candidates (workspace_id, play_id, id);
    CREATE INDEX candidates_page_by_review ON candidates (workspace_id, play_id, review_decision, id);
    CREATE INDEX candidates_username ON candidates (workspace_id, play_id, lower(username));

    CREATE TABLE leads (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      person text,
      company text,
      title text,
      email text,
      linkedin_url text,
      x_user_id text,
      username text,
      account_id text REFERENCES messaging_accounts(id),
      account_user_id text,
      sequence_id uuid REFERENCES sequences(id),
      play_id uuid REFERENCES plays(id),
      candidate_id uuid REFERENCES candidates(id),
      strategy_id uuid,
      strategy_run_id uuid,
      invite_priority integer NOT NULL DEFAULT 0,
      stage text NOT NULL DEFAULT 'queued'
        CHECK (stage IN ('queued','resolving','invited','accepted','messaged','followed_up','replied','failed','skipped')),
      current_step integer NOT NULL DEFAULT 0,
      next_action_at timestamptz,
      automation_stopped boolean NOT NULL DEFAULT false,
      variant_key text,
      invited_at timestamptz,
      connected_at timestamptz,
      messaged_at timestamptz,
      replied_at timestamptz,
      followed_at timestamptz,
      followed_back_at timestamptz,
      meeting_booked_at timestamptz,
      meeting_outcome text,
      snoozed_until timestamptz,
      opted_out_at timestamptz,
      reply_sentiment text,
      last_error text,
      last_activity_at timestamptz,
      sandbox jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX leads_workspace ON leads (workspace_id, created_at DESC, id);
    CREATE INDEX leads_play ON leads (workspace_id, play_id, id);
    CREATE INDEX leads_sequence ON leads (workspace_id, sequence_id);
    CREATE INDEX leads_x_user ON leads (workspace_id, x_user_id) WHERE x_user_id IS NOT NULL;
    CREATE INDEX leads_due ON leads (next_action_at) WHERE automation_stopped = false AND next_action_at IS NOT NULL;

    CREATE TABLE activity (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      created_at timestamptz NOT NULL DEFAULT now(),
      action text NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('ok','skipped','failed')),
      units integer NOT NULL DEFAULT 0,
      detail text NOT NULL DEFAULT '',
      account_id text,
      lead_id uuid
    );
    CREATE INDEX activity_recent ON activity (workspace_id, created_at DESC, id DESC);
    CREATE INDEX activity_by_action ON activity (workspace_id, action, created_at DESC);

    CREATE TABLE replies (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      lead_id uuid NOT NULL REFERENCES leads(id),
      channel text NOT NULL DEFAULT 'linkedin',
      classification text NOT NULL DEFAULT 'other',
      their_message text,
      draft text,
      replied_at timestamptz NOT NULL,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending','snoozed','decided')),
      decision text,
      decided_at timestamptz,
      decided_by text,
      snoozed_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX replies_pending ON replies (workspace_id, state, replied_at, id);

    CREATE TABLE webhooks (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      url text NOT NULL,
      events text[] NOT NULL,
      secret text NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      disabled_at timestamptz
    );
    CREATE INDEX webhooks_enabled ON webhooks (workspace_id) WHERE enabled;

    CREATE TABLE outbox_events (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      event text NOT NULL,
      data jsonb NOT NULL,
      webhook_id uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      dispatched_at timestamptz
    );
    CREATE INDEX outbox_undispatched ON outbox_events (created_at) WHERE dispatched_at IS NULL;

    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      webhook_id uuid NOT NULL REFERENCES webhooks(id),
      event_id uuid NOT NULL REFERENCES outbox_events(id),
      event text NOT NULL,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending','delivered','failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      lease_expires_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (webhook_id, event_id)
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';

    CREATE TABLE webhook_attempts (
      id uuid PRIMARY KEY,
      delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id),
      attempt integer NOT NULL,
      started_at timestamptz NOT NULL,
      duration_ms integer,
      status integer,
      error text,
      UNIQUE (delivery_id, attempt)
    );

    CREATE TABLE idempotency_records (
      workspace_id uuid NOT NULL REFERENCES workspaces(id),
      scope text NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      status_code integer NOT NULL,
      response jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, scope, key)
    );

    CREATE TABLE publicdata_users (
      x_user_id text PRIMARY KEY,
      username text NOT NULL,
      name text
    );
    CREATE UNIQUE INDEX publicdata_users_username ON publicdata_users (lower(username));
    CREATE TABLE publicdata_follows (
      follower text NOT NULL,
      followed text NOT NULL,
      PRIMARY KEY (followed, follower)
    );
    CREATE TABLE publicdata_unavailable (
      handle text PRIMARY KEY
    );
  `,
  );
}

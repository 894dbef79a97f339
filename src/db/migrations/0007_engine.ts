import { sql, type Kysely } from 'kysely';

// Bookkeeping of the sending engine (src/engine, docs/engine.md).
const statements = [
  // A step is marked in flight in a committed transaction before its driver is called, so a crash between
  // the send and its record leaves a trace the next pass can see instead of a silent repeat.
  `ALTER TABLE leads ADD COLUMN inflight_key text`,
  `ALTER TABLE leads ADD COLUMN inflight_step integer`,
  `ALTER TABLE leads ADD COLUMN inflight_at timestamptz`,
  `ALTER TABLE leads ADD COLUMN step_attempts integer NOT NULL DEFAULT 0`,
  // 'accept': a message step waits for the connection request to be accepted; next_action_at is null meanwhile.
  `ALTER TABLE leads ADD COLUMN waiting_for text`,
  // When the engine next asks the channel drivers about this lead (acceptances, follow-backs, replies).
  `ALTER TABLE leads ADD COLUMN observe_next_at timestamptz`,
  `ALTER TABLE leads ADD COLUMN observe_until timestamptz`,
  `ALTER TABLE leads ADD COLUMN last_message_channel text`,
  `CREATE INDEX leads_observe_due ON leads (observe_next_at) WHERE observe_next_at IS NOT NULL`,
  // Opted-out identities are few; these keep the "never contact again" check an empty-index probe.
  `CREATE INDEX leads_opted_out_email ON leads (workspace_id, lower(email)) WHERE opted_out_at IS NOT NULL AND email IS NOT NULL`,
  `CREATE INDEX leads_opted_out_linkedin ON leads (workspace_id, lower(linkedin_url)) WHERE opted_out_at IS NOT NULL AND linkedin_url IS NOT NULL`,
  `CREATE INDEX leads_opted_out_x ON leads (workspace_id, x_user_id) WHERE opted_out_at IS NOT NULL AND x_user_id IS NOT NULL`,
  // Pacing counters per messaging account and local calendar day: reserved when a send is claimed, given
  // back when it fails, so concurrent workers can never exceed a cap.
  `CREATE TABLE engine_account_days (
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    account_id text NOT NULL,
    local_day date NOT NULL,
    invites integer NOT NULL DEFAULT 0,
    messages integer NOT NULL DEFAULT 0,
    actions integer NOT NULL DEFAULT 0,
    last_action_at timestamptz,
    PRIMARY KEY (workspace_id, account_id, local_day)
  )`,
  `CREATE TABLE engine_discovery (
    workspace_id uuid NOT NULL REFERENCES workspaces(id),
    play_id uuid NOT NULL REFERENCES plays(id),
    next_run_at timestamptz NOT NULL,
    last_run_at timestamptz,
    runs integer NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, play_id)
  )`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

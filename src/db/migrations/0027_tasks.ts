import { sql, type Kysely } from 'kysely';

// Issue 28, platform rules in the engine (docs/policy.md, docs/tasks.md, docs/linkedin.md):
// - a LinkedIn account says how its steps reach LinkedIn: `sandbox` (simulated, the default), `tasks` (a person does
//   each action) or `gateway` (the LinkedIn gateway, at the account owner's risk), with the gateway's account id, its
//   last refusal (401/403) and the gateway watcher's position;
// - a lead keeps LinkedIn's own id of the person and the gateway chat with them;
// - the people who have written to a connected X account (X allows automated DMs only after the person DMs first);
// - tasks: a due action for a person. A step task holds its lead's lane (next_action_at stays NULL) until it is done
//   or skipped. A task that no longer applies is cancelled by the database itself (one home for the rule, whatever
//   path stopped the lead): the lead stopped, replied, opted out or moved to another sequence, or the sequence was
//   archived.
// Statements run one by one rather than through executeStatements: the trigger bodies hold `;` at line ends.
const statements = [
  `ALTER TABLE messaging_accounts ADD COLUMN linkedin_delivery text NOT NULL DEFAULT 'sandbox'
    CHECK (linkedin_delivery IN ('sandbox','tasks','gateway'))`,
  `ALTER TABLE messaging_accounts ADD COLUMN linkedin_gateway_account_id text`,
  `ALTER TABLE messaging_accounts ADD COLUMN linkedin_gateway_error text`,
  `ALTER TABLE messaging_accounts ADD COLUMN linkedin_gateway_error_at timestamptz`,
  `ALTER TABLE messaging_accounts ADD COLUMN linkedin_next_poll_at timestamptz`,
  `ALTER TABLE messaging_accounts ADD COLUMN linkedin_poll_lease_until timestamptz`,
  `ALTER TABLE messaging_accounts ADD COLUMN linkedin_watch_state jsonb`,
  `CREATE INDEX messaging_accounts_gateway_due ON messaging_accounts (linkedin_next_poll_at) WHERE linkedin_delivery = 'gateway'`,
  `ALTER TABLE leads ADD COLUMN linkedin_provider_id text`,
  `ALTER TABLE leads ADD COLUMN linkedin_chat_id text`,
  `CREATE TABLE x_dm_senders (
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    account_user_id text NOT NULL,
    sender_id text NOT NULL,
    first_at timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, account_user_id, sender_id)
  )`,
  `CREATE TABLE tasks (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    lead_id uuid NOT NULL REFERENCES leads(id) ON DELETE CASCADE,
    source text NOT NULL CHECK (source IN ('step','reply')),
    sequence_id uuid,
    step_index integer,
    variant_key text,
    reply_id uuid,
    decision text,
    kind text NOT NULL,
    channel text NOT NULL,
    action text NOT NULL,
    account_id text,
    x_account_user_id text,
    subject text,
    text text,
    actions jsonb NOT NULL DEFAULT '[]'::jsonb,
    profile_url text,
    reason text NOT NULL,
    idempotency_key text NOT NULL,
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open','done','skipped','cancelled')),
    due_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    closed_at timestamptz,
    closed_by text,
    closed_reason text,
    external_id text
  )`,
  `CREATE UNIQUE INDEX tasks_one_open_per_key ON tasks (workspace_id, idempotency_key) WHERE status = 'open'`,
  `CREATE INDEX tasks_page ON tasks (workspace_id, status, due_at, id)`,
  `CREATE INDEX tasks_open_by_lead ON tasks (lead_id) WHERE status = 'open'`,
  `CREATE FUNCTION tasks_cancel_for_lead() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF NEW.opted_out_at IS NOT NULL AND OLD.opted_out_at IS NULL THEN
      UPDATE tasks SET status = 'cancelled', closed_at = now(), closed_reason = 'opted_out'
        WHERE lead_id = NEW.id AND status = 'open';
    ELSIF NEW.replied_at IS DISTINCT FROM OLD.replied_at AND NEW.replied_at IS NOT NULL THEN
      UPDATE tasks SET status = 'cancelled', closed_at = now(), closed_reason = 'replied'
        WHERE lead_id = NEW.id AND status = 'open' AND source = 'step';
    ELSIF NEW.sequence_id IS DISTINCT FROM OLD.sequence_id THEN
      UPDATE tasks SET status = 'cancelled', closed_at = now(), closed_reason = 'sequence_changed'
        WHERE lead_id = NEW.id AND status = 'open' AND source = 'step';
    ELSIF NEW.automation_stopped AND NOT OLD.automation_stopped THEN
      UPDATE tasks SET status = 'cancelled', closed_at = now(), closed_reason = 'lead_stopped'
        WHERE lead_id = NEW.id AND status = 'open' AND source = 'step';
    END IF;
    RETURN NULL;
  END $fn$`,
  `CREATE TRIGGER leads_cancel_tasks AFTER UPDATE OF opted_out_at, replied_at, sequence_id, automation_stopped ON leads
    FOR EACH ROW WHEN (
      (NEW.opted_out_at IS NOT NULL AND OLD.opted_out_at IS NULL)
      OR (NEW.replied_at IS DISTINCT FROM OLD.replied_at AND NEW.replied_at IS NOT NULL)
      OR NEW.sequence_id IS DISTINCT FROM OLD.sequence_id
      OR (NEW.automation_stopped AND NOT OLD.automation_stopped)
    ) EXECUTE FUNCTION tasks_cancel_for_lead()`,
  `CREATE FUNCTION tasks_cancel_for_sequence() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    UPDATE tasks SET status = 'cancelled', closed_at = now(), closed_reason = 'sequence_archived'
      WHERE workspace_id = NEW.workspace_id AND sequence_id = NEW.id AND status = 'open' AND source = 'step';
    RETURN NULL;
  END $fn$`,
  `CREATE TRIGGER sequences_cancel_tasks AFTER UPDATE OF status ON sequences
    FOR EACH ROW WHEN (NEW.status = 'archived' AND OLD.status IS DISTINCT FROM 'archived') EXECUTE FUNCTION tasks_cancel_for_sequence()`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

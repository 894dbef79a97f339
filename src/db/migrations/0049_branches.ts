import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Sequences that branch (docs/sequences-and-leads.md "Branches"). The graph itself rides in the steps' JSON. A lead
// that left a branching step waits at it (`waiting_for = 'branch'`) from `branch_at`, the moment its windows count
// from; `branch_allowed` keeps whether the engine could do that step for the person (the `allowed` condition). Each
// edge a lead takes is a row of `lead_paths` (numbered per lead by `ordinal`, 1, 2, …), with the values that decided it; an edge to `goal` or `exit` ends the
// run with that outcome. X DM marks get an index for X's per-user 15-minute window (docs/policy.md).
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE leads ADD COLUMN branch_at timestamptz;
    ALTER TABLE leads ADD COLUMN branch_allowed boolean;

    CREATE TABLE lead_paths (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      lead_id uuid NOT NULL REFERENCES leads(id) ON DELETE CASCADE,
      ordinal integer NOT NULL,
      sequence_id uuid NOT NULL,
      revision integer NOT NULL,
      from_step integer NOT NULL,
      edge integer,
      goto text NOT NULL,
      to_step integer,
      outcome text,
      "values" jsonb NOT NULL,
      taken_at timestamptz NOT NULL
    );
    CREATE UNIQUE INDEX lead_paths_lead ON lead_paths (workspace_id, lead_id, ordinal);

    -- X's 15-DMs-per-15-minutes window per user (channels/x dmWindow) reads an account's recent marks.
    CREATE INDEX x_dm_sends_window ON x_dm_sends (workspace_id, account_user_id, started_at);
  `,
  );
}

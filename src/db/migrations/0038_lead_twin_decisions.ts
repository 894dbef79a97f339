import { sql, type Kysely } from 'kysely';

// Issue 39 §1, "two leads, one person" (docs/sequences-and-leads.md "Two leads, one person: Merge or Not the same
// person"): when the identity keys (migration 0036) show two leads of a workspace to be one person, both rows stay and
// a person decides. `lead_twin_decisions` records each decision on a pair, the pair stored ordered (lead_a < lead_b)
// so it is one row whichever way it was named: `merged` (survivor_id = the lead kept; the other stopped) or `distinct`
// (not the same person: the pair leaves the list). `decided_by` says who (`api:<key id>`, `console:<key id>`).
// Nothing is deleted by a decision; a decision goes only with its leads.
const statements = [
  `CREATE TABLE lead_twin_decisions (
     workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
     lead_a uuid NOT NULL REFERENCES leads(id) ON DELETE CASCADE,
     lead_b uuid NOT NULL REFERENCES leads(id) ON DELETE CASCADE,
     decision text NOT NULL CHECK (decision IN ('merged','distinct')),
     survivor_id uuid,
     decided_by text NOT NULL,
     decided_at timestamptz NOT NULL,
     PRIMARY KEY (workspace_id, lead_a, lead_b),
     CHECK (lead_a < lead_b),
     CHECK ((decision = 'merged') = (survivor_id IS NOT NULL)),
     CHECK (survivor_id IS NULL OR survivor_id = lead_a OR survivor_id = lead_b)
   )`,
  // A lead's decisions from its second place (the primary key serves lead_a), for the list and a lead's cascade.
  `CREATE INDEX lead_twin_decisions_lead_b ON lead_twin_decisions (lead_b)`,
  `CREATE INDEX lead_twin_decisions_lead_a ON lead_twin_decisions (lead_a)`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

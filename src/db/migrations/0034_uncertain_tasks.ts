import { sql, type Kysely } from 'kysely';

// Issue 31 §3, an uncertain step reaches a person (docs/tasks.md "Uncertain sends"): a send a crash left in flight
// whose delivery nobody can confirm opens a task of source `uncertain`, keyed `uncertain:<step key>`. The 0027 triggers
// cancel only `step` tasks when the lead replies, stops, changes sequence or its sequence is archived, so an uncertain
// task (about a past step by design) survives the lead moving on; an opted-out lead's tasks, this one included, are
// cancelled as before.
// Statements run one by one rather than through executeStatements, as in 0027.
const statements = [
  `ALTER TABLE tasks DROP CONSTRAINT IF EXISTS tasks_source_check`,
  `ALTER TABLE tasks ADD CONSTRAINT tasks_source_check CHECK (source IN ('step','reply','uncertain'))`,
  // Readiness and the dashboard count a workspace's open uncertain sends (small: one per interrupted send).
  `CREATE INDEX tasks_open_uncertain ON tasks (workspace_id, idempotency_key) WHERE status = 'open' AND source = 'uncertain'`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

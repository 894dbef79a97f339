import { sql, type Kysely } from 'kysely';

// Issue 39 §5, the lead's own time zone (docs/engine.md "Pacing and send budgets"):
// - `leads.time_zone`: the person's IANA zone (`Asia/Tokyo`), or NULL when unknown (set by the lead import's time
//   zone column, or a single-zone country); NULL for every existing lead.
// - `sequences.send_in_lead_hours`: the sequence sends each step inside the sending hours and days in the lead's
//   zone when the lead has a valid one, else in its messaging account's (as every sequence did before: false).
// The account's daily caps keep counting in the account's own local day.
// Statements run one by one, as in 0027.
const statements = [`ALTER TABLE leads ADD COLUMN time_zone text`, `ALTER TABLE sequences ADD COLUMN send_in_lead_hours boolean NOT NULL DEFAULT false`];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

import { sql, type Kysely } from 'kysely';

// Issue 39 §2, a file's unmapped columns kept as the lead's custom fields (docs/sequences-and-leads.md "Custom
// fields"): `leads.custom` holds an object of header (as written) -> text, or NULL when the lead has none. Templates
// read them as {{custom.<name>}} (domain/templates.ts). Bounded by the import (domain/custom-fields.ts): at most 50
// fields, a name of at most 100 characters and a value of at most 2,000.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE leads ADD COLUMN custom jsonb`.execute(db);
}

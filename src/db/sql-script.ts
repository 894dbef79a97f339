import { sql, type Kysely } from 'kysely';

// PGlite's driver speaks the extended protocol, which takes one statement per query, so a script is
// split here; migration scripts keep each statement ending with `;` at the end of a line.
export async function executeStatements(db: Kysely<any>, script: string): Promise<void> {
  const statements = script
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  for (const statement of statements) await sql.raw(statement).execute(db);
}

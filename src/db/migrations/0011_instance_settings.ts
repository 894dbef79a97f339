import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Facts about the installation rather than any workspace. The first is the fingerprint of the key that
// encrypts message text at rest: a start with another key is refused instead of reading every text as null.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE instance_settings (
      name text PRIMARY KEY,
      value text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `,
  );
}

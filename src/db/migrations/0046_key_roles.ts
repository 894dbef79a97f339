import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// An API key carries a workspace role (docs/roles.md): what it may do in its home workspace, and at most what a Team
// link allows in a client workspace. Keys made before roles existed could do everything, so they stay owners.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE api_keys ADD COLUMN role text NOT NULL DEFAULT 'owner' CHECK (role IN ('owner','admin','member'));
  `,
  );
}

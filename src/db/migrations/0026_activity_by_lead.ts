import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Issue 27 §4: the console's lead page shows one lead's ledger entries, newest first, paged by keyset, and the
// activity page finds entries by their lead's name (the matching leads' ids, then their entries). Without this index
// both read every entry of the workspace to keep the few of one lead.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE INDEX activity_by_lead ON activity (workspace_id, lead_id, created_at DESC, id DESC) WHERE lead_id IS NOT NULL;
  `,
  );
}

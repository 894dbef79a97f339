import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// The claim reads due leads a window at a time in claim order, (next_action_at, id) (engine/sql/claimDue.ts): the due
// index carries the id too, so a window is read in order straight from it and stops at its size, where an index on
// next_action_at alone has every lead due that instant sorted by id first. Same partial predicate as before, which the
// admission rule `stopped` is written to match (domain/admission.ts).
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE INDEX leads_due_order ON leads (next_action_at, id) WHERE automation_stopped = false AND next_action_at IS NOT NULL;
    DROP INDEX leads_due;
    ALTER INDEX leads_due_order RENAME TO leads_due;
    `,
  );
}

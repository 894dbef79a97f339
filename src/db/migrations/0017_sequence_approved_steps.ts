import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// The steps of the approved revision, kept when a revision is approved, so a reviewer of a later revision can be
// shown exactly what changed since the one that was approved (the console's sequence approval). Sequences whose
// current revision is the approved one get their current steps; older approvals were not recorded (NULL).
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    ALTER TABLE sequences ADD COLUMN approved_steps jsonb;
    UPDATE sequences SET approved_steps = steps WHERE approved_revision IS NOT NULL AND approved_revision = revision;
  `,
  );
}

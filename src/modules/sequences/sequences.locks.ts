import type { Database } from '../../db/database.js';
import * as repo from './sequences.repository.js';

// The row locks other modules take on a sequence, inside their own transaction (`trx`). They are the locks the
// status change takes too, so every writer of a sequence serializes on its one row; the SQL stays in the repository.

/** The sequence row authoring answers: lockSequence reads it, and authoring's inserts and updates return it. */
export { sequenceColumns } from './sequences.repository.js';

export type LockedSequence = NonNullable<Awaited<ReturnType<typeof repo.lockSequence>>>;

/** Locks the sequence for update (authoring edits and approvals, status changes); undefined when there is none. */
export function lockSequence(trx: Database, workspaceId: string, sequenceId: string) {
  return repo.lockSequence(trx, workspaceId, sequenceId);
}

/**
 * Share-locks a sequence a Play is saved or enrolled against: until `trx` ends nobody can archive, edit or approve
 * it, so the status and revision the caller checked stay true.
 */
export function lockSequenceForShare(trx: Database, workspaceId: string, sequenceId: string) {
  return repo.lockSequenceForShare(trx, workspaceId, sequenceId);
}

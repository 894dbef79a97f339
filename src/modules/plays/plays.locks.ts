import type { Database } from '../../db/database.js';
import * as repo from './plays.repository.js';

// The lock another module (authoring) takes on a Play's row, inside its own transaction (`trx`); the SQL stays in
// the repository, next to the lock that imports and enrollments take.

/** The Play row every read and lock answers; authoring's insert and update return it too. */
export { playColumns } from './plays.repository.js';

export type LockedPlay = NonNullable<Awaited<ReturnType<typeof repo.lockPlayForEdit>>>;

/**
 * An edit of the Play's setup. It conflicts with the lock imports and enrollments take, so an edit and an
 * enrollment never interleave; undefined when there is no such Play.
 */
export function lockPlayForEdit(trx: Database, workspaceId: string, playId: string) {
  return repo.lockPlayForEdit(trx, workspaceId, playId);
}

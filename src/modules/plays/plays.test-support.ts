import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/**
 * Every row a Play operation could write, for "nothing changed" assertions. Whole tables, not one workspace:
 * a write into the wrong workspace is a change too.
 */
export async function snapshot(db: Database) {
  const [candidates, leads, batches, requests, counts, sequences, plays] = await Promise.all(
    ['candidates', 'leads', 'candidate_batches', 'import_requests', 'play_candidate_counts', 'sequences', 'plays'].map(async (table) => {
      const res = await sql<{ row: unknown }>`select to_jsonb(x)::text as row from ${sql.table(table)} x order by 1`.execute(db);
      return res.rows.map((r) => r.row);
    }),
  );
  return { candidates, leads, batches, requests, counts, sequences, plays };
}

/** Every page of a keyset-paginated list, following nextCursor until it is null. */
export async function walkPages<T extends { id: string }>(
  fetchPage: (after: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>,
  between?: () => Promise<void>,
) {
  const seen: T[] = [];
  let after: string | undefined;
  for (let guard = 0; guard < 10_000; guard++) {
    const { items, nextCursor } = await fetchPage(after);
    seen.push(...items);
    if (nextCursor === null) return seen;
    if (items.length === 0 || nextCursor !== items[items.length - 1].id) throw new Error('nextCursor must be the last id of the page');
    after = nextCursor;
    if (between) await between();
  }
  throw new Error('pagination did not end');
}

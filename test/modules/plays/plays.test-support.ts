import { sql } from 'kysely';
import type { Database } from '../../../src/db/database.js';

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

/**
 * Waits until some other session of this test's database waits on a lock (the request under test reached the
 * uncommitted row), so the writer commits only then. Scoped to this database (other files run beside it) and
 * patient under a loaded machine.
 */
export async function untilSomeoneWaitsOnALock(writer: { query(text: string): Promise<{ rowCount: number | null }> }) {
  for (let i = 0; i < 500; i++) {
    const waiting = await writer.query(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
    );
    if (waiting.rowCount) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

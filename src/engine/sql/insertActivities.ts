import type { Database } from '../../db/database.js';
import type { ActivityInsert } from './rows.js';

/** Ledger entries, a thousand rows a statement. */
export async function insertActivities(trx: Database, rows: ActivityInsert[]) {
  for (let i = 0; i < rows.length; i += 1000)
    await trx
      .insertInto('activity')
      .values(rows.slice(i, i + 1000))
      .execute();
}

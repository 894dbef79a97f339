import type { Database } from './database.js';

/**
 * The saved value of an installation setting, writing `value` first when none is saved. Concurrent first starts
 * (several processes on one PostgreSQL) agree: the first insert wins and every process reads the winner.
 */
export async function getOrInitInstanceSetting(db: Database, name: string, value: string): Promise<string> {
  await db
    .insertInto('instance_settings')
    .values({ name, value })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('instance_settings').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}

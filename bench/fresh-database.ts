import type { Database } from '../src/db/database.js';
import { newId } from '../src/lib/ids.js';
import pg from 'pg';

/** Drops and creates the database a benchmark URL names, through the server's `postgres` database. */
export async function recreateDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  const dbName = admin.pathname.slice(1);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${dbName}`);
  } finally {
    await client.end();
  }
}

/** An active, approved sequence of `steps` (stored as JSON) in workspace `ws`, approved at `at`; its id. */
export async function insertApprovedSequence(db: Database, ws: string, steps: object[], at: Date): Promise<string> {
  const id = newId();
  await db
    .insertInto('sequences')
    .values({ id, workspace_id: ws, name: 'Bench', status: 'active', revision: 1, approved_revision: 1, approved_at: at, steps: JSON.stringify(steps) })
    .execute();
  return id;
}

import { randomBytes } from 'node:crypto';
import { Migrator, type Migration } from 'kysely/migration';
import pg from 'pg';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { dbEngine } from './test-database.js';

/**
 * An empty database on the running project's engine (a fresh PostgreSQL database beside TEST_DATABASE_URL, or
 * PGlite) with the migrations up to `name` applied: `before` stops short of it, `through` includes it. A migration's
 * test seeds the older schema, then runs migrateToLatest. The caller closes `handle`, then calls `drop`.
 */
export async function databaseMigrated(name: string, edge: 'before' | 'through'): Promise<{ handle: DatabaseHandle; drop: () => Promise<void> }> {
  const names = Object.keys(MIGRATIONS);
  const at = names.indexOf(name);
  if (at < 0) throw new Error(`no migration named ${name}`);
  const upTo: Record<string, Migration> = Object.fromEntries(names.slice(0, edge === 'before' ? at : at + 1).map((n) => [n, MIGRATIONS[n]]));
  let handle: DatabaseHandle;
  let drop: () => Promise<void> = async () => undefined;
  if (dbEngine() === 'postgres') {
    const base = process.env.TEST_DATABASE_URL!;
    const dbName = `outreach_m_${process.pid}_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.end();
    const url = new URL(base);
    url.pathname = `/${dbName}`;
    handle = await createDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
    drop = async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await c.end();
    };
  } else {
    handle = await createDatabase({ kind: 'pglite' });
  }
  const { error } = await new Migrator({ db: handle.db, provider: { getMigrations: async () => upTo } }).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(JSON.stringify(error));
  return { handle, drop };
}

import fs from 'node:fs';
import { Kysely, PGliteDialect, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { DB } from './schema.js';

export type Database = Kysely<DB>;

export type DatabaseTarget =
  | { kind: 'postgres'; url: string; poolSize?: number; onIdleError?: (err: Error) => void }
  | { kind: 'pglite'; dataDir?: string; loadDataDir?: Blob };

export interface DatabaseHandle {
  db: Database;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
  /** PGlite only: a tarball of the data directory, used by tests to start from a migrated snapshot. */
  dump?(): Promise<Blob>;
}

// Timestamps stay Date objects and bigint counts become numbers: counts here never pass 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export async function createDatabase(target: DatabaseTarget): Promise<DatabaseHandle> {
  if (target.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: target.url, max: target.poolSize ?? 10 });
    // An idle pooled connection that the server drops (restart, failover, admin termination) is reported
    // here; without a listener Node would crash the process. The pool replaces it on the next checkout.
    pool.on('error', (err) => target.onIdleError?.(err));
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  if (target.dataDir) fs.mkdirSync(target.dataDir, { recursive: true });
  const pglite = await PGlite.create({
    dataDir: target.dataDir,
    loadDataDir: target.loadDataDir,
    parsers: { 20: (v: string) => Number(v) },
  });
  const db = new Kysely<DB>({ dialect: new PGliteDialect({ pglite }) });
  return {
    db,
    kind: 'pglite',
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
    dump: () => pglite.dumpDataDir('none') as Promise<Blob>,
  };
}

export async function isDatabaseReachable(db: Database): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PGliteDialect, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { DB } from './schema.js';
import { traceDialect } from '../lib/tracing.js';

export type Database = Kysely<DB>;

export type DatabaseTarget =
  { kind: 'postgres'; url: string; poolSize?: number; onIdleError?: (err: Error) => void } | { kind: 'pglite'; dataDir?: string; loadDataDir?: Blob };

export interface DatabaseHandle {
  db: Database;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
  /** PGlite only: a tarball of the data directory, used by tests to start from a migrated snapshot. */
  dump?(): Promise<Blob>;
}

// Timestamps stay Date objects and bigint counts become numbers: counts here never pass 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

// Each PostgreSQL handle's pool, for `outreach_db_pool_waiting` (poolWaiting below); PGlite has no pool.
const pools = new WeakMap<Database, pg.Pool>();

/** Queries waiting for a pooled connection on this database (pg Pool `waitingCount`); 0 on PGlite. */
export function poolWaiting(db: Database): number {
  return pools.get(db)?.waitingCount ?? 0;
}

/**
 * The embedded database's directory is its owner's alone: created 0700, and on every start the directory and
 * everything under it are set to 0700 (directories) and 0600 (files), so a data dir made by an older version (or
 * copied with loose modes) is fixed too. Symbolic links are left alone.
 */
export function ownerOnly(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const walk = (d: string) => {
    fs.chmodSync(d, 0o700);
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile()) fs.chmodSync(p, 0o600);
    }
  };
  walk(dir);
}

export async function createDatabase(target: DatabaseTarget): Promise<DatabaseHandle> {
  if (target.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: target.url, max: target.poolSize ?? 10 });
    // An idle pooled connection that the server drops (restart, failover, admin termination) is reported
    // here; without a listener Node would crash the process. The pool replaces it on the next checkout.
    pool.on('error', (err) => target.onIdleError?.(err));
    // A connection the server drops while it is checked out but between queries (a transaction awaiting a
    // channel driver, a LISTEN client) has no pool listener: its 'error' would be an uncaught exception. The
    // query in flight, if any, is rejected on its own; the pool discards the broken client when it is released.
    pool.on('connect', (client) => client.on('error', (err) => target.onIdleError?.(err)));
    const db = new Kysely<DB>({ dialect: traceDialect(new PostgresDialect({ pool })) });
    pools.set(db, pool);
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  if (target.dataDir) ownerOnly(target.dataDir);
  const pglite = await PGlite.create({
    dataDir: target.dataDir,
    loadDataDir: target.loadDataDir,
    parsers: { 20: (v: string) => Number(v) },
  });
  // PGlite's initdb (or a loaded snapshot) writes its files 0666, and Postgres rewrites a few cache files 0644 at
  // every start: set them again. Files made later sit in the 0700 directory, which no other user can enter.
  if (target.dataDir) ownerOnly(target.dataDir);
  const db = new Kysely<DB>({ dialect: traceDialect(new PGliteDialect({ pglite })) });
  return {
    db,
    kind: 'pglite',
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
    dump: () => pglite.dumpDataDir('none'),
  };
}

// SQLSTATE classes and node errors that mean "the database is not there right now", not "this query is wrong":
// connection exceptions (08…), operator intervention (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot
// connect now, 53300 too many connections), a database that refuses connections (its message; the SQLSTATE 55000
// is too broad to use) and the socket errors of a server that went away.
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
const UNAVAILABLE_MESSAGES = [/^Connection terminated/, /not queryable/, /timeout exceeded when trying to connect/, /is not currently accepting connections/];

/** Whether an error says the database is unreachable (the request may be retried) rather than that it failed. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(message));
}

export async function isDatabaseReachable(db: Database): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql } from 'kysely';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { createTestDatabase, dbEngine } from '../helpers/test-database.js';

// PGlite runs in-process and has no server connections to lose; this is a PostgreSQL property.
describe.runIf(dbEngine() === 'postgres')('losing pooled connections (PostgreSQL restart, failover, admin termination)', () => {
  let base: DatabaseHandle & { url?: string };
  let handle: DatabaseHandle;
  const dropped: Error[] = [];
  beforeAll(async () => {
    base = await createTestDatabase();
    handle = await createDatabase({ kind: 'postgres', url: base.url!, poolSize: 3, onIdleError: (e) => dropped.push(e) });
  });
  afterAll(async () => {
    await handle?.close();
    await base?.close();
  });

  it('an idle connection terminated by the server neither crashes the process nor breaks the next query', async () => {
    await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(handle.db)));
    const admin = new pg.Client({ connectionString: base.url });
    await admin.connect();
    const killed = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    await admin.end();
    expect(killed.rowCount).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(dropped.length).toBeGreaterThanOrEqual(1);
    const { rows } = await sql<{ ok: number }>`select 1 as ok`.execute(handle.db);
    expect(rows).toEqual([{ ok: 1 }]);
  });
});

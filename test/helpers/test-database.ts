import fs from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';

export const dbEngine = (): 'pglite' | 'postgres' => inject('dbEngine');

/** A fresh, migrated database for one test file (or one test), on the engine of the running project. */
export async function createTestDatabase(): Promise<DatabaseHandle & { url?: string }> {
  if (inject('dbEngine') === 'postgres') {
    const base = process.env.TEST_DATABASE_URL!;
    const name = `outreach_t_${process.pid}_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('postgresTemplate')}`);
    } finally {
      await admin.end();
    }
    const target = new URL(base);
    target.pathname = `/${name}`;
    const handle = await createDatabase({ kind: 'postgres', url: target.toString(), poolSize: 10 });
    return {
      ...handle,
      url: target.toString(),
      close: async () => {
        await handle.close();
        const drop = new pg.Client({ connectionString: base });
        await drop.connect();
        // pool.end() resolves before every socket is gone; wait for them so FORCE rarely has anything to kill.
        for (let i = 0; i < 40; i++) {
          const { rows } = await drop.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
          if (rows[0].n === 0) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
        await drop.end();
      },
    };
  }
  const bytes = fs.readFileSync(inject('pgliteSnapshot'));
  return createDatabase({ kind: 'pglite', loadDataDir: new Blob([bytes]) });
}

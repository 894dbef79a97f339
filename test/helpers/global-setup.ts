import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dbEngine: 'pglite' | 'postgres';
    pgliteSnapshot: string;
    postgresTemplate: string;
  }
}

const cacheDir = path.resolve('.test-cache');

/** Migrates once per run: PGlite boots from a dumped snapshot, PostgreSQL clones a template database. */
export default async function setup(project: TestProject) {
  if (project.name === 'postgres') {
    const url = process.env.TEST_DATABASE_URL!;
    const template = `outreach_tpl_${process.pid}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${template}`);
    await admin.query(`CREATE DATABASE ${template}`);
    const target = new URL(url);
    target.pathname = `/${template}`;
    const handle = await createDatabase({ kind: 'postgres', url: target.toString(), poolSize: 1 });
    await migrateToLatest(handle.db);
    await handle.close();
    project.provide('dbEngine', 'postgres');
    project.provide('postgresTemplate', template);
    project.provide('pgliteSnapshot', '');
    return async () => {
      const leftovers = await admin.query(`SELECT datname FROM pg_database WHERE datname LIKE 'outreach_t_${process.pid}_%'`);
      for (const row of leftovers.rows) await admin.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`);
      await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
      await admin.end();
    };
  }
  fs.mkdirSync(cacheDir, { recursive: true });
  const snapshot = path.join(cacheDir, `pglite-${process.pid}.tar`);
  const handle = await createDatabase({ kind: 'pglite' });
  await migrateToLatest(handle.db);
  const blob = await handle.dump!();
  fs.writeFileSync(snapshot, Buffer.from(await blob.arrayBuffer()));
  await handle.close();
  project.provide('dbEngine', 'pglite');
  project.provide('pgliteSnapshot', snapshot);
  project.provide('postgresTemplate', '');
  return async () => fs.rmSync(snapshot, { force: true });
}

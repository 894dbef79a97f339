import { sql, type Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import { MIGRATIONS } from './migrations/index.js';

// Migrations are listed statically (src/db/migrations/index.ts, in apply order) so they ship with the code
// and run the same from tsx, tests and bundles.
const migrations: Record<string, Migration> = MIGRATIONS;

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  if (await allMigrationsApplied(db)) return [];
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(`migration failed: ${JSON.stringify(error)}`);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

// Kysely's Migrator introspects the catalog and takes its lock even when there is nothing to do: about 0.5 s of CPU
// on PGlite at every start. One read of the applied names answers the common case; anything else (no table yet, a
// pending or an unknown migration) goes through the Migrator as before.
async function allMigrationsApplied(db: Kysely<any>): Promise<boolean> {
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    const applied = new Set(rows.map((r) => r.name));
    // An applied name this code does not know is the Migrator's error to report.
    return rows.every((r) => r.name in migrations) && Object.keys(migrations).every((name) => applied.has(name));
  } catch {
    return false;
  }
}

import type { Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import * as m0001 from './migrations/0001_initial.js';
import * as m0006 from './migrations/0006_webhooks.js';
import * as m0003 from './migrations/0003_plays.js';
import * as m0007 from './migrations/0007_engine.js';
import * as m0008 from './migrations/0008_crm.js';
import * as m0009 from './migrations/0009_inflight_release.js';
import * as m0010 from './migrations/0010_webhook_fair_claims.js';

// Migrations are listed statically so they ship with the code and run the same from tsx, tests and bundles.
const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0006_webhooks': m0006,
  '0003_plays': m0003,
  '0007_engine': m0007,
  '0008_crm': m0008,
  '0009_inflight_release': m0009,
  '0010_webhook_fair_claims': m0010,
};

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

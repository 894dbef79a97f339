// Migration 0032_activity_partitions on a PostgreSQL database holding 1,000,000 ledger entries (a year of them), then
// retention on the partitioned ledger. Run: npx tsx bench/ledger-migration.bench.ts
// DATABASE_URL names the database (default postgres://root@127.0.0.1:5432/outreach_bench_ledger); it is dropped and
// re-created, so never point this at a database you care about. BENCH_ROWS changes the number of entries.
//
// Printed, in order: the seed; the old retention (batched DELETE of the oldest month from the unpartitioned table, the
// code before 0032); the migration itself; a few reads before and after (first page, exact count, lookup by id); one
// partition drop; a whole retention pass at 180 days (drops plus the DELETE in the month that straddles the cutoff).
import { sql } from 'kysely';
import { Migrator, type Migration } from 'kysely/migration';
import { createDatabase, type Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { MIGRATIONS } from '../src/db/migrations/index.js';
import { fixedClock } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';
import { createActivityService } from '../src/modules/activity/index.js';
import { countActivity, dropPartition, listActivity, listActivityPartitions } from '../src/modules/activity/activity.repository.js';
import { recreateDatabase } from './fresh-database.js';

const url = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/outreach_bench_ledger';
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const WORKSPACES = 10;
const DAY_MS = 86_400_000;

await recreateDatabase(url);
const handle = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
const db = handle.db;
const names = Object.keys(MIGRATIONS);
const before: Record<string, Migration> = Object.fromEntries(names.slice(0, names.indexOf('0032_activity_partitions')).map((n) => [n, MIGRATIONS[n]]));
const { error } = await new Migrator({ db, provider: { getMigrations: async () => before } }).migrateToLatest();
if (error) throw error instanceof Error ? error : new Error(JSON.stringify(error));

const seconds = (start: number) => (performance.now() - start) / 1000;
const ms = (start: number) => (performance.now() - start).toFixed(1);
const now = new Date();

const workspaces = Array.from({ length: WORKSPACES }, () => newId());
await db
  .insertInto('workspaces')
  .values(workspaces.map((id, i) => ({ id, name: `Bench ${i}` })))
  .execute();
let start = performance.now();
// Evenly over the last 395 days, newest last as the engine writes them; 70 % with a lead, 60 % with an account. The
// oldest 30 days go first by the old retention below, which leaves ROWS entries (a year) for the migration.
const SEEDED = Math.round((ROWS * 395) / 365);
await sql`
  INSERT INTO activity (id, workspace_id, created_at, action, outcome, units, detail, account_id, lead_id)
  SELECT gen_random_uuid(),
         (${sql.val(workspaces)}::uuid[])[1 + g % ${WORKSPACES}],
         ${now}::timestamptz - make_interval(secs => (${SEEDED} - g) * (395.0 * 86400 / ${SEEDED})),
         (ARRAY['invite','message','x_dm','email_sent','accepted'])[1 + g % 5],
         CASE WHEN g % 17 = 0 THEN 'failed' ELSE 'ok' END,
         1,
         CASE WHEN g % 3 = 0 THEN '{"variant":"A"}' ELSE '' END,
         CASE WHEN g % 5 < 3 THEN 'onb_' || ((g % 40)::text) END,
         CASE WHEN g % 10 < 7 THEN gen_random_uuid() END
  FROM generate_series(1, ${SEEDED}) AS g`.execute(db);
await sql`VACUUM ANALYZE activity`.execute(db);
console.log(`seeded ${SEEDED} ledger entries over 395 days in ${seconds(start).toFixed(1)} s`);

// The retention of the code before 0032, on the unpartitioned table: the oldest month's entries, batch by batch.
const oldCutoff = new Date(now.getTime() - 365 * DAY_MS);
start = performance.now();
let oldDeleted = 0;
for (;;) {
  const n = await db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('outreach.activity_retention', 'on', true)`.execute(trx);
    const r = await sql`DELETE FROM activity WHERE id IN (SELECT id FROM activity WHERE created_at < ${oldCutoff} LIMIT 10000)`.execute(trx);
    return Number(r.numAffectedRows ?? 0);
  });
  oldDeleted += n;
  if (n < 10_000) break;
}
const oldSeconds = seconds(start);
console.log(`old retention (unpartitioned, DELETE in batches of 10,000): ${oldDeleted} entries older than 365 days in ${oldSeconds.toFixed(2)} s`);
await sql`VACUUM ANALYZE activity`.execute(db);

const sample = (await sql<{ id: string }>`SELECT id FROM activity TABLESAMPLE SYSTEM (1) LIMIT 1000`.execute(db)).rows.map((r) => r.id);
async function reads(label: string, d: Database) {
  const ws = workspaces[0];
  const rounds = 20;
  let t = performance.now();
  for (let i = 0; i < rounds; i++) await listActivity(d, ws, {}, 100);
  const page = (performance.now() - t) / rounds;
  t = performance.now();
  for (let i = 0; i < rounds; i++) await countActivity(d, ws, { actions: ['invite'], outcome: 'ok', since: new Date(now.getTime() - 30 * DAY_MS) });
  const count = (performance.now() - t) / rounds;
  t = performance.now();
  for (const id of sample) await d.selectFrom('activity').select(['id', 'created_at']).where('id', '=', id).executeTakeFirst();
  const byId = (performance.now() - t) / sample.length;
  console.log(
    `${label}: first page of 100 ${page.toFixed(2)} ms, exact count (invite ok, 30 days) ${count.toFixed(2)} ms, lookup by id ${byId.toFixed(3)} ms (mean of ${sample.length})`,
  );
}
await reads('reads before', db);

start = performance.now();
const applied = await migrateToLatest(db);
const migrationSeconds = seconds(start);
const rows = Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM activity`.execute(db)).rows[0].n);
const partitions = await listActivityPartitions(db);
console.log(
  `migration ${applied.join(', ')}: ${rows} entries moved into ${partitions.length - 1} month partitions + DEFAULT in ${migrationSeconds.toFixed(1)} s (one transaction)`,
);
await sql`VACUUM ANALYZE activity`.execute(db);
await reads('reads after', db);

// One partition dropped on its own, then a whole retention pass at 180 days (it drops the older months and deletes
// the expired entries of the month that straddles the cutoff).
const oldest = partitions.find((p) => p.from !== null)!;
const oldestRows = Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(`${oldest.schema}.${oldest.name}`)}`.execute(db)).rows[0].n);
start = performance.now();
await dropPartition(db, oldest);
console.log(`drop of partition ${oldest.name} (${oldestRows} entries): ${ms(start)} ms`);

// The pass below in two parts: the months wholly past the cutoff, dropped; then the pass itself, which is left with
// the month that straddles the cutoff (its expired entries deleted in batches) and DEFAULT.
const cutoff = new Date(now.getTime() - 180 * DAY_MS);
const expired = (await listActivityPartitions(db)).filter((p) => p.to !== null && p.to <= cutoff);
start = performance.now();
let dropped = 0;
for (const p of expired) dropped += (await dropPartition(db, p)) ?? 0;
console.log(`retention at 180 days, months wholly past the cutoff: ${expired.length} partitions, ${dropped} entries dropped in ${ms(start)} ms`);
const service = createActivityService({ db, clock: fixedClock(now) });
start = performance.now();
const result = await service.pruneExpired({ retentionDays: 180 });
const straddleSeconds = seconds(start);
const left = await listActivityPartitions(db);
console.log(
  `retention at 180 days, the month that straddles the cutoff: ${result.deleted} expired entries deleted in ${straddleSeconds.toFixed(2)} s (${left.length - 1} month partitions left)`,
);
// What one hourly pass deletes in steady state: the hour that expired since the last pass.
const hourLater = fixedClock(new Date(now.getTime() + 3_600_000));
start = performance.now();
const hourly = await createActivityService({ db, clock: hourLater }).pruneExpired({ retentionDays: 180 });
console.log(`next hourly pass: ${hourly.deleted} entries deleted in ${ms(start)} ms`);
const plan = (
  await sql<{ 'QUERY PLAN': { 'Planning Time': number; 'Execution Time': number }[] }>`
  EXPLAIN (ANALYZE, FORMAT JSON) SELECT id, created_at FROM activity WHERE id = ${sample[0]}`.execute(db)
).rows[0]['QUERY PLAN'][0];
console.log(`lookup by id over ${left.length} partitions: planning ${plan['Planning Time'].toFixed(3)} ms, execution ${plan['Execution Time'].toFixed(3)} ms`);
console.log(
  JSON.stringify({
    rows: ROWS,
    oldRetention: { deleted: oldDeleted, seconds: Number(oldSeconds.toFixed(2)) },
    migrationSeconds: Number(migrationSeconds.toFixed(2)),
    dropped: { partitions: expired.length, entries: dropped },
    straddling: { ...result, seconds: Number(straddleSeconds.toFixed(2)) },
    hourly,
    partitionsLeft: left.map((p) => p.name),
  }),
);
await handle.close();

/**
 * Candidate review at volume: one workspace with 1,000,000 candidates in one Play, timed through the real app
 * (buildApp + inject: auth, validation, serialization included) on PostgreSQL.
 *
 *   npx tsx bench/candidates.bench.ts [--reseed] [--runs=20]
 *
 * DATABASE_URL selects the database (default postgres://root@127.0.0.1:5432/outreach_bench); it is created and
 * migrated when missing and seeded once (INSERT … SELECT generate_series); --reseed drops it first. Prints p50/p95
 * per operation and the EXPLAIN plans of the queries the Play operations ran.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Kysely, PostgresDialect, sql, type LogEvent } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app/build-app.js';
import { createServices } from '../src/app/services.js';
import { loadConfig } from '../src/config/config.js';
import type { DB } from '../src/db/schema.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/lib/clock.js';
import { createTextCipher } from '../src/lib/crypto.js';

const url = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/outreach_bench';
const reseed = process.argv.includes('--reseed');
const runs = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 20);
const WARMUP = 3;
const CANDIDATES = 1_000_000;

const WORKSPACE = '0b0b0b0b-0000-4000-8000-000000000001';
const PLAY = '0b0b0b0b-0000-4000-8000-0000000000a1';
const SIBLING_PLAY = '0b0b0b0b-0000-4000-8000-0000000000a2';
const SEQUENCE = '0b0b0b0b-0000-4000-8000-0000000000b1';
const OTHER_SEQUENCE = '0b0b0b0b-0000-4000-8000-0000000000b2';
const SENDER = '4242';

async function ensureDatabase() {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`unexpected database name ${name}`);
  const adminUrl = new URL(url);
  adminUrl.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  try {
    if (reseed) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!exists.rowCount) await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
}

/** Captured statements, so the plans printed are those of the exact SQL the service ran. */
let capture: { sql: string; parameters: readonly unknown[] }[] | null = null;
/** Time spent waiting on statements during one request, to tell database time from the app's own. */
let statementMs = 0;
function log(event: LogEvent) {
  if (event.level !== 'query') return;
  statementMs += event.queryDurationMillis;
  if (capture) capture.push({ sql: event.query.sql, parameters: event.query.parameters });
}

async function seed(db: Kysely<DB>) {
  const seeded = await db
    .selectFrom('play_candidate_counts')
    .select('total')
    .where('workspace_id', '=', WORKSPACE)
    .where('play_id', '=', PLAY)
    .executeTakeFirst();
  if (seeded && Number(seeded.total) >= CANDIDATES) return false;
  if (seeded) throw new Error('the bench database holds a partial seed; run with --reseed');
  const started = performance.now();
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('workspaces').values({ id: WORKSPACE, name: 'Bench workspace' }).execute();
    await trx.insertInto('x_accounts').values({ workspace_id: WORKSPACE, user_id: SENDER, handle: 'bench_sender' }).execute();
    for (const [id, name] of [
      [SEQUENCE, 'Bench sequence'],
      [OTHER_SEQUENCE, 'Older sequence'],
    ]) {
      await trx
        .insertInto('sequences')
        .values({ id, workspace_id: WORKSPACE, name, status: 'active', revision: 1, approved_revision: 1, approved_at: new Date(), steps: '[]' })
        .execute();
    }
    for (const id of [PLAY, SIBLING_PLAY]) {
      await trx
        .insertInto('plays')
        .values({
          id,
          workspace_id: WORKSPACE,
          name: id === PLAY ? 'Followers at scale' : 'Sibling',
          status: 'active',
          sequence_id: SEQUENCE,
          account_user_id: SENDER,
        })
        .execute();
    }
  });
  // Other tenants, so that Play, sequence and account reads are planned against realistic tables, not two rows.
  await sql`INSERT INTO workspaces (id, name) SELECT gen_random_uuid(), 'Tenant ' || g FROM generate_series(1, 2000) g`.execute(db);
  await sql`
    INSERT INTO x_accounts (workspace_id, user_id, handle)
    SELECT id, (900000 + row_number() OVER ())::text, 'tenant_' || row_number() OVER () FROM workspaces WHERE id <> ${WORKSPACE}::uuid`.execute(db);
  await sql`
    INSERT INTO sequences (id, workspace_id, name, status, revision, approved_revision, steps)
    SELECT gen_random_uuid(), w.id, 'Sequence ' || k, 'active', 1, 1, '[]' FROM workspaces w, generate_series(1, 5) k WHERE w.id <> ${WORKSPACE}::uuid`.execute(
    db,
  );
  await sql`
    INSERT INTO plays (id, workspace_id, name, status, sequence_id)
    SELECT gen_random_uuid(), s.workspace_id, 'Play for ' || s.name, 'active', s.id FROM sequences s WHERE s.workspace_id <> ${WORKSPACE}::uuid`.execute(db);
  // 10% good fit, 5% not a good fit, the rest unreviewed; chunks keep each statement's trigger aggregate small.
  const chunk = 100_000;
  for (let from = 1; from <= CANDIDATES; from += chunk) {
    await sql`
      INSERT INTO candidates (id, workspace_id, play_id, x_user_id, username, name, status, review_decision, reviewed_at, reviewed_by, created_at)
      SELECT gen_random_uuid(), ${WORKSPACE}::uuid, ${PLAY}::uuid, (1000000000 + g)::text, 'user_' || g, 'Person ' || g,
             CASE WHEN g % 20 IN (0, 1) THEN 'approved' WHEN g % 20 = 2 THEN 'rejected' ELSE 'proposed' END,
             CASE WHEN g % 20 IN (0, 1) THEN 'good_fit' WHEN g % 20 = 2 THEN 'not_a_good_fit' END,
             CASE WHEN g % 20 IN (0, 1, 2) THEN now() END,
             CASE WHEN g % 20 IN (0, 1, 2) THEN 'reviewer' END,
             now()
      FROM generate_series(${from}::int, ${Math.min(from + chunk - 1, CANDIDATES)}::int) g`.execute(db);
  }
  await sql`
    INSERT INTO candidates (id, workspace_id, play_id, x_user_id, username, status, created_at)
    SELECT gen_random_uuid(), ${WORKSPACE}::uuid, ${SIBLING_PLAY}::uuid, (1000000000 + g)::text, 'user_' || g, 'proposed', now()
    FROM generate_series(1, 100000) g`.execute(db);
  // Good-fit candidates were enrolled; every 50th unreviewed identity already has a lead in another sequence.
  await sql`
    INSERT INTO leads (id, workspace_id, x_user_id, username, person, account_user_id, sequence_id, play_id, candidate_id, stage, created_at, updated_at)
    SELECT gen_random_uuid(), workspace_id, x_user_id, username, name, ${SENDER}, ${SEQUENCE}::uuid, play_id, id, 'messaged', now(), now()
    FROM candidates WHERE workspace_id = ${WORKSPACE}::uuid AND play_id = ${PLAY}::uuid AND review_decision = 'good_fit'`.execute(db);
  await sql`
    INSERT INTO leads (id, workspace_id, x_user_id, username, sequence_id, stage, automation_stopped, created_at, updated_at)
    SELECT gen_random_uuid(), ${WORKSPACE}::uuid, (1000000000 + g)::text, 'user_' || g, ${OTHER_SEQUENCE}::uuid, 'replied', true, now(), now()
    FROM generate_series(7, ${CANDIDATES}, 50) g`.execute(db);
  await sql`VACUUM ANALYZE`.execute(db);
  console.log(
    `seeded ${CANDIDATES.toLocaleString('en')} candidates (+100,000 in a sibling Play, ~120,000 leads, 2,000 other tenants with 10,000 Plays) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return true;
}

/** Plans quote every bound value; a 200-element array literal is summarized so the plan stays readable. */
const shorten = (line: string) => line.replace(/'\{([^}]{60,})\}'/g, (_m, list: string) => `'{${list.split(',').length} values}'`);

/** `in ($5, $6, … $204)` and multi-row VALUES lists are folded so each statement fits a few lines. */
function compactSql(text: string) {
  const folded = text.replace(/\((\$\d+)(?:, \$\d+)+, (\$\d+)\)/g, '($1 … $2)');
  return folded.replace(/(\(\$\d+ … \$\d+\))(?:, \(\$\d+ … \$\d+\))+/g, (all, first: string) => `${first}, … (${all.split('), (').length} rows)`);
}

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  await ensureDatabase();
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log });
  await migrateToLatest(db);
  await seed(db);

  const config = loadConfig(
    {},
    { DATABASE_URL: url, LOG_LEVEL: 'silent', OUTREACH_SEED_DEMO: '0', OUTREACH_ENGINE_INTERVAL: 0, OUTREACH_RATE_LIMIT_PER_MINUTE: 1_000_000 },
  );
  const services = createServices({ db, config, clock: systemClock, cipher: createTextCipher(randomBytes(32)) });
  const app = await buildApp({ config, db, services, clock: systemClock });
  await app.ready();
  const { key } = await services.workspaces.createApiKey({ workspaceId: WORKSPACE });
  const headers = { authorization: `Bearer ${key}` };

  const total = (
    await sql<{ n: number }>`SELECT count(*)::int AS n FROM candidates WHERE workspace_id = ${WORKSPACE}::uuid AND play_id = ${PLAY}::uuid`.execute(db)
  ).rows[0].n;
  const deepCursor = (
    await sql<{
      id: string;
    }>`SELECT id FROM candidates WHERE workspace_id = ${WORKSPACE}::uuid AND play_id = ${PLAY}::uuid ORDER BY id OFFSET ${Math.floor(total * 0.9)} LIMIT 1`.execute(
      db,
    )
  ).rows[0].id;
  const iterations = WARMUP + runs;
  // Enrollment changes what it touches, so every run gets its own 200 still-unreviewed candidates (some with leads).
  const enrollPool = (
    await sql<{ id: string }>`SELECT id FROM candidates WHERE workspace_id = ${WORKSPACE}::uuid AND play_id = ${PLAY}::uuid AND review_decision IS NULL
                              ORDER BY id DESC LIMIT ${iterations * 200}`.execute(db)
  ).rows.map((r) => r.id);
  if (enrollPool.length < iterations * 200) throw new Error('not enough unreviewed candidates left; run with --reseed');
  const pick = () => 1 + Math.floor(Math.random() * CANDIDATES);
  const importBase = 5_000_000_000_000 + Math.floor(Math.random() * 1_000_000_000) * 1000;

  const operations: { name: string; request: (i: number) => { method: 'GET' | 'POST'; url: string; payload?: unknown } }[] = [
    // The floor every request pays (key check, workspace selection, one small query): what the machine gives an inject.
    { name: 'baseline: GET /x/accounts', request: () => ({ method: 'GET', url: '/api/v1/x/accounts' }) },
    { name: 'candidates: first page (limit 100, filter all)', request: () => ({ method: 'GET', url: `/api/v1/plays/${PLAY}/candidates` }) },
    {
      name: 'candidates: deep page (90%, filter unreviewed, limit 200)',
      request: () => ({ method: 'GET', url: `/api/v1/plays/${PLAY}/candidates?filter=unreviewed&limit=200&after=${deepCursor}` }),
    },
    {
      name: 'candidates: deep page (90%, filter good_fit, limit 200)',
      request: () => ({ method: 'GET', url: `/api/v1/plays/${PLAY}/candidates?filter=good_fit&limit=200&after=${deepCursor}` }),
    },
    {
      name: 'lookup: 200 identities (100 ids, 100 handles)',
      request: () => ({
        method: 'POST',
        url: `/api/v1/plays/${PLAY}/candidates/lookup`,
        payload: { identities: Array.from({ length: 200 }, (_, k) => (k % 2 ? { xUserId: String(1000000000 + pick()) } : { username: `@USER_${pick()}` })) },
      }),
    },
    {
      name: 'import: 100 leads (90 new, 10 existing)',
      request: (i) => ({
        method: 'POST',
        url: `/api/v1/plays/${PLAY}/import`,
        payload: {
          requestId: `bench-${importBase}-${i}`,
          expectedRevision: 1,
          leads: Array.from({ length: 100 }, (_, k) => ({
            // The first ten are distinct seeded identities (existing_candidate), the rest are new.
            xUserId: k < 10 ? String(1000000001 + ((i * 7919 + k * 104729) % CANDIDATES)) : String(importBase + i * 100 + k),
            name: `Imported ${k}`,
            reference: `crm-${i}-${k}`,
          })),
        },
      }),
    },
    {
      name: 'enroll: 200 candidates',
      request: (i) => ({
        method: 'POST',
        url: `/api/v1/plays/${PLAY}/enroll`,
        payload: { expectedRevision: 1, sequenceId: SEQUENCE, sequenceRevision: 1, candidateIds: enrollPool.slice(i * 200, i * 200 + 200) },
      }),
    },
  ];

  console.log(
    `\nPostgreSQL, ${total.toLocaleString('en')} candidates in the Play; ${runs} timed runs after ${WARMUP} warm-ups, sequential, through app.inject\n`,
  );
  const plans: { name: string; queries: { sql: string; parameters: readonly unknown[] }[] }[] = [];
  for (const op of operations) {
    const times: number[] = [];
    const dbTimes: number[] = [];
    let captured: { sql: string; parameters: readonly unknown[] }[] = [];
    for (let i = 0; i < iterations; i++) {
      const req = op.request(i);
      capture = i === iterations - 1 ? [] : null;
      statementMs = 0;
      const t0 = performance.now();
      const res = await app.inject({ method: req.method, url: req.url, headers, ...(req.payload !== undefined && { payload: req.payload as object }) });
      const ms = performance.now() - t0;
      if (capture) captured = capture;
      capture = null;
      if (res.statusCode !== 200) throw new Error(`${op.name}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      if (i >= WARMUP) {
        times.push(ms);
        dbTimes.push(statementMs);
      }
    }
    times.sort((a, b) => a - b);
    dbTimes.sort((a, b) => a - b);
    const f = (n: number) => n.toFixed(1).padStart(6);
    console.log(
      `${op.name.padEnd(58)} p50 ${f(percentile(times, 50))} ms   p95 ${f(percentile(times, 95))} ms   max ${f(times[times.length - 1])} ms   (sum of statement times p50 ${f(percentile(dbTimes, 50))} ms)`,
    );
    plans.push({ name: op.name, queries: captured });
  }

  console.log('\nQuery plans (EXPLAIN ANALYZE for reads, EXPLAIN for writes and locks; authentication queries omitted)');
  const client = await pool.connect();
  try {
    for (const { name, queries } of plans) {
      console.log(`\n=== ${name}`);
      const seen = new Set<string>();
      for (const q of queries) {
        if (/"api_keys"|"team_links"|from "workspaces"/i.test(q.sql) || seen.has(q.sql) || /^(begin|commit|rollback|start transaction)/i.test(q.sql)) continue;
        seen.add(q.sql);
        const isRead = /^select/i.test(q.sql) && !/for (no key )?update|for share|pg_advisory/i.test(q.sql);
        const res = await client.query(`EXPLAIN ${isRead ? '(ANALYZE, BUFFERS, TIMING OFF, SUMMARY ON) ' : ''}${q.sql}`, q.parameters as unknown[]);
        console.log(`-- ${compactSql(q.sql)}`);
        for (const row of res.rows) console.log(`   ${shorten(row['QUERY PLAN'] as string)}`);
      }
    }
  } finally {
    client.release();
  }
  await app.close();
  await db.destroy();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

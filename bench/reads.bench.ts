/**
 * Cross-channel read benchmark (issue 7): 1,000,000 leads and 10,000,000 activity entries over 1,000
 * workspaces on PostgreSQL, then p50/p95 of GET /progress, /reports/funnel, /leads?q=… and
 * /activity?action=… for the one 10,000-lead workspace, through buildApp + inject (the whole request
 * path: auth, validation, SQL, serialization), followed by the EXPLAIN ANALYZE of every query each
 * endpoint ran.
 *
 *   npx tsx bench/reads.bench.ts                  # seeds (drops and recreates outreach_bench_reads), then times
 *   npx tsx bench/reads.bench.ts --reuse          # times an already seeded database
 *   BENCH_ACTIVITY=2000000 npx tsx bench/reads.bench.ts
 *
 * BENCH_DATABASE_URL (default postgres://root@127.0.0.1:5432/postgres) names the server; the bench
 * database is created beside it. Not a test: it prints numbers and plans, it asserts nothing.
 */
import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app/build-app.js';
import { createServices } from '../src/app/services.js';
import { loadConfig } from '../src/config/config.js';
import type { DB } from '../src/db/schema.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/lib/clock.js';
import { createTextCipher } from '../src/lib/crypto.js';

const BASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const DB_NAME = 'outreach_bench_reads';
const WORKSPACES = 1000;
const LEADS = Number(process.env.BENCH_LEADS ?? 1_000_000);
const ACTIVITY = Number(process.env.BENCH_ACTIVITY ?? 10_000_000);
const BIG_LEADS = 10_000;
const BIG_ACTIVITY = Math.round(ACTIVITY / 100);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 60);
const reuse = process.argv.includes('--reuse');

pg.types.setTypeParser(20, (v) => Number(v));

const target = new URL(BASE_URL);
target.pathname = `/${DB_NAME}`;

const secs = (t0: number) => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
async function step(label: string, fn: () => Promise<unknown>) {
  const t0 = performance.now();
  process.stdout.write(`  ${label} … `);
  await fn();
  process.stdout.write(`${secs(t0)}\n`);
}

// Workspace 0 is the 10,000-lead workspace; ids are derived from numbers so every table can point at them.
const wsId = (n: string) => `md5('ws' || ${n})::uuid`;
const leadWs = (g: string) => `CASE WHEN ${g} <= ${BIG_LEADS} THEN 0 ELSE 1 + (${g} % ${WORKSPACES - 1}) END`;

async function seed(db: Kysely<DB>) {
  const admin = new pg.Client({ connectionString: BASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${DB_NAME}`);
  await admin.end();
  await migrateToLatest(db);

  const run = (text: string) => sql.raw(text).execute(db);
  await run(`SET maintenance_work_mem = '1GB'`);
  // Bulk load without the secondary indexes, then build them once: what an operator's restore does, and
  // ten times faster than maintaining them row by row.
  const { rows: indexes } = await sql<{ name: string; def: string }>`
    SELECT indexname AS name, indexdef AS def FROM pg_indexes
    WHERE schemaname = 'public' AND tablename IN ('leads', 'activity', 'replies') AND indexname NOT LIKE '%_pkey'`.execute(db);
  for (const i of indexes) await run(`DROP INDEX ${i.name}`);
  await run(`ALTER TABLE activity DROP CONSTRAINT activity_pkey`);

  console.log(`seeding ${WORKSPACES} workspaces, ${LEADS.toLocaleString()} leads, ${ACTIVITY.toLocaleString()} activity entries`);
  await step('workspaces, accounts, sequences', async () => {
    await run(`INSERT INTO workspaces (id, name) SELECT ${wsId('n')}, 'Bench ' || n FROM generate_series(0, ${WORKSPACES - 1}) n`);
    await run(`INSERT INTO messaging_accounts (id, workspace_id, name, time_zone, connected_at, warmup_started_at, account_score, relations_count)
      SELECT 'onb_' || md5('acc' || n || '-' || k)::uuid, ${wsId('n')}, 'Account ' || n || '-' || k,
             CASE k WHEN 0 THEN 'Europe/Paris' ELSE 'America/New_York' END, now() - interval '200 days',
             CASE k WHEN 0 THEN NULL ELSE now() - interval '10 days' END, 70 + k, 1000 + n
      FROM generate_series(0, ${WORKSPACES - 1}) n, generate_series(0, 1) k`);
    await run(`INSERT INTO sequences (id, workspace_id, name, status, approved_revision, approved_at, channels, steps, created_at)
      SELECT md5('seq' || n || '-' || k)::uuid, ${wsId('n')}, 'Sequence ' || k, 'active', 1, now(), '{linkedin}',
             '[{"index":0,"kind":"connect","delayDays":0,"message":"Hi"},{"index":1,"kind":"message","delayDays":2,"variants":[{"key":"A","weight":1,"messageTmpl":"a"},{"key":"B","weight":1,"messageTmpl":"b"}]}]',
             now() - (k || ' days')::interval
      FROM generate_series(0, ${WORKSPACES - 1}) n, generate_series(0, 1) k`);
  });

  await step('leads', () =>
    run(`INSERT INTO leads (id, workspace_id, person, company, title, email, linkedin_url, account_id, sequence_id, stage, current_step,
           variant_key, invited_at, connected_at, messaged_at, replied_at, meeting_booked_at, meeting_outcome, reply_sentiment,
           last_activity_at, created_at, updated_at)
      SELECT md5('lead' || g)::uuid, ${wsId('w')},
             'Person ' || g, (ARRAY['Acme','Initech','Globex','Umbrella','Hooli','Vandelay','Stark','Wayne'])[1 + g % 8] || ' ' || (g % 500),
             (ARRAY['CTO','CEO','VP Engineering','Head of Sales','Founder','Product Manager'])[1 + g % 6],
             'p' || g || '@example.com', 'https://www.linkedin.com/in/p' || g,
             'onb_' || md5('acc' || w || '-' || (g % 2))::uuid, md5('seq' || w || '-' || (g % 2))::uuid,
             (ARRAY['queued','resolving','invited','accepted','messaged','followed_up','replied','failed','skipped','invited'])[1 + g % 10],
             g % 3, CASE WHEN g % 3 = 0 THEN NULL ELSE (ARRAY['A','B'])[1 + g % 2] END,
             CASE WHEN g % 10 < 7 THEN t - interval '20 days' END,
             CASE WHEN g % 10 < 4 THEN t - interval '18 days' END,
             CASE WHEN g % 10 < 3 THEN t - interval '15 days' END,
             CASE WHEN g % 20 = 0 THEN t - interval '10 days' END,
             CASE WHEN g % 100 = 0 THEN t - interval '5 days' END,
             CASE WHEN g % 300 = 0 THEN 'no_show' END,
             CASE WHEN g % 20 = 0 THEN (ARRAY['positive','negative','neutral'])[1 + g % 3] END,
             CASE WHEN g % 10 < 7 THEN t - ((g % 30) || ' days')::interval END,
             t, t
      FROM (SELECT g, ${leadWs('g')} AS w, now() - ((g % 365) || ' days')::interval AS t FROM generate_series(1, ${LEADS}) g) s`),
  );

  await step('replies', () =>
    run(`INSERT INTO replies (id, workspace_id, lead_id, channel, classification, their_message, draft, replied_at, state)
      SELECT md5('reply' || g)::uuid, ${wsId(leadWs('g'))}, md5('lead' || g)::uuid, CASE WHEN g % 140 = 0 THEN 'x' ELSE 'linkedin' END,
             (ARRAY['meeting_intent','positive','negative','question'])[1 + g % 4], 'v1:x:y:z', 'v1:x:y:z',
             now() - ((g % 90) || ' days')::interval, CASE WHEN g % 7 = 0 THEN 'pending' ELSE 'decided' END
      FROM generate_series(20, ${LEADS}, 20) g`),
  );

  const actions = `ARRAY['invite','accepted','message','followup','like','view_profile','reply_detected','x_dm','email_sent','resolve','enrich','error']`;
  const chunk = 2_000_000;
  for (let from = 1; from <= ACTIVITY; from += chunk) {
    const to = Math.min(ACTIVITY, from + chunk - 1);
    await step(`activity ${from.toLocaleString()}–${to.toLocaleString()}`, () =>
      run(`INSERT INTO activity (id, workspace_id, created_at, action, outcome, units, detail, account_id, lead_id)
        SELECT gen_random_uuid(), ${wsId(leadWs('li'))}, now() - ((g % 259200) || ' minutes')::interval,
               (${actions})[1 + (g / 7) % 12], CASE g % 10 WHEN 0 THEN 'failed' WHEN 1 THEN 'skipped' ELSE 'ok' END,
               1, '', 'onb_' || md5('acc' || ${leadWs('li')} || '-' || (li % 2))::uuid, md5('lead' || li)::uuid
        FROM (SELECT g, CASE WHEN g <= ${BIG_ACTIVITY} THEN 1 + (g % ${BIG_LEADS})
                             ELSE ${BIG_LEADS + 1} + (g % ${LEADS - BIG_LEADS}) END AS li
              FROM generate_series(${from}, ${to}) g) s`),
    );
  }

  await step('primary key and indexes', async () => {
    await run(`ALTER TABLE activity ADD PRIMARY KEY (id)`);
    for (const i of indexes) await run(i.def);
  });
  await step('VACUUM ANALYZE', async () => {
    for (const table of ['workspaces', 'messaging_accounts', 'sequences', 'leads', 'replies', 'activity']) await run(`VACUUM ANALYZE ${table}`);
  });
}

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  const captured: CompiledQuery[] = [];
  let capture = false;
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: target.toString(), max: 10 }) }),
    log: (event) => {
      if (capture && event.level === 'query') captured.push(event.query);
    },
  });

  if (!reuse) {
    const t0 = performance.now();
    await seed(db);
    console.log(`seeded in ${secs(t0)}`);
  } else {
    await migrateToLatest(db);
  }

  const counts = await sql<{ leads: number; activity: number; workspaces: number }>`
    SELECT (SELECT count(*) FROM leads) AS leads, (SELECT count(*) FROM activity) AS activity, (SELECT count(*) FROM workspaces) AS workspaces`.execute(db);
  const big = await sql<{ leads: number; activity: number }>`
    SELECT (SELECT count(*) FROM leads WHERE workspace_id = md5('ws0')::uuid) AS leads,
           (SELECT count(*) FROM activity WHERE workspace_id = md5('ws0')::uuid) AS activity`.execute(db);
  console.log(`database: ${JSON.stringify(counts.rows[0])}; measured workspace: ${JSON.stringify(big.rows[0])}`);

  const config = loadConfig({}, { OUTREACH_SEED_DEMO: '0', OUTREACH_ENGINE_INTERVAL: 0, LOG_LEVEL: 'silent', OUTREACH_RATE_LIMIT_PER_MINUTE: 1_000_000 });
  const services = createServices({ db, config, clock: systemClock, cipher: createTextCipher(randomBytes(32)) });
  const app = await buildApp({ config, db, services, clock: systemClock });
  await app.ready();
  const { rows: wsRows } = await sql<{ id: string }>`SELECT md5('ws0')::uuid AS id`.execute(db);
  const key = await services.workspaces.createApiKey({ workspaceId: wsRows[0].id });
  const headers = { authorization: `Bearer ${key.key}` };

  const endpoints = [
    '/api/v1/progress',
    '/api/v1/reports/funnel',
    '/api/v1/reports/funnel?group_by=account',
    '/api/v1/leads?q=initech%2042',
    '/api/v1/leads?q=cto&stage=messaged&limit=50',
    '/api/v1/activity?action=invite',
    '/api/v1/activity?action=invite&outcome=ok&sinceDays=7',
    '/api/v1/activity?action=x_dm,message&outcome=ok',
    '/api/v1/replies',
  ];

  console.log(`\n${'endpoint'.padEnd(56)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'max ms'.padStart(8)}  answer`);
  for (const url of endpoints) {
    for (let i = 0; i < 5; i++) await app.inject({ method: 'GET', url, headers });
    const times: number[] = [];
    let last = '';
    for (let i = 0; i < ITERATIONS; i++) {
      const t0 = performance.now();
      const res = await app.inject({ method: 'GET', url, headers });
      times.push(performance.now() - t0);
      if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
      last = res.body;
    }
    times.sort((x, y) => x - y);
    const body = JSON.parse(last);
    const summary =
      'count' in body
        ? `count=${body.count} returned=${body.returned}`
        : 'total' in body
          ? `leads=${body.total.leads} groups=${body.groups.length}`
          : 'funnel' in body
            ? `leads=${body.funnel.leads} recentActions=${body.recentActions}`
            : `replies=${body.replies.length}`;
    console.log(
      `${url.padEnd(56)} ${percentile(times, 50).toFixed(1).padStart(8)} ${percentile(times, 95).toFixed(1).padStart(8)} ${times.at(-1)!.toFixed(1).padStart(8)}  ${summary}`,
    );
  }

  if (!process.argv.includes('--no-plans')) {
    for (const url of ['/api/v1/progress', '/api/v1/reports/funnel', '/api/v1/leads?q=initech%2042', '/api/v1/activity?action=invite&outcome=ok&sinceDays=7']) {
      captured.length = 0;
      capture = true;
      await app.inject({ method: 'GET', url, headers });
      capture = false;
      console.log(`\n=== EXPLAIN ANALYZE for ${url} ===`);
      for (const q of captured) {
        if (/api_keys|team_links/.test(q.sql)) continue;
        const { rows } = await sql
          .raw<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${q.sql.replace(/\$(\d+)/g, (_, n) => literal(q.parameters[Number(n) - 1]))}`)
          .execute(db);
        console.log(`-- ${q.sql.replace(/\s+/g, ' ').slice(0, 160)}…`);
        for (const r of rows) console.log(`   ${r['QUERY PLAN']}`);
      }
    }
  }

  await app.close();
  await db.destroy();
}

function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (v instanceof Date) return `'${v.toISOString()}'`;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `ARRAY[${v.map(literal).join(',')}]`;
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return `'${text.replace(/'/g, "''")}'`;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

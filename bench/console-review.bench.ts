/**
 * The review page at volume: one Play with 1,000,000 candidates, timed through the real app (buildApp + inject:
 * session cookie, CSRF, services, TSX rendering) on PostgreSQL. Issue 15: pages answer in under 100 ms.
 *
 *   npx tsx bench/console-review.bench.ts [--reseed] [--runs=20]
 *
 * DATABASE_URL selects the database (default postgres://root@127.0.0.1:5432/outreach_console_bench); it is created
 * and migrated when missing and seeded once (INSERT … SELECT generate_series); --reseed drops it first.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app/build-app.js';
import { createServices } from '../src/app/services.js';
import { loadConfig } from '../src/config/config.js';
import type { DB } from '../src/db/schema.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/lib/clock.js';
import { createTextCipher } from '../src/lib/crypto.js';
import { recreateDatabase } from './fresh-database.js';

const url = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/outreach_console_bench';
const reseed = process.argv.includes('--reseed');
const runs = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 20);
const WARMUP = 3;
const CANDIDATES = 1_000_000;

const WORKSPACE = '0c0c0c0c-0000-4000-8000-000000000001';
const PLAY = '0c0c0c0c-0000-4000-8000-0000000000a1';
const SEQUENCE = '0c0c0c0c-0000-4000-8000-0000000000b1';
const SENDER = '4343';

async function databaseExists() {
  const admin = new URL(url);
  const name = admin.pathname.slice(1);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    return ((await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

async function seed(db: Kysely<DB>) {
  const seeded = await db.selectFrom('play_candidate_counts').select('total').where('play_id', '=', PLAY).executeTakeFirst();
  if (seeded && Number(seeded.total) >= CANDIDATES) return;
  const started = performance.now();
  await db.insertInto('workspaces').values({ id: WORKSPACE, name: 'Bench workspace' }).execute();
  await db.insertInto('x_accounts').values({ workspace_id: WORKSPACE, user_id: SENDER, handle: 'bench_sender' }).execute();
  await db
    .insertInto('sequences')
    .values({
      id: SEQUENCE,
      workspace_id: WORKSPACE,
      name: 'Bench sequence',
      status: 'active',
      revision: 1,
      approved_revision: 1,
      approved_at: new Date(),
      steps: '[]',
    })
    .execute();
  await db
    .insertInto('plays')
    .values({ id: PLAY, workspace_id: WORKSPACE, name: 'Followers at scale', status: 'active', sequence_id: SEQUENCE, account_user_id: SENDER })
    .execute();
  // Other tenants with Plays, so the workspace's Play list is planned against a realistic table.
  await sql`INSERT INTO workspaces (id, name) SELECT gen_random_uuid(), 'Tenant ' || g FROM generate_series(1, 2000) g`.execute(db);
  await sql`
    INSERT INTO plays (id, workspace_id, name, status)
    SELECT gen_random_uuid(), w.id, 'Play ' || k, 'active' FROM workspaces w, generate_series(1, 5) k WHERE w.id <> ${WORKSPACE}::uuid`.execute(db);
  // 10% good fit, 5% not a good fit, the rest unreviewed (the review page's default filter).
  for (let from = 1; from <= CANDIDATES; from += 100_000) {
    await sql`
      INSERT INTO candidates (id, workspace_id, play_id, x_user_id, username, name, status, review_decision, reviewed_at, reviewed_by, created_at)
      SELECT gen_random_uuid(), ${WORKSPACE}::uuid, ${PLAY}::uuid, (1000000000 + g)::text, 'user_' || g, 'Person ' || g,
             CASE WHEN g % 20 IN (0, 1) THEN 'approved' WHEN g % 20 = 2 THEN 'rejected' ELSE 'proposed' END,
             CASE WHEN g % 20 IN (0, 1) THEN 'good_fit' WHEN g % 20 = 2 THEN 'not_a_good_fit' END,
             CASE WHEN g % 20 IN (0, 1, 2) THEN now() END,
             CASE WHEN g % 20 IN (0, 1, 2) THEN 'reviewer' END,
             now()
      FROM generate_series(${from}::int, ${Math.min(from + 99_999, CANDIDATES)}::int) g`.execute(db);
  }
  await sql`VACUUM ANALYZE`.execute(db);
  console.log(`seeded ${CANDIDATES.toLocaleString('en')} candidates in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function main() {
  if (reseed || !(await databaseExists())) await recreateDatabase(url);
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  await migrateToLatest(db);
  await seed(db);

  const config = loadConfig({}, { DATABASE_URL: url, LOG_LEVEL: 'silent', OUTREACH_SEED_DEMO: '0', OUTREACH_ENGINE_INTERVAL: 0 });
  const services = createServices({ db, config, clock: systemClock, cipher: createTextCipher(randomBytes(32)) });
  const app = await buildApp({ config, db, services, clock: systemClock });
  await app.ready();
  const { key } = await services.workspaces.createApiKey({ workspaceId: WORKSPACE });

  // Sign in through the form, as a browser does.
  const jar: Record<string, string> = {};
  const keep = (res: { headers: Record<string, unknown> }) => {
    for (const line of ([] as string[]).concat((res.headers['set-cookie'] as string[] | string | undefined) ?? [])) {
      const [pair] = line.split(';');
      jar[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
    }
  };
  const cookie = () =>
    Object.entries(jar)
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');
  const form = await app.inject({ method: 'GET', url: '/console/sign-in' });
  keep(form);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)![1];
  const post = (path: string, fields: Record<string, string | string[]>, headers: Record<string, string> = {}) => {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries({ _csrf: csrf, ...fields })) for (const one of ([] as string[]).concat(v)) body.append(k, one);
    return app.inject({
      method: 'POST',
      url: path,
      headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: body.toString(),
    });
  };
  const signedIn = await post('/console/sign-in', { key });
  if (signedIn.statusCode !== 303) throw new Error(`sign-in answered ${signedIn.statusCode}`);
  keep(signedIn);

  const deepCursor = (
    await sql<{ id: string }>`SELECT id FROM candidates WHERE workspace_id = ${WORKSPACE}::uuid AND play_id = ${PLAY}::uuid AND review_decision IS NULL
                              ORDER BY id OFFSET ${Math.floor(CANDIDATES * 0.85 * 0.9)} LIMIT 1`.execute(db)
  ).rows[0].id;
  const iterations = WARMUP + runs;
  const pool2 = (
    await sql<{ id: string; x_user_id: string }>`SELECT id, x_user_id FROM candidates WHERE workspace_id = ${WORKSPACE}::uuid AND play_id = ${PLAY}::uuid
                                                 AND review_decision IS NULL ORDER BY id DESC LIMIT ${iterations * 52}`.execute(db)
  ).rows;
  let next = 0;
  const take = (n: number) => pool2.slice(next, (next += n));
  const revisions = { expectedRevision: '1', sequenceId: SEQUENCE, sequenceRevision: '1' };
  const htmx = { 'hx-request': 'true' };
  const base = `/review/plays/${PLAY}`;

  const operations: { name: string; run: () => Promise<{ statusCode: number }> }[] = [
    { name: 'GET review page (Unreviewed, first page of 50)', run: () => app.inject({ method: 'GET', url: base, headers: { cookie: cookie() } }) },
    { name: 'GET review page (All, first page)', run: () => app.inject({ method: 'GET', url: `${base}?filter=all`, headers: { cookie: cookie() } }) },
    {
      name: 'GET review page (Unreviewed, deep cursor at 90%)',
      run: () => app.inject({ method: 'GET', url: `${base}?filter=unreviewed&after=${deepCursor}`, headers: { cookie: cookie() } }),
    },
    {
      name: 'POST Good fit (enroll one, htmx row)',
      run: () => {
        const [c] = take(1);
        return post(`${base}/candidates/${c.id}/good-fit`, { ...revisions, xUserId: c.x_user_id }, htmx);
      },
    },
    {
      name: 'POST Not a good fit (review one, htmx row)',
      run: () => {
        const [c] = take(1);
        return post(`${base}/candidates/${c.id}/not-a-good-fit`, { ...revisions, xUserId: c.x_user_id }, htmx);
      },
    },
    {
      name: 'POST Enroll selected (50 rows) + redirect',
      run: () => post(`${base}/enroll`, { ...revisions, filter: 'unreviewed', candidateIds: take(50).map((c) => c.id) }),
    },
    { name: 'GET /console/plays', run: () => app.inject({ method: 'GET', url: '/console/plays', headers: { cookie: cookie() } }) },
  ];

  console.log(`review page at ${CANDIDATES.toLocaleString('en')} candidates, ${runs} runs after ${WARMUP} warm-up (ms)`);
  console.log('operation'.padEnd(52), 'p50'.padStart(8), 'p95'.padStart(8), 'max'.padStart(8));
  for (const op of operations) {
    const times: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const started = performance.now();
      const res = await op.run();
      const ms = performance.now() - started;
      if (res.statusCode >= 400) throw new Error(`${op.name} answered ${res.statusCode}`);
      if (i >= WARMUP) times.push(ms);
    }
    times.sort((a, b) => a - b);
    console.log(
      op.name.padEnd(52),
      percentile(times, 50).toFixed(1).padStart(8),
      percentile(times, 95).toFixed(1).padStart(8),
      times.at(-1)!.toFixed(1).padStart(8),
    );
  }
  await app.close();
  await db.destroy();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

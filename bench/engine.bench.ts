// One engine pass over 100,000 due leads on PostgreSQL. Run: npx tsx bench/engine.bench.ts
// BENCH_STEP_TEXT (default 0): characters of text in each later step and variant (words, as compressible as prose), so
// the sequence's stored steps weigh what a real one's do; BENCH_LEADS (default 100,000).
// DATABASE_URL names the database (default postgres://root@127.0.0.1:5432/outreach_bench_engine); it is
// dropped and re-created, so never point this at a database you care about.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config/config.js';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createChannelDrivers } from '../src/channels/index.js';
import { createEngine } from '../src/engine/index.js';
import { fixedClock } from '../src/lib/clock.js';
import { createTextCipher } from '../src/lib/crypto.js';
import { newId, newMessagingAccountId } from '../src/lib/ids.js';
import { insertApprovedSequence } from './fresh-database.js';

const url = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/outreach_bench_engine';
const LEADS = Number(process.env.BENCH_LEADS ?? 100_000);
const ACCOUNTS = 100;
const TEXT = Number(process.env.BENCH_STEP_TEXT ?? 0);
// 500 made-up words, drawn by a fixed generator: the same text each run.
const WORDS = Array.from({ length: 500 }, (_, i) => ((i * 7919) % 100003).toString(36) + 'an'.repeat(i % 4));
let draw = 1;
const prose = (chars: number) => {
  let text = '';
  while (text.length < chars) {
    draw = (draw * 48271) % 2147483647;
    text += ' ' + WORDS[draw % WORDS.length];
  }
  return text;
};

const target = new URL(url);
const dbName = target.pathname.slice(1);
const admin = new URL(url);
admin.pathname = '/postgres';
const client = new pg.Client({ connectionString: admin.toString() });
await client.connect();
await client.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
await client.query(`CREATE DATABASE ${dbName}`);
await client.end();

const config = loadConfig(
  {},
  {
    DATABASE_URL: url,
    OUTREACH_DB_POOL_SIZE: 20,
    OUTREACH_ENGINE_CONCURRENCY: Number(process.env.BENCH_CONCURRENCY ?? 8),
    OUTREACH_ENGINE_BATCH_SIZE: 500,
    OUTREACH_PACING_SPACING: 0,
    OUTREACH_PACING_HOURS: '00:00-24:00',
    OUTREACH_PACING_DAYS: 'sun-sat',
    OUTREACH_PACING_RAMP: '',
    OUTREACH_PACING_INVITE_CAP: 100_000,
    OUTREACH_DISCOVERY_INTERVAL: 0,
    LOG_LEVEL: 'silent',
  },
);
const handle = await createDatabase({ kind: 'postgres', url, poolSize: 20 });
const db = handle.db;
await migrateToLatest(db);

const now = new Date('2026-11-02T12:00:00.000Z');
const ws = newId();
await db.insertInto('workspaces').values({ id: ws, name: 'Bench', energy_balance: 10_000_000 }).execute();
const accounts = Array.from({ length: ACCOUNTS }, () => newMessagingAccountId());
await db
  .insertInto('messaging_accounts')
  .values(
    accounts.map((id, i) => ({
      id,
      workspace_id: ws,
      name: `A${i}`,
      time_zone: ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Tokyo'][i % 4],
      connected_at: now,
      warmup_started_at: null,
      account_score: null,
      relations_count: null,
    })),
  )
  .execute();
const seq = await insertApprovedSequence(
  db,
  ws,
  [
    { index: 0, kind: 'connect', delayDays: 0, subject: null, message: 'Hi {{firstName}} from {{company}}', actions: [], variants: null, tool: null },
    {
      index: 1,
      kind: 'message',
      delayDays: 2,
      subject: null,
      message: null,
      actions: [],
      tool: null,
      variants: [
        { key: 'A', weight: 1, messageTmpl: 'A' + prose(TEXT) },
        { key: 'B', weight: 1, messageTmpl: 'B' + prose(TEXT) },
      ],
    },
    // With text, four e-mail steps more: a sequence of six steps, as real ones often are.
    ...(TEXT > 0 ? [2, 3, 4, 5] : []).map((index) => ({
      index,
      kind: 'email',
      delayDays: 3,
      subject: 'Hello',
      message: 'Hello' + prose(TEXT),
      actions: [],
      variants: null,
      tool: null,
    })),
  ],
  now,
);
const seedStart = Date.now();
await sql`INSERT INTO leads (id, workspace_id, person, company, account_id, sequence_id, next_action_at)
  SELECT gen_random_uuid(), ${ws}::uuid, 'Lead ' || g, 'Company ' || g, (${sql.val(accounts)}::text[])[1 + g % ${ACCOUNTS}], ${seq}::uuid,
    ${now.toISOString()}::timestamptz - make_interval(secs => g)
  FROM generate_series(1, ${LEADS}) g`.execute(db);
await sql`ANALYZE`.execute(db);
console.log(`seeded ${LEADS} due leads in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`);

const engine = createEngine({ db, config, clock: fixedClock(now), cipher: createTextCipher(randomBytes(32)), drivers: createChannelDrivers(config) });
const start = process.hrtime.bigint();
const summary = await engine.runPass({ now });
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
const { rows } = await sql<{
  n: number;
}>`SELECT count(*)::int AS n FROM activity WHERE workspace_id = ${ws}::uuid AND action = 'invite' AND outcome = 'ok'`.execute(db);
console.log(JSON.stringify(summary));
console.log(
  `engine pass over ${LEADS} due leads: ${seconds.toFixed(2)} s (${Math.round(LEADS / seconds)} steps/s), ledger invites ${rows[0].n}, concurrency ${config.engine.concurrency}`,
);
await handle.close();

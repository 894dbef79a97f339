/**
 * The claim's cost for e-mail steps (issue 41): since the claim reserves a mailbox's budgets itself, it chooses the
 * sending mailbox in its transaction (the account's, the lead's sticky one, or the pool's pick made sticky) through
 * the e-mail descriptor's `resolveBudgets`. Side by side, rounds alternating, on one database:
 *
 * - the floor: the same claim without `resolveBudgets` (what the claim cost when the driver reserved at send time);
 * - pool: every lead's account has no mailbox, so each is given one of the workspace's pool mailboxes (the most
 *   work: the account lookup, the sticky lookup, the pool list, the sticky write, the mailbox's day);
 * - no mailbox: a workspace without any mailbox (SMTP_URL or the sandbox): one query for the whole batch.
 *
 * Each round resets the leads and the ledger, then claims every due lead in batches of OUTREACH_ENGINE_BATCH_SIZE.
 * It prints the time per claimed lead of each round's median and its ratio to the floor. Not a test: it asserts
 * nothing.
 *
 *   DATABASE_URL=postgres://root@127.0.0.1:5432/outreach_bench_claim npx tsx bench/email-claim.bench.ts
 *   npx tsx bench/email-claim.bench.ts                                    # PGlite
 *   BENCH_LEADS=2000 BENCH_ROUNDS=5 npx tsx bench/email-claim.bench.ts
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { loadConfig } from '../src/config/config.js';
import { createDatabase, type Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createChannelDrivers, createChannelRegistry } from '../src/channels/index.js';
import type { PassSummary } from '../src/channels/types.js';
import { claimBatch } from '../src/engine/claim.js';
import type { ClaimBudgets } from '../src/engine/pacing.js';
import { upsertMailbox } from '../src/channels/email/mailboxes/mailboxes.repository.js';
import { POOL_ACCOUNT_MODE } from '../src/domain/claim-layout.js';
import { createTextCipher } from '../src/lib/crypto.js';
import { newId, newMessagingAccountId } from '../src/lib/ids.js';
import { insertApprovedSequence, recreateDatabase } from './fresh-database.js';
import { pct } from './floor-report.js';

const LEADS = Number(process.env.BENCH_LEADS ?? 2_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const POOL = 5;
const NOW = new Date('2026-11-30T12:00:00.000Z');

const env = {
  OUTREACH_ENGINE_BATCH_SIZE: Number(process.env.OUTREACH_ENGINE_BATCH_SIZE ?? 200),
  OUTREACH_PACING_SPACING: 0,
  OUTREACH_PACING_HOURS: '00:00-24:00',
  OUTREACH_PACING_DAYS: 'sun-sat',
  OUTREACH_PACING_RAMP: '',
  OUTREACH_PACING_MESSAGE_CAP: 1_000_000,
  OUTREACH_ENGINE_UNITS_PER_ACTION: 0,
  LOG_LEVEL: 'silent' as const,
};

async function seedWorkspace(db: Database, cipher: ReturnType<typeof createTextCipher>, name: string, withPool: boolean): Promise<string> {
  const ws = newId();
  await db.insertInto('workspaces').values({ id: ws, name, energy_balance: 10_000_000 }).execute();
  if (withPool) {
    for (let i = 0; i < POOL; i++) {
      const account = newMessagingAccountId();
      await db
        .insertInto('messaging_accounts')
        .values({ id: account, workspace_id: ws, name: `Pool ${i}`, mode: POOL_ACCOUNT_MODE })
        .execute();
      await upsertMailbox(db, cipher, {
        id: `mbx_${newId()}`,
        workspaceId: ws,
        accountId: account,
        address: `pool${i}@acme.example`,
        smtpUrl: 'smtp://127.0.0.1:1',
        imapUrl: 'imap://u:p@127.0.0.1:1',
      });
    }
  }
  // The leads' own account has no mailbox: their e-mail borrows the pool's.
  const account = newMessagingAccountId();
  await db.insertInto('messaging_accounts').values({ id: account, workspace_id: ws, name: 'LinkedIn', time_zone: 'UTC' }).execute();
  const seq = await insertApprovedSequence(
    db,
    ws,
    [{ index: 0, kind: 'email', delayDays: 0, subject: 'Hi', message: 'Hi {{firstName}}', actions: [], variants: null, tool: null }],
    NOW,
  );
  await sql`INSERT INTO leads (id, workspace_id, person, email, account_id, sequence_id, next_action_at)
    SELECT gen_random_uuid(), ${ws}::uuid, 'Lead ' || g, 'lead' || g || '@company' || (g % 97) || '.example', ${account}, ${seq}::uuid, ${NOW.toISOString()}::timestamptz
    FROM generate_series(1, ${LEADS}) g`.execute(db);
  return ws;
}

async function main() {
  const url = process.env.DATABASE_URL;
  if (url) await recreateDatabase(url);
  const handle = url ? await createDatabase({ kind: 'postgres', url }) : await createDatabase({ kind: 'pglite' });
  const db = handle.db;
  await migrateToLatest(db);
  const config = loadConfig({}, { ...env, ...(url ? { DATABASE_URL: url } : {}) });
  const cipher = createTextCipher(randomBytes(32));
  const registry = createChannelRegistry();
  const drivers = createChannelDrivers(config, { registry });
  const pooled = await seedWorkspace(db, cipher, 'Pool', true);
  const bare = await seedWorkspace(db, cipher, 'No mailbox', false);
  await sql`ANALYZE`.execute(db);

  const capOf: ClaimBudgets['capOf'] = (channel, key) => channel.budgetCap?.(key, config) ?? null;
  const withResolve: ClaimBudgets = {
    capOf,
    resolve: (channel, trx, asks) => channel.resolveBudgets?.({ db: trx, config, cipher }, asks) ?? Promise.resolve(asks.map(() => [])),
  };
  const floor: ClaimBudgets = { capOf, resolve: async (_channel, _trx, asks) => asks.map(() => []) };

  /** Every due lead of `workspace` claimed, batch after batch; ms per claimed lead. */
  async function round(workspace: string, budgets: ClaimBudgets): Promise<number> {
    await sql`UPDATE leads SET inflight_key = NULL, inflight_step = NULL, inflight_at = NULL, inflight_release = NULL, mailbox_id = NULL,
      next_action_at = ${NOW.toISOString()}::timestamptz WHERE workspace_id = ${workspace}::uuid`.execute(db);
    await sql`DELETE FROM send_budgets WHERE workspace_id = ${workspace}::uuid`.execute(db);
    // The other workspace's leads are out of reach of this round.
    await sql`UPDATE leads SET next_action_at = NULL WHERE workspace_id <> ${workspace}::uuid`.execute(db);
    const summary = { channels: {} } as unknown as PassSummary;
    let claimed = 0;
    const t0 = performance.now();
    for (;;) {
      const batch = await claimBatch({ db, config: config.engine, drivers, cipher, channels: registry, budgets }, NOW, summary);
      if (batch.claimed === 0) break;
      claimed += batch.sends.length;
    }
    const ms = performance.now() - t0;
    if (claimed !== LEADS) throw new Error(`claimed ${claimed} of ${LEADS}`);
    return ms / claimed;
  }

  const variants: [string, string, ClaimBudgets][] = [
    ['floor: the claim without resolveBudgets', pooled, floor],
    ['pool: mailbox chosen and reserved at claim', pooled, withResolve],
    ['no mailbox: one query a batch', bare, withResolve],
  ];
  const results = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  await round(pooled, withResolve); // warm
  for (let r = 0; r < ROUNDS; r++) for (const [name, ws, budgets] of variants) results.get(name)!.push(await round(ws, budgets));
  const base = pct(results.get(variants[0][0])!, 50);
  console.log(`${LEADS} due e-mail leads per round, ${ROUNDS} rounds, batch ${config.engine.batchSize}, ${url ? 'PostgreSQL' : 'PGlite'}`);
  for (const [name, xs] of results) {
    console.log(`${name.padEnd(46)} p50 ${pct(xs, 50).toFixed(3).padStart(7)} ms/lead  ratio to floor ${(pct(xs, 50) / base).toFixed(2)}`);
  }
  await handle.close();
}

await main();

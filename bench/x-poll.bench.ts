/**
 * X watcher cost per connected account, against the X API fake (test/helpers/x-api-fake.ts: a real HTTP server) and
 * embedded PGlite (or PostgreSQL with DATABASE_URL). Side by side with a floor: the least any poller must do per
 * account (one `GET /2/dm_events` with the account's token), timed on the same server in the same run. Prints ms per
 * account per pass and the ratio to the floor. Not a timed test.
 *
 *   npx tsx bench/x-poll.bench.ts [--history=1000] [--runs=30]
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createTextCipher } from '../src/lib/crypto.js';
import { newId } from '../src/lib/ids.js';
import { emptySummary, type XAccountPassCounts } from '../src/channels/types.js';
import { createObserver } from '../src/engine/observe.js';
import { loadConfig } from '../src/config/config.js';
import { xOauthRepository } from '../src/channels/x/oauth.repository.js';
import { xTokensService } from '../src/channels/x/tokens.service.js';
import { createXWatcher } from '../src/channels/x/watcher.js';
import { startXApiFake } from '../test/helpers/x-api-fake.js';
import { printBesideFloor } from './floor-report.js';

const arg = (name: string, dflt: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const HISTORY = arg('history', 1_000);
const RUNS = arg('runs', 30);
const ME = '2001';

async function main() {
  const x = await startXApiFake();
  const handle = process.env.DATABASE_URL
    ? await createDatabase({ kind: 'postgres', url: process.env.DATABASE_URL })
    : await createDatabase({ kind: 'pglite' });
  const db = handle.db;
  try {
    await migrateToLatest(db);
    const config = loadConfig({}, { LOG_LEVEL: 'silent', OUTREACH_SEED_DEMO: '0' });
    const cipher = createTextCipher(randomBytes(32));
    const ws = newId();
    await db.insertInto('workspaces').values({ id: ws, name: 'Bench' }).execute();
    await db.insertInto('x_accounts').values({ workspace_id: ws, user_id: ME, handle: 'acme_hq' }).execute();
    x.addUser({ id: ME, username: 'acme_hq' });
    const tokens = x.issueTokens(ME, 86_400);
    const repo = xOauthRepository(cipher);
    await repo.save(db, ws, ME, { ...tokens, scopes: [] });
    // The account's DM history: strangers writing in (unmatched), already there before the first poll.
    for (let i = 0; i < HISTORY; i++) x.receiveDm(String(500_000 + (i % 200)), ME, `hello ${i}`);
    // 10 leads this account has messaged, who will answer later.
    const leads: string[] = [];
    for (let i = 0; i < 10; i++) {
      const id = String(700_000 + i);
      x.addUser({ id, username: `lead${i}` });
      leads.push(id);
      await db
        .insertInto('leads')
        .values({ id: newId(), workspace_id: ws, person: `Lead ${i}`, x_user_id: id, account_user_id: ME, messaged_at: new Date(), stage: 'messaged' })
        .execute();
    }

    const settings = { apiUrl: x.url, timeoutMs: 10_000 };
    const tokensService = xTokensService({ db, repo, settings: { ...settings, clientId: x.clientId, clientSecret: x.clientSecret } });
    const observer = createObserver({ db, config: config.engine, drivers: { forChannel: () => ({}) as never }, cipher });
    const watcher = createXWatcher({
      db,
      repo,
      tokens: tokensService,
      settings,
      config: { pollIntervalSeconds: 60, observeDays: 30 },
    });
    let now = Date.now();
    const pass = async () => {
      now += 120_000;
      const summary = emptySummary();
      const start = performance.now();
      await watcher.watch({ now: new Date(now), summary, apply: observer.applyIn });
      return { ms: performance.now() - start, summary };
    };

    const first = await pass();
    console.log(
      `first poll: ${(first.summary.channels.x?.[ME] as XAccountPassCounts | undefined)?.unmatched ?? 0} DM events read in ${first.ms.toFixed(0)} ms`,
    );

    const floor: number[] = [];
    const idle: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const s = performance.now();
      const res = await request(`${x.url}/2/dm_events?event_types=MessageCreate&max_results=100`, {
        headers: { authorization: `Bearer ${tokens.accessToken}` },
      });
      await res.body.json();
      floor.push(performance.now() - s);
      idle.push((await pass()).ms);
    }
    const busy: number[] = [];
    for (let r = 0; r < Math.min(RUNS, 10); r++) {
      for (const id of leads) x.receiveDm(id, ME, `answer ${r}`);
      busy.push((await pass()).ms);
    }
    console.log(`\nDM history: ${HISTORY} events; ${RUNS} runs; database ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}`);
    printBesideFloor(
      ['floor: one GET /2/dm_events', floor],
      [
        ['watcher pass, nothing new (per account)', idle],
        ['watcher pass, 10 DM replies (per account)', busy],
      ],
    );
  } finally {
    await handle.close();
    await x.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

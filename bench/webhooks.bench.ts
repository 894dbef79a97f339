// Webhook fan-out (issue 16): one delivery worker (startWorker, the production loop) against a local receiver in a
// worker thread that answers 200, on PostgreSQL. Prints signed deliveries per second; target >= 1,000/s.
// Run: npx tsx bench/webhooks.bench.ts
//   BENCH_EVENTS=20000   events in the outbox before the worker starts
//   BENCH_HOOKS=10       subscriptions of one workspace, all on the receiver (10 is the spec's maximum)
//   BENCH_PGLITE=1       the embedded database instead (DATABASE_URL is then ignored)
// DATABASE_URL (default postgres://root@127.0.0.1:5432/outreach_bench_webhooks) is dropped and re-created,
// so never point this at a database you care about. Not a test: it prints numbers, it asserts nothing
// beyond every delivery arriving once with a valid signature.
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { loadConfig } from '../src/config/config.js';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createTextCipher } from '../src/lib/crypto.js';
import { newId } from '../src/lib/ids.js';
import { webhookSecretCodec } from '../src/modules/webhook-subscriptions/index.js';
import { enqueueEvents } from '../src/webhooks/outbox.js';
import { startWorker } from '../src/worker.js';
import { recreateDatabase } from './fresh-database.js';

const url = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/outreach_bench_webhooks';
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const HOOKS = Number(process.env.BENCH_HOOKS ?? 10);
const PGLITE = process.env.BENCH_PGLITE === '1';
const DELIVERIES = EVENTS * HOOKS;

if (!PGLITE) await recreateDatabase(url);
const handle = PGLITE ? await createDatabase({ kind: 'pglite' }) : await createDatabase({ kind: 'postgres', url, poolSize: 10 });
const db = handle.db;
await migrateToLatest(db);
const config = loadConfig({}, { DATABASE_URL: url, OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1', OUTREACH_SEED_DEMO: '0', LOG_LEVEL: 'silent' });
const cipher = createTextCipher(randomBytes(32));

// The receiver runs in a worker thread (its own event loop, like a receiver on another machine: its cost is not
// the worker's) and verifies every signature: a bad signature or a duplicate is a bug. It reports its counts.
const secrets = new Map<string, string>();
const receiverCode = `
const { parentPort, workerData } = require('node:worker_threads');
const { createServer } = require('node:http');
const { createHmac, timingSafeEqual } = require('node:crypto');
const secrets = new Map(Object.entries(workerData.secrets));
const seen = new Set();
let duplicates = 0, badSignatures = 0;
const verify = (raw, header, secret) => {
  const m = /^t=(\\d+),v1=([0-9a-f]{64})$/.exec(header || '');
  if (!m || !secret) return false;
  const h = createHmac('sha256', secret).update(m[1] + '.').update(raw).digest();
  return timingSafeEqual(h, Buffer.from(m[2], 'hex'));
};
const report = () => parentPort.postMessage({ seen: seen.size, duplicates, badSignatures });
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const hookId = (req.url || '').split('/')[2];
    if (!verify(Buffer.concat(chunks), req.headers['x-service-signature'], secrets.get(hookId))) badSignatures++;
    const id = String(req.headers['x-service-delivery']);
    if (seen.has(id)) duplicates++;
    seen.add(id);
    res.writeHead(200).end();
    if (seen.size === workerData.total) report();
  });
});
setInterval(report, 200).unref();
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
`;
let receiver: Worker | null = null;
const counts = { seen: 0, duplicates: 0, badSignatures: 0 };
let done: () => void = () => {};
const allDelivered = new Promise<void>((resolve) => (done = resolve));
async function startReceiver(): Promise<number> {
  receiver = new Worker(receiverCode, { eval: true, workerData: { secrets: Object.fromEntries(secrets), total: DELIVERIES } });
  return new Promise((resolve) =>
    receiver!.on('message', (m: { port?: number; seen?: number; duplicates?: number; badSignatures?: number }) => {
      if (m.port !== undefined) return resolve(m.port);
      Object.assign(counts, m);
      if (counts.seen === DELIVERIES) done();
    }),
  );
}

const workspaceId = newId();
await db.insertInto('workspaces').values({ id: workspaceId, name: 'Bench' }).execute();
for (let i = 0; i < HOOKS; i++) secrets.set(newId(), `whsec_${randomBytes(32).toString('base64url')}`);
const port = await startReceiver();
for (const [id, secret] of secrets) {
  await db
    .insertInto('webhooks')
    .values({
      id,
      workspace_id: workspaceId,
      url: `http://receiver.bench:${port}/hook/${id}`,
      events: ['lead.messaged'],
      secret: webhookSecretCodec.seal(secret, cipher),
    })
    .execute();
}
const lead = {
  id: newId(),
  person: 'Ada Lovelace',
  company: 'Analytical Engines',
  title: 'CTO',
  email: 'ada@example.com',
  linkedinUrl: null,
  account: null,
  sequenceId: null,
  stage: 'messaged',
};
for (let i = 0; i < EVENTS; i += 1000) {
  await db.transaction().execute((trx) =>
    enqueueEvents(
      trx,
      Array.from({ length: Math.min(1000, EVENTS - i) }, (_, n) => ({ workspaceId, event: 'lead.messaged' as const, data: { lead, n: i + n } })),
    ),
  );
}

console.log(
  `${PGLITE ? 'PGlite' : 'PostgreSQL'}: ${EVENTS.toLocaleString()} events × ${HOOKS} subscriptions = ${DELIVERIES.toLocaleString()} deliveries, one worker`,
);
const started = performance.now();
let lastReport = started;
let lastCount = 0;
const progress = setInterval(() => {
  const now = performance.now();
  console.log(`  ${counts.seen.toLocaleString()} delivered, ${Math.round(((counts.seen - lastCount) * 1000) / (now - lastReport))}/s`);
  lastReport = now;
  lastCount = counts.seen;
}, 5000);
const worker = startWorker({ db, config, cipher, resolver: async () => ['127.0.0.1'], idlePollMs: 100, retentionMs: 0 });
await allDelivered;
const seconds = (performance.now() - started) / 1000;
clearInterval(progress);
await worker.stop();
const states = await db
  .selectFrom('webhook_deliveries')
  .select(['state'])
  .select((eb) => eb.fn.countAll<number>().as('n'))
  .groupBy('state')
  .execute();
console.log(
  `delivered ${counts.seen.toLocaleString()} in ${seconds.toFixed(1)} s: ${Math.round(counts.seen / seconds).toLocaleString()} signed deliveries/s (target >= 1,000/s)`,
);
console.log(`duplicates ${counts.duplicates}, bad signatures ${counts.badSignatures}, rows ${states.map((s) => `${s.state} ${s.n}`).join(', ')}`);
await (receiver as Worker | null)?.terminate();
await handle.close();

/**
 * Mailboxes at scale (issue 45 §7): N mailboxes held in IMAP IDLE against the test Dovecot (50 sessions per `imap`
 * process, its own config) behind a proxy that delays every chunk `--delay` ms each way, beside a floor: bare imapflow
 * clients doing the least a listener must (connect, login, SELECT INBOX, IDLE) on the same server in the same run.
 *
 * For each N and each number of listeners (in this process, each with its own lease, as workers would hold them), it
 * prints: the time until all N are held and connected, the CPU per mailbox of opening them, the RSS and descriptors
 * added, how the shard split, and the push latency of `--replies` messages appended to random mailboxes (from the
 * APPEND to the message applied on record: `email_inbound_seen`), each beside the floor's (APPEND to `EXISTS` seen).
 * Not a test: it asserts nothing.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/mailboxes-scale.bench.ts [--sizes=100,1000] [--listeners=1,2] [--replies=50] [--delay=10]
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { ImapFlow } from 'imapflow';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createTextCipher } from '../src/lib/crypto.js';
import { newId, newMessagingAccountId } from '../src/lib/ids.js';
import { emptySummary } from '../src/channels/types.js';
import { createObserver } from '../src/engine/observe.js';
import { loadConfig } from '../src/config/config.js';
import { upsertMailbox } from '../src/channels/email/mailboxes/mailboxes.repository.js';
import { createInboxWatcher } from '../src/channels/email/inbox/watcher.js';
import { createIdleListener } from '../src/channels/email/inbox/idle.js';
import { startDovecot } from '../test/helpers/dovecot.js';
import { startDelayProxy } from '../test/helpers/delay-proxy.js';
import { pct } from './floor-report.js';
import { recreateDatabase } from './fresh-database.js';

const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const SIZES = arg('sizes', '100,1000').split(',').map(Number);
const LISTENERS = arg('listeners', '1,2').split(',').map(Number);
const REPLIES = Number(arg('replies', '50'));
const DELAY = Number(arg('delay', '10'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const rssMb = () => process.memoryUsage().rss / 2 ** 20;
const fds = () => fs.readdirSync('/proc/self/fd').length;
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const message = (i: number) =>
  `From: stranger${i}@elsewhere.example\r\nTo: box@acme.example\r\nSubject: Note ${i}\r\nMessage-ID: <s${i}.${newId().slice(0, 8)}@elsewhere.example>\r\n\r\nHello\r\n`;

interface Row {
  what: string;
  openS: number;
  cpuPerMailboxMs: number;
  rssMb: number;
  fds: number;
  split: string;
  p50: number;
  p95: number;
}

async function until(pred: () => Promise<boolean> | boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function main() {
  const max = Math.max(...SIZES);
  const users = Array.from({ length: max }, (_, i) => ({ user: `box${i}`, pass: `pw-${i}` }));
  const dovecot = await startDovecot(users, { clientsPerProcess: 50 });
  const proxy = await startDelayProxy(dovecot.port, DELAY);
  // A fresh database each run: the listeners hold every mailbox it has.
  if (process.env.DATABASE_URL) await recreateDatabase(process.env.DATABASE_URL);
  const handle = process.env.DATABASE_URL
    ? await createDatabase({ kind: 'postgres', url: process.env.DATABASE_URL })
    : await createDatabase({ kind: 'pglite' });
  const db = handle.db;
  const rows: Row[] = [];
  try {
    await migrateToLatest(db);
    const config = loadConfig({}, { LOG_LEVEL: 'silent', OUTREACH_SEED_DEMO: '0' });
    const cipher = createTextCipher(randomBytes(32));
    const ws = newId();
    await db.insertInto('workspaces').values({ id: ws, name: 'Bench' }).execute();
    const observer = createObserver({ db, config: config.engine, drivers: { forChannel: () => ({}) as never }, cipher });
    const watcher = createInboxWatcher({ db, cipher, config: { pollIntervalSeconds: 3600, reconcileSeconds: 3600 } });
    const boxIds: string[] = [];
    const addUpTo = async (n: number) => {
      while (boxIds.length < n) {
        const i = boxIds.length;
        const account = newMessagingAccountId();
        await db
          .insertInto('messaging_accounts')
          .values({ id: account, workspace_id: ws, name: `Box ${i}`, mode: 'email' })
          .execute();
        const id = `mbx_${newId()}`;
        await upsertMailbox(db, cipher, {
          id,
          workspaceId: ws,
          accountId: account,
          address: `box${i}@acme.example`,
          smtpUrl: 'smtp://box:x@127.0.0.1:1',
          imapUrl: `imap://box${i}:${encodeURIComponent(users[i].pass)}@127.0.0.1:${proxy.port}`,
        });
        boxIds.push(id);
      }
    };

    for (const n of SIZES) {
      await addUpTo(n);
      // The floor: N bare clients in IDLE, then the latency from an APPEND to the client seeing EXISTS.
      {
        const rss0 = rssMb();
        const fd0 = fds();
        const cpu0 = cpuMs();
        const t0 = performance.now();
        const waiters = new Map<number, () => void>();
        const clients: ImapFlow[] = [];
        for (let start = 0; start < n; start += 16) {
          const batch = users.slice(start, Math.min(n, start + 16));
          clients.push(
            ...(await Promise.all(
              batch.map(async (u, k) => {
                const c = new ImapFlow({
                  host: '127.0.0.1',
                  port: proxy.port,
                  secure: false,
                  auth: { user: u.user, pass: u.pass },
                  logger: false,
                  autoIdleDelay: 0,
                });
                c.on('error', () => undefined);
                c.on('exists', () => waiters.get(start + k)?.());
                await c.connect();
                await c.mailboxOpen('INBOX', { readOnly: true });
                return c;
              }),
            )),
          );
        }
        const openS = (performance.now() - t0) / 1000;
        const cpu = (cpuMs() - cpu0) / n;
        await sleep(500);
        const lat: number[] = [];
        for (let r = 0; r < REPLIES; r++) {
          const i = Math.floor(Math.random() * n);
          const seen = new Promise<void>((res) => waiters.set(i, res));
          const s = performance.now();
          await dovecot.deliver(users[i].user, message(r));
          await seen;
          lat.push(performance.now() - s);
          waiters.delete(i);
        }
        rows.push({
          what: `floor: imapflow IDLE, N=${n}`,
          openS,
          cpuPerMailboxMs: cpu,
          rssMb: rssMb() - rss0,
          fds: fds() - fd0,
          split: '-',
          p50: pct(lat, 50),
          p95: pct(lat, 95),
        });
        await Promise.all(clients.map((c) => c.logout().catch(() => c.close())));
        await sleep(500);
      }
      for (const l of LISTENERS) {
        const rss0 = rssMb();
        const fd0 = fds();
        const cpu0 = cpuMs();
        const t0 = performance.now();
        const listening = Array.from({ length: l }, () =>
          createIdleListener({ db, cipher, config: { leaseSeconds: 15, concurrency: 16 }, read: watcher.pollMailbox }).listen({
            context: (now) => ({ now, summary: emptySummary(), apply: observer.applyIn }),
            log: { warn: (o, m) => console.warn(m, o) },
          }),
        );
        const held = () => listening.reduce((s, x) => s + x.held().length, 0);
        await until(() => held() === n && listening.every((x) => x.held().length > 0 || l === 1), 600_000, `${n} mailboxes held by ${l}`);
        const openS = (performance.now() - t0) / 1000;
        const cpu = (cpuMs() - cpu0) / n;
        // The first reads (a catch-up per mailbox with mail from earlier rounds) settle before timing pushes.
        await sleep(3000);
        const lat: number[] = [];
        for (let r = 0; r < REPLIES; r++) {
          const i = Math.floor(Math.random() * n);
          const s = performance.now();
          const uid = await dovecot.deliver(users[i].user, message(r));
          await until(
            async () =>
              !!(await db
                .selectFrom('email_inbound_seen')
                .select('uid')
                .where('mailbox_id', '=', boxIds[i])
                .where('uid', '=', uid as never)
                .executeTakeFirst()),
            60_000,
            'the message on record',
          );
          lat.push(performance.now() - s);
        }
        const split = listening.map((x) => x.held().length).join('/');
        rows.push({
          what: `service: ${l} listener${l > 1 ? 's' : ''}, N=${n}`,
          openS,
          cpuPerMailboxMs: cpu,
          rssMb: rssMb() - rss0,
          fds: fds() - fd0,
          split,
          p50: pct(lat, 50),
          p95: pct(lat, 95),
        });
        await Promise.all(listening.map((x) => x.stop()));
        await sleep(500);
      }
    }
    const dovecotRss = dovecotRssMb();
    console.log(
      `\nIDLE at scale: Dovecot 50 sessions/process, ${DELAY} ms each way, ${REPLIES} pushes each; database ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}`,
    );
    console.log(`(descriptors and RSS are this process's, the proxy's 2 sockets per connection included; Dovecot's RSS at the end: ${dovecotRss} MB)`);
    console.log('| run | all held in | CPU per mailbox to open | RSS added | descriptors added | split | push p50 | push p95 | p50 ratio to floor |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    let floorP50 = 1;
    for (const r of rows) {
      if (r.what.startsWith('floor')) floorP50 = r.p50;
      console.log(
        `| ${r.what} | ${r.openS.toFixed(1)} s | ${r.cpuPerMailboxMs.toFixed(2)} ms | ${r.rssMb.toFixed(0)} MB | ${r.fds} | ${r.split} | ${r.p50.toFixed(0)} ms | ${r.p95.toFixed(0)} ms | ${(r.p50 / floorP50).toFixed(2)} |`,
      );
    }
  } finally {
    await handle.close();
    await proxy.close();
    await dovecot.stop();
  }
}

/** The resident memory of every Dovecot process of this machine's user `dovecot` and root, in MB (from /proc). */
function dovecotRssMb(): number {
  let kb = 0;
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      const name = /^Name:\s+(\S+)/m.exec(status)?.[1] ?? '';
      if (!/^(dovecot|imap|imap-login|anvil|log|config|auth|stats)$/.test(name)) continue;
      kb += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    } catch {
      /* gone */
    }
  }
  return Math.round(kb / 1024);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

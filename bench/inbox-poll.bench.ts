/**
 * Inbox-poll cost with 10,000 messages in INBOX, against a real Dovecot (test/helpers/dovecot.ts) and embedded
 * PGlite (or PostgreSQL with DATABASE_URL). Side by side with a floor: the least any poller must do per mailbox
 * (IMAP connect + login, SELECT INBOX, logout), timed on the same server in the same run. Prints ms per mailbox
 * per pass and the ratio to the floor. Not a timed test.
 *
 *   npx tsx bench/inbox-poll.bench.ts [--messages=10000] [--runs=30]
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ImapFlow } from 'imapflow';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createTextCipher } from '../src/lib/crypto.js';
import { newId, newMessagingAccountId } from '../src/lib/ids.js';
import { emptySummary, type MailboxPassCounts } from '../src/channels/types.js';
import { createObserver } from '../src/engine/observe.js';
import { loadConfig } from '../src/config/config.js';
import { upsertMailbox } from '../src/channels/email/mailboxes/mailboxes.repository.js';
import { createInboxWatcher } from '../src/channels/email/inbox/watcher.js';
import { startDovecot } from '../test/helpers/dovecot.js';
import { printBesideFloor } from './floor-report.js';

const arg = (name: string, dflt: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const MESSAGES = arg('messages', 10_000);
const RUNS = arg('runs', 30);

async function main() {
  const dovecot = await startDovecot([{ user: 'dana', pass: 'bench-pw' }]);
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
    const account = newMessagingAccountId();
    await db.insertInto('messaging_accounts').values({ id: account, workspace_id: ws, name: 'Dana', mode: 'email' }).execute();
    const mailboxId = `mbx_${newId()}`;
    await upsertMailbox(db, cipher, {
      id: mailboxId,
      workspaceId: ws,
      accountId: account,
      address: 'dana@acme.example',
      smtpUrl: 'smtp://dana:x@127.0.0.1:1',
      imapUrl: dovecot.url('dana'),
    });

    // 10,000 messages already in INBOX: mail from strangers (unmatched).
    const t0 = performance.now();
    const c = await dovecot.client('dana');
    for (let i = 0; i < MESSAGES; i++) {
      await c.append(
        'INBOX',
        `From: person${i % 500}@elsewhere.example\r\nTo: dana@acme.example\r\nSubject: Note ${i}\r\nMessage-ID: <n${i}@elsewhere.example>\r\n\r\nHello ${i}\r\n`,
      );
    }
    await c.logout();
    console.log(`filled INBOX with ${MESSAGES} messages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const observer = createObserver({ db, config: config.engine, drivers: { forChannel: () => ({}) as never }, cipher });
    const watcher = createInboxWatcher({ db, cipher, config: { pollIntervalSeconds: 60 } });
    let now = Date.now();
    const pass = async () => {
      now += 120_000;
      const summary = emptySummary();
      const start = performance.now();
      await watcher.watch({ now: new Date(now), summary, apply: observer.applyIn });
      return { ms: performance.now() - start, summary };
    };

    // Catch-up: the first poll reads what arrived since a day before the mailbox was added (all of it here).
    const catchStart = performance.now();
    let handled = 0;
    let passes = 0;
    for (;;) {
      const { summary } = await pass();
      passes += 1;
      const m = summary.channels.email?.[mailboxId] as MailboxPassCounts | undefined;
      const n = m ? m.unmatched + m.replies : 0;
      handled += n;
      if (n === 0) break;
    }
    const catchMs = performance.now() - catchStart;
    console.log(
      `catch-up: ${handled} messages in ${passes} passes, ${(catchMs / 1000).toFixed(1)} s (${(catchMs / Math.max(1, handled)).toFixed(2)} ms/message)`,
    );

    const floor: number[] = [];
    const idle: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const s = performance.now();
      const f = new ImapFlow({ host: '127.0.0.1', port: dovecot.port, secure: false, auth: { user: 'dana', pass: 'bench-pw' }, logger: false });
      f.on('error', () => undefined);
      await f.connect();
      await f.mailboxOpen('INBOX', { readOnly: true });
      await f.logout();
      floor.push(performance.now() - s);
      idle.push((await pass()).ms);
    }
    // A pass with 10 new messages.
    const busy: number[] = [];
    for (let r = 0; r < Math.min(RUNS, 10); r++) {
      for (let i = 0; i < 10; i++)
        await dovecot.deliver('dana', `From: late${i}@elsewhere.example\r\nSubject: Late\r\nMessage-ID: <late${r}.${i}@x.example>\r\n\r\nHi\r\n`);
      busy.push((await pass()).ms);
    }
    console.log(`\nINBOX: ${MESSAGES + Math.min(RUNS, 10) * 10} messages; ${RUNS} runs; database ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}`);
    printBesideFloor(
      ['floor: connect+login, SELECT INBOX, logout', floor],
      [
        ['watcher pass, nothing new (per mailbox)', idle],
        ['watcher pass, 10 new messages (per mailbox)', busy],
      ],
    );
  } finally {
    await handle.close();
    await dovecot.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

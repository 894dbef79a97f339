/**
 * E-mail send cost (issue 31): what recording each message costs on top of handing it to SMTP. Side by side, rounds
 * alternating, against one local `smtp-server` receiver (test/helpers/smtp-receiver.ts), 32 sends at once (a batch)
 * from one mailbox:
 *
 * - the floor: nodemailer's pooled transport (2 connections), no database;
 * - before: the driver up to issue 30: nodemailer's pool and one INSERT before the hand-off;
 * - after: the driver now: its own pool (src/channels/email/send/smtp-pool.ts, 2 connections), one INSERT when the SMTP
 *   transaction takes the message (after RCPT TO and DATA) and one UPDATE at the 250
 *   (src/channels/email/send/sent-messages.repository.ts);
 * - sent folder: the same for a mailbox with a sent folder: the message's bytes, encrypted, ride on the INSERT and the
 *   UPDATE makes its copy owed (the inbox loop files it later, off the send's path: sent-copies.ts).
 *
 * It prints the time per message of every round (wall time of the round / messages), the medians, and the ratio of
 * each to the floor. Not a test: it asserts nothing.
 *
 *   npx tsx bench/email-send.bench.ts                     # PGlite
 *   DATABASE_URL=postgres://root@127.0.0.1:5432/outreach_bench_send npx tsx bench/email-send.bench.ts
 *   BENCH_ROUNDS=5 BENCH_MESSAGES=400 npx tsx bench/email-send.bench.ts
 *   BENCH_SERVER_MS=30 npx tsx bench/email-send.bench.ts   # the receiver answers each DATA after 30 ms
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { newId, newMessagingAccountId } from '../src/lib/ids.js';
import { createTextCipher } from '../src/lib/crypto.js';
import { upsertMailbox } from '../src/channels/email/mailboxes/mailboxes.repository.js';
import { createSmtpPool } from '../src/channels/email/send/smtp-pool.js';
import * as sent from '../src/channels/email/send/sent-messages.repository.js';
import { startSmtpReceiver } from '../test/helpers/smtp-receiver.js';
import { recreateDatabase } from './fresh-database.js';
import { pct } from './floor-report.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 400);
const AT_ONCE = 32;
/** How long the receiver takes to answer each message's DATA (a real server: tens of milliseconds). */
const SERVER_MS = Number(process.env.BENCH_SERVER_MS ?? 0);

async function main() {
  const receiver = await startSmtpReceiver({ dataDelayMs: SERVER_MS });
  if (process.env.DATABASE_URL) await recreateDatabase(process.env.DATABASE_URL);
  const handle = process.env.DATABASE_URL
    ? await createDatabase({ kind: 'postgres', url: process.env.DATABASE_URL })
    : await createDatabase({ kind: 'pglite' });
  const db = handle.db;
  await migrateToLatest(db);
  const ws = newId();
  await db.insertInto('workspaces').values({ id: ws, name: 'Bench' }).execute();
  const account = newMessagingAccountId();
  await db.insertInto('messaging_accounts').values({ id: account, workspace_id: ws, name: 'Dana', mode: 'email' }).execute();
  const mailboxId = `mbx_${newId()}`;
  const smtpUrl = `smtp://127.0.0.1:${receiver.port}`;
  const cipher = createTextCipher(randomBytes(32));
  await upsertMailbox(db, cipher, {
    id: mailboxId,
    workspaceId: ws,
    accountId: account,
    address: 'dana@acme.example',
    smtpUrl,
    imapUrl: 'imap://dana:x@127.0.0.1:1',
  });
  const lead = newId();
  await db.insertInto('leads').values({ id: lead, workspace_id: ws, person: 'Bob Slydell', email: 'bob@initech.example', account_id: account }).execute();
  const smtp = { host: '127.0.0.1', port: receiver.port, secure: false, ignoreTLS: true, maxConnections: 2, logger: false as const };
  const transport = nodemailer.createTransport({ ...smtp, pool: true });
  const pool = createSmtpPool(smtp);
  const raw = (i: string) =>
    Buffer.from(`From: dana@acme.example\r\nTo: bob@initech.example\r\nSubject: Quick question\r\nMessage-ID: <${i}@acme.example>\r\n\r\nHi Bob\r\n`);
  const envelope = { from: 'dana@acme.example', to: ['bob@initech.example'] };
  const row = (key: string) => ({
    workspaceId: ws,
    messageId: `<${key}@acme.example>`,
    leadId: lead,
    mailboxId,
    idempotencyKey: key,
    subject: 'Quick question',
    at: new Date(),
    recipient: 'bob@initech.example',
  });

  const variants: [string, (key: string) => Promise<unknown>][] = [
    ['floor: nodemailer pool, no database', (key) => transport.sendMail({ envelope, raw: raw(key) })],
    [
      'before: nodemailer pool + INSERT before hand-off',
      async (key) => {
        await sent.recordTransactionStarted(db, row(key));
        await transport.sendMail({ envelope, raw: raw(key) });
      },
    ],
    [
      'after: own pool + INSERT at RCPT/DATA + UPDATE at 250',
      async (key) => {
        const accepted = await pool.send(envelope, raw(key), { transactionStarted: async () => void (await sent.recordTransactionStarted(db, row(key))) });
        await sent.recordAccepted(db, ws, key, new Date(), accepted.queueId);
      },
    ],
    [
      'sent folder: + the copy bytes, encrypted, in the INSERT',
      async (key) => {
        const bytes = raw(key);
        const sentCopyRaw = cipher.encrypt(bytes.toString('base64'));
        const accepted = await pool.send(envelope, bytes, {
          transactionStarted: async () => void (await sent.recordTransactionStarted(db, { ...row(key), sentCopyRaw })),
        });
        await sent.recordAccepted(db, ws, key, new Date(), accepted.queueId);
      },
    ],
  ];

  async function round(send: (key: string) => Promise<unknown>): Promise<number> {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        while (next < MESSAGES) await send(`b${newId()}-${next++}`);
      }),
    );
    return (performance.now() - t0) / MESSAGES;
  }

  const results = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (const [, send] of variants) await round(send); // warm-up: connections open, statements planned
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, send] of variants) {
      const ms = await round(send);
      results.get(name)!.push(ms);
      console.log(`round ${r + 1}  ${name.padEnd(56)} ${ms.toFixed(3)} ms/message`);
    }
  }
  const floor = pct(results.get(variants[0][0])!, 50);
  console.log(
    `\n${MESSAGES} messages a round, ${AT_ONCE} at once, one mailbox, server answers after ${SERVER_MS} ms, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}; medians:`,
  );
  for (const [name, xs] of results) console.log(`${name.padEnd(56)} ${pct(xs, 50).toFixed(3)} ms/message  ratio to floor ${(pct(xs, 50) / floor).toFixed(2)}`);
  transport.close();
  pool.close();
  await receiver.close();
  await handle.close();
}

await main();

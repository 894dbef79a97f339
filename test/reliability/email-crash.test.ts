import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTextCipher } from '../../src/lib/crypto.js';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { dovecotAvailable, DOVECOT_MISSING, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver.js';
import { dbEngine } from '../helpers/test-database.js';
import { clientPidsByPort, startOutreach, until, type OutreachProcess } from '../helpers/worker-process.js';
import { ADMIN, seed } from '../helpers/world-fixtures.js';
import { ENGINE_ENV } from '../engine/helpers.js';
import { analyse, API_KEY, crashWorld, WS, type CrashAnalysis, type LedgerRow, type SentRow } from './email-crash-world.js';

// Issue 31's crash test: real e-mail sending (a real Dovecot for the Sent copies, the smtp-server receiver answering
// the end of DATA after a random delay) by two `outreach worker` processes on PostgreSQL, each SIGKILLed at random
// points mid-pass and restarted, then clean passes to the end of every lead's sequence. The rules are checked against
// what the receiver saw (RCPT TO, 250s, Message-IDs, threading headers) and what the ledger says.
// PostgreSQL only (workers are separate processes sharing the database); skipped without Dovecot.
// Sizes from the environment (scripts/email-crash-test.sh runs it bigger): EMAIL_CRASH_KILLS, EMAIL_CRASH_LEADS,
// EMAIL_CRASH_DATA_DELAY_MS (the receiver's delay before answering DATA is drawn from 0 to this).
const KILLS = Number(process.env.EMAIL_CRASH_KILLS ?? 12);
const LEADS = Number(process.env.EMAIL_CRASH_LEADS ?? 240);
const DATA_DELAY_MS = Number(process.env.EMAIL_CRASH_DATA_DELAY_MS ?? 300);
const MAILBOXES = 3;
const STEPS = 3;
/** Seconds a killed worker's claimed leads wait before another process checks them (longer than any live batch). */
const LEASE_SECONDS = 15;
/** Rule 5 (an uncertain step is visible as the lead's lastError and as an open task); EMAIL_CRASH_VISIBILITY=0 only reports it. */
const VISIBILITY_ENFORCED = process.env.EMAIL_CRASH_VISIBILITY !== '0';

const skip = dbEngine() === 'pglite' || !dovecotAvailable();
if (dbEngine() !== 'pglite' && !dovecotAvailable()) console.warn(`test/reliability/email-crash.test.ts skipped: ${DOVECOT_MISSING}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(skip)('e-mail crash test: two workers SIGKILLed mid-pass while sending real e-mail (PostgreSQL only)', () => {
  let t: TestApp;
  let dovecot: Dovecot;
  let smtp: SmtpReceiver;
  let dataDir: string;
  const workers: OutreachProcess[] = [];
  const kills: { at: number; pid: number; inTransaction: number; aimed: boolean }[] = [];
  let result: CrashAnalysis;
  let emailOf: Map<string, string>;
  const auth = { authorization: `Bearer ${API_KEY}` };

  beforeAll(async () => {
    const started = Date.now();
    const key = randomBytes(32);
    dovecot = await startDovecot(Array.from({ length: MAILBOXES }, (_, m) => ({ user: `sender${m}`, pass: `sender${m}-imap-pw-${m}7731` })));
    smtp = await startSmtpReceiver({ dataDelayMs: () => Math.random() * DATA_DELAY_MS });
    t = await buildTestApp({ cipher: createTextCipher(key), env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
    const seeded = await seed(
      t,
      crashWorld({ mailboxes: MAILBOXES, leads: LEADS, steps: STEPS, smtp, dovecot, notBefore: new Date(Date.now() + 7 * 86_400_000) }),
    );
    expect(seeded.statusCode, seeded.body).toBe(200);
    emailOf = new Map((await t.db.selectFrom('leads').select(['id', 'email']).where('workspace_id', '=', WS).execute()).map((l) => [l.id, l.email!]));

    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-email-crash-'));
    const env: Record<string, string> = {
      DATABASE_URL: (t.handle as { url?: string }).url!,
      OUTREACH_ENCRYPTION_KEY: key.toString('hex'),
      OUTREACH_DATA_DIR: dataDir,
      OUTREACH_SEED_DEMO: '0',
      OUTREACH_ADDRESS_CHECKS: '0',
      LOG_LEVEL: 'info',
      ...Object.fromEntries(Object.entries(ENGINE_ENV).map(([k, v]) => [k, String(v)])),
      // Pacing out of the way: no warm-up ramp, caps far above the run, no per-domain cap, retries after a minute.
      OUTREACH_PACING_RAMP: '',
      OUTREACH_PACING_MESSAGE_CAP: '100000',
      OUTREACH_MAILBOX_DOMAIN_DAILY_CAP: '0',
      OUTREACH_ENGINE_RETRY_MINUTES: '1',
      OUTREACH_ENGINE_INTERVAL: '1',
      OUTREACH_ENGINE_BATCH_SIZE: '40',
      OUTREACH_ENGINE_CONCURRENCY: '2',
      OUTREACH_ENGINE_INFLIGHT_LEASE: String(LEASE_SECONDS),
      OUTREACH_INBOX_POLL_INTERVAL: '3600',
    };
    let n = 0;
    const startWorker = () => {
      const w = startOutreach(`worker-${++n}`, ['worker'], env, /webhook worker started/);
      workers.push(w);
      return w;
    };
    let live = [startWorker(), startWorker()];
    await Promise.all(live.map((w) => w.ready));
    const isReady = new Set<OutreachProcess>(live);
    // Due now, in waves over ~30 s, so that both workers keep finding due leads while the kills go on.
    await sql`UPDATE leads SET next_action_at = now() + make_interval(secs => floor(random() * 20) * 1.5)
      WHERE workspace_id = ${WS}::uuid`.execute(t.db);

    // The kills: every other one aimed at a worker that holds an open SMTP transaction (RCPT TO accepted, no answer
    // to the end of DATA yet), the others at a random live worker at a random moment while mail flows.
    const alive = () => live.filter((w) => isReady.has(w) && w.alive());
    while (kills.length < KILLS) {
      const aimed = kills.length % 2 === 0;
      const before = smtp.messages.length;
      await sleep(300 + Math.random() * 1200);
      let victim: OutreachProcess | undefined;
      let victimTransactions = 0;
      let wasAimed = aimed;
      await until(
        `a worker to kill (kill ${kills.length + 1} of ${KILLS}, ${smtp.messages.length} messages so far)`,
        () => {
          const candidates = alive();
          if (candidates.length === 0) return false;
          const open = smtp.openTransactions();
          const pids = clientPidsByPort(smtp.port);
          const heldBy = (w: OutreachProcess) => open.filter((tx) => pids.get(tx.remotePort) === w.pid).length;
          // Without `ss` (or its process column) no kill can be aimed: every kill is then a random one.
          wasAimed = aimed && pids.size > 0;
          if (wasAimed) victim = candidates.find((w) => heldBy(w) > 0);
          else victim = smtp.messages.length > before ? candidates[Math.floor(Math.random() * candidates.length)] : undefined;
          victimTransactions = victim ? heldBy(victim) : 0;
          return victim !== undefined;
        },
        90_000,
        () => workers.map((w) => `${w.name}: ${w.output().slice(-1500)}`).join('\n'),
        20,
      );
      const killedAt = Date.now();
      await victim!.kill('SIGKILL');
      kills.push({ at: killedAt, pid: victim!.pid, inTransaction: victimTransactions, aimed: wasAimed });
      const fresh = startWorker();
      void fresh.ready.then(() => isReady.add(fresh));
      live = live.map((w) => (w === victim ? fresh : w));
    }
    await Promise.all(live.map((w) => w.ready));

    // Clean passes until every lead's sequence has ended (or waits on a person): nothing due, nothing in flight.
    const finished = async () => {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM leads WHERE workspace_id = ${WS}::uuid
        AND (inflight_key IS NOT NULL OR next_action_at IS NOT NULL)`.execute(t.db);
      return rows[0].n === 0;
    };
    await until('every lead to finish its sequence', finished, 150_000, () => live.map((w) => `${w.name}: ${w.output().slice(-1500)}`).join('\n'), 500);
    // The Sent copies the accepted messages owe are filed by the workers' inbox loops (docs/email.md "Sent folder").
    let owedNow = '';
    const owedNone = async () => {
      const { rows } = await sql<{ n: number; error: string | null; attempts: number }>`SELECT count(*)::int AS n, sent_copy_error AS error,
        max(sent_copy_attempts)::int AS attempts FROM email_messages WHERE workspace_id = ${WS}::uuid AND sent_copy = 'owed' GROUP BY sent_copy_error`.execute(
        t.db,
      );
      owedNow = JSON.stringify(rows);
      return rows.length === 0;
    };
    const owedReport = () => `owed: ${owedNow}\n` + live.map((w) => `${w.name}: ${w.output().slice(-1500)}`).join('\n');
    await until('every owed Sent copy to be filed', owedNone, 120_000, owedReport, 500);
    for (const w of live) await w.kill('SIGTERM');
    await sleep(300);

    const { rows: ledger } =
      await sql<LedgerRow>`SELECT lead_id::text, action, outcome, detail, created_at FROM activity WHERE workspace_id = ${WS}::uuid`.execute(t.db);
    const { rows: sentRows } = await sql<SentRow>`SELECT lead_id::text, idempotency_key, message_id, recipient, to_jsonb(e)->>'delivery' AS delivery
      FROM email_messages e WHERE workspace_id = ${WS}::uuid AND direction = 'out'`.execute(t.db);
    result = analyse(
      smtp,
      ledger,
      sentRows,
      emailOf,
      kills.map((k) => k.at),
    );
    const u = result.uncertain;
    const gaps = result.msFromNearestKill;
    console.log(
      `email crash test: ${kills.length} kills (${kills.filter((k) => k.inTransaction > 0).length} of a worker holding an open SMTP transaction, ${kills.filter((k) => !k.aimed).length} at random moments), ` +
        `${LEADS} leads × ${STEPS} steps on ${MAILBOXES} mailboxes, ${result.received} messages received, ${result.okSteps} steps sent per the ledger, ` +
        `${u.length} steps ended uncertain (${u.filter((s) => s.reached === 'in_transaction').length} truly in an SMTP transaction, ` +
        `${u.filter((s) => s.reached === 'delivered').length} answered 250 before the kill landed (the nearest kill ${gaps.length ? `${gaps[0]}–${gaps[gaps.length - 1]} ms from the 250, median ${gaps[Math.floor(gaps.length / 2)]}` : '-'}), ${u.filter((s) => s.reached === 'never_reached_rcpt').length} never reached RCPT TO), ` +
        `${result.aborted} messages aborted after their data, ${result.cut} transactions cut before, ` +
        `${result.threadedOnUnreceived.length} messages threaded on an unreceived Message-ID, ` +
        `${result.duplicates.length} duplicates, ${result.lost.length} lost, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    // An uncertain step whose message the receiver answered 250 more than a second from any kill: a live sender's
    // step was checked over (e.g. its in-flight lease ran out under it). Listed so the cause can be seen.
    const far = u.filter((s) => s.reached === 'delivered' && !kills.some((k) => Math.abs(k.at - (s.answeredAt ?? 0)) < 1000));
    if (far.length > 0)
      console.log(
        `email crash test: ${far.length} uncertain steps answered 250 more than 1 s from any kill, e.g. ` +
          far
            .slice(0, 5)
            .map(
              (s) => `${s.email} step ${s.step}: row ${s.delivery}, 250 at +${s.answeredAt! - started} ms, uncertain recorded at +${s.recordedAt - started} ms`,
            )
            .join('; '),
      );
  }, 420_000);

  afterAll(async () => {
    for (const w of workers) await w.kill('SIGKILL');
    await t?.close();
    await smtp?.close();
    await dovecot?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it(`killed the workers at least 10 times mid-pass (asked for ${KILLS})`, () => {
    expect(kills.length).toBeGreaterThanOrEqual(Math.min(10, KILLS));
    // The aimed kills each landed while the killed worker held an open SMTP transaction (RCPT TO accepted, unanswered).
    expect(kills.filter((k) => k.aimed && k.inTransaction === 0)).toEqual([]);
    expect(kills.filter((k) => k.inTransaction > 0).length, 'kills inside an SMTP transaction').toBeGreaterThan(0);
  });

  it('rule 1 — 0 duplicates: no recipient received the same step twice', () => {
    expect(result.duplicates, 'rule 1 (0 duplicates): recipient|step received more than once').toEqual([]);
  });

  it('rule 6 — every message recorded as accepted has exactly one Sent copy; no Sent folder holds a Message-ID twice', async () => {
    const copies = new Map<string, number>();
    for (let m = 0; m < MAILBOXES; m++) {
      const client = await dovecot.client(`sender${m}`);
      try {
        const lock = await client.getMailboxLock('Sent');
        try {
          for await (const msg of client.fetch('1:*', { envelope: true })) {
            const id = msg.envelope?.messageId ?? '';
            copies.set(id, (copies.get(id) ?? 0) + 1);
          }
        } finally {
          lock.release();
        }
      } finally {
        await client.logout();
      }
    }
    const { rows } = await sql<{ message_id: string; delivery: string }>`SELECT message_id, delivery FROM email_messages
      WHERE workspace_id = ${WS}::uuid AND direction = 'out' AND delivery IN ('accepted', 'marked_sent')`.execute(t.db);
    const missing = rows.filter((r) => (copies.get(r.message_id) ?? 0) === 0).map((r) => r.message_id);
    const twice = [...copies].filter(([, n]) => n > 1).map(([id]) => id);
    console.log(`email crash test: ${rows.length} messages recorded accepted, ${copies.size} Sent copies, ${missing.length} missing, ${twice.length} twice`);
    expect(rows.length).toBeGreaterThan(0);
    expect(missing, 'rule 6: accepted messages without a Sent copy').toEqual([]);
    expect(twice, 'rule 6: Message-IDs filed twice').toEqual([]);
  });

  it('rule 2 — 0 lost: every step the ledger calls sent arrived at the receiver exactly once', () => {
    expect(result.okSteps, 'the run sent something').toBeGreaterThan(0);
    expect(result.lost, 'rule 2 (0 lost): ledger says sent, receiver disagrees').toEqual([]);
  });

  it('rule 3 — no uncertain step whose recipient never reached RCPT TO for that step', () => {
    const never = result.uncertain
      .filter((s) => s.reached === 'never_reached_rcpt')
      .map((s) => `${s.email} step ${s.step} (${s.messageId ?? 'no stored row'})`);
    expect(never, 'rule 3 (uncertain only when RCPT TO was accepted): uncertain steps the receiver never saw a RCPT TO for').toEqual([]);
  });

  it('rule 4 — no message threaded on a Message-ID the receiver never got (250 given)', () => {
    expect(result.threadedOnUnreceived, 'rule 4 (threading on received messages only)').toEqual([]);
  });

  it(`rule 5 — every uncertain step is visible: lastError uncertain_delivery and an open task (${VISIBILITY_ENFORCED ? 'enforced' : 'reported only until issue 31 §3 lands'})`, async () => {
    const leads = [...new Set(result.uncertain.map((s) => s.leadId))];
    const openTaskLeads = new Set<string>();
    let after: string | null = null;
    do {
      const url: string = `/api/v1/tasks?status=open&limit=200${after ? `&after=${after}` : ''}`;
      const res = await t.app.inject({ method: 'GET', url, headers: auth });
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json<{ tasks: { lead: { id: string } | null; reason: string }[]; nextCursor: string | null }>();
      for (const task of page.tasks) if (task.reason === 'uncertain_delivery' && task.lead) openTaskLeads.add(task.lead.id);
      after = page.nextCursor;
    } while (after);
    // The leads list carries lastError (there is no single-lead route); one page holds a default run, a bigger run
    // looks the rest up by address.
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/leads?limit=500', headers: auth });
    expect(res.statusCode, res.body).toBe(200);
    const lastErrorOf = new Map(res.json<{ leads: { id: string; lastError: string | null }[] }>().leads.map((l) => [l.id, l.lastError]));
    const invisible: string[] = [];
    for (const id of leads) {
      if (!lastErrorOf.has(id)) {
        const one = await t.app.inject({ method: 'GET', url: `/api/v1/leads?q=${encodeURIComponent(emailOf.get(id)!)}`, headers: auth });
        for (const l of one.json<{ leads: { id: string; lastError: string | null }[] }>().leads) lastErrorOf.set(l.id, l.lastError);
      }
      const lastError = lastErrorOf.get(id);
      if (lastError !== 'uncertain_delivery') invisible.push(`${emailOf.get(id)}: lastError ${lastError}`);
      if (!openTaskLeads.has(id)) invisible.push(`${emailOf.get(id)}: no open task with reason uncertain_delivery`);
    }
    if (!VISIBILITY_ENFORCED) {
      console.log(
        `rule 5 (reported only): ${leads.length} leads with an uncertain step, ${invisible.length} visibility misses${invisible.length ? `, e.g. ${invisible[0]}` : ''}`,
      );
      return;
    }
    expect(invisible, 'rule 5 (every uncertain step visible in lastError and as an open task)').toEqual([]);
  });
});

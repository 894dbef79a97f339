import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import net from 'node:net';
import type { TestApp } from '../helpers/build-test-app.js';
import { dovecotAvailable, DOVECOT_MISSING } from '../helpers/dovecot.js';
import { insertErinMailboxLead, sendingClock, startSendingWorld, type MailboxWorld } from '../helpers/worlds/mailbox.js';
import type { SmtpReceiver, SmtpTransaction } from '../helpers/smtp-receiver.js';
import { queueIdOf } from '../../src/channels/email/send/smtp-pool.js';

// Issue 31 §1–§2: what the driver records of each message (only once an SMTP transaction took it, then the 250), what
// `confirm` answers from that record after a crash, the bound on a mailbox's sends in flight, and threading only on
// messages a server accepted. The kill test (test/reliability/email-crash.test.ts) proves the same with real processes.
if (!dovecotAvailable()) console.warn(`test/email/crash-honest.test.ts skipped: ${DOVECOT_MISSING}`);

describe.skipIf(!dovecotAvailable())('crash-honest e-mail', () => {
  let w: MailboxWorld;
  let t: TestApp;
  let smtp: SmtpReceiver;
  let ws: MailboxWorld['ws'];
  let rcptDelay = 0;
  let dataDelay = 0;

  beforeAll(async () => {
    w = await startSendingWorld({ smtp: { rcptDelayMs: () => rcptDelay, dataDelayMs: () => dataDelay }, workspaceName: 'Crash honest' });
    ({ t, smtp, ws } = w);
  }, 60_000);

  afterAll(async () => w?.close());

  const { now, tick, lead, to } = sendingClock(() => w);
  const rowsOf = (leadId: string) =>
    t.db.selectFrom('email_messages').select(['message_id', 'delivery', 'smtp_queue_id', 'idempotency_key']).where('lead_id', '=', leadId).execute();
  const ledgerOf = async (leadId: string): Promise<Record<string, unknown>[]> =>
    (await t.db.selectFrom('activity').select(['outcome', 'detail', 'created_at']).where('lead_id', '=', leadId).orderBy('created_at').execute()).map((a) => ({
      outcome: a.outcome,
      ...(JSON.parse(a.detail) as Record<string, unknown>),
    }));
  /** Leaves the lead as a worker killed mid-send would: its step in flight since long before the lease ran out. */
  async function leaveInFlight(leadId: string, step = 0) {
    const key = `${leadId}:${w.sequenceId}:${step}`;
    await sql`UPDATE leads SET inflight_key = ${key}, inflight_step = ${step}, inflight_at = ${new Date(now() - 3_600_000).toISOString()}::timestamptz,
      current_step = ${step}, next_action_at = ${new Date(now()).toISOString()}::timestamptz WHERE id = ${leadId}::uuid`.execute(t.db);
    return key;
  }
  const messageIdFor = (leadId: string, step = 0) => `<crash-${leadId}-${step}@acme.example>`;
  async function recordRow(leadId: string, key: string, delivery: 'started' | 'accepted', step = 0) {
    await t.db
      .insertInto('email_messages')
      .values({
        workspace_id: ws.workspaceId,
        message_id: messageIdFor(leadId, step),
        lead_id: leadId,
        idempotency_key: key,
        subject: 'Quick question',
        direction: 'out',
        sent_at: new Date(now()),
        delivery,
        ...(delivery === 'accepted' && { accepted_at: new Date(now()) }),
      })
      .execute();
  }

  it('nothing is recorded until the server accepts RCPT TO; the 250 and its queue id are recorded before the sent-folder copy', async () => {
    rcptDelay = 700;
    const leadId = await lead('rcpt@initech.example');
    const pass = tick();
    // While the server holds the RCPT TO, the step is in flight but no row says a transaction took it.
    await expect.poll(() => smtp.transactions.some((x) => x.state === 'open' && x.rcpts.length === 0), { timeout: 5_000 }).toBe(true);
    expect(await rowsOf(leadId)).toEqual([]);
    await pass;
    rcptDelay = 0;
    const [row] = await rowsOf(leadId);
    expect(row).toMatchObject({ delivery: 'accepted' });
    expect(row.smtp_queue_id).toBeTruthy();
    expect(to('rcpt@initech.example')).toHaveLength(1);
  });

  it('a message whose DATA is being answered is recorded as started, then accepted', async () => {
    dataDelay = 700;
    const leadId = await lead('data@initech.example');
    const pass = tick();
    await expect.poll(async () => (await rowsOf(leadId))[0]?.delivery ?? null, { timeout: 5_000 }).toBe('started');
    await pass;
    dataDelay = 0;
    expect((await rowsOf(leadId))[0]).toMatchObject({ delivery: 'accepted' });
  });

  it("a mailbox's sends in flight never exceed its two connections, and messages waiting for one have no record", async () => {
    dataDelay = 150;
    // Each acceptance record takes 120 ms to write (CI's busy database, made certain): a connection that served its
    // next message before that record was written would show three started records at once (stop 52's CI failure).
    await sql`CREATE FUNCTION slow_acceptance() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_sleep(0.12); RETURN NEW; END $$`.execute(t.db);
    await sql`CREATE TRIGGER slow_acceptance BEFORE UPDATE ON email_messages FOR EACH ROW
      WHEN (NEW.delivery = 'accepted' AND OLD.delivery = 'started') EXECUTE FUNCTION slow_acceptance()`.execute(t.db);
    const before = smtp.transactions.length;
    const leads = await Promise.all(Array.from({ length: 8 }, (_, i) => lead(`bound${i}@initech.example`)));
    let mostStarted = 0;
    const pass = tick();
    let done = false;
    void pass.finally(() => (done = true));
    while (!done) {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM email_messages WHERE workspace_id = ${ws.workspaceId}::uuid
        AND delivery = 'started'`.execute(t.db);
      mostStarted = Math.max(mostStarted, rows[0].n);
      await new Promise((r) => setTimeout(r, 20));
    }
    await pass;
    dataDelay = 0;
    await sql`DROP TRIGGER slow_acceptance ON email_messages`.execute(t.db);
    await sql`DROP FUNCTION slow_acceptance()`.execute(t.db);
    const mine = smtp.transactions.slice(before);
    expect(mine.filter((x) => x.state === 'delivered')).toHaveLength(8);
    expect(mostConcurrent(mine)).toBeLessThanOrEqual(2);
    expect(mostStarted).toBeLessThanOrEqual(2);
    for (const id of leads) expect((await rowsOf(id))[0]).toMatchObject({ delivery: 'accepted' });
  });

  it('a sender slower than its lease, whose step another worker took over and sent, abandons its transaction before the text: one message', async () => {
    rcptDelay = 3_000;
    const leadId = await lead('slow@initech.example');
    const before = smtp.transactions.length;
    const slow = tick();
    // The slow worker's RCPT TO is held: its step is in flight, and no row says a transaction took it.
    await expect.poll(() => smtp.transactions.slice(before).some((x) => x.state === 'open'), { timeout: 5_000 }).toBe(true);
    rcptDelay = 0;
    // Another worker, past the lease: the step is stale, the driver's record says no transaction took it (not_sent),
    // and that worker sends it.
    await tick(2 * 3_600_000);
    expect(to('slow@initech.example')).toHaveLength(1);
    // The slow worker's RCPT TO is accepted now; its start record finds the lead's claim gone and the text never leaves.
    await slow;
    expect(to('slow@initech.example')).toHaveLength(1);
    // Its connection is closed without the text: the server sees the transaction cut, and keeps nothing of it.
    await expect
      .poll(
        () =>
          smtp.transactions
            .slice(before)
            .map((x) => x.state)
            .sort(),
        { timeout: 5_000 },
      )
      .toEqual(['cut', 'delivered']);
    expect((await rowsOf(leadId)).map((r) => r.delivery)).toEqual(['accepted']);
    // Only the worker that held the claim recorded anything: the interruption it found, then its own send.
    const ledger = await ledgerOf(leadId);
    expect(ledger.map((e) => [e.outcome, e.reason ?? e.recovered ?? null])).toEqual([
      ['failed', 'interrupted'],
      ['ok', null],
    ]);
  });

  it('after a crash, a step no SMTP transaction took is not_sent: it goes out once', async () => {
    const leadId = await lead('never@initech.example');
    await leaveInFlight(leadId);
    await tick();
    expect(to('never@initech.example')).toHaveLength(1);
    const ledger = await ledgerOf(leadId);
    expect(ledger.map((e) => [e.outcome, e.reason ?? e.recovered ?? null])).toEqual([
      ['failed', 'interrupted'],
      ['ok', null],
    ]);
    expect(ledger[0]).toMatchObject({ confirmed: 'not_sent' });
  });

  it('after a crash, a step the server accepted is sent: recorded as a success and never sent again', async () => {
    const leadId = await lead('accepted@initech.example');
    const key = await leaveInFlight(leadId);
    await recordRow(leadId, key, 'accepted');
    await tick();
    expect(to('accepted@initech.example')).toHaveLength(0);
    expect(await ledgerOf(leadId)).toEqual([expect.objectContaining({ outcome: 'ok', recovered: 'confirmed_sent' })]);
  });

  it('after a crash, a step whose transaction started without an answer is uncertain and never repeated', async () => {
    const leadId = await lead('uncertain@initech.example');
    const key = await leaveInFlight(leadId);
    await recordRow(leadId, key, 'started');
    await tick();
    expect(to('uncertain@initech.example')).toHaveLength(0);
    expect(await ledgerOf(leadId)).toEqual([expect.objectContaining({ outcome: 'failed', reason: 'uncertain_delivery' })]);
  });

  it('a follow-up never threads on a message that was not confirmed: it goes as a first message under the subject without Re:', async () => {
    const uncertain = await lead('unthreaded@initech.example');
    const key = await leaveInFlight(uncertain);
    await recordRow(uncertain, key, 'started');
    const accepted = await lead('threaded@initech.example');
    await recordRow(accepted, await leaveInFlight(accepted), 'accepted');
    await tick();
    await tick(86_400_000 + 60_000);
    const [followUp] = to('unthreaded@initech.example');
    expect(followUp).toBeDefined();
    expect(followUp.subject).toBe('Quick question');
    expect(followUp.inReplyTo).toBeNull();
    expect(followUp.references).toEqual([]);
    const [threaded] = to('threaded@initech.example');
    expect(threaded.subject).toBe('Re: Quick question');
    expect(threaded.inReplyTo).toBe(messageIdFor(accepted));
  });

  it('a connection lost inside the transaction (the text sent, no answer) is uncertain: never repeated, lastError and a task for a person', async () => {
    // A server that takes the whole message and then drops the connection instead of answering it.
    let dataReceived = 0;
    const dropper = net.createServer((socket) => {
      let inData = false;
      let buffered = '';
      socket.write('220 drop.example ESMTP\r\n');
      socket.on('error', () => undefined);
      socket.on('data', (chunk) => {
        buffered += chunk.toString('latin1');
        if (inData) {
          if (buffered.includes('\r\n.\r\n')) {
            dataReceived++;
            socket.destroy();
          }
          return;
        }
        let end;
        while (!inData && (end = buffered.indexOf('\r\n')) >= 0) {
          const line = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          if (/^EHLO/i.test(line)) socket.write('250-drop.example\r\n250 8BITMIME\r\n');
          else if (/^DATA/i.test(line)) {
            inData = true;
            socket.write('354 go ahead\r\n');
          } else if (/^QUIT/i.test(line)) socket.end('221 bye\r\n');
          else socket.write('250 OK\r\n');
        }
      });
    });
    await new Promise<void>((r) => dropper.listen(0, '127.0.0.1', r));
    const port = (dropper.address() as net.AddressInfo).port;
    const leadId = await insertErinMailboxLead(w, `smtp://127.0.0.1:${port}`, { person: 'Milton Waddams', email: 'milton@initech.example' }, new Date(now()));
    await tick();
    expect(dataReceived).toBe(1);
    expect((await rowsOf(leadId))[0]).toMatchObject({ delivery: 'started' });
    expect(await ledgerOf(leadId)).toEqual([expect.objectContaining({ outcome: 'failed', reason: 'uncertain_delivery' })]);
    const lead = await t.db.selectFrom('leads').select(['last_error', 'current_step', 'stage']).where('id', '=', leadId).executeTakeFirstOrThrow();
    expect(lead).toMatchObject({ last_error: 'uncertain_delivery', current_step: 1 });
    const tasks = await t.app.inject({ method: 'GET', url: '/api/v1/tasks?source=uncertain', headers: ws.auth });
    expect(tasks.statusCode, tasks.body).toBe(200);
    expect(tasks.json<{ tasks: { lead: { id: string }; reason: string }[] }>().tasks.filter((x) => x.lead.id === leadId)).toEqual([
      expect.objectContaining({ reason: 'uncertain_delivery' }),
    ]);
    await tick(5 * 3_600_000);
    expect(dataReceived).toBe(1);
    dropper.close();
  });

  it('the queue id of a 250 answer is read from the common server forms', () => {
    expect(queueIdOf('250 2.0.0 Ok: queued as 4BqQ7w3x1Gz9')).toBe('4BqQ7w3x1Gz9');
    expect(queueIdOf('250 OK id=1tGa7J-0004Xy-2K')).toBe('1tGa7J-0004Xy-2K');
    expect(queueIdOf('250 2.0.0 OK <AM0PR01MB1234.eurprd01.prod.outlook.com> [Hostname=AM0PR01]')).toBe('AM0PR01MB1234.eurprd01.prod.outlook.com');
    expect(queueIdOf('250 2.0.0 OK  1732700000 d9443c01a7336-2119')).toBe('d9443c01a7336-2119');
  });
});

/** The most transactions that were open at the same moment. */
function mostConcurrent(xs: SmtpTransaction[]): number {
  const edges = xs.flatMap((x) => [
    { at: x.startedAt, d: 1 },
    { at: x.endedAt ?? Number.MAX_SAFE_INTEGER, d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let open = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (open += e.d));
  return most;
}

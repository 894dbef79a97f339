import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdleBudget, createSmtpPool } from '../../src/channels/email/send/smtp-pool.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver.js';

// The mailbox connection pool (src/channels/email/send/smtp-pool.ts) against a real smtp-server receiver: sends at once
// beyond the connections wait their turn, each message goes once, and a refused message names no transaction start.
describe('a mailbox SMTP pool', () => {
  let smtp: SmtpReceiver;
  beforeAll(async () => {
    smtp = await startSmtpReceiver();
  });
  afterAll(async () => {
    await smtp?.close();
  });
  const raw = (i: number) =>
    Buffer.from(`From: dana@acme.example\r\nTo: bob@initech.example\r\nSubject: Q\r\nMessage-ID: <pool-${i}@acme.example>\r\n\r\nHi\r\n`);

  it('300 sends at once, sharing one envelope object, each go once over at most two connections', async () => {
    const pool = createSmtpPool({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true, maxConnections: 2 });
    const envelope = { from: 'dana@acme.example', to: ['bob@initech.example'] };
    const before = smtp.messages.length;
    let started = 0;
    const results = await Promise.allSettled(
      Array.from({ length: 300 }, (_, i) => pool.send(envelope, raw(i), { transactionStarted: async () => void started++ })),
    );
    pool.close();
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const ids = smtp.messages.slice(before).map((m) => m.messageId);
    expect(new Set(ids).size).toBe(300);
    expect(ids).toHaveLength(300);
    expect(started).toBe(300);
    expect(new Set(smtp.messages.slice(before).map((m) => m.connection)).size).toBeLessThanOrEqual(6); // 100 messages a connection
  });

  it('the idle connections of all pools stay under the budget: the oldest idle one closes at once, of whichever mailbox', async () => {
    const envelope = { from: 'dana@acme.example', to: ['bob@initech.example'] };
    const none = { transactionStarted: async () => undefined };
    const connectionOf = (i: number) => smtp.messages.find((m) => m.messageId === `<pool-${i}@acme.example>`)!.connection;
    const run = async (budget: number, base: number) => {
      const idleBudget = createIdleBudget(budget);
      const opts = { host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true, maxConnections: 2, idleBudget };
      const a = createSmtpPool(opts);
      const b = createSmtpPool(opts);
      const settle = () => new Promise((r) => setImmediate(r));
      await a.send(envelope, raw(base + 1), none);
      await settle();
      await b.send(envelope, raw(base + 2), none);
      await settle();
      const held = idleBudget.size;
      await a.send(envelope, raw(base + 3), none);
      a.close();
      b.close();
      return { reused: connectionOf(base + 3) === connectionOf(base + 1), held };
    };
    // Room for two: mailbox A's connection waits idle while B sends, and A's next message reuses it.
    expect(await run(2, 3000)).toEqual({ reused: true, held: 2 });
    // Room for one: B's idle connection pushed A's out, so A opens a new one.
    expect(await run(1, 3100)).toEqual({ reused: false, held: 1 });
  });

  it("a person's send has a connection of its own: it goes while the engine's two are held; waiting has a deadline; close() ends the waits", async () => {
    // The engine's two messages are held 3 s at RCPT TO; what comes after them is answered at once.
    let rcptsSeen = 0;
    const slow = await startSmtpReceiver({ rcptDelayMs: () => (++rcptsSeen <= 2 ? 3_000 : 0) });
    const pool = createSmtpPool({ host: '127.0.0.1', port: slow.port, secure: false, ignoreTLS: true, maxConnections: 2 });
    const envelope = { from: 'dana@acme.example', to: ['bob@initech.example'] };
    const none = { transactionStarted: async () => undefined };
    try {
      const engine = [pool.send(envelope, raw(2000), none), pool.send(envelope, raw(2001), none)];
      const waited = await pool.send(envelope, raw(2002), none, { waitMs: 200 }).catch((e: unknown) => e as { code?: string; transactionStarted?: boolean });
      expect(waited).toMatchObject({ code: 'ESLOTWAIT', transactionStarted: false });
      const person = pool.send(envelope, raw(2003), none, { lane: 'person' });
      const queued = pool.send(envelope, raw(2004), none).catch((e: unknown) => e as { code?: string; transactionStarted?: boolean });
      await person;
      // The person's message went beside the engine's held ones, not after them.
      expect(slow.messages.map((m) => m.messageId)).toEqual(['<pool-2003@acme.example>']);
      await Promise.all(engine);
      pool.close();
      const ended = await queued;
      // Either it got a connection before close() or close() ended its wait, never silently later.
      if (ended && 'code' in ended) expect(ended).toMatchObject({ transactionStarted: false });
      expect(slow.messages.map((m) => m.messageId).sort()).toEqual(
        [
          '<pool-2000@acme.example>',
          '<pool-2001@acme.example>',
          '<pool-2003@acme.example>',
          ...(ended && 'code' in ended ? [] : ['<pool-2004@acme.example>']),
        ].sort(),
      );
    } finally {
      pool.close();
      await slow.close();
    }
  });

  it('a message refused at RCPT TO never starts a transaction, and a failing start record sends nothing', async () => {
    const pool = createSmtpPool({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true, maxConnections: 2 });
    const envelope = { from: 'dana@acme.example', to: ['bob@initech.example'] };
    const before = smtp.messages.length;
    const refused = await pool
      .send({ ...envelope, to: ['bad address@initech.example'] }, raw(1000), { transactionStarted: async () => expect.fail('no transaction') })
      .catch((e: unknown) => e as { transactionStarted?: boolean });
    expect(refused).toMatchObject({ transactionStarted: false });
    const failedRecord = await pool
      .send(envelope, raw(1001), {
        transactionStarted: async () => {
          throw new Error('database away');
        },
      })
      .catch((e: unknown) => e as { transactionStarted?: boolean });
    expect(failedRecord).toMatchObject({ transactionStarted: false });
    await new Promise((r) => setTimeout(r, 200));
    expect(smtp.messages.slice(before)).toEqual([]);
    pool.close();
  });
});

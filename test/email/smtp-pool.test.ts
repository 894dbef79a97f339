import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSmtpPool } from '../../src/channels/email/smtp-pool.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver.js';

// The mailbox connection pool (src/channels/email/smtp-pool.ts) against a real smtp-server receiver: sends at once
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

import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSmtpEmailDriver } from '../../src/channels/email/send/smtp-driver.js';

// Just enough SMTP for nodemailer: greeting, EHLO, MAIL, RCPT, DATA, QUIT. RCPT to "reject@" answers 550.
const received: { from: string; to: string[]; data: string }[] = [];
let server: net.Server;
let port = 0;

beforeAll(async () => {
  server = net.createServer((socket) => {
    let buffer = '';
    let inData = false;
    let current = { from: '', to: [] as string[], data: '' };
    socket.write('220 test ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          current.data = buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          inData = false;
          received.push(current);
          current = { from: '', to: [], data: '' };
          socket.write('250 queued\r\n');
          continue;
        }
        const nl = buffer.indexOf('\r\n');
        if (nl < 0) return;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        const cmd = line.slice(0, 4).toUpperCase();
        if (cmd === 'EHLO' || cmd === 'HELO') socket.write('250-test\r\n250 8BITMIME\r\n');
        else if (cmd === 'MAIL') {
          current.from = line;
          socket.write('250 ok\r\n');
        } else if (cmd === 'RCPT') {
          if (/reject@/i.test(line)) socket.write('550 no such user\r\n');
          else {
            current.to.push(line);
            socket.write('250 ok\r\n');
          }
        } else if (cmd === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (cmd === 'QUIT') {
          socket.end('221 bye\r\n');
          return;
        } else socket.write('250 ok\r\n');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => new Promise<void>((r) => server.close(() => r())));

const action = (email: string | null, key: string) => ({
  workspaceId: '00000000-0000-4000-8000-000000000000',
  accountId: 'onb_x',
  accountUserId: null,
  kind: 'email' as const,
  channel: 'email' as const,
  recipient: { leadId: 'l1', person: 'Bob', email, linkedinUrl: null, xUserId: null, username: null, sandbox: null },
  subject: 'Hello Initech',
  text: 'Hi Bob, a short note.',
  actions: [],
  idempotencyKey: key,
  at: new Date(),
});

it('sends over SMTP with a Message-ID derived from the idempotency key, and maps a 5xx to a permanent failure', async () => {
  const driver = createSmtpEmailDriver(`smtp://127.0.0.1:${port}`, 'sales@acme.example');
  try {
    const ok = await driver.perform(action('bob@initech.example', 'lead-1:0'));
    expect(ok.outcome).toBe('ok');
    expect(received).toHaveLength(1);
    expect(received[0].from).toContain('sales@acme.example');
    expect(received[0].to[0]).toContain('bob@initech.example');
    expect(received[0].data).toContain('Subject: Hello Initech');
    expect(received[0].data).toContain('Hi Bob, a short note.');
    const again = await driver.perform(action('bob@initech.example', 'lead-1:0'));
    expect(again.outcome === 'ok' && ok.outcome === 'ok' && again.externalId === ok.externalId).toBe(true);

    const rejected = await driver.perform(action('reject@initech.example', 'lead-2:0'));
    expect(rejected).toEqual({ outcome: 'failed', error: 'smtp_550', retryable: false });
    expect(await driver.perform(action(null, 'lead-3:0'))).toEqual({ outcome: 'failed', error: 'no_email_address', retryable: false });
  } finally {
    driver.close();
  }
});

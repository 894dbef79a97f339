import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import net from 'node:net';
import type { startServer } from '../../src/server.js';
import { dbEngine } from '../helpers/test-database.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver.js';
import { runCli, startCliServer } from '../helpers/cli-process.js';
import { insertLead } from '../helpers/factories.js';

const cli = (args: string[], env: Record<string, string>) => runCli(args, env);

/** A port nothing listens on: IMAP there is unreachable. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

// `npx outreach mailbox …` through a running server on the embedded database (the admin-backend path).
describe.runIf(dbEngine() === 'pglite')('npx outreach mailbox', { timeout: 300_000 }, () => {
  let dataDir: string;
  let server: Awaited<ReturnType<typeof startServer>> | null = null;
  let smtp: SmtpReceiver;
  beforeAll(async () => {
    smtp = await startSmtpReceiver({ auth: { user: 'dana', pass: 'right-pass' } });
    ({ dataDir, server } = await startCliServer('outreach-mailbox-cli-'));
  });
  afterAll(async () => {
    await server?.stop();
    await smtp?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('mailbox add checks SMTP then IMAP, says which failed and why, never prints the password, and saves nothing', async () => {
    const ws = await server!.services.workspaces.createWorkspace({ name: 'Mail' });
    const env = { OUTREACH_DATA_DIR: dataDir };
    const imapUrl = `imap://dana:imap-secret@127.0.0.1:${await closedPort()}`;

    /** `outreach mailbox add` of dana@acme.example to this workspace, through `smtpUrl` and the unreachable IMAP. */
    const add = (smtpUrl: string, ...more: string[]) =>
      cli(['mailbox', 'add', '--workspace', ws.id, '--address', 'dana@acme.example', '--smtp', smtpUrl, '--imap', imapUrl, ...more], env);

    const wrongPass = await add(smtp.url('dana', 'wrong-secret'));
    expect(wrongPass.code).toBe(1);
    expect(wrongPass.stderr).toMatch(/SMTP connection failed/);
    expect(wrongPass.stderr).toMatch(/535|auth/i);
    expect(wrongPass.stderr + wrongPass.stdout).not.toContain('wrong-secret');

    const imapDown = await add(smtp.url('dana', 'right-pass'));
    expect(imapDown.code).toBe(1);
    expect(imapDown.stderr).toMatch(/IMAP connection failed/);
    expect(imapDown.stderr + imapDown.stdout).not.toContain('right-pass');
    expect(imapDown.stderr + imapDown.stdout).not.toContain('imap-secret');

    const bad = await add('http://x');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/smtpUrl/);

    // Issue 26: a mailbox that would log in in cleartext off loopback is refused, naming the lab switch.
    const plaintext = await add('smtp://dana:pw-31@relay.lab.example:25?tls=none');
    expect(plaintext.code).toBe(1);
    expect(plaintext.stderr).toMatch(/smtpUrl .*OUTREACH_MAILBOX_ALLOW_PLAINTEXT=1/);
    expect(plaintext.stderr + plaintext.stdout).not.toContain('pw-31');
    const authserv = await add(smtp.url('dana', 'right-pass'), '--trusted-authserv-id', 'not an id;');
    expect(authserv.code).toBe(1);
    expect(authserv.stderr).toMatch(/trustedAuthservId/);

    const list = await cli(['mailbox', 'list', '--workspace', ws.id], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/No mailboxes/);
  });

  it('mailbox list shows addresses and health, never a password; mailbox remove removes one', async () => {
    const ws = await server!.services.workspaces.createWorkspace({ name: 'Listed' });
    const env = { OUTREACH_DATA_DIR: dataDir };
    await server!.services.mailboxes.add({
      workspaceId: ws.id,
      address: 'lee@acme.example',
      smtpUrl: smtp.url('lee', 'smtp-secret-1'),
      imapUrl: 'imap://lee:imap-secret-1@127.0.0.1:1143',
      skipCheck: true,
    });
    const list = await cli(['mailbox', 'list', '--workspace', ws.id, '--json'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain('secret-1');
    const rows = JSON.parse(list.stdout) as { id: string; address: string; health: string; smtp: string }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ address: 'lee@acme.example', health: 'unknown', sentCopies: { owed: 0, failing: 0 } });
    expect(rows[0].smtp).toContain('***');
    expect((await cli(['mailbox', 'list', '--workspace', ws.id], env)).stdout).not.toMatch(/to file/);

    // Two Sent-folder copies still owed, one of them already failed once (docs/email.md "Sent folder").
    const leadId = await insertLead(server!.handle.db, ws.id, { person: 'Pat Owed', email: 'pat@initech.example' });
    const owed = (n: number, attempts: number) => ({
      workspace_id: ws.id,
      lead_id: leadId,
      message_id: `<owed${n}@acme.example>`,
      mailbox_id: rows[0].id,
      idempotency_key: `owed-${n}`,
      direction: 'out',
      delivery: 'accepted',
      sent_copy: 'owed',
      sent_copy_attempts: attempts,
    });
    await server!.handle.db
      .insertInto('email_messages')
      .values([owed(1, 0), owed(2, 1)] as never)
      .execute();
    const text = await cli(['mailbox', 'list', '--workspace', ws.id], env);
    expect(text.stdout).toMatch(/lee@acme\.example .* 2 sent copies to file \(1 failing, retried\)/);

    const removed = await cli(['mailbox', 'remove', '--workspace', ws.id, 'lee@acme.example'], env);
    expect(removed.code).toBe(0);
    const again = await cli(['mailbox', 'remove', '--workspace', ws.id, 'lee@acme.example'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not found/);
  });
});

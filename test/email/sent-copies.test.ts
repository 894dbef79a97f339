import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { dovecotAvailable } from '../helpers/dovecot.js';
import { sendingClock, startSendingWorld, type MailboxWorld } from '../helpers/worlds/mailbox.js';
import { metrics } from '../../src/lib/metrics.js';
import { signedInConsole } from '../helpers/console.js';

// Durable sent-folder copies (docs/email.md "Sent folder"), against a real Dovecot and SMTP receiver: the copy is owed
// from the acceptance record, filed by the inbox loop's pass (the tick's watch part), never twice (the folder is
// searched for the Message-ID first: a copy filed before a crash is found), and a failure is retried with backoff,
// counted, never dropped.

const sentCopiesFailed = async () => (await metrics().sentCopies.get()).values.find((v) => v.labels.result === 'failed')?.value ?? 0;

describe.skipIf(!dovecotAvailable())('sent-folder copies', () => {
  let w: MailboxWorld | undefined;
  afterEach(async () => {
    await w?.close();
    w = undefined;
  });
  const rowsOf = (world: MailboxWorld, leadId: string) =>
    world.t.db
      .selectFrom('email_messages')
      .select(['message_id', 'sent_copy', 'sent_copy_raw', 'sent_copy_attempts', 'sent_copy_error', 'sent_copy_next_at'])
      .where('lead_id', '=', leadId)
      .execute();
  /** A sending world (its options over the defaults) whose mailbox just sent one e-mail to `email` (one engine pass). */
  const sentOne = async (email: string, opts: Parameters<typeof startSendingWorld>[0] = {}) => {
    const world = (w = await startSendingWorld(opts));
    const clock = sendingClock(() => world);
    const leadId = await clock.lead(email);
    await clock.tick();
    return { world, clock, leadId };
  };
  /** The mailbox added again, as an operator corrects it: the world's servers, with or without a sent folder. */
  const addAgain = (world: MailboxWorld, sentFolder?: string) =>
    world.t.services.mailboxes.add({
      workspaceId: world.ws.workspaceId,
      accountId: world.account,
      address: 'dana@acme.example',
      smtpUrl: world.smtp.url(),
      imapUrl: world.dovecot.url('dana'),
      ...(sentFolder && { sentFolder }),
      skipCheck: true,
    });

  it('a copy already in the folder (filed before a crash lost its record) is found, not filed twice; then nothing more is owed', async () => {
    const { world, clock, leadId } = await sentOne('bob@initech.example');
    const [row] = await rowsOf(world, leadId);
    expect(row).toMatchObject({ sent_copy: 'owed', sent_copy_attempts: 0 });
    expect(row.sent_copy_raw).not.toBeNull();
    // The raw is kept encrypted: not the message's own words.
    expect(row.sent_copy_raw).not.toContain('Quick question');
    // A worker appended the copy, then died before it recorded it: the exact bytes the receiver got are in the folder.
    const [delivered] = clock.to('bob@initech.example');
    await world.dovecot.deliver('dana', delivered.raw, { folder: 'Sent' });
    expect((await world.dovecot.status('dana', 'Sent')).messages).toBe(1);
    await clock.tick();
    expect((await world.dovecot.status('dana', 'Sent')).messages).toBe(1);
    expect(await rowsOf(world, leadId)).toMatchObject([{ sent_copy: 'filed', sent_copy_raw: null, sent_copy_error: null }]);
    await clock.tick();
    expect((await world.dovecot.status('dana', 'Sent')).messages).toBe(1);
  });

  it('an IMAP server that cannot be reached: the copy stays owed, retried with backoff and counted; filed once the server is back', async () => {
    // A port nobody listens on first; the real Dovecot later (the mailbox's IMAP URL read at each filing).
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const { world, clock, leadId } = await sentOne('carol@initech.example', {
      mailbox: { sentFolder: 'Sent', imapUrl: () => `imap://dana:dana-pw-5521@127.0.0.1:${deadPort}` },
    });
    const failedBefore = await sentCopiesFailed();
    await clock.tick();
    const [row] = await rowsOf(world, leadId);
    expect(row).toMatchObject({ sent_copy: 'owed', sent_copy_attempts: 1, sent_copy_error: 'imap_unreachable' });
    expect(new Date(row.sent_copy_next_at!).getTime()).toBe(clock.now() + 60_000);
    expect(await sentCopiesFailed()).toBe(failedBefore + 1);
    // The mailbox's page says what it still owes.
    const consolePage = await (await signedInConsole(world.t, world.ws.key)).get(`/console/mailboxes/${world.mailboxId}`);
    expect(consolePage.body).toContain('1 copy to file in Sent (1 failed at least once; retried)');
    // Not due again before its backoff.
    await clock.tick(30_000);
    expect((await rowsOf(world, leadId))[0].sent_copy_attempts).toBe(1);
    // The server is back (the mailbox's IMAP URL corrected): the next due pass files it.
    await addAgain(world, 'Sent');
    await clock.tick(60_000);
    expect(await rowsOf(world, leadId)).toMatchObject([{ sent_copy: 'filed', sent_copy_raw: null }]);
    expect((await world.dovecot.status('dana', 'Sent')).messages).toBe(1);
    expect((await (await signedInConsole(world.t, world.ws.key)).get(`/console/mailboxes/${world.mailboxId}`)).body).toContain('every copy filed in Sent');
  });

  it('a mailbox whose sent folder is unset later (its provider files its own copies) owes nothing more: its debts are waived', async () => {
    const { world, clock, leadId } = await sentOne('dave@initech.example');
    expect((await rowsOf(world, leadId))[0].sent_copy).toBe('owed');
    await addAgain(world);
    await clock.tick();
    expect(await rowsOf(world, leadId)).toMatchObject([{ sent_copy: null, sent_copy_raw: null }]);
    expect((await world.dovecot.status('dana', 'Sent').catch(() => ({ messages: 0 }))).messages).toBe(0);
  });
});

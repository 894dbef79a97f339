import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/build-test-app.js';
import { insertLead } from '../helpers/factories.js';
import { dovecotAvailable, DOVECOT_MISSING } from '../helpers/dovecot.js';
import { insertErinMailboxLead, sendingClock, startSendingWorld, type MailboxWorld } from '../helpers/worlds/mailbox.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver.js';
import { readUnsubscribeToken } from '../../src/channels/email/send/unsubscribe-token.js';

// Issue 14 §2: e-mail from the sender's own mailbox (SMTP to a real smtp-server receiver, the sent folder on a real
// Dovecot): stored Message-IDs, threaded follow-ups, List-Unsubscribe with one-click, suppression, 5xx final.
if (!dovecotAvailable()) console.warn(`test/email/send.test.ts skipped: ${DOVECOT_MISSING}`);

const DAY = 86_400_000;

describe.skipIf(!dovecotAvailable())('sending from a mailbox', () => {
  let w: MailboxWorld;
  let t: TestApp;
  let smtp: SmtpReceiver;
  let ws: MailboxWorld['ws'];

  beforeAll(async () => {
    w = await startSendingWorld({ workspaceName: 'Mailers', mailbox: { displayName: 'Dana Scott' } });
    ({ t, smtp, ws } = w);
  }, 60_000);

  afterAll(async () => w?.close());

  const { now, tick, lead, to } = sendingClock(() => w);

  it('the first e-mail carries a stored Message-ID, List-Unsubscribe (https and mailto) with one-click, and its copy is filed in the sent folder', async () => {
    const leadId = await lead('bob@initech.example');
    await tick();
    const [first] = to('bob@initech.example');
    expect(first).toBeDefined();
    expect(first.header('from')).toBe('Dana Scott <dana@acme.example>');
    expect(first.header('subject')).toBe('Quick question');
    const messageId = first.header('message-id')!;
    expect(messageId).toMatch(/^<[0-9a-f]{24}@acme\.example>$/);
    const stored = await t.db.selectFrom('email_messages').selectAll().where('lead_id', '=', leadId).execute();
    expect(stored.map((r) => r.message_id)).toEqual([messageId]);
    const unsubscribe = first.header('list-unsubscribe')!;
    const url = /<(https:\/\/outreach\.example\.com\/u\/([A-Za-z0-9_-]+))>/.exec(unsubscribe);
    expect(url).not.toBeNull();
    expect(readUnsubscribeToken(t.cipher, url![2])).toEqual({ workspaceId: ws.workspaceId, leadId });
    // The mailto carries the lead's token in its subject, so the inbox watcher can tell it from a forged "unsubscribe".
    expect(unsubscribe).toContain(`<mailto:dana@acme.example?subject=unsubscribe%20${url![2]}>`);
    expect(stored.map((r) => r.recipient)).toEqual(['bob@initech.example']);
    expect(first.header('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    // The copy is owed from the acceptance on, and filed by the inbox loop's next pass, never on the send's path.
    expect(stored.map((r) => r.sent_copy)).toEqual(['owed']);
    await tick();
    expect((await w.dovecot.status('dana', 'Sent')).messages).toBe(1);
    const filed = await t.db.selectFrom('email_messages').select(['sent_copy', 'sent_copy_raw']).where('lead_id', '=', leadId).execute();
    expect(filed).toEqual([{ sent_copy: 'filed', sent_copy_raw: null }]);
  });

  it('a follow-up continues the thread: In-Reply-To and References point to the first, subject "Re: <first subject>"', async () => {
    await tick(DAY + 12 * 3_600_000); // past the step's delay and any jitter the pacing adds
    const mails = to('bob@initech.example');
    const state = await t.db
      .selectFrom('leads')
      .select(['stage', 'current_step', 'next_action_at', 'last_error'])
      .where('email', '=', 'bob@initech.example')
      .execute();
    expect(mails, JSON.stringify(state)).toHaveLength(2);
    const firstId = mails[0].header('message-id');
    expect(mails[1].header('in-reply-to')).toBe(firstId);
    expect(mails[1].header('references')).toBe(firstId);
    expect(mails[1].header('subject')).toBe('Re: Quick question');
    expect(mails[1].header('message-id')).not.toBe(firstId);
  });

  it('confirm after a crash: sent when the sent folder holds the Message-ID, not_sent when no send was started', async () => {
    const leadId = (await t.db.selectFrom('leads').select('id').where('email', '=', 'bob@initech.example').executeTakeFirstOrThrow()).id;
    const [row] = await t.db.selectFrom('email_messages').selectAll().where('lead_id', '=', leadId).orderBy('sent_at').execute();
    const driver = t.services.drivers.forChannel('email');
    const action = {
      workspaceId: ws.workspaceId,
      accountId: w.account,
      accountUserId: null,
      kind: 'email' as const,
      channel: 'email' as const,
      recipient: { leadId, person: 'Bob', email: 'bob@initech.example', linkedinUrl: null, xUserId: null, username: null, sandbox: null },
      subject: null,
      text: null,
      actions: [],
      at: new Date(now()),
    };
    expect(await driver.confirm!({ ...action, idempotencyKey: row.idempotency_key })).toEqual({ status: 'sent', externalId: row.message_id });
    expect(await driver.confirm!({ ...action, idempotencyKey: 'never-started' })).toEqual({ status: 'not_sent' });
  });

  it('rule: a lead a real mailbox wrote to is heard only through that INBOX; the sandbox never invents its reply', async () => {
    // The sandbox script would answer an hour after the first e-mail; a lead sent from a real mailbox must not get it.
    const leadId = await insertLead(t.db, ws.workspaceId, {
      person: 'Scripted Person',
      email: 'scripted@initech.example',
      account_id: w.account,
      sequence_id: w.sequenceId,
      next_action_at: new Date(now()),
      sandbox: JSON.stringify({ replyAfterHours: 1, replyText: 'An answer nobody wrote' }),
    });
    await tick();
    expect(to('scripted@initech.example')).toHaveLength(1);
    await tick(3 * 3_600_000);
    await tick(3 * 3_600_000);
    const row = await t.db.selectFrom('leads').select(['stage', 'replied_at']).where('id', '=', leadId).executeTakeFirstOrThrow();
    expect(row).toEqual({ stage: 'messaged', replied_at: null });
    expect(await t.db.selectFrom('replies').select('id').where('lead_id', '=', leadId).execute()).toEqual([]);
  });

  it('a suppressed address is never written to; SMTP 5xx fails the lead for good, 4xx is retried', async () => {
    await t.db.insertInto('suppressed_addresses').values({ workspace_id: ws.workspaceId, address: 'gone@initech.example', reason: 'bounced_hard' }).execute();
    const suppressed = await lead('gone@initech.example');
    await tick();
    expect(to('gone@initech.example')).toHaveLength(0);
    expect((await t.db.selectFrom('leads').select(['stage', 'last_error']).where('id', '=', suppressed).executeTakeFirstOrThrow()).last_error).toContain(
      'address_suppressed',
    );

    smtp.failNext(550, 1, 'No such user');
    const refused = await lead('nobody@initech.example');
    await tick();
    const refusedRow = await t.db.selectFrom('leads').select(['stage', 'last_error']).where('id', '=', refused).executeTakeFirstOrThrow();
    expect(refusedRow).toMatchObject({ stage: 'failed' });
    expect(refusedRow.last_error).toContain('smtp_550');
    expect(await t.db.selectFrom('email_messages').selectAll().where('lead_id', '=', refused).execute()).toEqual([]);

    smtp.failNext(451, 1, 'Try again later');
    const later = await lead('later@initech.example');
    await tick();
    expect((await t.db.selectFrom('leads').select('stage').where('id', '=', later).executeTakeFirstOrThrow()).stage).not.toBe('failed');
    await tick(2 * 3_600_000); // past OUTREACH_ENGINE_RETRY_MINUTES (60)
    expect(to('later@initech.example')).toHaveLength(1);
  });

  it('a mailbox whose SMTP login is refused stops sending: readiness says mailbox_auth_failed, the lead waits, no password anywhere', async () => {
    const guarded = await startSmtpReceiver({ auth: { user: 'erin', pass: 'right-pw-8814' } });
    try {
      const leadId = await insertErinMailboxLead(w, guarded.url('erin', 'wrong-pw-4471'), { person: 'Pat', email: 'pat@initech.example' }, new Date(now()));
      await tick();
      expect(guarded.messages).toHaveLength(0);
      const row = await t.db.selectFrom('leads').select(['stage', 'last_error']).where('id', '=', leadId).executeTakeFirstOrThrow();
      expect(row.stage).not.toBe('failed');
      expect(row.last_error).toBe('smtp_auth_failed');
      const readiness = await t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: ws.auth });
      expect(readiness.body).toContain('mailbox_auth_failed');
      expect(readiness.body).not.toContain('wrong-pw-4471');
      // The next attempt does not even reach SMTP (its error is the mailbox's, not SMTP's): stopped until fixed.
      await tick(2 * 3_600_000);
      expect((await t.db.selectFrom('leads').select('last_error').where('id', '=', leadId).executeTakeFirstOrThrow()).last_error).toBe('mailbox_auth_failed');
    } finally {
      await guarded.close();
    }
  });
});

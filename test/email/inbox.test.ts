import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount } from '../helpers/factories.js';
import { ADMIN, admin } from '../helpers/world-fixtures.js';
import { dovecotAvailable, DOVECOT_MISSING, type Dovecot } from '../helpers/dovecot.js';
import { engineTick } from '../helpers/worlds/common.js';
import { deliveryReport, INBOX_STEPS, insertEmailedLead, MAILBOX_PASS, raw, startMailboxWorld, type MailboxWorld } from '../helpers/worlds/mailbox.js';
import { unsubscribeToken } from '../../src/channels/email/send/unsubscribe-token.js';

// Issue 14 "Watching the inbox", against a real Dovecot: every message arrives by IMAP APPEND into the
// sender's INBOX, and the engine pass (POST /admin/v1/engine/tick) reads it.
if (!dovecotAvailable()) console.warn(`test/email/inbox.test.ts skipped: ${DOVECOT_MISSING}`);

const PASS = MAILBOX_PASS;

describe.skipIf(!dovecotAvailable())('inbox watcher (real Dovecot)', () => {
  let w: MailboxWorld;
  let t: TestApp;
  let dovecot: Dovecot;
  let ws: MailboxWorld['ws'];
  let mailboxId: string;
  // Each pass runs at a later time, so every mailbox is due again.
  let clock = Date.now();

  beforeAll(async () => {
    w = await startMailboxWorld({
      users: [
        { user: 'dana', pass: PASS },
        { user: 'eve', pass: 'eve-pw' },
      ],
      env: { OUTREACH_INBOX_POLL_INTERVAL: 60 },
      mailbox: { displayName: 'Dana' },
      steps: INBOX_STEPS,
    });
    ({ t, dovecot, ws, mailboxId } = w);
  }, 60_000);

  afterAll(async () => {
    await w?.close();
  });

  const tick = (): Promise<{ repliesDetected: number; mailboxes?: Record<string, Record<string, unknown>> }> => engineTick(t, (clock += 120_000));
  /** A lead the mailbox e-mailed (step 0 sent, step 1 due in 3 days), with the Message-ID of that e-mail on record. */
  const emailedLead = (f: { email?: string } = {}) => insertEmailedLead(w, clock, f);

  const lead = (id: string) => t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const ledger = (id: string) => t.db.selectFrom('activity').selectAll().where('lead_id', '=', id).orderBy('created_at').execute();
  const repliesOf = (id: string) => t.db.selectFrom('replies').selectAll().where('lead_id', '=', id).execute();
  const pending = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/replies', headers: ws.auth });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ replies: { lead: { id: string }; channel: string; theirMessage: string | null; classification: string }[] }>().replies;
  };

  it('a real reply (In-Reply-To our Message-ID) freezes the lead, queues the reply without the quoted thread, writes reply_detected and reply.received', async () => {
    const { leadId, email, messageId } = await emailedLead();
    await dovecot.deliver(
      'dana',
      raw(
        {
          From: `Bob <${email}>`,
          To: 'Dana <dana@acme.example>',
          Subject: 'Re: Quick question',
          'Message-ID': `<reply-${leadId}@initech.example>`,
          'In-Reply-To': messageId,
          References: messageId,
          Date: new Date(clock).toUTCString(),
        },
        `Sounds good, can we meet Tuesday?\n\nOn Mon, Nov 23, 2026 at 10:00 AM Dana <dana@acme.example> wrote:\n> Hi Bob\n> the first e-mail\n`,
      ),
    );
    const summary = await tick();
    expect(summary.mailboxes?.[mailboxId]).toMatchObject({ replies: 1 });
    const l = await lead(leadId);
    expect(l).toMatchObject({ stage: 'replied', automation_stopped: true, next_action_at: null });
    const queued = (await pending()).filter((r) => r.lead.id === leadId);
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ channel: 'email', classification: 'meeting_intent', theirMessage: 'Sounds good, can we meet Tuesday?' });
    const stored = await repliesOf(leadId);
    expect(stored[0].their_message).not.toContain('Tuesday'); // encrypted at rest
    expect((await ledger(leadId)).map((a) => a.action)).toContain('reply_detected');
    const events = await t.db.selectFrom('outbox_events').select(['event', 'data']).where('event', '=', 'reply.received').execute();
    expect(events.some((e) => JSON.stringify(e.data).includes(leadId))).toBe(true);
  });

  it('a decision `send` on an e-mail reply answers in the thread, from the mailbox, under their message', async () => {
    const { leadId, email, messageId } = await emailedLead();
    const theirId = `<answer-${leadId}@initech.example>`;
    await dovecot.deliver(
      'dana',
      raw(
        {
          From: `Bob <${email}>`,
          To: 'dana@acme.example',
          Subject: 'Re: Quick question',
          'Message-ID': theirId,
          'In-Reply-To': messageId,
          Date: new Date(clock).toUTCString(),
        },
        'Yes, tell me more.',
      ),
    );
    await tick();
    const reply = (await repliesOf(leadId))[0];
    expect(reply).toBeDefined();
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/replies/${reply.id}/decide`,
      headers: { ...ws.auth, 'idempotency-key': `thread-${leadId}` },
      payload: { decision: 'send', text: 'Happy to: here are the details.' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const answer = w.smtp.messages.filter((m) => m.to.includes(email)).at(-1)!;
    expect(answer).toBeDefined();
    expect(answer.header('from')).toContain('dana@acme.example');
    expect(answer.header('in-reply-to')).toBe(theirId);
    expect(answer.header('references')).toBe(`${messageId} ${theirId}`);
    expect(answer.header('subject')).toBe('Re: Quick question');
  });

  it('a reply from another client without threading headers matches by the sender address among contacted leads', async () => {
    const { leadId, email } = await emailedLead();
    await dovecot.deliver(
      'dana',
      raw(
        { From: email.toUpperCase(), To: 'dana@acme.example', Subject: 'hello from my phone', 'Message-ID': `<phone-${leadId}@mobile.example>` },
        'Interested, tell me more',
      ),
    );
    const summary = await tick();
    expect(summary.mailboxes?.[mailboxId]).toMatchObject({ replies: 1, unmatched: 0 });
    expect(await lead(leadId)).toMatchObject({ stage: 'replied', automation_stopped: true });
  });

  it('unmatched mail is ignored and counted in the pass summary, not stored', async () => {
    const before = await t.db
      .selectFrom('replies')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    await dovecot.deliver(
      'dana',
      raw({ From: 'stranger@elsewhere.example', To: 'dana@acme.example', Subject: 'Newsletter', 'Message-ID': '<nl-1@elsewhere.example>' }, 'Big sale'),
    );
    const summary = await tick();
    expect(summary.mailboxes?.[mailboxId]).toMatchObject({ unmatched: 1, replies: 0 });
    const after = await t.db
      .selectFrom('replies')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
    const inbound = await t.db.selectFrom('email_messages').select('message_id').where('message_id', '=', '<nl-1@elsewhere.example>').execute();
    expect(inbound).toHaveLength(0);
  });

  it('an out-of-office auto-reply (Auto-Submitted) is not a reply: the lead snoozes and its sequence resumes after', async () => {
    const { leadId, email, messageId } = await emailedLead();
    await dovecot.deliver(
      'dana',
      raw(
        {
          From: email,
          To: 'dana@acme.example',
          Subject: 'Re: Quick question',
          'Auto-Submitted': 'auto-replied',
          'In-Reply-To': messageId,
          'Message-ID': `<ooo-${leadId}@initech.example>`,
          Date: new Date(clock).toUTCString(),
        },
        'Thanks for your message. I will read it when I return.',
      ),
    );
    const summary = await tick();
    expect(summary.mailboxes?.[mailboxId]).toMatchObject({ outOfOffice: 1, replies: 0 });
    const l = await lead(leadId);
    expect(l.automation_stopped).toBe(false);
    expect(l.stage).toBe('messaged');
    expect(l.snoozed_until).not.toBeNull();
    expect(new Date(l.next_action_at!).getTime()).toBeGreaterThanOrEqual(new Date(l.snoozed_until!).getTime());
    const [reply] = await repliesOf(leadId);
    expect(reply).toMatchObject({ classification: 'out_of_office', state: 'decided', decision: 'snooze' });
    expect((await pending()).some((r) => r.lead.id === leadId)).toBe(false);
    // Once the snooze is over, the next step goes out.
    clock = new Date(l.next_action_at!).getTime() + 60_000;
    await tick();
    const after = await lead(leadId);
    expect(after.current_step).toBe(2);
    expect((await ledger(leadId)).some((a) => a.outcome === 'ok' && a.action !== 'reply_detected')).toBe(true);
  });

  /** A delivery report as Postfix writes it: a 4.x.x status is a delay ("delayed", still being retried). */
  const dsn = (p: { status: string; original: string; recipient: string }) =>
    deliveryReport({
      ...p,
      subject: p.status.startsWith('4') ? 'Delayed Mail (still being retried)' : 'Undelivered Mail Returned to Sender',
      extra: ['Auto-Submitted: auto-replied'],
      note: 'This is the mail system at host mx.initech.example. I could not deliver your message.',
      action: p.status.startsWith('4') ? 'delayed' : 'failed',
    });

  it('a DSN bounce with a 5.x.x status fails the lead with lastError "bounced" and suppresses the address', async () => {
    const { leadId, email, messageId } = await emailedLead();
    await dovecot.deliver('dana', dsn({ status: '5.1.1', original: messageId, recipient: email }));
    const summary = await tick();
    expect(summary.mailboxes?.[mailboxId]).toMatchObject({ bounces: 1 });
    expect(await lead(leadId)).toMatchObject({ stage: 'failed', last_error: 'bounced', automation_stopped: true, next_action_at: null });
    const sup = await t.db.selectFrom('suppressed_addresses').selectAll().where('workspace_id', '=', ws.workspaceId).where('address', '=', email).execute();
    expect(sup).toMatchObject([{ reason: 'bounced_hard', lead_id: leadId }]);
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/leads/${leadId}`, headers: ws.auth });
    if (res.statusCode === 200) expect(res.body).toContain('bounced');
  });

  it('a 4.x.x delivery report is noted on the ledger and nothing stops', async () => {
    const { leadId, email, messageId } = await emailedLead();
    await dovecot.deliver('dana', dsn({ status: '4.4.1', original: messageId, recipient: email }));
    const summary = await tick();
    expect(summary.mailboxes?.[mailboxId]).toMatchObject({ delayed: 1, bounces: 0 });
    expect(await lead(leadId)).toMatchObject({ stage: 'messaged', automation_stopped: false, last_error: null });
    expect((await ledger(leadId)).some((a) => a.outcome === 'failed' && String(a.detail).includes('delayed'))).toBe(true);
    const sup = await t.db.selectFrom('suppressed_addresses').selectAll().where('address', '=', email).execute();
    expect(sup).toHaveLength(0);
  });

  it('a typical mailer-daemon bounce without a DSN part fails the lead and suppresses the address', async () => {
    const { leadId, email, messageId } = await emailedLead();
    await dovecot.deliver(
      'dana',
      raw(
        {
          From: 'MAILER-DAEMON@mail.initech.example',
          To: 'dana@acme.example',
          Subject: 'Mail delivery failed: returning message to sender',
          'Message-ID': `<md-${leadId}@mail.initech.example>`,
        },
        `This message was created automatically by mail delivery software.\n\nA message that you sent could not be delivered to one or more of its recipients:\n\n  ${email}\n    SMTP error from remote mail server after RCPT TO: 550 5.1.1 User unknown\n\n------ This is a copy of the message, including all the headers. ------\nMessage-ID: ${messageId}\nSubject: Quick question\n`,
      ),
    );
    const summary = await tick();
    expect(summary.mailboxes?.[mailboxId]).toMatchObject({ bounces: 1 });
    expect(await lead(leadId)).toMatchObject({ stage: 'failed', last_error: 'bounced' });
    expect(await t.db.selectFrom('suppressed_addresses').select('reason').where('address', '=', email).execute()).toMatchObject([{ reason: 'bounced_hard' }]);
  });

  it('out-of-office is also recognized by X-Autoreply, Precedence: auto_reply and a typical subject alone', async () => {
    const cases: Record<string, string>[] = [{ 'X-Autoreply': 'yes' }, { Precedence: 'auto_reply' }, { Subject: 'Automatic reply: Quick question' }];
    const leads: string[] = [];
    for (const headers of cases) {
      const { leadId, email, messageId } = await emailedLead();
      leads.push(leadId);
      await dovecot.deliver(
        'dana',
        raw(
          {
            From: email,
            To: 'dana@acme.example',
            Subject: 'Re: Quick question',
            'In-Reply-To': messageId,
            'Message-ID': `<ooo2-${leadId}@x.example>`,
            ...headers,
          },
          'I am travelling with limited access.',
        ),
      );
    }
    const summary = await tick();
    expect(summary.mailboxes?.[mailboxId]).toMatchObject({ outOfOffice: 3, replies: 0 });
    for (const id of leads) expect(await lead(id)).toMatchObject({ stage: 'messaged', automation_stopped: false });
  });

  it('a mailto unsubscribe (its token in the subject) opts the person out in every sequence of the workspace and suppresses the address', async () => {
    const { leadId, email } = await emailedLead();
    const otherLane = await insertLead(t.db, ws.workspaceId, { person: 'Same person', email, stage: 'queued', next_action_at: new Date(clock) } as never);
    const subject = `unsubscribe ${unsubscribeToken(t.cipher, ws.workspaceId, leadId)}`;
    await dovecot.deliver('dana', raw({ From: email, To: 'dana@acme.example', Subject: subject, 'Message-ID': `<unsub-${leadId}@initech.example>` }, ''));
    const summary = await tick();
    expect(summary.mailboxes?.[mailboxId]).toMatchObject({ unsubscribes: 1, replies: 0 });
    for (const id of [leadId, otherLane]) {
      const l = await lead(id);
      expect(l.opted_out_at).not.toBeNull();
      expect(l.automation_stopped).toBe(true);
    }
    expect((await ledger(leadId)).some((a) => a.action === 'manual_override' && String(a.detail).includes('mailto_unsubscribe'))).toBe(true);
    const sup = await t.db.selectFrom('suppressed_addresses').selectAll().where('address', '=', email).execute();
    expect(sup).toMatchObject([{ reason: 'unsubscribed' }]);
  });

  it('each message is handled once: again after a lost INBOX position, from two engines at once, and after a UIDVALIDITY change', async () => {
    const { leadId, email, messageId } = await emailedLead();
    const replyRaw = raw(
      { From: email, To: 'dana@acme.example', Subject: 'Re: Quick question', 'In-Reply-To': messageId, 'Message-ID': `<once-${leadId}@initech.example>` },
      'Yes please, interested',
    );
    await dovecot.deliver('dana', replyRaw);
    // A second app on the same database: another process's engine.
    const second = await buildTestApp({ handle: t.handle, cipher: t.cipher, env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
    try {
      clock += 120_000;
      const body = { now: new Date(clock).toISOString() };
      const [a, b] = await Promise.all([
        t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: body }),
        second.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: body }),
      ]);
      const total = [a.json(), b.json()].reduce((s, x) => s + (x.mailboxes?.[mailboxId]?.replies ?? 0), 0);
      expect(total).toBe(1);
      // The stored position is lost (a restore, say): every message is read again, none applied again.
      await t.db.updateTable('mailboxes').set({ imap_last_uid: '0' }).where('id', '=', mailboxId).execute();
      const again = await tick();
      expect(again.mailboxes?.[mailboxId]).toMatchObject({ replies: 0, unmatched: 0 });
      expect(await repliesOf(leadId)).toHaveLength(1);
      // The server renumbers the INBOX (new UIDVALIDITY): the same reply is seen under a new UID, and is not applied twice.
      const before = await dovecot.status('dana');
      await dovecot.resetInbox('dana');
      await dovecot.deliver('dana', replyRaw);
      const { leadId: newLead, email: newEmail, messageId: newMid } = await emailedLead();
      await dovecot.deliver(
        'dana',
        raw(
          { From: newEmail, To: 'dana@acme.example', 'In-Reply-To': newMid, Subject: 'Re: Quick question', 'Message-ID': `<new-${newLead}@x.example>` },
          'Sure, sounds good',
        ),
      );
      expect((await dovecot.status('dana')).uidValidity).not.toBe(before.uidValidity);
      const renumbered = await tick();
      expect(renumbered.mailboxes?.[mailboxId]).toMatchObject({ replies: 1 });
      expect(await repliesOf(leadId)).toHaveLength(1);
      expect(await repliesOf(newLead)).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it("two engines reading the same INBOX at once (the second after the first one's lease ran out) apply each message once", async () => {
    const sent = await Promise.all(Array.from({ length: 5 }, () => emailedLead()));
    for (const s of sent) {
      await dovecot.deliver(
        'dana',
        raw(
          { From: s.email, To: 'dana@acme.example', Subject: 'Re: Quick question', 'In-Reply-To': s.messageId, 'Message-ID': `<race-${s.leadId}@x.example>` },
          'Happy to talk',
        ),
      );
    }
    const second = await buildTestApp({ handle: t.handle, cipher: t.cipher, env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
    try {
      clock += 120_000;
      // The second engine's pass runs 10 minutes later: the first one's 5-minute lease on the mailbox has ended.
      const [a, b] = await Promise.all([
        t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: { now: new Date(clock).toISOString() } }),
        second.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: { now: new Date(clock + 600_000).toISOString() } }),
      ]);
      clock += 600_000;
      expect(a.statusCode, a.body).toBe(200);
      expect(b.statusCode, b.body).toBe(200);
      const total = [a.json(), b.json()].reduce((sum, x) => sum + (x.mailboxes?.[mailboxId]?.replies ?? 0), 0);
      expect(total).toBe(5);
      for (const s of sent) expect(await repliesOf(s.leadId)).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it('a mailbox with a wrong password reports mailbox_auth_failed in readiness, is not retried in a tight loop, and never shows the password', async () => {
    const acc = await insertMessagingAccount(t.db, ws.workspaceId, { mode: 'email', time_zone: 'UTC' });
    const bad = await t.services.mailboxes.add({
      workspaceId: ws.workspaceId,
      accountId: acc,
      address: 'eve@acme.example',
      smtpUrl: w.smtp.url(),
      imapUrl: dovecot.url('eve', 'wrong-secret-991'),
      skipCheck: true,
    });
    const first = await tick();
    expect(first.mailboxes?.[bad.id]).toMatchObject({ error: 'mailbox_auth_failed' });
    expect(JSON.stringify(first)).not.toContain('wrong-secret-991');
    const second = await tick();
    expect(second.mailboxes?.[bad.id]).toBeUndefined();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: ws.auth });
    expect(res.statusCode).toBe(200);
    const codes = (res.json().accounts.issues as { code: string }[]).map((i) => i.code);
    expect(codes).toContain('mailbox_auth_failed');
    expect(res.body).not.toContain('wrong-secret-991');
    const row = await t.db.selectFrom('mailboxes').select(['health', 'health_detail']).where('id', '=', bad.id).executeTakeFirstOrThrow();
    expect(row.health).toBe('auth_failed');
    expect(row.health_detail ?? '').not.toContain('wrong-secret-991');
    // The password is fixed (the mailbox saved again): it is read on the next pass, and readiness is clear.
    await t.services.mailboxes.add({
      workspaceId: ws.workspaceId,
      accountId: acc,
      address: 'eve@acme.example',
      smtpUrl: w.smtp.url(),
      imapUrl: dovecot.url('eve'),
      skipCheck: true,
    });
    await dovecot.deliver(
      'eve',
      raw({ From: 'someone@elsewhere.example', To: 'eve@acme.example', Subject: 'hi', 'Message-ID': '<eve-1@elsewhere.example>' }, 'hello'),
    );
    const fixed = await tick();
    expect(fixed.mailboxes?.[bad.id]).toEqual({ sent: 0, replies: 0, outOfOffice: 0, bounces: 0, delayed: 0, unsubscribes: 0, unmatched: 1, unparseable: 0 });
    const clear = await t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: ws.auth });
    expect((clear.json().accounts.issues as { code: string }[]).map((i) => i.code)).not.toContain('mailbox_auth_failed');
    await t.services.mailboxes.remove(ws.workspaceId, bad.id);
  });

  it('a mailbox whose server cannot be reached reports mailbox_unreachable', async () => {
    const acc = await insertMessagingAccount(t.db, ws.workspaceId, { mode: 'email', time_zone: 'UTC' });
    const down = await t.services.mailboxes.add({
      workspaceId: ws.workspaceId,
      accountId: acc,
      address: 'down@acme.example',
      smtpUrl: w.smtp.url(),
      imapUrl: 'imap://down:pw@127.0.0.1:1',
      skipCheck: true,
    });
    const first = await tick();
    expect(first.mailboxes?.[down.id]).toMatchObject({ error: 'mailbox_unreachable' });
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: ws.auth });
    expect((res.json().accounts.issues as { code: string; retryable: boolean }[]).find((i) => i.code === 'mailbox_unreachable')).toMatchObject({
      retryable: true,
    });
    await t.services.mailboxes.remove(ws.workspaceId, down.id);
  });
});

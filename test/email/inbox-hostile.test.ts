import { describe, expect, it } from 'vitest';
import { dovecotAvailable, DOVECOT_MISSING } from '../helpers/dovecot.js';
import { admin, seed, u } from '../helpers/world-fixtures.js';
import { insertLead } from '../helpers/factories.js';
import { unsubscribeToken } from '../../src/channels/email/send/unsubscribe-token.js';
import { newId } from '../../src/lib/ids.js';
import { createInboxWatcher } from '../../src/channels/email/inbox/watcher.js';
import { claimDueMailboxes } from '../../src/channels/email/inbox/inbox.repository.js';
import { emptySummary } from '../../src/channels/types.js';
import { MAILBOX, raw, deliveryReport, useInboxWorld } from '../helpers/worlds/mailbox.js';

// Issue 26 (parts 1 and 3): inbound mail that cannot poison, spoof or exhaust the inbox watcher, against a real
// Dovecot (messages arrive by IMAP APPEND) and an engine pass. Each test names the rule it holds (docs/email.md).
if (!dovecotAvailable()) console.warn(`test/email/inbox-hostile.test.ts skipped: ${DOVECOT_MISSING}`);

/** The authserv-id this test's mailbox trusts (Dovecot on loopback is no known provider). */
const AUTHSERV = 'mx.acme.example';

describe.skipIf(!dovecotAvailable())('hostile inbound mail (real Dovecot)', () => {
  const w = useInboxWorld({ trustedAuthservId: AUTHSERV });

  const reply = (lead: { email: string; messageId: string; leadId: string }, body: string, extra: Record<string, string> = {}) =>
    raw(
      {
        From: lead.email,
        To: MAILBOX,
        Subject: 'Re: Quick question',
        'Message-ID': `<re-${newId()}@initech.example>`,
        'In-Reply-To': lead.messageId,
        ...extra,
      },
      body,
    );

  const dsn = deliveryReport;

  const counts = async () => {
    const s = await w.tick();
    return s.mailboxes?.[w.mailboxId] ?? {};
  };
  const position = () => w.t.db.selectFrom('mailboxes').select(['imap_last_uid', 'health']).where('id', '=', w.mailboxId).executeTakeFirstOrThrow();
  const pendingOf = async (leadId: string) =>
    (await w.repliesOf(leadId)).map((r) => ({ classification: r.classification, state: r.state, decision: r.decision }));

  describe('rule "a watcher that survives any message"', () => {
    it('a 1,001-part MIME bomb is counted unparseable and passed over; the real reply after it is applied; the mailbox stays healthy', async () => {
      const lead = await w.emailedLead();
      const other = await w.emailedLead();
      const parts = Array.from({ length: 1_001 }, (_, i) => `--B\r\nContent-Type: text/plain\r\n\r\np${i}\r\n`).join('') + '--B--\r\n';
      const bomb = [
        `From: ${lead.email}`,
        `To: ${MAILBOX}`,
        'Subject: Re: Quick question',
        `Message-ID: <bomb-${newId()}@initech.example>`,
        `In-Reply-To: ${lead.messageId}`,
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="B"',
        '',
        parts,
      ].join('\r\n');
      expect(bomb.length).toBeGreaterThan(39_000);
      const bombUid = await w.deliver(bomb);
      const realUid = await w.deliver(reply(other, 'Interested, send me the deck.'));
      const c = await counts();
      expect(c).toMatchObject({ unparseable: 1, replies: 1 });
      expect(c.error).toBeUndefined();
      expect(await w.lead(other.leadId)).toMatchObject({ stage: 'replied' });
      expect(await w.lead(lead.leadId)).toMatchObject({ stage: 'messaged', automation_stopped: false });
      const pos = await position();
      expect(Number(pos.imap_last_uid)).toBe(realUid);
      expect(pos.health).not.toMatch(/unreachable|auth_failed/);
      const seen = await w.t.db.selectFrom('email_inbound_seen').select('outcome').where('mailbox_id', '=', w.mailboxId).where('uid', '=', bombUid!).execute();
      expect(seen).toEqual([{ outcome: 'unparseable' }]);
      // The next pass does not read it again.
      expect(await counts()).toMatchObject({ unparseable: 0, replies: 0, unmatched: 0 });
    });

    it('a header block over 1 MB is counted unparseable, and the reply after it is applied', async () => {
      const lead = await w.emailedLead();
      const other = await w.emailedLead();
      const refs = Array.from({ length: 24_000 }, (_, i) => `<junk-${i}-${'x'.repeat(24)}@spam.example>`).join('\r\n ');
      expect(refs.length).toBeGreaterThan(1_048_576);
      await w.deliver(reply(lead, 'hello', { References: `${refs}\r\n ${lead.messageId}` }));
      await w.deliver(reply(other, 'Sounds good, Tuesday works.'));
      const c = await counts();
      expect(c).toMatchObject({ unparseable: 1, replies: 1 });
      expect(c.error).toBeUndefined();
      expect(await w.lead(other.leadId)).toMatchObject({ stage: 'replied' });
    });

    it('unmatched mail is never downloaded past its headers: an 8 MB newsletter costs its header fields only', async () => {
      const before = await w.t.db
        .selectFrom('replies')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      await w.deliver(raw({ From: 'news@elsewhere.example', To: MAILBOX, Subject: 'Big sale' }, 'x'.repeat(76) + '\n'.repeat(1) + 'y'.repeat(8_000_000)));
      expect(await counts()).toMatchObject({ unmatched: 1, unparseable: 0 });
      const after = await w.t.db
        .selectFrom('replies')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      expect(after.n).toBe(before.n);
    });

    it('the stored reply text is at most 20,000 characters, and the row says it was cut (theirMessageTruncated on GET /replies)', async () => {
      const lead = await w.emailedLead();
      const long = 'Interested. ' + 'Here is everything about our setup and what we need from you. '.repeat(1_000);
      await w.deliver(reply(lead, long));
      expect(await counts()).toMatchObject({ replies: 1 });
      const [row] = await w.repliesOf(lead.leadId);
      expect(row.their_message_truncated).toBe(true);
      expect(w.t.cipher.decrypt(row.their_message as string)!.length).toBe(20_000);
      const res = await w.t.app.inject({ method: 'GET', url: '/api/v1/replies?limit=200', headers: w.ws.auth });
      const listed = res.json<{ replies: { lead: { id: string }; theirMessage: string; theirMessageTruncated?: boolean }[] }>().replies;
      expect(listed.find((r) => r.lead.id === lead.leadId)).toMatchObject({ theirMessageTruncated: true });
      const short = listed.find((r) => r.lead.id !== lead.leadId);
      if (short) expect(short).not.toHaveProperty('theirMessageTruncated');
      const event = await w.t.db.selectFrom('outbox_events').select('data').where('event', '=', 'reply.received').execute();
      expect(event.some((e) => JSON.stringify(e.data).includes(lead.leadId) && JSON.stringify(e.data).includes('"theirMessageTruncated":true'))).toBe(true);
    });
  });

  describe('rule "a bounce counts only when it names a Message-ID we sent; the bounced address is our record\'s"', () => {
    it('a forged bounce with no Message-ID of ours is unmatched: nobody fails, nothing is suppressed', async () => {
      const lead = await w.emailedLead();
      await w.deliver(dsn({ status: '5.1.1', original: `<forged-${newId()}@acme.example>`, recipient: lead.email }));
      // A mailer-daemon text that only names the address in its body (the old watcher took the first address it saw).
      await w.deliver(
        raw(
          { From: 'MAILER-DAEMON@mail.initech.example', To: MAILBOX, Subject: 'Mail delivery failed: returning message to sender' },
          `A message that you sent could not be delivered:\n\n  ${lead.email}\n    550 5.1.1 User unknown\n`,
        ),
      );
      expect(await counts()).toMatchObject({ unmatched: 2, bounces: 0 });
      expect(await w.lead(lead.leadId)).toMatchObject({ stage: 'messaged', last_error: null });
      expect(await w.suppressed(lead.email)).toEqual([]);
    });

    it('a bounce that quotes our Message-ID but names another recipient affects only our recipient of record', async () => {
      const lead = await w.emailedLead();
      const lead2 = await w.emailedLead();
      await w.emailedLead({ email: lead2.email });
      const stranger = `victim-${newId().slice(0, 6)}@elsewhere.example`;
      await w.deliver(dsn({ status: '5.1.1', original: lead.messageId, recipient: stranger }));
      await w.deliver(dsn({ status: '5.1.1', original: lead2.messageId, recipient: lead.email }));
      expect(await counts()).toMatchObject({ bounces: 2 });
      expect(await w.suppressed(stranger)).toEqual([]);
      expect(await w.lead(lead.leadId)).toMatchObject({ stage: 'failed', last_error: 'bounced' });
      expect(await w.suppressed(lead.email)).toEqual([{ address: lead.email, reason: 'bounced_hard' }]);
      expect(await w.suppressed(lead2.email)).toEqual([{ address: lead2.email, reason: 'bounced_hard' }]);
    });

    it('the address is the one the message went to (email_messages.recipient): a lead whose address changed since is not failed', async () => {
      const old = `old-${newId().slice(0, 6)}@initech.example`;
      const lead = await w.emailedLead({ recipient: old });
      await w.deliver(dsn({ status: '5.1.1', original: lead.messageId, recipient: old }));
      expect(await counts()).toMatchObject({ bounces: 1 });
      expect(await w.suppressed(old)).toEqual([{ address: old, reason: 'bounced_hard' }]);
      expect(await w.suppressed(lead.email)).toEqual([]);
      expect(await w.lead(lead.leadId)).toMatchObject({ stage: 'messaged', last_error: null });
    });
  });

  describe('rule "unsubscribe by mail needs the token, or a reply threaded to our message"', () => {
    it('a spoofed "unsubscribe" (the lead\'s From, no token, not threaded) opts nobody out: it is a reply a person decides on', async () => {
      const lead = await w.emailedLead();
      await w.deliver(raw({ From: lead.email, To: MAILBOX, Subject: 'unsubscribe', 'Message-ID': `<spoof-${newId()}@evil.example>` }, ''));
      expect(await counts()).toMatchObject({ unsubscribes: 0, replies: 1 });
      expect((await w.lead(lead.leadId)).opted_out_at).toBeNull();
      expect(await w.suppressed(lead.email)).toEqual([]);
      expect(await pendingOf(lead.leadId)).toEqual([{ classification: 'unsubscribe', state: 'pending', decision: null }]);
    });

    it('a genuine List-Unsubscribe mailto, as the driver wrote it (its token in the subject), opts the person out', async () => {
      // A real first e-mail from the engine: the mailto is read back from what the SMTP server received.
      const email = `fresh-${newId().slice(0, 6)}@initech.example`;
      const leadId = await insertLead(w.t.db, w.ws.workspaceId, {
        person: 'Fresh Lead',
        email,
        account_id: w.account,
        sequence_id: w.sequenceId,
        stage: 'queued',
        next_action_at: new Date(w.now() - 60_000),
      } as never);
      // The bounces of the tests above paused the mailbox (issue 29's reputation guard, test/email/reputation.test.ts).
      await w.t.services.mailboxes.resume(w.ws.workspaceId, MAILBOX, 'cli');
      await w.tick();
      const sent = w.smtp.messages.find((m) => m.to.includes(email));
      expect(sent, 'the engine sent the first e-mail').toBeDefined();
      const mailto = /<mailto:([^?>]+)\?subject=([^>]+)>/.exec(sent!.header('list-unsubscribe') ?? '');
      expect(mailto).not.toBeNull();
      expect(mailto![1]).toBe(MAILBOX);
      const subject = decodeURIComponent(mailto![2]);
      expect(subject).toBe(`unsubscribe ${unsubscribeToken(w.t.cipher, w.ws.workspaceId, leadId)}`);
      const stored = await w.t.db.selectFrom('email_messages').select('recipient').where('lead_id', '=', leadId).executeTakeFirstOrThrow();
      expect(stored.recipient).toBe(email);
      // Sent from another address of the person (a forward): the token is the capability.
      await w.deliver(raw({ From: 'someone-else@initech.example', To: MAILBOX, Subject: subject }, 'This message was automatically generated by Gmail.'));
      expect(await counts()).toMatchObject({ unsubscribes: 1, replies: 0 });
      expect((await w.lead(leadId)).opted_out_at).not.toBeNull();
      expect(await w.suppressed(email)).toEqual([{ address: email, reason: 'unsubscribed' }]);
    });

    it('the token as a plus address (dana+<token>@…) opts out too; a token of another workspace or a tampered one does not', async () => {
      const lead = await w.emailedLead();
      const token = unsubscribeToken(w.t.cipher, w.ws.workspaceId, lead.leadId);
      const [local, domain] = MAILBOX.split('@');
      await w.deliver(raw({ From: lead.email, To: `${local}+${token}@${domain}`, Subject: 'Unsubscribe' }, ''));
      expect(await counts()).toMatchObject({ unsubscribes: 1 });
      expect((await w.lead(lead.leadId)).opted_out_at).not.toBeNull();

      const other = await w.emailedLead();
      const foreign = unsubscribeToken(w.t.cipher, u(4242), other.leadId);
      const good = unsubscribeToken(w.t.cipher, w.ws.workspaceId, other.leadId);
      const tampered = good.slice(0, 60) + (good.slice(60, 61) === 'A' ? 'B' : 'A') + good.slice(61);
      await w.deliver(raw({ From: other.email, To: MAILBOX, Subject: `unsubscribe ${foreign}` }, ''));
      await w.deliver(raw({ From: other.email, To: MAILBOX, Subject: `unsubscribe ${tampered}` }, ''));
      expect(await counts()).toMatchObject({ unsubscribes: 0 });
      expect((await w.lead(other.leadId)).opted_out_at).toBeNull();
    });

    it('a reply that says "unsubscribe", threaded to our message from the address we wrote to, still opts out (via reply_text)', async () => {
      const lead = await w.emailedLead();
      await w.deliver(reply(lead, 'unsubscribe'));
      expect(await counts()).toMatchObject({ replies: 1 });
      expect((await w.lead(lead.leadId)).opted_out_at).not.toBeNull();
    });
  });

  describe('rule "an auto-reply snoozes only when threaded to our message"', () => {
    it('a spoofed auto-reply matched by address alone is counted and ignored: the lead is not snoozed', async () => {
      const lead = await w.emailedLead();
      await w.deliver(raw({ From: lead.email, To: MAILBOX, Subject: 'Out of office', 'Auto-Submitted': 'auto-replied' }, 'Back in 7 days.'));
      // Its text alone reads as an auto-reply: the same rule.
      await w.deliver(raw({ From: lead.email, To: MAILBOX, Subject: 'hello' }, 'I am out of the office until Monday with limited access to e-mail.'));
      expect(await counts()).toMatchObject({ outOfOffice: 0, replies: 0, unmatched: 2 });
      const l = await w.lead(lead.leadId);
      expect(l).toMatchObject({ stage: 'messaged', automation_stopped: false, snoozed_until: null });
      expect(await w.repliesOf(lead.leadId)).toEqual([]);
    });

    it('a threaded auto-reply snoozes the lead as before', async () => {
      const lead = await w.emailedLead();
      await w.deliver(reply(lead, 'I am away until Monday.', { 'Auto-Submitted': 'auto-replied' }));
      expect(await counts()).toMatchObject({ outOfOffice: 1 });
      expect((await w.lead(lead.leadId)).snoozed_until).not.toBeNull();
    });
  });

  describe('rule "DMARC fail from the provider\'s authserv-id is never an opt-out, a bounce or a snooze"', () => {
    const fail = { 'Authentication-Results': `${AUTHSERV}; spf=fail smtp.mailfrom=initech.example; dmarc=fail (p=REJECT) header.from=initech.example` };

    it('threaded auto-reply, threaded "unsubscribe", mailto with a valid token and a bounce of our message, all failing DMARC', async () => {
      const ooo = await w.emailedLead();
      const unsub = await w.emailedLead();
      const mailto = await w.emailedLead();
      const bounced = await w.emailedLead();
      await w.deliver(reply(ooo, 'I am away until Monday.', { 'Auto-Submitted': 'auto-replied', ...fail }));
      await w.deliver(reply(unsub, 'unsubscribe', fail));
      await w.deliver(
        raw({ From: mailto.email, To: MAILBOX, Subject: `unsubscribe ${unsubscribeToken(w.t.cipher, w.ws.workspaceId, mailto.leadId)}`, ...fail }, ''),
      );
      await w.deliver(
        dsn({ status: '5.1.1', original: bounced.messageId, recipient: bounced.email, extra: [`Authentication-Results: ${fail['Authentication-Results']}`] }),
      );
      const c = await counts();
      expect(c).toMatchObject({ outOfOffice: 0, unsubscribes: 0, bounces: 0 });
      expect((await w.lead(ooo.leadId)).snoozed_until).toBeNull();
      for (const l of [unsub, mailto]) {
        expect((await w.lead(l.leadId)).opted_out_at).toBeNull();
        // It may still be a reply: queued for a person, classified as asking to stop.
        expect(await pendingOf(l.leadId)).toEqual([{ classification: 'unsubscribe', state: 'pending', decision: null }]);
      }
      expect(await w.lead(bounced.leadId)).toMatchObject({ stage: 'messaged', last_error: null });
      expect(await w.suppressed(bounced.email)).toEqual([]);
    });

    it('a DMARC failure written by another authserv-id is not believed: the threaded auto-reply snoozes', async () => {
      const lead = await w.emailedLead();
      await w.deliver(
        reply(lead, 'Away this week.', {
          'Auto-Submitted': 'auto-replied',
          'Authentication-Results': 'mx.spoofer.example; dmarc=fail header.from=initech.example',
        }),
      );
      expect(await counts()).toMatchObject({ outOfOffice: 1 });
      expect((await w.lead(lead.leadId)).snoozed_until).not.toBeNull();
    });
  });

  describe('rule "mailbox transport: TLS off loopback, trustedAuthservId kept"', () => {
    it('POST /admin/v1/mailboxes refuses ?tls=none off loopback (400 naming the field and OUTREACH_MAILBOX_ALLOW_PLAINTEXT=1), and saves trustedAuthservId', async () => {
      const refused = await w.t.app.inject({
        method: 'POST',
        url: '/admin/v1/mailboxes',
        headers: admin,
        payload: {
          workspaceId: w.ws.workspaceId,
          address: 'lab@acme.example',
          smtpUrl: 'smtp://lab:pw-77@relay.lab.example:25?tls=none',
          imapUrl: w.dovecot.url('dana'),
        },
      });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.body).toContain('mailbox.smtpUrl');
      expect(refused.body).toContain('OUTREACH_MAILBOX_ALLOW_PLAINTEXT=1');
      expect(refused.body).not.toContain('pw-77');
      const added = await w.t.app.inject({
        method: 'POST',
        url: '/admin/v1/mailboxes',
        headers: admin,
        payload: {
          workspaceId: w.ws.workspaceId,
          address: 'eve@acme.example',
          smtpUrl: w.smtp.url(),
          imapUrl: w.dovecot.url('dana'),
          trustedAuthservId: 'MX.Acme.Example',
        },
      });
      expect(added.statusCode, added.body).toBe(201);
      expect(added.json()).toMatchObject({ trustedAuthservId: 'mx.acme.example', health: 'ok' });
      await w.t.services.mailboxes.remove(w.ws.workspaceId, added.json().id);
    });

    it('a world file seeding ?tls=none off loopback is a 400 naming the JSON path; trustedAuthservId is seeded', async () => {
      const bad = await seed(w.t, {
        workspaces: [
          {
            id: u(930),
            name: 'Lab',
            messagingAccounts: [
              {
                mode: 'email',
                mailbox: { address: 'a@lab.example', smtpUrl: 'smtps://a:pw@smtp.lab.example', imapUrl: 'imap://a:pw@imap.lab.example:143?tls=none' },
              },
            ],
          },
        ],
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toContain('/workspaces/0/messagingAccounts/0/mailbox/imapUrl');
      expect(bad.body).toContain('OUTREACH_MAILBOX_ALLOW_PLAINTEXT=1');
      const good = await seed(w.t, {
        workspaces: [
          {
            id: u(931),
            name: 'Trusted',
            messagingAccounts: [
              {
                mode: 'email',
                mailbox: {
                  address: 'a@trusted.example',
                  smtpUrl: 'smtp://a:pw@smtp.trusted.example:587',
                  imapUrl: 'imaps://a:pw@imap.trusted.example',
                  trustedAuthservId: 'mx.trusted.example',
                },
              },
            ],
          },
        ],
      });
      expect(good.statusCode, good.body).toBe(200);
      expect(await w.t.services.mailboxes.list(u(931))).toMatchObject([{ trustedAuthservId: 'mx.trusted.example' }]);
    });
  });
});

describe.skipIf(!dovecotAvailable())('rule "the position is saved after every message" (real Dovecot, stopped mid-pass)', () => {
  const w = useInboxWorld();

  it('a connection lost after the first of three messages: mailbox_unreachable, and the position is that first message', async () => {
    const leads = [await w.emailedLead(), await w.emailedLead(), await w.emailedLead()];
    const uids: number[] = [];
    for (const l of leads)
      uids.push((await w.deliver(raw({ From: l.email, To: MAILBOX, Subject: 'Re: Quick question', 'In-Reply-To': l.messageId }, 'Yes.')))!);
    const watcher = createInboxWatcher({ db: w.t.db, cipher: w.t.cipher, config: { pollIntervalSeconds: 60 } });
    const [mb] = await claimDueMailboxes(w.t.db, w.t.cipher, { now: new Date(), limit: 1, leaseSeconds: 300 });
    expect(mb.id).toBe(w.mailboxId);
    let applied = 0;
    const counts = await watcher.pollMailbox(mb, {
      now: new Date(),
      summary: emptySummary(),
      // The first message is applied, then the IMAP server goes away.
      apply: async () => {
        applied += 1;
        await w.dovecot.stop();
        return 'replied';
      },
    });
    expect(applied).toBe(1);
    expect(counts).toMatchObject({ replies: 1, error: 'mailbox_unreachable' });
    const row = await w.t.db.selectFrom('mailboxes').select(['imap_last_uid']).where('id', '=', w.mailboxId).executeTakeFirstOrThrow();
    expect(Number(row.imap_last_uid)).toBe(uids[0]);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { dmarcFailed, parseHead, visibleReplyText } from '../../src/channels/email/inbox/parse.js';
import { trustedAuthservIds } from '../../src/channels/email/inbox/inbox-rules.js';
import { imapClientOptions, smtpTransportOptions } from '../../src/channels/email/mailboxes/mailboxes.service.js';
import { mailboxInputProblem } from '../../src/channels/email/mailboxes/mailboxes.schemas.js';

// Issue 26, the pure rules (no database, no server): whose Authentication-Results are believed, the bounded reply
// text, and the mail transport a mailbox URL asks for.

describe('Authentication-Results: only the provider (or the mailbox trustedAuthservId) is believed, and only a DMARC failure', () => {
  const gmail = trustedAuthservIds('imaps://dana%40acme.example:pw@imap.gmail.com:993', null);
  const microsoft = trustedAuthservIds('imaps://dana%40acme.example:pw@outlook.office365.com:993', null);

  it('rule "provider authserv-id": Gmail is mx.google.com, Microsoft 365 writes none (null), a mailbox adds its own', () => {
    expect(gmail).toEqual(['mx.google.com']);
    expect(microsoft).toEqual([null]);
    expect(trustedAuthservIds('imap://dana:pw@127.0.0.1:1143', 'MX.Acme.Example')).toEqual(['mx.acme.example']);
    expect(trustedAuthservIds('imap://dana:pw@mail.acme.example:143', null)).toEqual([]);
  });

  it('rule "DMARC fail from the provider": Gmail and Microsoft 365 headers as they write them', () => {
    expect(
      dmarcFailed(
        [
          'mx.google.com; spf=pass (google.com: domain of x@y.example designates 1.2.3.4 as permitted sender) smtp.mailfrom=x@y.example; dmarc=fail (p=QUARANTINE sp=NONE dis=QUARANTINE) header.from=acme.example',
        ],
        gmail,
      ),
    ).toBe(true);
    expect(dmarcFailed(['mx.google.com; dkim=pass header.i=@initech.example; dmarc=pass (p=REJECT) header.from=initech.example'], gmail)).toBe(false);
    expect(
      dmarcFailed(
        [
          'spf=fail (sender IP is 192.0.2.1) smtp.mailfrom=initech.example; dkim=none (message not signed) header.d=none;dmarc=fail action=oreject header.from=initech.example;compauth=fail reason=000',
        ],
        microsoft,
      ),
    ).toBe(true);
    expect(
      dmarcFailed(['spf=pass (sender IP is 192.0.2.1) smtp.mailfrom=initech.example; dmarc=pass action=none header.from=initech.example'], microsoft),
    ).toBe(false);
  });

  it('rule "only the trusted authserv-id": a failure written by anyone else, or a pass comment, changes nothing', () => {
    expect(dmarcFailed(['evil.example; dmarc=fail header.from=initech.example'], gmail)).toBe(false);
    // Gmail's header with a forged "fail" hidden in a comment.
    expect(dmarcFailed(['mx.google.com; dmarc=pass (dmarc=fail) header.from=initech.example'], gmail)).toBe(false);
    // A Microsoft-form header (no authserv-id) is not believed on a mailbox that is not Microsoft 365.
    expect(dmarcFailed(['spf=fail smtp.mailfrom=x.example; dmarc=fail action=none header.from=x.example'], gmail)).toBe(false);
    // No provider known and no trustedAuthservId: nothing is believed.
    expect(dmarcFailed(['mx.google.com; dmarc=fail'], [])).toBe(false);
  });
});

describe('bounded reply text', () => {
  // The crafted text that made email-reply-parser backtrack (8 s on 64 KB) is bounded in reply-text.test.ts,
  // "bounded cost", with the other hostile texts: the best of three runs, so a busy machine cannot fail it.

  it('the quoted thread is removed whatever the length of the new text', () => {
    expect(visibleReplyText('Sounds good, Tuesday?\n\nOn Mon, Nov 23, 2026 at 10:00 AM Dana <dana@acme.example> wrote:\n> Hi Bob\n')).toBe(
      'Sounds good, Tuesday?',
    );
    const long = 'word '.repeat(2_000).trim();
    expect(visibleReplyText(`${long}\n\nOn Mon, Nov 23, 2026 at 10:00 AM Dana <dana@acme.example> wrote:\n> Hi Bob\n`)).toBe(long);
    expect(visibleReplyText(`${long}\n\n-----Original Message-----\nFrom: Dana\nHi`)).toBe(long);
  });

  it('a header block is read field by field; a Message-ID too long to be real is ignored', async () => {
    const head = await parseHead(
      `From: Bob <BOB@Initech.example>\r\nSubject: unsubscribe ${'A'.repeat(64)}\r\nMessage-ID: <${'x'.repeat(600)}@h>\r\nIn-Reply-To: <Our.1@acme.example>\r\n\r\n`,
    );
    expect(head).toMatchObject({ from: 'bob@initech.example', messageId: null, inReplyTo: ['our.1@acme.example'], asksUnsubscribe: true });
    expect(head.unsubscribeTokens).toEqual(['A'.repeat(64)]);
  });
});

describe('mailbox transport: TLS off loopback', () => {
  afterEach(() => {
    delete process.env.OUTREACH_MAILBOX_ALLOW_PLAINTEXT;
  });

  it('rule "STARTTLS required off loopback": smtp:// and imap:// to a remote host must upgrade before the login', () => {
    expect(smtpTransportOptions('smtp://dana:pw@smtp.office365.com:587', false)).toMatchObject({ secure: false, requireTLS: true, ignoreTLS: false });
    expect(imapClientOptions('imap://dana:pw@mail.acme.example:143')).toMatchObject({ secure: false, doSTARTTLS: true });
    expect(smtpTransportOptions('smtps://dana:pw@smtp.gmail.com', false)).toMatchObject({ secure: true, port: 465 });
    expect(imapClientOptions('imaps://dana:pw@imap.gmail.com')).toMatchObject({ secure: true, port: 993 });
    // Loopback stays as it was: STARTTLS when the (test) server offers it.
    expect(smtpTransportOptions('smtp://dana:pw@127.0.0.1:2525', false)).toMatchObject({ requireTLS: false, ignoreTLS: false });
    expect(imapClientOptions('imap://dana:pw@127.0.0.1:1143').doSTARTTLS).toBeUndefined();
  });

  it('rule "no cleartext credentials": ?tls=none off loopback is refused, naming OUTREACH_MAILBOX_ALLOW_PLAINTEXT=1; a stored one still requires TLS', () => {
    const m = { address: 'dana@acme.example', smtpUrl: 'smtp://dana:pw@relay.lab.example:25?tls=none', imapUrl: 'imaps://dana:pw@imap.acme.example' };
    const problem = mailboxInputProblem(m, 'mailbox');
    expect(problem).toMatch(/^mailbox\.smtpUrl /);
    expect(problem).toContain('OUTREACH_MAILBOX_ALLOW_PLAINTEXT=1');
    expect(mailboxInputProblem({ ...m, smtpUrl: 'smtp://dana:pw@smtp.acme.example:587', imapUrl: 'imap://dana:pw@imap.acme.example?tls=none' })).toMatch(
      /^mailbox\.imapUrl .*OUTREACH_MAILBOX_ALLOW_PLAINTEXT=1/,
    );
    expect(mailboxInputProblem({ ...m, smtpUrl: 'smtps://dana:pw@smtp.acme.example?tls=none' })).toMatch(/cannot combine/);
    expect(mailboxInputProblem({ ...m, smtpUrl: 'smtp://dana:pw@127.0.0.1:2525?tls=none' })).toBeNull();
    // A URL stored while the switch was on, read by a process without it: TLS is still required.
    expect(smtpTransportOptions(m.smtpUrl, false)).toMatchObject({ requireTLS: true, ignoreTLS: false });
    process.env.OUTREACH_MAILBOX_ALLOW_PLAINTEXT = '1';
    expect(mailboxInputProblem(m, 'mailbox')).toBeNull();
    expect(smtpTransportOptions(m.smtpUrl, false)).toMatchObject({ requireTLS: false, ignoreTLS: true });
    expect(imapClientOptions('imap://dana:pw@imap.lab.example?tls=none').doSTARTTLS).toBe(false);
  });
});

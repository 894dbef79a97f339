import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { startDnsFake, type DnsFake } from '../helpers/dns-server.js';
import { dovecotAvailable, DOVECOT_MISSING, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { captureServiceLogs } from '../helpers/log-capture.js';
import { countRows } from '../helpers/publicdata-fixtures.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver.js';

// Accounts → Add mailbox (SMTP/IMAP) and a mailbox's Edit, Test again, Pause, Resume and Remove, over HTTP (inject)
// against the real database, a real Dovecot and the smtp-server receiver on 127.0.0.1 (so the app that logs in runs
// with OUTREACH_MAILBOX_ALLOW_PRIVATE=1), and a second app on the same database without it: the public-address guard.

const DANA = 'dana@acme.example';
const PASS = 'dana-app-password-7f3k';
const WRONG = 'not-the-password-91xq';
const canLogIn = dovecotAvailable();
if (!canLogIn) console.warn(`test/console/mailbox-add.test.ts skipped: ${DOVECOT_MISSING}`);

describe.runIf(canLogIn)('Add mailbox (SMTP/IMAP) in the console', { timeout: 120_000 }, () => {
  let smtp: SmtpReceiver;
  let dovecot: Dovecot;
  let dns: DnsFake;
  let t: TestApp;
  let guarded: TestApp;
  let key: string;
  let c: ConsoleClient;
  let mailboxId: string;
  const logs = captureServiceLogs('info');

  beforeAll(async () => {
    smtp = await startSmtpReceiver({ auth: { user: DANA, pass: PASS } });
    dovecot = await startDovecot([{ user: DANA, pass: PASS }]);
    // The mailbox page checks the sending domain: a DNS server that knows nothing answers at once.
    dns = await startDnsFake();
    t = await buildTestApp({ now: new Date().toISOString(), env: { OUTREACH_DNS_SERVERS: dns.server, OUTREACH_MAILBOX_ALLOW_PRIVATE: '1' } });
    // The guard's app: same database, the setting off, a resolver that puts one name on a private address.
    guarded = await buildTestApp({
      handle: t.handle,
      cipher: t.cipher,
      logger: logs.logger,
      env: { OUTREACH_DNS_SERVERS: dns.server },
      resolver: async (h) => (h === 'mail.internal.test' ? ['93.184.216.34', '10.20.30.40'] : h === 'mapped.internal.test' ? ['::ffff:127.0.0.1'] : []),
    });
    ({ key } = await createWorkspaceWithKey(t, 'Acme'));
    c = await signedInConsole(t, key);
  }, 120_000);

  afterAll(async () => {
    await guarded?.close();
    await t?.close();
    await dovecot?.stop();
    await smtp?.close();
    await dns?.close();
  });

  const form = (over: Record<string, string> = {}) => ({
    address: DANA,
    displayName: 'Dana Scott',
    smtpHost: '127.0.0.1',
    smtpPort: String(smtp.port),
    smtpSecurity: 'starttls',
    imapHost: '127.0.0.1',
    imapPort: String(dovecot.port),
    imapSecurity: 'starttls',
    username: '',
    password: PASS,
    ...over,
  });
  const mailboxCount = () => countRows(t.db, 'mailboxes');

  it('Accounts links to the form; a preset fills in the provider’s servers; the form has every field', async () => {
    const accounts = await c.get('/console/accounts');
    expect(accounts.body).toContain('href="/console/accounts/mailbox/add"');
    // No OAuth app configured: the page names what to set, and where it is documented.
    expect(accounts.body).toContain('OUTREACH_GOOGLE_CLIENT_ID');
    expect(accounts.body).toContain('OUTREACH_MICROSOFT_CLIENT_SECRET');
    expect(accounts.body).toContain('docs/email.md');
    const gmail = await c.get('/console/accounts/mailbox/add?preset=gmail');
    expect(gmail.statusCode).toBe(200);
    expect(gmail.body).toContain('value="smtp.gmail.com"');
    expect(gmail.body).toContain('value="imap.gmail.com"');
    expect(gmail.body).toContain('app password');
    for (const name of ['address', 'displayName', 'smtpHost', 'smtpPort', 'smtpSecurity', 'imapHost', 'imapPort', 'imapSecurity', 'username', 'password'])
      expect(gmail.body).toContain(`name="${name}"`);
    expect(gmail.body).toContain('Check and add mailbox');
  });

  it('a wrong password is refused naming SMTP, nothing is saved, and the password is not echoed', async () => {
    await c.get('/console/accounts/mailbox/add');
    const res = await c.post('/console/accounts/mailbox/add', form({ password: WRONG }));
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('The SMTP server refused the login: check the user name and the password');
    expect(res.body).not.toContain(WRONG);
    expect(res.body).toContain(`value="${DANA}"`);
    expect(await mailboxCount()).toBe(0);
    // The same form without the CSRF token is refused before anything is tried.
    expect((await c.post('/console/accounts/mailbox/add', { ...form(), _csrf: null })).statusCode).toBe(403);
    // A bad port names its field.
    const bad = await c.post('/console/accounts/mailbox/add', form({ smtpPort: '99999' }));
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('smtpPort must be a port number');
  });

  it('the right password: SMTP and IMAP sign in, the mailbox is saved and its page opens; Accounts shows its row', async () => {
    await c.get('/console/accounts/mailbox/add');
    const res = await c.post('/console/accounts/mailbox/add', form());
    expect(res.statusCode, res.body).toBe(303);
    mailboxId = /\/console\/mailboxes\/(mbx_[^/?]+)$/.exec(res.headers.location as string)![1];
    const page = await c.get(res.headers.location as string);
    expect(page.body).toContain(`Added mailbox ${DANA}: SMTP and IMAP both signed in.`);
    expect(page.body).toContain('Healthy');
    expect(page.body).toContain(`127.0.0.1:${smtp.port} (STARTTLS)`);
    expect(page.body).not.toContain(PASS);
    const row = await t.db.selectFrom('mailboxes').select(['health', 'display_name', 'smtp_url_enc']).where('id', '=', mailboxId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ health: 'ok', display_name: 'Dana Scott' });
    expect(row.smtp_url_enc).not.toContain(PASS);
    const accounts = await c.get('/console/accounts');
    expect(accounts.body).toContain(`href="/console/mailboxes/${mailboxId}"`);
    const mailboxTable = accounts.body.slice(
      accounts.body.indexOf('<caption>Mailboxes'),
      accounts.body.indexOf('</table>', accounts.body.indexOf('<caption>Mailboxes')),
    );
    expect(mailboxTable).toContain(DANA);
    expect(mailboxTable).toMatch(/<td class="num">0<\/td>\s*<td class="num">100<\/td>/);
    expect(mailboxTable).not.toContain('Invites');
    expect(mailboxTable).not.toContain('Warm-up');
  });

  it('without OUTREACH_MAILBOX_ALLOW_PRIVATE, loopback, a name with a private address and a mapped address are refused; the reason is logged only', async () => {
    const g = await signedInConsole(guarded, key);
    const before = await mailboxCount();
    for (const host of ['127.0.0.1', 'mail.internal.test', 'mapped.internal.test', '[::1]']) {
      await g.get('/console/accounts/mailbox/add');
      const res = await g.post('/console/accounts/mailbox/add', form({ address: 'lee@acme.example', smtpHost: host }));
      expect(res.statusCode, host).toBe(400);
      expect(res.body).toContain('That server’s address is not allowed'.replace('’', '&#39;'));
      expect(res.body).not.toContain('10.20.30.40');
    }
    expect(await mailboxCount()).toBe(before);
    expect(logs.text()).toContain('10.20.30.40 (private)');
    expect(logs.text()).not.toContain(PASS);
    // Test again on the stored loopback mailbox is refused the same way there.
    await g.get(`/console/mailboxes/${mailboxId}/edit`);
    const test = await g.post(`/console/mailboxes/${mailboxId}/test`);
    expect(test.statusCode).toBe(303);
    expect((await g.get(test.headers.location as string)).body).toContain('That server&#39;s address is not allowed');
  });

  it('Edit: the display name alone is saved; a wrong new password is refused and changes nothing; Test again signs in', async () => {
    const edit = await c.get(`/console/mailboxes/${mailboxId}/edit`);
    expect(edit.statusCode).toBe(200);
    expect(edit.body).toContain('value="Dana Scott"');
    expect(edit.body).not.toContain(PASS);
    const renamed = await c.post(`/console/mailboxes/${mailboxId}/edit`, { ...form({ displayName: 'Dana S.' }), password: '' });
    expect(renamed.statusCode, renamed.body).toBe(303);
    expect((await t.db.selectFrom('mailboxes').select('display_name').where('id', '=', mailboxId).executeTakeFirstOrThrow()).display_name).toBe('Dana S.');

    await c.get(`/console/mailboxes/${mailboxId}/edit`);
    const wrong = await c.post(`/console/mailboxes/${mailboxId}/edit`, form({ displayName: 'Dana S.', password: WRONG }));
    expect(wrong.statusCode).toBe(422);
    expect(wrong.body).toContain('The SMTP server refused the login');
    expect(wrong.body).not.toContain(WRONG);

    await c.get(`/console/mailboxes/${mailboxId}`);
    const test = await c.post(`/console/mailboxes/${mailboxId}/test`);
    expect(test.statusCode).toBe(303);
    expect((await c.get(test.headers.location as string)).body).toContain(`Tested ${DANA}: SMTP and IMAP both signed in.`);
  });

  it('Pause is a person’s pause (not a guard’s); Resume lifts it; Remove deletes the mailbox', async () => {
    await c.get(`/console/mailboxes/${mailboxId}`);
    const pause = await c.post(`/console/mailboxes/${mailboxId}/pause`);
    expect(pause.statusCode).toBe(303);
    const row = await t.db.selectFrom('mailboxes').select(['paused_at', 'paused_reason']).where('id', '=', mailboxId).executeTakeFirstOrThrow();
    expect(row.paused_at).not.toBeNull();
    expect(row.paused_reason).toBeNull();
    const page = await c.get(`/console/mailboxes/${mailboxId}`);
    expect(page.body).toContain('Paused by a person');
    expect((await c.get('/console/accounts')).body).toContain('Paused mailboxes');

    const resume = await c.post(`/console/mailboxes/${mailboxId}/resume`, { back: 'mailbox' });
    expect([resume.statusCode, resume.headers.location]).toEqual([303, `/console/mailboxes/${mailboxId}`]);
    expect((await t.db.selectFrom('mailboxes').select('paused_at').where('id', '=', mailboxId).executeTakeFirstOrThrow()).paused_at).toBeNull();

    await c.get(`/console/mailboxes/${mailboxId}`);
    const ask = await c.post(`/console/mailboxes/${mailboxId}/disconnect`);
    expect(ask.statusCode).toBe(200);
    const done = await c.post(`/console/mailboxes/${mailboxId}/disconnect`, { confirmed: 'yes' });
    expect(done.statusCode).toBe(303);
    expect(await t.db.selectFrom('mailboxes').select('id').where('id', '=', mailboxId).executeTakeFirst()).toBeUndefined();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { ADMIN, u, seed } from '../helpers/world-fixtures.js';

// World-file "Mailboxes": a messaging account carries the sender's e-mail identity; URLs are stored encrypted.
describe('world-file mailboxes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
  });
  afterAll(async () => t?.close());

  const world = (account: Record<string, unknown>) => ({
    workspaces: [{ id: u(900), name: 'Mailers', messagingAccounts: [{ id: `onb_${u(901)}`, name: 'Dana (e-mail)', timeZone: 'Europe/Paris', ...account }] }],
  });

  it('seeds a mailbox on an email account, credentials encrypted at rest, listed without secrets', async () => {
    const res = await seed(
      t,
      world({
        mode: 'email',
        mailbox: {
          address: 'dana@acme.example',
          displayName: 'Dana Scott',
          smtpUrl: 'smtp://dana:smtp-pw-42@127.0.0.1:2525',
          imapUrl: 'imap://dana:imap-pw-42@127.0.0.1:1143',
          sentFolder: 'Sent',
        },
      }),
    );
    expect(res.statusCode, res.body).toBe(200);
    const rows = await t.db.selectFrom('mailboxes').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ account_id: `onb_${u(901)}`, address: 'dana@acme.example', display_name: 'Dana Scott', sent_folder: 'Sent' });
    expect(JSON.stringify(rows[0])).not.toContain('pw-42');
    const views = await t.services.mailboxes.list(u(900));
    expect(views).toHaveLength(1);
    expect(JSON.stringify(views)).not.toContain('pw-42');
    expect(views[0].smtp).toBe('smtp://dana:***@127.0.0.1:2525');
  });

  it('an email account without a mailbox, or a mailbox with a bad URL, is a 400 naming the field', async () => {
    const missing = await seed(t, { workspaces: [{ id: u(910), name: 'X', messagingAccounts: [{ mode: 'email' }] }] });
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain('/workspaces/0/messagingAccounts/0/mailbox');
    const badUrl = await seed(t, {
      workspaces: [
        {
          id: u(911),
          name: 'Y',
          messagingAccounts: [{ mode: 'email', mailbox: { address: 'a@b.example', smtpUrl: 'http://x:pw-99@h', imapUrl: 'imap://h' } }],
        },
      ],
    });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.body).toContain('/workspaces/0/messagingAccounts/0/mailbox/smtpUrl');
    expect(badUrl.body).not.toContain('pw-99');
  });
});

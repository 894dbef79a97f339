import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { ADMIN, seed, u } from '../helpers/world-fixtures.js';
import { dovecotAvailable, DOVECOT_MISSING, type Dovecot } from '../helpers/dovecot.js';
import type { SmtpReceiver } from '../helpers/smtp-receiver.js';
import type { IssuedTokens, OAuthProviderFake } from '../helpers/oauth-provider-fake.js';
import { engineTick } from '../helpers/worlds/common.js';
import { emailStep, raw } from '../helpers/worlds/mailbox.js';
import { oauthProviderEnv, startOAuthWorld, type OAuthWorld } from '../helpers/worlds/oauth.js';
import { createMailboxTokens } from '../../src/channels/email/mailboxes/oauth-tokens.js';

// Issue 29 §1: a mailbox connected with OAuth 2.0 (world-file `mailbox.oauth`) sends over SMTP XOAUTH2 to a real
// smtp-server receiver and is read over IMAP with its access token on a real Dovecot whose oauth2 passdb asks the fake
// provider's introspection endpoint. Tokens are refreshed before they lapse and once after a refused login; a refused
// refresh stops the mailbox. Each test names the rule it holds.
if (!dovecotAvailable()) console.warn(`test/email/oauth.test.ts skipped: ${DOVECOT_MISSING}`);

const DAY = 86_400_000;
const KEY = 'ows_test_oauth_literal_key_0123456789abcdef';
const auth = { authorization: `Bearer ${KEY}` };

describe.skipIf(!dovecotAvailable())('OAuth mailboxes against real servers', () => {
  let t: TestApp;
  let world: OAuthWorld;
  let fake: OAuthProviderFake;
  let dovecot: Dovecot;
  let smtp: SmtpReceiver;
  let sequenceId: string;
  // Real time: the mailboxes' first poll is due from the moment they were seeded.
  let clock = Date.now();
  let n = 0;
  const WS = u(2900);
  /** The tokens each mailbox was seeded with, by address. */
  const seeded = new Map<string, IssuedTokens>();
  /** The stored (encrypted) tokens right after seeding. */
  let danaSeeded: string | null;
  let gailSeeded: string | null;

  beforeAll(async () => {
    // Refresh tokens rotate (as Microsoft's do): spending one twice would be refused, so two workers must refresh once.
    world = await startOAuthWorld({
      fake: { clientId: 'outreach-test-client', clientSecret: 'client-secret-8812', rotateRefreshTokens: true },
      users: ['dana', 'erin', 'finn', 'gail', 'hank'].map((name) => ({ user: `${name}@acme.example`, pass: `${name}-unused-pw-4417` })),
    });
    ({ fake, smtp } = world);
    dovecot = world.dovecot!;
    t = await buildTestApp({
      env: {
        OUTREACH_ADMIN_TOKEN: ADMIN,
        OUTREACH_PACING_DAYS: 'sun-sat',
        OUTREACH_PACING_HOURS: '00:00-24:00',
        OUTREACH_PACING_SPACING: 0,
        OUTREACH_INBOX_POLL_INTERVAL: 60,
        ...oauthProviderEnv(fake, ['google']),
      },
    });
    const accounts = ['dana', 'erin', 'finn', 'gail', 'hank'].map((name, i) => {
      const address = `${name}@acme.example`;
      // gail's and hank's tokens lapsed an hour ago: the first use refreshes them.
      const tokens = fake.issue(address, { expiresInSeconds: name === 'gail' || name === 'hank' ? -3600 : 3600 });
      seeded.set(address, tokens);
      return {
        id: `onb_${u(2910 + i)}`,
        name: `${name} (e-mail)`,
        mode: 'email',
        timeZone: 'UTC',
        mailbox: {
          address,
          smtpUrl: `smtp://${encodeURIComponent(address)}@127.0.0.1:${smtp.port}`,
          imapUrl: `imap://${encodeURIComponent(address)}@127.0.0.1:${dovecot.port}`,
          oauth: { provider: 'google', accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, expiresAt: tokens.expiresAt.toISOString() },
          dkimSelector: 'google',
        },
      };
    });
    const res = await seed(t, { workspaces: [{ id: WS, name: 'OAuth mailers', apiKeys: [{ key: KEY }], messagingAccounts: accounts }] });
    expect(res.statusCode, res.body).toBe(200);
    await t.db.updateTable('workspaces').set({ energy_balance: 1_000 }).where('id', '=', WS).execute();
    danaSeeded = (await mailboxOf('dana@acme.example')).oauth_tokens_enc;
    gailSeeded = (await mailboxOf('gail@acme.example')).oauth_tokens_enc;
    // hank's INBOX is not read during these passes: its lapsed token is left for the two-worker test to refresh.
    await t.db
      .updateTable('mailboxes')
      .set({ next_poll_at: new Date(clock + 365 * DAY) as never })
      .where('address', '=', 'hank@acme.example')
      .execute();
    sequenceId = await insertSequence(t.db, WS, {
      channels: ['email'],
      steps: [emailStep(0, 0, 'Quick question', 'Hi {{firstName}}'), emailStep(1, 3, null, 'Following up')] as never,
    });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await world?.close();
  });

  const tick = (advanceMs = 120_000): Promise<{ mailboxes?: Record<string, Record<string, unknown>> }> => engineTick(t, (clock += advanceMs));
  const mailboxOf = async (address: string) => t.db.selectFrom('mailboxes').selectAll().where('address', '=', address).executeTakeFirstOrThrow();
  const newLead = async (sender: string) => {
    n += 1;
    const email = `prospect${n}@initech.example`;
    const account = (await mailboxOf(sender)).account_id;
    const leadId = await insertLead(t.db, WS, {
      person: `Bob Number${n}`,
      email,
      account_id: account,
      sequence_id: sequenceId,
      next_action_at: new Date(clock),
    });
    return { leadId, email };
  };
  const to = (address: string) => smtp.messages.filter((m) => m.to.includes(address));
  const readinessCodes = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: auth });
    expect(res.statusCode).toBe(200);
    return { codes: (res.json().accounts.issues as { code: string; message: string }[]).map((i) => i.code), body: res.body };
  };

  it('world-file tokens are stored encrypted, never listed, and the mailbox is listed as signing in with Google', async () => {
    const row = await mailboxOf('dana@acme.example');
    expect(row.oauth_provider).toBe('google');
    expect(row.dkim_selector).toBe('google');
    expect(row.oauth_tokens_enc).not.toContain(seeded.get('dana@acme.example')!.accessToken);
    const views = await t.services.mailboxes.list(WS);
    expect(views.find((v) => v.address === 'dana@acme.example')).toMatchObject({ auth: 'google', smtp: `smtp://dana%40acme.example@127.0.0.1:${smtp.port}` });
    expect(JSON.stringify(views)).not.toContain(seeded.get('dana@acme.example')!.accessToken);
  });

  it('a sequence sends with the access token (SMTP XOAUTH2) and a reply is detected over IMAP with the token', async () => {
    const { leadId, email } = await newLead('dana@acme.example');
    await tick();
    const [first] = to(email);
    expect(first, JSON.stringify(await t.db.selectFrom('leads').select(['last_error', 'stage']).where('id', '=', leadId).execute())).toBeDefined();
    expect(first.header('from')).toBe('dana@acme.example');
    const messageId = first.header('message-id')!;
    await dovecot.deliver(
      'dana@acme.example',
      raw(
        { From: `Bob <${email}>`, To: 'dana@acme.example', Subject: 'Re: Quick question', 'Message-ID': `<r-${n}@initech.example>`, 'In-Reply-To': messageId },
        'Sounds good, call me Tuesday.',
      ),
    );
    const pass = await tick();
    const mailboxId = (await mailboxOf('dana@acme.example')).id;
    expect(pass.mailboxes?.[mailboxId]).toMatchObject({ replies: 1 });
    const lead = await t.db.selectFrom('leads').select(['stage', 'automation_stopped']).where('id', '=', leadId).executeTakeFirstOrThrow();
    expect(lead.stage).toBe('replied');
    // No refresh was needed: the token was good for an hour, and is the one seeded.
    expect((await mailboxOf('dana@acme.example')).oauth_tokens_enc).toBe(danaSeeded);
  });

  it('an expired token is refreshed at the token URL before the first login, and the new token is saved (encrypted)', async () => {
    const { email } = await newLead('gail@acme.example');
    await tick();
    expect(to(email)).toHaveLength(1);
    expect(fake.requests.filter((r) => r.grantType === 'refresh_token').length).toBeGreaterThanOrEqual(1);
    const after = await mailboxOf('gail@acme.example');
    expect(new Date(after.oauth_expires_at!).getTime()).toBeGreaterThan(Date.now());
    expect(after.oauth_tokens_enc).not.toBe(gailSeeded);
    expect(after.health).not.toBe('auth_failed');
  });

  it('an access token revoked early is refreshed once after the refused login, and the message goes', async () => {
    const tokens = seeded.get('erin@acme.example')!;
    fake.revokeAccess(tokens.accessToken);
    const refreshes = fake.requests.filter((r) => r.grantType === 'refresh_token').length;
    const { email } = await newLead('erin@acme.example');
    await tick();
    expect(to(email)).toHaveLength(1);
    expect(fake.requests.filter((r) => r.grantType === 'refresh_token').length).toBe(refreshes + 1);
    expect((await mailboxOf('erin@acme.example')).health).not.toBe('auth_failed');
  });

  it('a refresh the provider refuses (invalid_grant) stops the mailbox: nothing is sent, readiness says reconnect, no token in any answer', async () => {
    const tokens = seeded.get('finn@acme.example')!;
    fake.revokeAccess(tokens.accessToken);
    fake.refuseRefresh(tokens.refreshToken);
    const { leadId, email } = await newLead('finn@acme.example');
    const pass = await tick();
    expect(to(email)).toHaveLength(0);
    const mb = await mailboxOf('finn@acme.example');
    expect(mb.health).toBe('auth_failed');
    expect(mb.health_detail).toMatch(/reconnect the mailbox/);
    const lead = await t.db.selectFrom('leads').select(['stage', 'next_action_at', 'last_error']).where('id', '=', leadId).executeTakeFirstOrThrow();
    // The step waits (not failed): the lead is still due once the mailbox is reconnected.
    expect(lead.stage).not.toBe('failed');
    expect(lead.next_action_at).not.toBeNull();
    const { codes, body } = await readinessCodes();
    expect(codes).toContain('mailbox_auth_failed');
    expect(body).toMatch(/finn@acme\.example.*reconnects the mailbox/);
    for (const secret of [tokens.accessToken, tokens.refreshToken]) {
      expect(body).not.toContain(secret);
      expect(JSON.stringify(pass)).not.toContain(secret);
    }
    // A later pass sends nothing from it either, however long it waits.
    await tick(DAY);
    expect(to(email)).toHaveLength(0);
  });

  it('two workers that find the token lapsed refresh it once, under the row lock, and both log in with the one new token', async () => {
    const mb = await mailboxOf('hank@acme.example');
    const before = fake.requests.filter((r) => r.grantType === 'refresh_token').length;
    const workerA = createMailboxTokens({ db: t.db, cipher: t.cipher, config: t.config });
    const workerB = createMailboxTokens({ db: t.db, cipher: t.cipher, config: t.config });
    const [a, b] = await Promise.all([workerA.accessToken(mb.id), workerB.accessToken(mb.id)]);
    expect(a).toBe(b);
    expect(fake.isActive(a)).toBe(true);
    expect(fake.requests.filter((r) => r.grantType === 'refresh_token').length).toBe(before + 1);
    expect((await mailboxOf('hank@acme.example')).health).not.toBe('auth_failed');
  });

  it('removing an OAuth mailbox revokes its grant at Google and deletes its tokens', async () => {
    const tokens = seeded.get('dana@acme.example')!;
    const res = await t.services.mailboxes.remove(WS, 'dana@acme.example');
    expect(res).toEqual({ revokedAtProvider: true });
    expect(fake.revoked.has(tokens.refreshToken)).toBe(true);
    expect(await t.db.selectFrom('mailboxes').select('id').where('address', '=', 'dana@acme.example').executeTakeFirst()).toBeUndefined();
  });

  it('a world-file oauth block is checked field by field: a 400 naming the field and the allowed values, nothing saved', async () => {
    const bad = (oauth: unknown, urlUser = 'zoe%40acme.example') =>
      seed(t, {
        workspaces: [
          {
            id: u(2990),
            name: 'Bad',
            messagingAccounts: [
              {
                mode: 'email',
                mailbox: {
                  address: 'zoe@acme.example',
                  smtpUrl: `smtps://${urlUser}@smtp.gmail.com:465`,
                  imapUrl: `imaps://${urlUser}@imap.gmail.com:993`,
                  oauth,
                },
              },
            ],
          },
        ],
      });
    const provider = await bad({ provider: 'yahoo', accessToken: 'a', refreshToken: 'r', expiresAt: '2026-12-01T00:00:00Z' });
    expect(provider.statusCode).toBe(400);
    expect(provider.body).toContain('/mailbox/oauth/provider');
    expect(provider.body).toContain('google, microsoft');
    const noRefresh = await bad({ provider: 'google', accessToken: 'a', expiresAt: '2026-12-01T00:00:00Z' });
    expect(noRefresh.statusCode).toBe(400);
    expect(noRefresh.body).toContain('/mailbox/oauth/refreshToken');
    const noExpiry = await bad({ provider: 'google', accessToken: 'a', refreshToken: 'r' });
    expect(noExpiry.body).toContain('/mailbox/oauth/expiresAt');
    const withPassword = await bad(
      { provider: 'google', accessToken: 'a', refreshToken: 'r', expiresAt: '2026-12-01T00:00:00Z' },
      'zoe%40acme.example:pw-3381',
    );
    expect(withPassword.statusCode).toBe(400);
    expect(withPassword.body).toContain('must not carry a password');
    expect(withPassword.body).not.toContain('pw-3381');
    expect(await t.db.selectFrom('mailboxes').select('id').where('address', '=', 'zoe@acme.example').executeTakeFirst()).toBeUndefined();
  });
});

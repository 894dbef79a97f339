import { createHash, createPublicKey, randomBytes, verify, type JsonWebKey } from 'node:crypto';
import net from 'node:net';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dovecotAvailable, DOVECOT_MISSING, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { startOAuthProviderFake, type OAuthProviderFake } from '../helpers/oauth-provider-fake.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver.js';
import { dbEngine } from '../helpers/test-database.js';

// The test infrastructure for OAuth mailboxes, proven against itself over real protocols: the OAuth provider fake
// (HTTP), Dovecot validating XOAUTH2 / OAUTHBEARER through the fake's introspection endpoint (IMAP), and the SMTP
// receiver taking XOAUTH2 (SMTP). No database: it runs once, in the PGlite project.
const once = dbEngine() === 'postgres';
if (!dovecotAvailable()) console.warn(`test/email/oauth-fakes.test.ts (IMAP part) skipped: ${DOVECOT_MISSING}`);

const DANA = 'dana@acme.example';
const REDIRECT = 'http://127.0.0.1:9/oauth/callback';

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, body, cacheControl: res.headers.get('cache-control') };
}

function imapClient(port: number, user: string, accessToken: string) {
  const c = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user, accessToken }, logger: false });
  c.on('error', () => undefined);
  return c;
}

/** A raw IMAP AUTHENTICATE XOAUTH2 exchange (imapflow prefers OAUTHBEARER when both are offered). Returns the tagged answer. */
async function rawXoauth2(port: number, user: string, accessToken: string): Promise<string> {
  const payload = Buffer.from(`user=${user}\x01auth=Bearer ${accessToken}\x01\x01`).toString('base64');
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let buf = '';
    let sent = false;
    s.setTimeout(10_000, () => reject(new Error(`no answer: ${buf}`)));
    s.on('error', reject);
    s.on('data', (b) => {
      buf += b.toString();
      if (!sent && buf.includes('* OK')) {
        sent = true;
        s.write(`a1 AUTHENTICATE XOAUTH2 ${payload}\r\n`);
      }
      // A refusal is first an error challenge ("+ <base64 JSON>"), which the client answers with an empty line.
      if (/^\+ /m.test(buf) && !buf.includes('+ answered')) {
        buf += '\n+ answered\n';
        s.write('\r\n');
      }
      const tagged = /^a1 (OK|NO|BAD)[^\r\n]*/m.exec(buf);
      if (tagged) {
        s.end('a2 LOGOUT\r\n');
        resolve(tagged[0]);
      }
    });
  });
}

describe.skipIf(once)('OAuth provider fake (HTTP)', () => {
  let fake: OAuthProviderFake;
  beforeAll(async () => {
    fake = await startOAuthProviderFake({ userEmail: DANA });
  });
  afterAll(() => fake?.close());

  async function authorize(extra: Record<string, string> = {}) {
    const { verifier, challenge } = pkce();
    const state = randomBytes(16).toString('base64url');
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: fake.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid email https://mail.google.com/',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      access_type: 'offline',
      ...extra,
    });
    const res = await fetch(`${fake.authorizeUrl}?${q}`, { redirect: 'manual' });
    return { res, verifier, state, location: res.headers.get('location') ? new URL(res.headers.get('location')!) : null };
  }

  it('authorize → code (PKCE S256) → tokens with an id_token for the signed-in user; the code is single use', async () => {
    const { res, verifier, state, location } = await authorize();
    expect(res.status).toBe(302);
    expect(location!.origin + location!.pathname).toBe(REDIRECT);
    expect(location!.searchParams.get('state')).toBe(state);
    const code = location!.searchParams.get('code')!;
    expect(code).toBeTruthy();
    const form = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: fake.clientId,
      client_secret: fake.clientSecret,
    };
    const first = await postForm(fake.tokenUrl, form);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.cacheControl).toBe('no-store');
    expect(first.body).toMatchObject({ token_type: 'Bearer', expires_in: 3599, scope: 'openid email https://mail.google.com/' });
    expect(typeof first.body.access_token).toBe('string');
    expect(typeof first.body.refresh_token).toBe('string');
    const [h, p, sig] = (first.body.id_token as string).split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ email: DANA, preferred_username: DANA, aud: fake.clientId, iss: fake.issuer });
    expect(typeof claims.sub).toBe('string');
    const jwks = (await (await fetch(fake.jwksUrl)).json()) as { keys: JsonWebKey[] };
    expect(verify('sha256', Buffer.from(`${h}.${p}`), createPublicKey({ key: jwks.keys[0], format: 'jwk' }), Buffer.from(sig, 'base64url'))).toBe(true);
    expect(fake.isActive(first.body.access_token as string)).toBe(true);
    expect(fake.emailOf(first.body.access_token as string)).toBe(DANA);
    const replay = await postForm(fake.tokenUrl, form);
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(fake.requests.filter((r) => r.path === '/token').map((r) => r.grantType)).toEqual(['authorization_code', 'authorization_code']);
  });

  it('the token request is refused for a wrong code_verifier, a different redirect_uri and a wrong client', async () => {
    const a = await authorize();
    const code = a.location!.searchParams.get('code')!;
    const bad = await postForm(fake.tokenUrl, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: pkce().verifier,
      client_id: fake.clientId,
      client_secret: fake.clientSecret,
    });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const b = await authorize();
    const other = await postForm(fake.tokenUrl, {
      grant_type: 'authorization_code',
      code: b.location!.searchParams.get('code')!,
      redirect_uri: 'http://127.0.0.1:9/elsewhere',
      code_verifier: b.verifier,
      client_id: fake.clientId,
      client_secret: fake.clientSecret,
    });
    expect(other.status).toBe(400);
    const c = await authorize();
    const basic = `Basic ${Buffer.from(`${fake.clientId}:wrong-secret`).toString('base64')}`;
    const wrongClient = await postForm(
      fake.tokenUrl,
      { grant_type: 'authorization_code', code: c.location!.searchParams.get('code')!, redirect_uri: REDIRECT, code_verifier: c.verifier },
      { authorization: basic },
    );
    expect(wrongClient).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
  });

  it('authorize: login_hint picks the user, denyNext() redirects with access_denied, a bad request is a 400 page', async () => {
    const hinted = await authorize({ login_hint: 'lee@acme.example' });
    const { verifier } = hinted;
    const basic = `Basic ${Buffer.from(`${fake.clientId}:${fake.clientSecret}`).toString('base64')}`;
    const tokens = await postForm(
      fake.tokenUrl,
      { grant_type: 'authorization_code', code: hinted.location!.searchParams.get('code')!, redirect_uri: REDIRECT, code_verifier: verifier },
      { authorization: basic },
    );
    expect(tokens.status).toBe(200);
    expect(fake.emailOf(tokens.body.access_token as string)).toBe('lee@acme.example');
    fake.denyNext();
    const denied = await authorize();
    expect(denied.res.status).toBe(302);
    expect(denied.location!.searchParams.get('error')).toBe('access_denied');
    expect(denied.location!.searchParams.get('state')).toBe(denied.state);
    expect(denied.location!.searchParams.get('code')).toBeNull();
    expect((await authorize()).location!.searchParams.get('code')).toBeTruthy();
    const malformed: Record<string, string>[] = [
      { code_challenge_method: 'plain' },
      { state: '' },
      { scope: '' },
      { response_type: 'token' },
      { redirect_uri: 'not a url' },
    ];
    for (const broken of malformed) {
      const r = await authorize(broken);
      expect(r.res.status, JSON.stringify(broken)).toBe(400);
      expect(r.location).toBeNull();
    }
  });

  it('refresh → a new access token; refuseRefresh() → invalid_grant; /revoke ends the grant (introspection says inactive)', async () => {
    const seeded = fake.issue(DANA, { expiresInSeconds: 60 });
    expect(seeded.expiresAt.getTime()).toBeGreaterThan(Date.now());
    const refresh = () =>
      postForm(fake.tokenUrl, { grant_type: 'refresh_token', refresh_token: seeded.refreshToken, client_id: fake.clientId, client_secret: fake.clientSecret });
    const r1 = await refresh();
    expect(r1.status).toBe(200);
    expect(r1.body.access_token).not.toBe(seeded.accessToken);
    // Google does not rotate: no refresh_token in a refresh answer.
    expect(r1.body.refresh_token).toBeUndefined();
    const introspect = async (t: string) => (await postForm(fake.introspectUrl, { token: t })).body;
    expect(await introspect(r1.body.access_token as string)).toMatchObject({ active: true, email: DANA });
    fake.revokeAccess(seeded.accessToken);
    expect(await introspect(seeded.accessToken)).toEqual({ active: false });
    fake.refuseRefresh(seeded.refreshToken);
    expect(await refresh()).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const other = fake.issue('lee@acme.example');
    expect((await postForm(fake.revokeUrl, { token: other.refreshToken })).status).toBe(200);
    expect(await introspect(other.accessToken)).toEqual({ active: false });
    expect(fake.revoked.has(other.refreshToken)).toBe(true);
    expect((await postForm(fake.revokeUrl, { token: other.refreshToken })).body).toMatchObject({ error: 'invalid_token' });
  });

  it('rotateRefreshTokens: each refresh answers a new refresh token and the spent one is invalid_grant', async () => {
    const rotating = await startOAuthProviderFake({ rotateRefreshTokens: true, accessTokenTtlSeconds: 300 });
    try {
      const seeded = rotating.issue(DANA);
      const refresh = (rt: string) =>
        postForm(rotating.tokenUrl, { grant_type: 'refresh_token', refresh_token: rt, client_id: rotating.clientId, client_secret: rotating.clientSecret });
      const r1 = await refresh(seeded.refreshToken);
      expect(r1.status).toBe(200);
      expect(r1.body.expires_in).toBe(300);
      expect(typeof r1.body.refresh_token).toBe('string');
      expect(r1.body.refresh_token).not.toBe(seeded.refreshToken);
      expect(await refresh(seeded.refreshToken)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      expect((await refresh(r1.body.refresh_token as string)).status).toBe(200);
    } finally {
      await rotating.close();
    }
  });
});

describe.skipIf(once)('SMTP receiver with XOAUTH2 (nodemailer)', () => {
  let fake: OAuthProviderFake;
  let smtp: SmtpReceiver;
  beforeAll(async () => {
    fake = await startOAuthProviderFake();
    smtp = await startSmtpReceiver({ xoauth2: fake.verify, auth: { user: 'lee', pass: 'lee-smtp-pw' } });
  });
  afterAll(async () => {
    await smtp?.close();
    await fake?.close();
  });

  const send = (auth: { type?: 'OAuth2'; user: string; accessToken?: string; pass?: string }) =>
    nodemailer
      .createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true, auth })
      .sendMail({ from: DANA, to: 'bob@initech.example', subject: 'Hi', text: 'Hello' });

  it('an active token for the user sends; a revoked one, or one issued to someone else, is EAUTH; a password still works', async () => {
    const { accessToken } = fake.issue(DANA);
    await send({ type: 'OAuth2', user: DANA, accessToken });
    expect(smtp.messages.map((m) => m.to)).toEqual([['bob@initech.example']]);
    const lee = fake.issue('lee@acme.example');
    await expect(send({ type: 'OAuth2', user: DANA, accessToken: lee.accessToken })).rejects.toMatchObject({ code: 'EAUTH' });
    fake.revokeAccess(accessToken);
    await expect(send({ type: 'OAuth2', user: DANA, accessToken })).rejects.toMatchObject({ code: 'EAUTH' });
    await expect(send({ type: 'OAuth2', user: DANA, accessToken: 'fake-at.unknown' })).rejects.toMatchObject({ code: 'EAUTH' });
    expect(smtp.messages).toHaveLength(1);
    await send({ user: 'lee', pass: 'lee-smtp-pw' });
    expect(smtp.messages).toHaveLength(2);
    expect(smtp.url(DANA)).toBe(`smtp://${encodeURIComponent(DANA)}@127.0.0.1:${smtp.port}`);
    expect(smtp.url('lee', 'lee-smtp-pw')).toBe(`smtp://lee:lee-smtp-pw@127.0.0.1:${smtp.port}`);
  });
});

describe.skipIf(once || !dovecotAvailable())('Dovecot with the oauth2 passdb (imapflow)', () => {
  let fake: OAuthProviderFake;
  let dovecot: Dovecot;
  beforeAll(async () => {
    fake = await startOAuthProviderFake();
    dovecot = await startDovecot(
      [
        { user: DANA, pass: 'dana-imap-pw' },
        { user: 'lee', pass: 'lee-imap-pw' },
        { user: 'erin@acme.example', pass: 'erin-imap-pw' },
      ],
      { oauth2: { introspectionUrl: fake.introspectUrl } },
    );
  }, 60_000);
  afterAll(async () => {
    await dovecot?.stop();
    await fake?.close();
  });

  it('an active token logs in (OAUTHBEARER via imapflow, XOAUTH2 raw) after asking the introspection endpoint', async () => {
    const { accessToken } = fake.issue(DANA);
    const before = fake.requests.filter((r) => r.path === '/introspect').length;
    const c = imapClient(dovecot.port, DANA, accessToken);
    await c.connect();
    try {
      const inbox = await c.mailboxOpen('INBOX');
      expect(inbox.exists).toBe(0);
    } finally {
      await c.logout();
    }
    expect(fake.requests.filter((r) => r.path === '/introspect').length).toBeGreaterThan(before);
    expect(await rawXoauth2(dovecot.port, DANA, accessToken)).toMatch(/^a1 OK/);
  });

  it('a revoked token, an unknown one and a token of another user are refused', async () => {
    const { accessToken } = fake.issue(DANA);
    fake.revokeAccess(accessToken);
    await expect(imapClient(dovecot.port, DANA, accessToken).connect()).rejects.toMatchObject({ authenticationFailed: true });
    await expect(imapClient(dovecot.port, DANA, 'fake-at.unknown').connect()).rejects.toMatchObject({ authenticationFailed: true });
    // Erin's token is valid and she is a Dovecot user too: only the email-equals-login check refuses it.
    const erin = fake.issue('erin@acme.example');
    await expect(imapClient(dovecot.port, DANA, erin.accessToken).connect()).rejects.toMatchObject({ authenticationFailed: true });
    expect(await rawXoauth2(dovecot.port, 'erin@acme.example', erin.accessToken)).toMatch(/^a1 OK/);
    expect(await rawXoauth2(dovecot.port, DANA, accessToken)).toMatch(/^a1 NO/);
  });

  it('password logins keep working in the same Dovecot, for an e-mail-address user too', async () => {
    const uid = await dovecot.deliver(DANA, 'From: bob@initech.example\r\nTo: dana@acme.example\r\nSubject: Hi\r\n\r\nHello\r\n');
    expect(uid).toBe(1);
    expect((await dovecot.status(DANA)).messages).toBe(1);
    expect((await dovecot.status('lee')).messages).toBe(0);
    const wrong = new ImapFlow({ host: '127.0.0.1', port: dovecot.port, secure: false, auth: { user: 'lee', pass: 'nope' }, logger: false });
    wrong.on('error', () => undefined);
    await expect(wrong.connect()).rejects.toMatchObject({ authenticationFailed: true });
    // The token login sees the message the password login delivered: one mailbox, both ways in.
    const c = imapClient(dovecot.port, DANA, fake.issue(DANA).accessToken);
    await c.connect();
    try {
      expect(await c.status('INBOX', { messages: true })).toMatchObject({ messages: 1 });
    } finally {
      await c.logout();
    }
  });
});

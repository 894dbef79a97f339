import { createHash, generateKeyPairSync, randomBytes, sign, timingSafeEqual, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small, real OAuth 2.0 / OpenID Connect provider on 127.0.0.1 speaking like Google's and the Microsoft identity
 * platform's v2 endpoints, for the mailboxes connected with OAuth:
 * - `GET /authorize` (authorization code + PKCE S256 + state) answers 302 to `redirect_uri?code=…&state=…&scope=…`,
 *   or `error=access_denied` once `denyNext()` was called; a malformed request is a 400 text page, as both providers
 *   show an error page instead of redirecting to an unverified redirect_uri.
 * - `POST /token` (form body; client credentials in the body or HTTP Basic): `authorization_code` (single use, bound
 *   to client and redirect_uri, PKCE checked) and `refresh_token` (optionally rotating); errors are RFC 6749 JSON
 *   (`invalid_grant` 400, `invalid_client` 401, …) with `Cache-Control: no-store`. The id_token is an RS256 JWT
 *   signed with a key made per instance (`GET /jwks`), so code that decodes it without verifying works, and code that
 *   verifies it can.
 * - `POST /revoke` (Google's form: `token=`) revokes the whole grant, as Google does.
 * - `/introspect` (RFC 7662) for Dovecot's oauth2 passdb in any of its `introspection_mode`s: `post` (form `token=`),
 *   `get` (token appended to the URL, i.e. `…/introspect?token=`) and `auth` (`Authorization: Bearer`, answered like a
 *   userinfo endpoint: 401 when the token is not active).
 * Not a mock: tests assert on what the service did, or on this server's state (`requests`, `revoked`).
 */

export interface OAuthProviderFakeOptions {
  clientId?: string;
  clientSecret?: string;
  /** The signed-in user at /authorize when the request has no `login_hint`. */
  userEmail?: string;
  /** A refresh grant answers a new refresh token and the old one becomes invalid_grant (Microsoft's behaviour). */
  rotateRefreshTokens?: boolean;
  accessTokenTtlSeconds?: number;
  /** When set, /authorize accepts only these redirect URIs (registered redirect URIs), 400 otherwise. */
  redirectUris?: string[];
  /**
   * When true, a refresh token is issued only when asked for: Google's `access_type=offline` or Microsoft's
   * `offline_access` scope. Off by default so tests that do not care get one always.
   */
  requireOfflineAccess?: boolean;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  expiresAt: Date;
}

export interface OAuthProviderFake {
  url: string;
  authorizeUrl: string;
  tokenUrl: string;
  revokeUrl: string;
  introspectUrl: string;
  jwksUrl: string;
  /** The `iss` of id tokens (the base URL). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Mints a grant without the browser dance (world files seeding tokens). */
  issue(email: string, opts?: { expiresInSeconds?: number; scope?: string }): IssuedTokens;
  /** That refresh token (or every one, when omitted) is answered `400 invalid_grant` from now on. */
  refuseRefresh(refreshToken?: string): void;
  /** The access token becomes inactive (an expired or revoked token, as the mail servers see it); the grant stays. */
  revokeAccess(accessToken: string): void;
  /** The next /authorize redirects with `error=access_denied` (the user pressed Cancel on the consent screen). */
  denyNext(): void;
  /** Known, not revoked, not expired. */
  isActive: (accessToken: string) => boolean;
  /** The e-mail address of an active access token; null when unknown or inactive. */
  emailOf: (accessToken: string) => string | null;
  /** XOAUTH2 check for mail server fakes: active and issued to `user` (case-insensitive). */
  verify: (user: string, accessToken: string) => boolean;
  /** Every request, without secrets: the path, and the grant_type of token requests. */
  requests: { method: string; path: string; grantType?: string }[];
  /** The query of the last /authorize request (no secrets in it), to assert on what the service asked for. */
  lastAuthorize: URLSearchParams | null;
  /** Every revoked token (access and refresh). */
  revoked: Set<string>;
  close(): Promise<void>;
}

interface Grant {
  email: string;
  scope: string;
  refreshToken: string | null;
  accessTokens: Set<string>;
  nonce?: string;
}
interface AccessToken {
  grant: Grant;
  expiresAt: number;
}
interface AuthCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  email: string;
  scope: string;
  offline: boolean;
  nonce?: string;
  expiresAt: number;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');
const token = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;
// RFC 7636 §4.1: the verifier (and an S256 challenge) is 43 to 128 unreserved characters.
const PKCE_RE = /^[A-Za-z0-9\-._~]{43,128}$/;

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  // RFC 6749 §5.1: token answers must not be cached.
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache', ...headers });
  res.end(JSON.stringify(body));
}

function text(res: ServerResponse, status: number, body: string) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(body);
}

export async function startOAuthProviderFake(opts: OAuthProviderFakeOptions = {}): Promise<OAuthProviderFake> {
  const clientId = opts.clientId ?? 'outreach-test-client.apps.example';
  const clientSecret = opts.clientSecret ?? 'outreach-test-client-secret';
  const ttl = opts.accessTokenTtlSeconds ?? 3599;
  const codes = new Map<string, AuthCode>();
  const accessTokens = new Map<string, AccessToken>();
  const refreshTokens = new Map<string, Grant>();
  const refused = new Set<string>();
  let refuseAll = false;
  let denyCount = 0;
  const revoked = new Set<string>();
  const requests: OAuthProviderFake['requests'] = [];
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomBytes(8).toString('hex');
  let base = '';

  const subOf = (email: string) => createHash('sha256').update(email.toLowerCase()).digest('hex').slice(0, 21);
  const idToken = (grant: Grant, key: KeyObject) => {
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: 'RS256', kid, typ: 'JWT' };
    const payload = {
      iss: base,
      aud: clientId,
      azp: clientId,
      sub: subOf(grant.email),
      email: grant.email,
      email_verified: true,
      preferred_username: grant.email,
      iat: now,
      exp: now + 3600,
      ...(grant.nonce ? { nonce: grant.nonce } : {}),
    };
    const signingInput = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
    return `${signingInput}.${b64url(sign('sha256', Buffer.from(signingInput), key))}`;
  };
  const mintAccess = (grant: Grant, expiresInSeconds = ttl) => {
    const at = token('fake-at.');
    const expiresAt = Date.now() + expiresInSeconds * 1000;
    accessTokens.set(at, { grant, expiresAt });
    grant.accessTokens.add(at);
    return { accessToken: at, expiresAt };
  };
  const newGrant = (email: string, scope: string, withRefresh: boolean, nonce?: string): Grant => {
    const grant: Grant = { email, scope, refreshToken: withRefresh ? token('fake-rt.') : null, accessTokens: new Set(), nonce };
    if (grant.refreshToken) refreshTokens.set(grant.refreshToken, grant);
    return grant;
  };
  const isActive = (at: string) => {
    const t = accessTokens.get(at);
    return !!t && !revoked.has(at) && t.expiresAt > Date.now();
  };
  const emailOf = (at: string) => (isActive(at) ? accessTokens.get(at)!.grant.email : null);

  /** RFC 6749 §2.3.1: HTTP Basic (form-urlencoded id and secret) or the body; null when the client is not ours. */
  const clientOf = (req: IncomingMessage, form: URLSearchParams): string | null => {
    let id = form.get('client_id');
    let secret = form.get('client_secret');
    const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (basic) {
      const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) return null;
      const bid = decodeURIComponent(decoded.slice(0, colon));
      if (id !== null && id !== bid) return null;
      id = bid;
      secret = decodeURIComponent(decoded.slice(colon + 1));
    }
    if (id === null || secret === null || !safeEqual(id, clientId) || !safeEqual(secret, clientSecret)) return null;
    return id;
  };

  const authorize = (res: ServerResponse, q: URLSearchParams) => {
    const bad = (why: string) => text(res, 400, `Error 400: invalid_request\n${why}`);
    if (q.get('client_id') !== clientId) return text(res, 401, 'Error 401: invalid_client\nThe OAuth client was not found.');
    const redirectUri = q.get('redirect_uri');
    let redirect: URL;
    try {
      redirect = new URL(redirectUri ?? '');
    } catch {
      return bad('Missing or invalid redirect_uri.');
    }
    if (!/^https?:$/.test(redirect.protocol) || redirect.hash) return bad('Invalid redirect_uri.');
    if (opts.redirectUris && !opts.redirectUris.includes(redirectUri!)) return text(res, 400, 'Error 400: redirect_uri_mismatch');
    // Google and Microsoft show these as an error page too (no redirect), so a test sees a 400 rather than a callback.
    const state = q.get('state');
    if (!state) return bad('Missing state.');
    if (q.get('response_type') !== 'code') return bad('Unsupported response_type (only "code").');
    const scope = q.get('scope')?.trim();
    if (!scope) return bad('Missing required parameter: scope');
    const challenge = q.get('code_challenge');
    if (!challenge || !PKCE_RE.test(challenge)) return bad('Missing or malformed code_challenge.');
    if (q.get('code_challenge_method') !== 'S256') return bad('code_challenge_method must be S256.');
    const back = (params: Record<string, string>) => {
      for (const [k, v] of Object.entries(params)) redirect.searchParams.set(k, v);
      res.writeHead(302, { location: redirect.toString() });
      res.end();
    };
    if (denyCount > 0 || q.get('deny') === '1') {
      if (denyCount > 0) denyCount--;
      return back({ error: 'access_denied', error_description: 'The user denied the request.', state });
    }
    const offline = q.get('access_type') === 'offline' || scope.split(/\s+/).includes('offline_access');
    const code = token('fake-code.');
    const email = q.get('login_hint') || opts.userEmail || 'dana@acme.example';
    codes.set(code, {
      clientId,
      redirectUri: redirectUri!,
      challenge,
      email,
      scope,
      offline,
      nonce: q.get('nonce') ?? undefined,
      expiresAt: Date.now() + 600_000,
    });
    back({ code, state, scope });
  };

  const tokenEndpoint = (req: IncomingMessage, res: ServerResponse, form: URLSearchParams) => {
    const invalidGrant = (description: string) => json(res, 400, { error: 'invalid_grant', error_description: description });
    if (!/^application\/x-www-form-urlencoded/i.test(req.headers['content-type'] ?? ''))
      return json(res, 400, { error: 'invalid_request', error_description: 'Content-Type must be application/x-www-form-urlencoded.' });
    const client = clientOf(req, form);
    if (!client) return json(res, 401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' }, { 'www-authenticate': 'Basic' });
    const grantType = form.get('grant_type');
    const answer = (grant: Grant, refreshToken: string | null) => {
      const { accessToken } = mintAccess(grant);
      json(res, 200, {
        access_token: accessToken,
        expires_in: ttl,
        ...(refreshToken ? { refresh_token: refreshToken } : {}),
        scope: grant.scope,
        token_type: 'Bearer',
        id_token: idToken(grant, privateKey),
      });
    };
    if (grantType === 'authorization_code') {
      const code = form.get('code') ?? '';
      const c = codes.get(code);
      // Single use: a replayed code is gone.
      codes.delete(code);
      if (!c || c.expiresAt < Date.now() || c.clientId !== client) return invalidGrant('Malformed auth code.');
      if (form.get('redirect_uri') !== c.redirectUri) return json(res, 400, { error: 'redirect_uri_mismatch', error_description: 'Bad Request' });
      const verifier = form.get('code_verifier') ?? '';
      if (!PKCE_RE.test(verifier)) return invalidGrant('Missing code verifier.');
      if (!safeEqual(b64url(createHash('sha256').update(verifier).digest()), c.challenge)) return invalidGrant('Invalid code verifier.');
      const grant = newGrant(c.email, c.scope, c.offline || !opts.requireOfflineAccess, c.nonce);
      return answer(grant, grant.refreshToken);
    }
    if (grantType === 'refresh_token') {
      const rt = form.get('refresh_token') ?? '';
      const grant = refreshTokens.get(rt);
      if (!grant || refuseAll || refused.has(rt) || revoked.has(rt)) return invalidGrant('Token has been expired or revoked.');
      if (!opts.rotateRefreshTokens) return answer(grant, null);
      // Rotation: the presented refresh token is spent; only the new one works from now on.
      refreshTokens.delete(rt);
      grant.refreshToken = token('fake-rt.');
      refreshTokens.set(grant.refreshToken, grant);
      return answer(grant, grant.refreshToken);
    }
    json(res, 400, { error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${grantType ?? ''}` });
  };

  const revokeGrant = (grant: Grant) => {
    for (const at of grant.accessTokens) revoked.add(at);
    if (grant.refreshToken) revoked.add(grant.refreshToken);
  };

  const introspection = (at: string) => {
    const t = accessTokens.get(at);
    if (!t || !isActive(at)) return { active: false };
    // Flat fields only: Dovecot 2.3's oauth2 passdb skips nested JSON values.
    return {
      active: true,
      email: t.grant.email,
      preferred_username: t.grant.email,
      username: t.grant.email,
      sub: subOf(t.grant.email),
      scope: t.grant.scope,
      client_id: clientId,
      token_type: 'Bearer',
      exp: Math.floor(t.expiresAt / 1000),
    };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const body = req.method === 'POST' ? await readBody(req) : '';
    const form = new URLSearchParams(body);
    requests.push({ method: req.method ?? 'GET', path: u.pathname, ...(u.pathname === '/token' ? { grantType: form.get('grant_type') ?? undefined } : {}) });
    if (u.pathname === '/authorize' && req.method === 'GET') {
      fake.lastAuthorize = new URLSearchParams(u.searchParams);
      return authorize(res, u.searchParams);
    }
    if (u.pathname === '/token' && req.method === 'POST') return tokenEndpoint(req, res, form);
    if (u.pathname === '/revoke' && req.method === 'POST') {
      const t = form.get('token') ?? u.searchParams.get('token') ?? '';
      const grant = accessTokens.get(t)?.grant ?? refreshTokens.get(t);
      if (!grant || revoked.has(t)) return json(res, 400, { error: 'invalid_token', error_description: 'Token expired or revoked' });
      revokeGrant(grant);
      return json(res, 200, {});
    }
    if (u.pathname === '/introspect') {
      const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
      if (bearer) {
        // introspection_mode = auth: a userinfo endpoint, which answers 401 to a dead token.
        const info = introspection(bearer[1]);
        if (!info.active) return json(res, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer error="invalid_token"' });
        return json(res, 200, info);
      }
      const t = req.method === 'POST' ? form.get('token') : u.searchParams.get('token');
      if (!t) return json(res, 400, { error: 'invalid_request', error_description: 'Missing token.' });
      return json(res, 200, introspection(t));
    }
    if (u.pathname === '/jwks' && req.method === 'GET')
      return json(res, 200, { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] });
    if (u.pathname === '/.well-known/openid-configuration' && req.method === 'GET') {
      return json(res, 200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        revocation_endpoint: `${base}/revoke`,
        introspection_endpoint: `${base}/introspect`,
        jwks_uri: `${base}/jwks`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      });
    }
    json(res, 404, { error: 'not_found' });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: Error) => {
      if (!res.headersSent) json(res, 500, { error: 'server_error', error_description: e.message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const fake: OAuthProviderFake = {
    url: base,
    authorizeUrl: `${base}/authorize`,
    tokenUrl: `${base}/token`,
    revokeUrl: `${base}/revoke`,
    introspectUrl: `${base}/introspect`,
    jwksUrl: `${base}/jwks`,
    issuer: base,
    clientId,
    clientSecret,
    issue(email, o = {}) {
      const grant = newGrant(email, o.scope ?? 'openid email https://mail.google.com/', true);
      const { accessToken, expiresAt } = mintAccess(grant, o.expiresInSeconds);
      return { accessToken, refreshToken: grant.refreshToken!, expiresAt: new Date(expiresAt) };
    },
    refuseRefresh(rt) {
      if (rt === undefined) refuseAll = true;
      else refused.add(rt);
    },
    revokeAccess(at) {
      revoked.add(at);
    },
    denyNext() {
      denyCount++;
    },
    isActive,
    emailOf,
    verify: (user, at) => emailOf(at)?.toLowerCase() === user.toLowerCase(),
    requests,
    lastAuthorize: null,
    revoked,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

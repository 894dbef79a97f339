import './types.js';
import { registerConsoleRoles } from './actions.js';
import { consoleCookie, CSRF_COOKIE, SESSION_COOKIE } from './cookies.js';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import csrf from '@fastify/csrf-protection';
import helmet from '@fastify/helmet';
import { Type } from 'typebox';
import type { AppInstance } from '../app/types.js';
import { AppError } from '../lib/errors.js';
import { isDatabaseUnavailable } from '../db/database.js';
import { CONSOLE_SESSION_TTL_MS } from '../modules/console-sessions/index.js';
import { sha256Hex } from '../lib/ids.js';
import { registerAssets } from './assets.js';
import { ErrorBody, pageContext, sendPage } from './render.js';
import { LoginLinkBody, SignInBody } from './pages/sign-in.js';
import { registerConsolePages } from './pages/index.js';
import type { ConsoleDeps } from './deps.js';

export type { ConsoleDeps } from './deps.js';

export { SESSION_COOKIE } from './cookies.js';
/** Failed sign-ins (key form and login links) per client address per minute; the next attempt gets 429. */
export const SIGN_IN_FAILURES_PER_MINUTE = 10;

/** The origin of an OAuth authorize URL, for the CSP's form-action (Chromium applies it to a form's redirect too). */
const authorizeOrigin = (url: string): string | null => {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
};

/**
 * Where a successful sign-in returns to: only a path of this console (never another host, `//host`, or a
 * backslash trick), else the dashboard.
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length > 2000) return '/console';
  if (!/^\/(console|review)(\/|\?|$)/.test(next)) return '/console';
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (/[\\\s\x00-\x1f]/.test(next) || next.startsWith('//')) return '/console';
  return next;
}

/**
 * The web console (issue 15): server-rendered pages on the API's services, in their own encapsulated scope, so
 * cookies, form bodies, CSRF, the strict CSP and the HTML error pages apply to console routes only and the API's
 * JSON answers stay as they are. Conventions for page authors: docs/console.md.
 */
export async function consolePlugin(app: AppInstance, deps: ConsoleDeps) {
  const { services, config } = deps;
  const sessions = services.consoleSessions;
  const secure = (config.publicUrl ?? '').toLowerCase().startsWith('https:');
  const sessionCookie = consoleCookie(SESSION_COOKIE, secure);

  await app.register(cookie);
  await app.register(formbody, { bodyLimit: 256 * 1024 });
  // A token is minted for the session cookie the request carries (userInfo, HMAC-bound): a token from another
  // session, or from before a sign-in, is refused (403) even with the same CSRF secret cookie.
  await app.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: consoleCookie(CSRF_COOKIE, secure).name,
    cookieOpts: consoleCookie(CSRF_COOKIE, secure).options,
    getUserInfo: (req) => req.consoleCsrfBinding,
    csrfOpts: { hmacKey: sessions.csrfHmacKey() },
  });
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'"],
        // "Connect X account" posts here and is redirected to X's authorize page: browsers apply form-action to
        // the redirect too, so X's origin is allowed as a form target.
        // A connect form answers with a redirect to the provider's sign-in page: X, Google, Microsoft.
        formAction: [
          "'self'",
          ...[config.x.authorizeUrl, config.mailOauth.google.authorizeUrl, config.mailOauth.microsoft.authorizeUrl].map(authorizeOrigin),
        ].filter((v): v is string => v !== null),
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        ...(secure ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    strictTransportSecurity: secure ? { maxAge: 15552000 } : false,
    crossOriginEmbedderPolicy: false,
  });

  app.decorateRequest('consoleSession', null);
  app.decorateRequest('consoleCsrfBinding', '');
  app.decorateRequest('consoleSecureCookies', secure);

  // The session behind the cookie, re-checked against its key on every request. CSRF tokens are bound to the
  // cookie's value (its hash), so an ended session's page can still sign out, and nothing else can.
  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.url?.startsWith('/console/assets/')) return;
    const sessionId = req.cookies[sessionCookie.name];
    req.consoleCsrfBinding = sessionId ? `session:${sha256Hex(sessionId)}` : 'no-session';
    req.consoleSession = await sessions.resume(sessionId);
  });
  // Every form POST carries a valid token, checked before anything runs (403, nothing changes).
  app.addHook('preHandler', (req, reply, done) => {
    if (req.method === 'GET' || req.method === 'HEAD') return done();
    app.csrfProtection(req, reply, done);
  });
  // Pages without a session show the sign-in form in place (401), and come back here after sign-in.
  app.addHook('preHandler', async (req, reply) => {
    if (req.routeOptions.config?.consolePublic || req.consoleSession) return;
    if (req.headers['hx-request']) return reply.status(401).header('hx-redirect', '/console').send('');
    const next = req.method === 'GET' ? req.url : '/console';
    return sendSignIn(req, reply, { next, status: 401 });
  });
  registerConsoleRoles(app, services.audit);

  async function sendSignIn(req: FastifyRequest, reply: FastifyReply, opts: { next: string; status: number; error?: string }) {
    const ctx = await pageContext(req, reply, sessions);
    ctx.session = null;
    return sendPage(reply, ctx, {
      title: 'Sign in',
      status: opts.status,
      body: <SignInBody csrfToken={ctx.csrfToken} next={safeNext(opts.next)} error={opts.error} />,
    });
  }

  function setSessionCookie(reply: FastifyReply, sessionId: string) {
    reply.setCookie(sessionCookie.name, sessionId, { ...sessionCookie.options, maxAge: CONSOLE_SESSION_TTL_MS / 1000 });
  }

  function clearSessionCookie(reply: FastifyReply) {
    reply.clearCookie(sessionCookie.name, sessionCookie.options);
  }

  // The sign-in limit counts failures per client address (req.ip: the socket's peer, or the client a proxy in
  // OUTREACH_TRUST_PROXY names). Every attempt takes one from the budget first, so parallel guesses cannot overrun
  // it; a successful one gives it back. A limited address is refused even with the right key (429), other
  // addresses are not affected.
  const signInKey = (req: FastifyRequest) => `console-sign-in:${req.ip}`;

  /** Seconds this address must wait (429), or 0: the attempt may go on, and counts as a failure unless refunded. */
  async function signInAttempt(req: FastifyRequest) {
    const { count, resetAt } = await deps.rateLimitStore.hit(signInKey(req), 60_000);
    return count > SIGN_IN_FAILURES_PER_MINUTE ? Math.max(1, Math.ceil((resetAt - Date.now()) / 1000)) : 0;
  }

  async function signInSucceeded(req: FastifyRequest) {
    await deps.rateLimitStore.refund(signInKey(req));
  }

  app.setErrorHandler(async (error: FastifyError | AppError, req, reply) => {
    const unavailable = !(error instanceof AppError) && isDatabaseUnavailable(error);
    if (unavailable) reply.header('retry-after', '1');
    const status = unavailable ? 503 : error instanceof AppError ? error.statusCode : typeof error.statusCode === 'number' ? error.statusCode : 500;
    if (status >= 500 && !unavailable) req.log.error({ err: { type: error.name, message: error.message, stack: error.stack } }, 'console request failed');
    const [heading, message] =
      error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET'
        ? ['Form expired', 'This form’s security token is missing or out of date, so nothing was changed. Go back, reload the page and try again.']
        : status === 404
          ? ['Not found', 'There is nothing here, or it belongs to another workspace.']
          : status === 429
            ? ['Too many attempts', 'Wait a minute and try again.']
            : error.code === 'forbidden'
              ? ['Not allowed for your role', `${error.message}. Nothing was changed; ask an admin or owner of this workspace.`]
              : status < 500
                ? ['Request refused', error instanceof AppError || error.validation ? error.message : 'The request was not valid.']
                : unavailable
                  ? ['Database unavailable', 'The database cannot be reached right now. Try again in a moment.']
                  : ['Something went wrong', `The server could not answer. Request id: ${req.id}`];
    if (error instanceof AppError) for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
    const ctx = await pageContext(req, reply, sessions).catch(() => ({ session: null, csrfToken: '', workspaces: [] }));
    return sendPage(reply, ctx, { title: heading, status, body: <ErrorBody heading={heading} message={message} /> });
  });

  registerAssets(app);

  app.get('/', { schema: { hide: true }, config: { consolePublic: true } }, async (_req, reply) => reply.redirect('/console', 303));

  app.get<{ Querystring: { next?: string } }>('/console/sign-in', { schema: { hide: true }, config: { consolePublic: true } }, async (req, reply) =>
    req.consoleSession ? reply.redirect(safeNext(req.query.next), 303) : sendSignIn(req, reply, { next: req.query.next ?? '/console', status: 200 }),
  );

  app.post<{ Body: { key?: string; next?: string } }>(
    '/console/sign-in',
    {
      schema: { hide: true, body: Type.Object({ key: Type.Optional(Type.String()), next: Type.Optional(Type.String()), _csrf: Type.Optional(Type.String()) }) },
      config: { consolePublic: true },
    },
    async (req, reply) => {
      const next = safeNext(req.body.next);
      const wait = await signInAttempt(req);
      if (wait > 0) {
        reply.header('retry-after', String(wait));
        return sendSignIn(req, reply, { next, status: 429, error: `Too many sign-in attempts. Wait ${wait} seconds and try again.` });
      }
      const started = req.body.key ? await sessions.signInWithKey(req.body.key) : null;
      if (!started) {
        return sendSignIn(req, reply, { next, status: 401, error: 'That workspace key was not accepted: it is wrong, revoked or expired.' });
      }
      await signInSucceeded(req);
      setSessionCookie(reply, started.sessionId);
      return reply.redirect(next, 303);
    },
  );

  app.get<{ Params: { token: string } }>('/console/login/:token', { schema: { hide: true }, config: { consolePublic: true } }, async (req, reply) => {
    const ctx = await pageContext(req, reply, sessions);
    return sendPage(reply, { ...ctx, session: null }, { title: 'Sign in', body: <LoginLinkBody csrfToken={ctx.csrfToken} token={req.params.token} /> });
  });

  app.post<{ Body: { token?: string } }>(
    '/console/login',
    {
      schema: { hide: true, body: Type.Object({ token: Type.Optional(Type.String()), _csrf: Type.Optional(Type.String()) }) },
      config: { consolePublic: true },
    },
    async (req, reply) => {
      const wait = await signInAttempt(req);
      if (wait > 0) throw new AppError(429, 'rate_limited', 'too many sign-in attempts', {}, { 'retry-after': String(wait) });
      const started = req.body.token ? await sessions.signInWithLink(req.body.token) : null;
      if (!started)
        return sendSignIn(req, reply, { next: '/console', status: 401, error: 'That sign-in link is unknown, used or expired. Ask for a new one.' });
      await signInSucceeded(req);
      setSessionCookie(reply, started.sessionId);
      return reply.redirect('/console', 303);
    },
  );

  app.post('/console/sign-out', { schema: { hide: true }, config: { consolePublic: true } }, async (req, reply) => {
    if (req.consoleSession) await sessions.end(req.consoleSession);
    clearSessionCookie(reply);
    return reply.redirect('/console/sign-in', 303);
  });

  // "Sign out everywhere": every console session of this workspace ends (other browsers, login-link sessions).
  app.post('/console/sign-out-everywhere', { schema: { hide: true } }, async (req, reply) => {
    await sessions.endAll(req.consoleSession!);
    clearSessionCookie(reply);
    return reply.redirect('/console/sign-in', 303);
  });

  app.post<{ Body: { workspaceId?: string } }>(
    '/console/workspace',
    { schema: { hide: true, body: Type.Object({ workspaceId: Type.Optional(Type.String()), _csrf: Type.Optional(Type.String()) }) } },
    async (req, reply) => {
      await sessions.switchWorkspace(req.consoleSession!, req.body.workspaceId ?? '');
      return reply.redirect('/console', 303);
    },
  );

  await registerConsolePages(app, deps, setSessionCookie);

  // Unknown console paths get the HTML 404 page (the API keeps its JSON 404).
  for (const path of ['/console/*', '/review/*']) {
    app.all(path, { schema: { hide: true } }, async () => {
      throw new AppError(404, 'not_found', 'no such page');
    });
  }
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../../app/types.js';
import { AppError, badRequest } from '../../lib/errors.js';
import { WEBAUTHN_CHALLENGE_TTL_MS } from '../../modules/people/index.js';
import type { ConsoleDeps } from '../deps.js';
import { When } from '../ui.js';
import { consoleCookie, WEBAUTHN_COOKIE } from '../cookies.js';

type PasskeyBody = { response?: unknown };

/**
 * Passkeys in the console (docs/roles.md "Passkeys"): a signed-in person registers one on the People page; the sign-in
 * page signs in with one. Each ceremony is two JSON posts (CSRF token in x-csrf-token); the challenge's ticket rides in
 * a short HttpOnly cookie, `__Host-` and Secure under https like the session cookie.
 */
export function passkeysPages(app: AppInstance, deps: ConsoleDeps, setSessionCookie: (reply: FastifyReply, sessionId: string) => void) {
  const { passkeys, consoleSessions } = deps.services;
  const publicOrigin = deps.config.publicUrl ? new URL(deps.config.publicUrl).origin : null;
  const originOf = (req: FastifyRequest) => publicOrigin ?? `${req.protocol}://${req.host}`;
  const ticketCookie = (req: FastifyRequest) => consoleCookie(WEBAUTHN_COOKIE, req.consoleSecureCookies, 'strict');
  const keepTicket = (req: FastifyRequest, reply: FastifyReply, ticket: string) => {
    const c = ticketCookie(req);
    reply.setCookie(c.name, ticket, { ...c.options, maxAge: WEBAUTHN_CHALLENGE_TTL_MS / 1000 });
  };
  const takeTicket = (req: FastifyRequest, reply: FastifyReply) => {
    const c = ticketCookie(req);
    reply.clearCookie(c.name, c.options);
    return req.cookies[c.name];
  };
  const personOf = (req: FastifyRequest) => {
    const person = req.consoleSession?.auth.person;
    if (!person) throw badRequest('passkey_needs_a_person', 'a passkey belongs to a person: sign in with your invitation or sign-in link first');
    return person;
  };

  app.post('/console/passkeys/register/options', { schema: { hide: true } }, async (req, reply) => {
    const made = await passkeys.registrationOptions(personOf(req), req.consoleSession!.auth.workspaceId, originOf(req));
    keepTicket(req, reply, made.ticket);
    return reply.type('application/json').send({ options: made.options });
  });

  app.post<{ Body: PasskeyBody }>('/console/passkeys/register', { schema: { hide: true } }, async (req, reply) => {
    const done = await passkeys.register(personOf(req), takeTicket(req, reply), req.body?.response, originOf(req));
    return reply.type('application/json').send({ ok: true, id: done.id });
  });

  app.post('/console/passkeys/sign-in/options', { schema: { hide: true }, config: { consolePublic: true } }, async (req, reply) => {
    const made = await passkeys.signInOptions(originOf(req));
    keepTicket(req, reply, made.ticket);
    return reply.type('application/json').send({ options: made.options });
  });

  app.post<{ Body: PasskeyBody }>('/console/passkeys/sign-in', { schema: { hide: true }, config: { consolePublic: true } }, async (req, reply) => {
    const who = await passkeys.signIn(takeTicket(req, reply), req.body?.response, originOf(req));
    if (!who) throw new AppError(401, 'passkey_not_accepted', 'That passkey was not accepted: it is unknown here, or its person is no longer a member');
    const started = await consoleSessions.startPersonSession(who.person, who.workspaceId);
    setSessionCookie(reply, started.sessionId);
    return reply.type('application/json').send({ ok: true, next: '/console' });
  });
}

/** The People page's section for the signed-in person: their passkeys and the button that registers one. */
export async function YourPasskeys(props: { deps: ConsoleDeps; personId: string | undefined }) {
  if (!props.personId) return '';
  const list = await props.deps.services.passkeys.list(props.personId);
  return (
    <section aria-labelledby="your-passkeys">
      <h2 id="your-passkeys">Your passkeys</h2>
      <p>
        {list.length === 0
          ? 'You have no passkey yet. With one, you sign in from this device without a link.'
          : `You have ${list.length === 1 ? 'one passkey' : `${list.length} passkeys`}.`}
      </p>
      {list.length ? (
        <ul>
          {list.map((k) => (
            <li>
              Added <When at={k.createdAt} />
              {k.lastUsedAt ? (
                <>
                  , last used <When at={k.lastUsedAt} />
                </>
              ) : (
                ''
              )}
            </li>
          ))}
        </ul>
      ) : (
        ''
      )}
      <PasskeyButton ceremony="register" label="Register a passkey" />
    </section>
  );
}

/** A passkey ceremony's button, the line that says how it went, and the script that runs it (assets/passkeys.js). */
export function PasskeyButton(props: { ceremony: 'register' | 'sign-in'; label: string }) {
  const status = `passkey-${props.ceremony}-status`;
  return (
    <>
      <p>
        <button type="button" data-passkey={props.ceremony} data-status={status} safe>
          {props.label}
        </button>{' '}
        <span id={status} role="status"></span>
      </p>
      <script src="/console/assets/passkeys.js" defer></script>
    </>
  );
}

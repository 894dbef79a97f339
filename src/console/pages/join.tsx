import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../../app/types.js';
import { JOIN_PATH } from '../../modules/people/index.js';
import type { ConsoleDeps } from '../deps.js';
import { CsrfField } from '../layout.js';
import { pageContext, sendPage } from '../render.js';

/**
 * A person's one-time link (docs/roles.md "People"): the landing page says which workspace, which address and (for
 * an invitation) which role, and asks for their name; its button spends the link and signs them in as themselves.
 * Opening the link spends nothing, so a mail scanner's GET cannot use it up. The token is never logged (http-edge).
 */
export function joinPages(app: AppInstance, deps: ConsoleDeps, signIn: (reply: FastifyReply, sessionId: string) => void) {
  const { people, consoleSessions } = deps.services;

  async function linkNotValid(req: FastifyRequest, reply: FastifyReply, status: number, why: string) {
    const ctx = await pageContext(req, reply, consoleSessions);
    return sendPage(
      reply,
      { ...ctx, session: null },
      {
        title: 'Link not valid',
        status,
        body: (
          <section class="error-page">
            <h1>This link does not work</h1>
            <p safe>{why}</p>
          </section>
        ),
      },
    );
  }

  app.get<{ Params: { token: string } }>(`${JOIN_PATH}/:token`, { schema: { hide: true }, config: { consolePublic: true } }, async (req, reply) => {
    const link = await people.describeLink(req.params.token);
    if (!link) return linkNotValid(req, reply, 404, 'It was used already, has expired, or was never made. Ask whoever invited you for a new one.');
    const ctx = await pageContext(req, reply, consoleSessions);
    const invite = link.purpose === 'invite';
    const heading = invite ? `Join ${link.workspaceName}` : `Sign in to ${link.workspaceName}`;
    return sendPage(
      reply,
      { ...ctx, session: null },
      {
        title: heading,
        body: (
          <section>
            <h1 safe>{heading}</h1>
            <p safe>
              {invite ? `You are invited as ${link.email} with the ${link.role ?? 'member'} role.` : `You sign in as ${link.email}. The link works once.`}
            </p>
            <form method="post" action={JOIN_PATH}>
              <CsrfField token={ctx.csrfToken} />
              <input type="hidden" name="token" value={req.params.token} />
              {invite ? (
                <p>
                  <label for="join-name">Your name, as your team will see it on your decisions</label>
                  <input id="join-name" name="name" type="text" maxlength="120" autocomplete="name" required />
                </p>
              ) : (
                ''
              )}
              <p>
                <button type="submit" class="primary">
                  {invite ? 'Join and sign in' : 'Sign in'}
                </button>
              </p>
            </form>
          </section>
        ),
      },
    );
  });

  app.post<{ Body: { token?: string; name?: string } }>(JOIN_PATH, { schema: { hide: true }, config: { consolePublic: true } }, async (req, reply) => {
    const started = req.body.token ? await consoleSessions.signInPerson(req.body.token, req.body.name) : null;
    if (!started) {
      return linkNotValid(req, reply, 401, 'It was used already, has expired, or you are no longer a member. Ask an admin of the workspace for a new one.');
    }
    signIn(reply, started.sessionId);
    return reply.redirect('/console', 303);
  });
}

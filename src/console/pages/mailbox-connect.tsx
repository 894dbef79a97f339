import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { MAIL_PROVIDER_NAMES, MAILBOX_CALLBACK_PATH, MailboxError, type MailboxView } from '../../channels/email/index.js';
import { MAIL_OAUTH_PROVIDERS, type MailOauthProvider } from '../../config/mail-oauth.js';
import { AppError, notFound } from '../../lib/errors.js';
import { CsrfField } from '../layout.js';
import type { ConsoleDeps } from '../deps.js';
import { pageContext, sendPage } from '../render.js';
import { redirectWithNotice } from '../ui.js';
import { renderAccountsPage } from './accounts.js';
import { disconnectNotice } from './mailbox-connect-parts.js';

// "Connect Google mailbox" and "Connect Microsoft 365 mailbox" (docs/email.md): the console's face of the mailbox
// connect service (OAuth 2.0 authorization code with PKCE and a single-use state), its callback, and Disconnect.

const ConnectBody = Type.Object(
  {
    _csrf: Type.Optional(Type.String()),
    provider: Type.Optional(Type.String({ maxLength: 40 })),
    smtpUrl: Type.Optional(Type.String({ maxLength: 2048 })),
    imapUrl: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: true },
);
const CallbackQuery = Type.Object(
  { state: Type.Optional(Type.String()), code: Type.Optional(Type.String()), error: Type.Optional(Type.String()) },
  { additionalProperties: true },
);
const MailboxParams = Type.Object({ id: Type.String({ maxLength: 200 }) });
const DisconnectBody = Type.Object({ _csrf: Type.Optional(Type.String()), confirmed: Type.Optional(Type.String()) }, { additionalProperties: true });

/** A server override refused by the public-address guard: which address, for the operator's log (never the page). */
function logNotAllowed(req: FastifyRequest, err: unknown) {
  const e = err as { code?: string; logDetail?: string };
  if (e?.code === 'server_not_allowed') req.log.warn({ code: e.code, detail: e.logDetail }, 'mailbox connect: server not allowed');
}

const isProvider = (v: unknown): v is MailOauthProvider => typeof v === 'string' && (MAIL_OAUTH_PROVIDERS as readonly string[]).includes(v);

export function mailboxConnectPages(app: AppInstance, deps: ConsoleDeps) {
  const { mailboxConnect, mailboxes } = deps.services;

  // Starts the connect: the service keeps the state and PKCE verifier, bound to this console session; the person
  // goes to Google or Microsoft to approve. A refusal (an app not configured, a bad server URL) shows on Accounts.
  app.post<{ Body: { provider?: string; smtpUrl?: string; imapUrl?: string } }>(
    '/console/accounts/mailbox/connect',
    { schema: { hide: true, body: ConnectBody } },
    async (req, reply) => {
      const { provider, smtpUrl, imapUrl } = req.body;
      try {
        if (!isProvider(provider)) throw new AppError(400, 'invalid_request', `provider must be one of: ${MAIL_OAUTH_PROVIDERS.join(', ')}`);
        const { authorizeUrl } = await mailboxConnect.begin({
          workspaceId: req.consoleSession!.auth.workspaceId,
          provider,
          smtpUrl: smtpUrl?.trim() || null,
          imapUrl: imapUrl?.trim() || null,
          sessionIdHash: req.consoleSession!.idHash,
          // Servers typed here must be public (OUTREACH_MAILBOX_ALLOW_PRIVATE=1 lifts it); the reason goes to the log only.
          publicServersOnly: true,
        });
        return reply.redirect(authorizeUrl, 303);
      } catch (err) {
        logNotAllowed(req, err);
        if (err instanceof AppError) return renderAccountsPage(deps, req, reply, { kind: 'refused', text: err.message }, err.statusCode);
        throw err;
      }
    },
  );

  // The provider sends the person back here. The single-use state authorizes it (bound to the console session that
  // started it, if any), so a connect from `outreach mailbox connect` completes in a browser without a session too.
  app.get<{ Querystring: { state?: string; code?: string; error?: string } }>(
    MAILBOX_CALLBACK_PATH,
    { schema: { hide: true, querystring: CallbackQuery }, config: { consolePublic: true } },
    async (req, reply) => {
      let done: { workspaceId: string; mailbox: MailboxView };
      try {
        done = await mailboxConnect.complete({
          state: req.query.state,
          code: req.query.code,
          error: req.query.error,
          sessionIdHash: req.consoleSession?.idHash ?? null,
        });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        logNotAllowed(req, err);
        const ctx = await pageContext(req, reply, deps.services.consoleSessions);
        return sendPage(reply, ctx, {
          title: 'Mailbox not connected',
          status: err.statusCode,
          body: (
            <section class="error-page">
              <h1>Mailbox not connected</h1>
              <p role="alert" safe>
                {err.message}
              </p>
              <p>
                Nothing was saved. <a href="/console/accounts">Back to Accounts</a>
              </p>
            </section>
          ),
        });
      }
      const m = done.mailbox;
      // The connect saves an OAuth mailbox only; `password` cannot come back from it.
      const provider = m.auth === 'password' ? 'OAuth' : MAIL_PROVIDER_NAMES[m.auth];
      // Which workspace it went to, in words: a connect link may be opened by someone other than who started it.
      const name = await deps.services.workspaces.workspaceName(done.workspaceId);
      const text = `Connected ${m.address} with ${provider} to the workspace “${name}”. It sends and reads mail with OAuth; tokens are stored encrypted.`;
      if (req.consoleSession && req.consoleSession.auth.workspaceId === done.workspaceId) {
        return redirectWithNotice(reply, `/console/mailboxes/${encodeURIComponent(m.id)}`, { kind: 'done', text });
      }
      const ctx = await pageContext(req, reply, deps.services.consoleSessions);
      return sendPage(reply, ctx, {
        title: 'Mailbox connected',
        body: (
          <>
            <h1>Mailbox connected</h1>
            <p role="status" safe>{`${text} You can close this page.`}</p>
          </>
        ),
      });
    },
  );

  // "Disconnect": a page of its own asks first (the mailbox stops sending and reading); the confirmed form does it.
  app.post<{ Params: { id: string }; Body: { confirmed?: string } }>(
    '/console/mailboxes/:id/disconnect',
    { schema: { hide: true, params: MailboxParams, body: DisconnectBody } },
    async (req, reply) => {
      const workspaceId = req.consoleSession!.auth.workspaceId;
      const view = (await mailboxes.list(workspaceId)).find((m) => m.id === req.params.id);
      if (!view) throw notFound('mailbox');
      const path = `/console/mailboxes/${encodeURIComponent(view.id)}`;
      if (req.body.confirmed !== 'yes') {
        const ctx = await pageContext(req, reply, deps.services.consoleSessions);
        const name = view.auth === 'password' ? null : MAIL_PROVIDER_NAMES[view.auth];
        return sendPage(reply, ctx, {
          title: `Disconnect ${view.address}`,
          nav: 'accounts',
          body: (
            <section>
              <h1 safe>{`Disconnect ${view.address}?`}</h1>
              <p safe>
                {(view.auth === 'password'
                  ? 'Its stored password is deleted here.'
                  : view.auth === 'google'
                    ? 'Its tokens are deleted here and the access is revoked at Google.'
                    : `Its tokens are deleted here; ${name} offers no revocation, so remove the app under "My apps" in the Microsoft account afterwards (or ask the tenant admin).`) +
                  ' Nothing is sent from or read in this mailbox any more: its e-mail steps go out as for an account without a mailbox (another mailbox of' +
                  ' the workspace, SMTP_URL or the sandbox). Its leads, replies and history stay.'}
              </p>
              <form method="post" action={`${path}/disconnect`} class="confirm-actions">
                <CsrfField token={ctx.csrfToken} />
                <input type="hidden" name="confirmed" value="yes" />
                <button type="submit" class="danger">
                  Yes, disconnect
                </button>
                <a href={path}>Cancel</a>
              </form>
            </section>
          ),
        });
      }
      let revokedAtProvider: boolean | null;
      try {
        ({ revokedAtProvider } = await mailboxes.remove(workspaceId, view.id));
      } catch (err) {
        // Removed meanwhile (another tab, the CLI): the mailbox is gone either way.
        if (err instanceof MailboxError && err.code === 'mailbox_not_found') throw notFound('mailbox');
        throw err;
      }
      return redirectWithNotice(reply, '/console/accounts', { kind: 'done', text: disconnectNotice(view, revokedAtProvider) });
    },
  );
}

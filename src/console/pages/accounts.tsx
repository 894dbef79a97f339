import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, notFound } from '../../lib/errors.js';
import type { AppInstance } from '../../app/types.js';
import { CALLBACK_PATH, disconnectOutcomeText } from '../../channels/x/index.js';
import { CsrfField, PostButton, TableHead } from '../layout.js';
import type { ConsoleDeps } from '../plugin.js';
import { ErrorBody, pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, exactTime, formatNumber, NoticeBox, type Notice, type Tone } from '../ui.js';

const FormBody = Type.Object({ _csrf: Type.Optional(Type.String()) }, { additionalProperties: true });
const DisconnectBody = Type.Object({ _csrf: Type.Optional(Type.String()), confirmed: Type.Optional(Type.String()) }, { additionalProperties: true });
const DisconnectParams = Type.Object({ userId: Type.String() });

/** The X account's state in one word, as a badge beside the Channel column's sentence. */
function channelBadge(c: { status: 'connected' | 'disconnected'; rateLimitedUntil: Date | null } | undefined, now: Date): { label: string; tone: Tone } {
  if (!c) return { label: 'Sandbox', tone: 'neutral' };
  if (c.status === 'disconnected') return { label: 'Disconnected', tone: 'bad' };
  if (c.rateLimitedUntil && c.rateLimitedUntil > now) return { label: 'Rate limited', tone: 'warn' };
  return { label: 'Connected', tone: 'good' };
}

/** A sending account's stored status: connected is the good case, anything else needs a look. */
const accountStatusTone = (status: string): Tone => (status === 'connected' ? 'good' : status === 'paused' ? 'warn' : 'bad');

/** What the Channel column says of an X account. */
function channelLabel(c: { status: 'connected' | 'disconnected'; disconnectReason: string | null; rateLimitedUntil: Date | null } | undefined, now: Date) {
  if (!c) return 'Sandbox (not connected to X)';
  if (c.status === 'disconnected') {
    return c.disconnectReason === 'by_person'
      ? 'Disconnected here: its steps wait until it is connected again'
      : 'Disconnected: X refused its tokens, connect it again';
  }
  if (c.rateLimitedUntil && c.rateLimitedUntil > now) return `Connected to X, paused by X's rate limit until ${exactTime(c.rateLimitedUntil)}`;
  return 'Connected to X';
}
const CallbackQuery = Type.Object(
  { state: Type.Optional(Type.String()), code: Type.Optional(Type.String()), error: Type.Optional(Type.String()) },
  { additionalProperties: true },
);

/** The workspace's sending accounts and connected X identities. */
export function accountsPages(app: AppInstance, deps: ConsoleDeps) {
  const { xConnect } = deps.services;

  async function renderAccounts(req: FastifyRequest, reply: FastifyReply, notice: Notice | null, status = 200) {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const workspaceId = req.consoleSession!.auth.workspaceId;
    const [{ accounts }, { accounts: xAccounts }, connections] = await Promise.all([
      deps.services.progress.progress(workspaceId, 1),
      deps.services.plays.listAccounts(workspaceId),
      xConnect.connections(workspaceId),
    ]);
    const now = new Date();
    return sendPage(reply, ctx, {
      title: 'Accounts',
      nav: 'accounts',
      status,
      body: (
        <>
          <h1>Accounts</h1>
          <NoticeBox notice={notice} />
          <section aria-labelledby="sending-accounts">
            <h2 id="sending-accounts">Sending accounts</h2>
            {accounts.length === 0 ? (
              <EmptyState title="No sending accounts yet.">
                <p>
                  An operator adds an e-mail sender with <code>npx outreach mailbox add --workspace ID --address …</code> (see docs/email.md); each account then
                  shows here with its invites today and its warm-up.
                </p>
              </EmptyState>
            ) : (
              <table>
                <caption>The accounts sequences send from, with today’s invites against the cap</caption>
                <TableHead columns={['Account', 'Mode', 'Status', 'Invites today', 'Warm-up phase']} />
                <tbody>
                  {accounts.map((a) => (
                    <tr>
                      <td safe>{a.name}</td>
                      <td>
                        <Badge value={a.mode} tone="neutral" />
                      </td>
                      <td>
                        <Badge value={a.storedStatus} tone={accountStatusTone(a.storedStatus)} />
                      </td>
                      <td class="num" safe>{`${formatNumber(a.invitesSentToday)} of ${formatNumber(a.inviteCapToday)}`}</td>
                      <td class="num" safe>
                        {formatNumber(a.rampPhase)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <section aria-labelledby="x-accounts" id="x-accounts-section">
            <h2 id="x-accounts">X accounts</h2>
            {xAccounts.length === 0 ? (
              <EmptyState title="No X account is connected.">
                <p>Connect one below to send X DMs, follows and likes from it; until then X steps run in the sandbox.</p>
              </EmptyState>
            ) : (
              <table>
                <caption>X identities and whether they can send</caption>
                <thead>
                  <tr>
                    <th scope="col">Handle</th>
                    <th scope="col">User id</th>
                    <th scope="col">Channel</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {xAccounts.map((a) => {
                    const c = connections.get(a.userId);
                    const canDisconnect = c !== undefined && c.disconnectReason !== 'by_person';
                    const badge = channelBadge(c, now);
                    return (
                      <tr>
                        <td safe>{'@' + a.handle}</td>
                        <td class="id" safe>
                          {a.userId}
                        </td>
                        <td>
                          <Badge value={badge.label} label={badge.label} tone={badge.tone} /> <span safe>{channelLabel(c, now)}</span>
                        </td>
                        <td>
                          {canDisconnect && (
                            <PostButton
                              action={`/console/accounts/x/${encodeURIComponent(a.userId)}/disconnect`}
                              csrfToken={ctx.csrfToken}
                              label="Disconnect"
                              ariaLabel={`Disconnect @${a.handle}`}
                              variant="danger"
                            />
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            )}
            {xConnect.configured() ? (
              <form method="post" action="/console/accounts/x/connect">
                <CsrfField token={ctx.csrfToken} />
                <button type="submit" class="primary">
                  Connect X account
                </button>
              </form>
            ) : (
              <p>
                To connect a real X account, set <code>OUTREACH_X_CLIENT_ID</code> and <code>OUTREACH_X_CLIENT_SECRET</code> (see docs/x-developer-app.md).
              </p>
            )}
          </section>
        </>
      ),
    });
  }

  app.get('/console/accounts', { schema: { hide: true } }, async (req, reply) => renderAccounts(req, reply, null));

  // Starts OAuth 2.0 with PKCE: the service keeps the state and verifier; the person goes to X to approve.
  app.post('/console/accounts/x/connect', { schema: { hide: true, body: FormBody } }, async (req, reply) => {
    try {
      const { authorizeUrl } = await xConnect.begin(req.consoleSession!.auth.workspaceId, { sessionIdHash: req.consoleSession!.idHash });
      return reply.redirect(authorizeUrl, 303);
    } catch (err) {
      if (err instanceof AppError) return renderAccounts(req, reply, { kind: 'refused', text: err.message }, err.statusCode);
      throw err;
    }
  });

  // "Disconnect": a page of its own asks first (the account stops sending); the confirmed form does it.
  app.post<{ Params: { userId: string }; Body: { confirmed?: string } }>(
    '/console/accounts/x/:userId/disconnect',
    { schema: { hide: true, params: DisconnectParams, body: DisconnectBody } },
    async (req, reply) => {
      const workspaceId = req.consoleSession!.auth.workspaceId;
      const { userId } = req.params;
      const connection = (await xConnect.connections(workspaceId)).get(userId);
      if (!connection) throw notFound('X account');
      if (req.body.confirmed !== 'yes') {
        const ctx = await pageContext(req, reply, deps.services.consoleSessions);
        const handle = (await deps.services.plays.listAccounts(workspaceId)).accounts.find((a) => a.userId === userId)?.handle ?? userId;
        return sendPage(reply, ctx, {
          title: `Disconnect @${handle}`,
          nav: 'accounts',
          body: (
            <section>
              <h1 safe>{`Disconnect @${handle}?`}</h1>
              <p>
                Its tokens are deleted here and revoked at X. Its DMs, follows and likes stop: the steps that use it wait, and nothing new is sent from it (not
                even from the sandbox) until it is connected again with "Connect X account". Its leads, replies and history stay.
              </p>
              <form method="post" action={`/console/accounts/x/${encodeURIComponent(userId)}/disconnect`} class="confirm-actions">
                <CsrfField token={ctx.csrfToken} />
                <input type="hidden" name="confirmed" value="yes" />
                <button type="submit" class="danger">
                  Yes, disconnect
                </button>
                <a href="/console/accounts">Cancel</a>
              </form>
            </section>
          ),
        });
      }
      const done = await xConnect.disconnect(workspaceId, userId);
      return renderAccounts(req, reply, { kind: 'done', text: disconnectOutcomeText(done) });
    },
  );

  // X sends the person back here. The single-use state (bound to the workspace that started the connect) is what
  // authorizes it, so it also works from a browser without a console session (`outreach x connect` on a server).
  app.get<{ Querystring: { state?: string; code?: string; error?: string } }>(
    CALLBACK_PATH,
    { schema: { hide: true, querystring: CallbackQuery }, config: { consolePublic: true } },
    async (req, reply) => {
      const ctx = await pageContext(req, reply, deps.services.consoleSessions);
      try {
        const done = await xConnect.complete({
          state: req.query.state,
          code: req.query.code,
          error: req.query.error,
          sessionIdHash: req.consoleSession?.idHash ?? null,
        });
        if (req.consoleSession && req.consoleSession.auth.workspaceId === done.workspaceId) {
          return renderAccounts(req, reply, { kind: 'done', text: `Connected @${done.handle} (user id ${done.userId}).` });
        }
        return sendPage(reply, ctx, {
          title: 'X account connected',
          body: (
            <>
              <h1>X account connected</h1>
              <p role="status" safe>{`Connected @${done.handle} (user id ${done.userId}). You can close this page.`}</p>
            </>
          ),
        });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        return sendPage(reply, ctx, {
          title: 'X account not connected',
          status: err.statusCode,
          body: <ErrorBody heading="X account not connected" message={err.message} />,
        });
      }
    },
  );
}

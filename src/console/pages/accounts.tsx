import type { FastifyReply, FastifyRequest } from 'fastify';
import { actorOf } from '../../domain/auth-context.js';
import { Type } from 'typebox';
import { AppError, notFound } from '../../lib/errors.js';
import type { AppInstance } from '../../app/types.js';
import { CALLBACK_PATH, disconnectOutcomeText } from '../../channels/x/index.js';
import { CsrfField, PostButton } from '../layout.js';
import type { ConsoleDeps } from '../deps.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, NoticeBox, PrimaryLink, redirectWithNotice, takeNotice, type Notice, type Tone } from '../ui.js';
import type { LinkedinAccountView } from '../../channels/linkedin/index.js';
import { PausedMailboxes } from './mailbox-resume.js';
import { MailboxConnectButtons } from './mailbox-connect-parts.js';
import { MailboxesTable, OtherAccountsTable, XAccountsTable, type SendingDelivery } from './accounts-tables.js';
import { AccountBookingLinks } from './booking-links.js';

const FormBody = Type.Object({ _csrf: Type.Optional(Type.String()) }, { additionalProperties: true });
const DisconnectBody = Type.Object({ _csrf: Type.Optional(Type.String()), confirmed: Type.Optional(Type.String()) }, { additionalProperties: true });
const DisconnectParams = Type.Object({ userId: Type.String() });
const AccountParams = Type.Object({ accountId: Type.String({ maxLength: 200 }) });
const DeliveryBody = Type.Object({ _csrf: Type.Optional(Type.String()), delivery: Type.Optional(Type.String()) }, { additionalProperties: true });
const GatewayBody = Type.Object({ _csrf: Type.Optional(Type.String()), gatewayAccountId: Type.Optional(Type.String()) }, { additionalProperties: true });

const LINKEDIN_DELIVERY: Record<LinkedinAccountView['delivery'], { label: string; tone: Tone; sentence: string }> = {
  sandbox: { label: 'Sandbox (simulated)', tone: 'neutral', sentence: 'Simulated: nothing reaches LinkedIn.' },
  tasks: { label: 'Tasks', tone: 'info', sentence: 'Each LinkedIn step, and each reply answer, is a task a person does on LinkedIn (Tasks).' },
  gateway: {
    label: 'LinkedIn gateway',
    tone: 'good',
    sentence: 'Invitations and messages go through the LinkedIn gateway, at the account owner’s risk; likes and comments stay tasks.',
  },
};

function sendingDeliveryOf(
  a: { id: string; mode: string },
  linkedin: LinkedinAccountView[],
  mailboxes: { accountId: string | null }[],
  smtpConfigured: boolean,
): SendingDelivery {
  if (a.mode === 'linkedin') {
    const v = linkedin.find((l) => l.accountId === a.id);
    const d = LINKEDIN_DELIVERY[v?.delivery ?? 'sandbox'];
    const reconnect = v?.delivery === 'gateway' && v.gatewayError === 'linkedin_gateway_auth_failed';
    return { label: d.label, tone: reconnect ? 'bad' : d.tone, reconnect };
  }
  if (a.mode === 'email') {
    if (mailboxes.some((m) => m.accountId === a.id)) return { label: 'Mailbox', tone: 'good', reconnect: false };
    return smtpConfigured ? { label: 'SMTP (SMTP_URL)', tone: 'good', reconnect: false } : { label: 'Sandbox (simulated)', tone: 'neutral', reconnect: false };
  }
  return { label: 'Sandbox (simulated)', tone: 'neutral', reconnect: false };
}

/** Each LinkedIn account's delivery, with the forms that switch it (the same service as `outreach linkedin …`). */
function LinkedinDeliveryPanel(props: {
  accounts: { id: string; name: string; mode: string }[];
  linkedin: LinkedinAccountView[];
  csrfToken: string;
  /** The operator's session (a login link): the only console session that may type a gateway account id. */
  operator: boolean;
}) {
  const rows = props.accounts.filter((a) => a.mode === 'linkedin');
  if (rows.length === 0) return '';
  return (
    <section aria-labelledby="linkedin-delivery">
      <h2 id="linkedin-delivery">LinkedIn delivery</h2>
      <p class="meta">
        LinkedIn’s User Agreement prohibits automated activity. Tasks keeps a person on every action; the gateway automates invitations and messages at the
        account owner’s risk (docs/linkedin.md).
      </p>
      {rows.map((a) => {
        const v = props.linkedin.find((l) => l.accountId === a.id);
        const delivery = v?.delivery ?? 'sandbox';
        const d = LINKEDIN_DELIVERY[delivery];
        const reconnect = delivery === 'gateway' && v?.gatewayError === 'linkedin_gateway_auth_failed';
        const base = `/console/accounts/linkedin/${encodeURIComponent(a.id)}`;
        return (
          <article class="reply" aria-labelledby={`li-${a.id}`}>
            <h3 id={`li-${a.id}`} safe>
              {a.name}
            </h3>
            <p>
              <Badge value={d.label} label={d.label} tone={reconnect ? 'bad' : d.tone} /> <span safe>{d.sentence}</span>
              {v?.gatewayAccountId && delivery === 'gateway' ? <span class="muted" safe>{` Gateway account ${v.gatewayAccountId}.`}</span> : ''}
            </p>
            {reconnect ? (
              <p role="alert" class="error">
                The gateway refused this account (<code>linkedin_gateway_auth_failed</code>): reconnect it at the gateway, then link it again below. Its steps
                wait until then.
              </p>
            ) : (
              ''
            )}
            <div class="actions">
              {delivery !== 'sandbox' ? (
                <PostButton
                  action={`${base}/delivery`}
                  csrfToken={props.csrfToken}
                  fields={{ delivery: 'sandbox' }}
                  label="Use Sandbox (simulated)"
                  ariaLabel={`Switch ${a.name} to Sandbox (simulated)`}
                />
              ) : (
                ''
              )}
              {delivery !== 'tasks' ? (
                <PostButton
                  action={`${base}/delivery`}
                  csrfToken={props.csrfToken}
                  fields={{ delivery: 'tasks' }}
                  label="Use Tasks"
                  ariaLabel={`Switch ${a.name} to Tasks`}
                />
              ) : (
                ''
              )}
            </div>
            {props.operator ? (
              <form method="post" action={`${base}/gateway`}>
                <CsrfField token={props.csrfToken} />
                <label for={`gw-${a.id}`}>
                  Gateway account id<span class="visually-hidden" safe>{` for ${a.name}`}</span>
                </label>{' '}
                <input id={`gw-${a.id}`} name="gatewayAccountId" required maxlength="200" autocomplete="off" value={v?.gatewayAccountId ?? ''} />{' '}
                <button type="submit">
                  Link to the LinkedIn gateway<span class="visually-hidden" safe>{` (${a.name})`}</span>
                </button>
              </form>
            ) : (
              <p class="hint">
                Linking to the LinkedIn gateway by its account id is an operator act: <code safe>{`outreach linkedin connect --account ${a.id}`}</code> on the
                server.
              </p>
            )}
          </article>
        );
      })}
    </section>
  );
}

/** Where a connect finished outside a console session of its workspace says how it went (once, from a notice). */
const CONNECT_RESULT_PATH = '/console/accounts/x/connected';

const CallbackQuery = Type.Object(
  { state: Type.Optional(Type.String()), code: Type.Optional(Type.String()), error: Type.Optional(Type.String()) },
  { additionalProperties: true },
);

/** The Accounts page (also re-rendered with a refusal by the mailbox connect, mailbox-connect.tsx). */
export async function renderAccountsPage(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply, notice: Notice | null, status = 200) {
  const { xConnect } = deps.services;
  const ctx = await pageContext(req, reply, deps.services.consoleSessions);
  const workspaceId = req.consoleSession!.auth.workspaceId;
  const [{ accounts }, { accounts: xAccounts }, connections, mailboxes] = await Promise.all([
    deps.services.progress.progress(workspaceId, 1),
    deps.services.plays.listAccounts(workspaceId),
    xConnect.connections(workspaceId),
    deps.services.mailboxes.list(workspaceId),
  ]);
  const linkedin = await Promise.all(accounts.filter((a) => a.mode === 'linkedin').map((a) => deps.services.linkedin.get(workspaceId, a.id)));
  const [paused, days, bookingLinks] = await Promise.all([
    deps.services.mailboxes.paused(workspaceId),
    deps.services.mailboxes.days(workspaceId),
    deps.services.meetings.getBookingLinks(workspaceId),
  ]);
  const pausedIds = new Set(paused.map((p) => p.id));
  // An account with a mailbox shows as its mailbox (address, health, e-mails today against its cap), never with
  // invites or a warm-up phase; the accounts table keeps the others.
  const withMailbox = new Set(mailboxes.map((m) => m.accountId));
  const otherAccounts = accounts.filter((a) => !withMailbox.has(a.id));
  const deliveries = new Map<string, SendingDelivery>(
    accounts.map((a) => [a.id, sendingDeliveryOf(a, linkedin, mailboxes, deps.config.smtpUrl !== null)] as const),
  );
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
          <p>
            <PrimaryLink href="/console/accounts/mailbox/add" label="Add mailbox (SMTP/IMAP)" />{' '}
            <span class="meta">
              Any mailbox with SMTP and IMAP and a password or app password: Gmail, Outlook.com, Fastmail, Zoho, iCloud, Yahoo or your own.
            </span>
          </p>
          {mailboxes.length > 0 ? <MailboxesTable mailboxes={mailboxes} days={days} pausedIds={pausedIds} /> : ''}
          {otherAccounts.length === 0 ? (
            mailboxes.length === 0 ? (
              <EmptyState title="No sending accounts yet.">
                <p>
                  Add a mailbox above, connect a Google or Microsoft 365 mailbox below, or an operator adds one with{' '}
                  <code>npx outreach mailbox add --workspace ID --address …</code> (see docs/email.md).
                </p>
              </EmptyState>
            ) : (
              ''
            )
          ) : (
            <OtherAccountsTable accounts={otherAccounts} deliveries={deliveries} mailboxes={mailboxes} />
          )}
          <MailboxConnectButtons
            configured={deps.services.mailboxConnect.configured()}
            csrfToken={ctx.csrfToken}
            callbackUrl={deps.services.mailboxConnect.callbackUrl()}
          />
        </section>
        <PausedMailboxes paused={paused} csrfToken={ctx.csrfToken} />
        <LinkedinDeliveryPanel
          accounts={accounts}
          linkedin={linkedin}
          csrfToken={ctx.csrfToken}
          operator={actorOf(req.consoleSession!.auth).kind === 'operator'}
        />
        <AccountBookingLinks links={bookingLinks} csrfToken={ctx.csrfToken} />
        <section aria-labelledby="x-accounts" id="x-accounts-section">
          <h2 id="x-accounts">X accounts</h2>
          <XAccountsTable xAccounts={xAccounts} connections={connections} csrfToken={ctx.csrfToken} now={now} />
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

/** The workspace's sending accounts and connected X identities. */
export function accountsPages(app: AppInstance, deps: ConsoleDeps) {
  const { xConnect } = deps.services;
  const renderAccounts = (req: FastifyRequest, reply: FastifyReply, notice: Notice | null, status = 200) =>
    renderAccountsPage(deps, req, reply, notice, status);

  app.get('/console/accounts', { schema: { hide: true } }, async (req, reply) => renderAccounts(req, reply, takeNotice(req, reply)));

  /** A refusal of the LinkedIn service on the page (a 404 for the account itself is the 404 page). */
  async function linkedinRefusal(req: FastifyRequest, reply: FastifyReply, err: unknown) {
    if (!(err instanceof AppError) || err.code === 'messaging account not found') throw err;
    return renderAccounts(req, reply, { kind: 'refused', text: err.message }, err.statusCode);
  }

  // Sandbox (simulated) or Tasks for a LinkedIn account, through the same service as `outreach linkedin tasks|sandbox`.
  app.post<{ Params: { accountId: string }; Body: { delivery?: string } }>(
    '/console/accounts/linkedin/:accountId/delivery',
    { schema: { hide: true, params: AccountParams, body: DeliveryBody } },
    async (req, reply) => {
      const delivery = req.body.delivery;
      if (delivery !== 'sandbox' && delivery !== 'tasks') throw new AppError(400, 'invalid_request', 'delivery must be sandbox or tasks');
      try {
        await deps.services.linkedin.setDelivery(req.consoleSession!.auth.workspaceId, req.params.accountId, delivery);
      } catch (err) {
        return linkedinRefusal(req, reply, err);
      }
      return redirectWithNotice(reply, '/console/accounts', {
        kind: 'done',
        text:
          delivery === 'tasks'
            ? 'Delivery set to Tasks: this account’s LinkedIn steps now wait on Tasks for a person.'
            : 'Delivery set to Sandbox (simulated): nothing from this account reaches LinkedIn.',
      });
    },
  );

  // Linking to the LinkedIn gateway: the service checks the account at the gateway first (`outreach linkedin connect`).
  app.post<{ Params: { accountId: string }; Body: { gatewayAccountId?: string } }>(
    '/console/accounts/linkedin/:accountId/gateway',
    { schema: { hide: true, params: AccountParams, body: GatewayBody } },
    async (req, reply) => {
      // A typed id proves nothing about who owns the LinkedIn account (security probe M2): only the operator types one.
      if (actorOf(req.consoleSession!.auth).kind !== 'operator') {
        throw new AppError(403, 'operator_only', 'linking by a typed gateway account id is an operator act: run `outreach linkedin connect` on the server');
      }
      try {
        await deps.services.linkedin.linkGateway(req.consoleSession!.auth.workspaceId, req.params.accountId, req.body.gatewayAccountId ?? '');
      } catch (err) {
        return linkedinRefusal(req, reply, err);
      }
      return redirectWithNotice(reply, '/console/accounts', {
        kind: 'done',
        text: 'Linked to the LinkedIn gateway: invitations and messages from this account now go through it, at the account owner’s risk.',
      });
    },
  );

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
  // The outcome is never a page of this URL: a 303 carries it (a one-time notice cookie) to the Accounts page, or
  // without a session of that workspace to the result page below, so a reload never replays the spent state
  // (which would say "not connected" after a connect that worked).
  app.get<{ Querystring: { state?: string; code?: string; error?: string } }>(
    CALLBACK_PATH,
    { schema: { hide: true, querystring: CallbackQuery }, config: { consolePublic: true } },
    async (req, reply) => {
      let notice: Notice;
      let workspaceId: string | null = null;
      try {
        const done = await xConnect.complete({
          state: req.query.state,
          code: req.query.code,
          error: req.query.error,
          sessionIdHash: req.consoleSession?.idHash ?? null,
        });
        workspaceId = done.workspaceId;
        // Which workspace it went to, in words: a connect link may be opened by someone other than who started it.
        const name = await deps.services.workspaces.workspaceName(done.workspaceId);
        notice = { kind: 'done', text: `Connected @${done.handle} (user id ${done.userId}) to the workspace “${name}”.` };
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        notice = { kind: 'refused', text: `X account not connected: ${err.message}` };
      }
      const ownSession = req.consoleSession && (workspaceId === null || req.consoleSession.auth.workspaceId === workspaceId);
      return redirectWithNotice(reply, ownSession ? '/console/accounts' : CONNECT_RESULT_PATH, notice);
    },
  );

  // Where a connect without a console session of its workspace ends: the callback's outcome, shown once.
  app.get(CONNECT_RESULT_PATH, { schema: { hide: true }, config: { consolePublic: true } }, async (req, reply) => {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const notice = takeNotice(req, reply);
    const heading = !notice ? 'Connecting an X account' : notice.kind === 'done' ? 'X account connected' : 'X account not connected';
    return sendPage(reply, ctx, {
      title: heading,
      body: (
        <section>
          <h1 safe>{heading}</h1>
          {notice ? (
            <p role={notice.kind === 'done' ? 'status' : 'alert'} safe>
              {notice.kind === 'done' ? `${notice.text} You can close this page.` : notice.text}
            </p>
          ) : (
            <p>This connect has finished; its outcome was shown once. The workspace's X accounts are listed under Accounts in the console.</p>
          )}
        </section>
      ),
    });
  });
}

import { timingSafeEqual } from 'node:crypto';
import { Type } from 'typebox';
import { AppError, notFound, unauthorized } from '../../lib/errors.js';
import { OneOf, Uuid } from '../../app/schemas.js';
import { ROLES } from '../../domain/vocabulary.js';
import type { PeopleCommand } from '../people/index.js';
import type { Services } from '../../app/services.js';
import type { AppInstance } from '../../app/types.js';
import { DomainCheckError, INBOUND_VERDICTS, MailboxError } from '../../channels/email/index.js';
import { SUPPRESSION_REASONS } from '../../domain/suppression.js';
import { MAIL_OAUTH_PROVIDERS } from '../../config/mail-oauth.js';
import { BOOKING_TOOLS } from '../meetings/index.js';

const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Operator routes. They exist for outside callers only when OUTREACH_ADMIN_TOKEN is set (404 otherwise).
 * The per-process control token lets `npx outreach` reach a running server on the embedded database,
 * which a second process cannot open.
 */
export async function adminRoutes(app: AppInstance, opts: { services: Services; adminToken: string | null; controlToken: string | null }) {
  const { services } = opts;
  app.addHook('onRequest', async (req) => {
    const header = req.headers.authorization ?? '';
    const presented = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (opts.controlToken && presented && sameSecret(presented, opts.controlToken)) return;
    if (!opts.adminToken) throw new AppError(404, 'not_found', `no route ${req.method} ${req.url.split('?')[0]}`);
    if (!presented || !sameSecret(presented, opts.adminToken)) throw unauthorized();
  });

  registerOperatorRoutes(app, services);
  registerMailboxRoutes(app, services);
  registerSuppressionRoutes(app, services);
  registerXRoutes(app, services);
  registerLinkedinRoutes(app, services);
  registerMeetingsRoutes(app, services);
  registerPeopleRoutes(app, services);
}

/** Seeding, the engine pass, workspaces, keys, team links and console sign-in links. */
function registerOperatorRoutes(app: AppInstance, services: Services) {
  app.post('/seed', { bodyLimit: 64 * 1024 * 1024, schema: { hide: true } }, async (req) => services.world.seed(req.body));

  app.post(
    '/engine/tick',
    { schema: { hide: true, body: Type.Optional(Type.Object({ now: Type.Optional(Type.String({ format: 'date-time' })) }, { additionalProperties: false })) } },
    async (req) => {
      const body = req.body ?? {};
      return services.engine.runPass(body.now ? { now: new Date(body.now) } : {});
    },
  );

  app.post(
    '/workspaces',
    { schema: { hide: true, body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }) } },
    async (req, reply) => reply.status(201).send(await services.workspaces.createWorkspace(req.body)),
  );

  app.post(
    '/keys',
    {
      schema: {
        hide: true,
        body: Type.Object(
          {
            workspaceId: Uuid(),
            expiresAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
            role: Type.Optional(Type.Enum([...ROLES])),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (req, reply) =>
      reply.status(201).send(
        await services.workspaces.createApiKey({
          workspaceId: req.body.workspaceId,
          expiresAt: req.body.expiresAt ? new Date(req.body.expiresAt) : null,
          role: req.body.role,
        }),
      ),
  );

  app.post('/keys/:id/revoke', { schema: { hide: true, params: Type.Object({ id: Type.String() }) } }, async (req) =>
    services.workspaces.revokeApiKey(req.params.id),
  );

  app.post(
    '/team-links',
    {
      schema: {
        hide: true,
        body: Type.Object({ ownerWorkspaceId: Uuid(), clientWorkspaceId: Uuid(), role: OneOf(ROLES) }, { additionalProperties: false }),
      },
    },
    async (req, reply) => reply.status(201).send(await services.workspaces.addTeamLink(req.body)),
  );

  // `outreach sessions revoke`: every console session of a workspace, or those one of its keys opened.
  app.post(
    '/sessions/revoke',
    {
      schema: {
        hide: true,
        body: Type.Object(
          { workspaceId: Uuid(), keyId: Type.Optional(Uuid()), person: Type.Optional(Type.String({ maxLength: 254 })) },
          { additionalProperties: false },
        ),
      },
    },
    async (req) => services.consoleSessions.revokeSessions(req.body),
  );

  // A one-time web console sign-in link (`outreach login-link`); the token is in the path, shown this once.
  app.post('/login-links', { schema: { hide: true, body: Type.Object({ workspaceId: Uuid() }, { additionalProperties: false }) } }, async (req, reply) => {
    const link = await services.consoleSessions.createLoginLink(req.body.workspaceId);
    return reply.status(201).send({ workspaceId: link.workspaceId, path: link.path, expiresAt: link.expiresAt });
  });
}

/** A mailbox service refusal as the HTTP error the CLI reads. */
const mailboxRefusal = (e: unknown): never => {
  if (e instanceof MailboxError) {
    const status = e.code === 'account_not_found' || e.code === 'mailbox_not_found' ? 404 : e.code === 'invalid_mailbox' ? 400 : 422;
    throw new AppError(status, e.code, e.message);
  }
  throw e;
};

/** A page of a listing: at most `limit` (1 to 200) after the cursor `after`. */
const page = { limit: Type.Integer({ minimum: 1, maximum: 200 }), after: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })) };

/** Mailboxes (CLI `outreach mailbox …` through a running server). Answers never carry a URL's password. */
function registerMailboxRoutes(app: AppInstance, services: Services) {
  const MailboxBody = Type.Object(
    {
      workspaceId: Uuid(),
      accountId: Type.Optional(Type.String({ minLength: 1 })),
      address: Type.String({ minLength: 3 }),
      displayName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      smtpUrl: Type.String({ minLength: 1 }),
      imapUrl: Type.String({ minLength: 1 }),
      sentFolder: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
      trustedAuthservId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 253 }), Type.Null()])),
    },
    { additionalProperties: false },
  );
  app.post('/mailboxes', { schema: { hide: true, body: MailboxBody } }, async (req, reply) => {
    const view = await services.mailboxes.add(req.body).catch(mailboxRefusal);
    return reply.status(201).send(view);
  });
  app.post('/mailboxes/list', { schema: { hide: true, body: Type.Object({ workspaceId: Uuid() }, { additionalProperties: false }) } }, async (req) =>
    services.mailboxes.list(req.body.workspaceId),
  );
  app.post(
    '/mailboxes/remove',
    { schema: { hide: true, body: Type.Object({ workspaceId: Uuid(), mailbox: Type.String({ minLength: 1 }) }, { additionalProperties: false }) } },
    async (req) => {
      // revokedAtProvider: true revoked at the provider, false not confirmed or not possible (Microsoft), null a password mailbox.
      const { revokedAtProvider } = await services.mailboxes.remove(req.body.workspaceId, req.body.mailbox).catch(mailboxRefusal);
      return { removed: true, revokedAtProvider };
    },
  );
  // `outreach mailbox connect`: the authorize URL for a person to open in any browser (docs/email.md), and the
  // callback URL to register with the provider's app. The state is bound to no console session.
  app.post(
    '/mailboxes/connect',
    {
      schema: {
        hide: true,
        body: Type.Object(
          {
            workspaceId: Uuid(),
            provider: OneOf(MAIL_OAUTH_PROVIDERS),
            accountId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
            smtpUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
            imapUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (req) => {
      const started = await services.mailboxConnect.begin(req.body);
      return { authorizeUrl: started.authorizeUrl, expiresAt: started.expiresAt.toISOString(), callbackUrl: services.mailboxConnect.callbackUrl() };
    },
  );
  // `outreach mailbox check`: the sending domain's MX, SPF, DKIM and DMARC, looked up now (docs/deliverability.md).
  app.post(
    '/mailboxes/check',
    {
      schema: {
        hide: true,
        body: Type.Object(
          {
            workspaceId: Type.Optional(Uuid()),
            mailbox: Type.String({ minLength: 1 }),
            dkimSelector: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (req) =>
      services.mailboxDomains.checkAsOperator(req.body).catch((e: unknown) => {
        if (!(e instanceof DomainCheckError)) throw e;
        throw new AppError(e.code === 'mailbox_not_found' ? 404 : e.code === 'invalid_selector' ? 400 : 409, e.code, e.message);
      }),
  );
  // `outreach mailbox resume`: lifts a reputation guard's pause (docs/deliverability.md).
  app.post(
    '/mailboxes/resume',
    { schema: { hide: true, body: Type.Object({ workspaceId: Uuid(), mailbox: Type.String({ minLength: 1 }) }, { additionalProperties: false }) } },
    async (req) => services.mailboxes.resume(req.body.workspaceId, req.body.mailbox, 'cli').catch(mailboxRefusal),
  );
  // `outreach mailbox inbound` (docs/email.md).
  app.post(
    '/mailboxes/inbound',
    {
      schema: {
        hide: true,
        body: Type.Object(
          { workspaceId: Uuid(), mailbox: Type.String({ minLength: 1, maxLength: 320 }), verdict: Type.Optional(OneOf(INBOUND_VERDICTS)), ...page },
          { additionalProperties: false },
        ),
      },
    },
    async (req) => services.inbound.listInbound(req.body.workspaceId, req.body.mailbox, req.body),
  );
}

/** `outreach suppression list|remove` (docs/deliverability.md). */
function registerSuppressionRoutes(app: AppInstance, services: Services) {
  app.post(
    '/suppressions/list',
    {
      schema: {
        hide: true,
        body: Type.Object(
          { workspaceId: Uuid(), q: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })), reason: Type.Optional(OneOf(SUPPRESSION_REASONS)), ...page },
          { additionalProperties: false },
        ),
      },
    },
    async (req) => services.inbound.listSuppressions(req.body.workspaceId, req.body),
  );
  app.post(
    '/suppressions/remove',
    {
      schema: {
        hide: true,
        body: Type.Object(
          { workspaceId: Uuid(), address: Type.String({ minLength: 3, maxLength: 320 }), by: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false },
        ),
      },
    },
    async (req) => services.inbound.removeSuppression(req.body.workspaceId, req.body.address, req.body.by),
  );
}

/** `outreach x connect|disconnect` (docs/x-channel.md). */
function registerXRoutes(app: AppInstance, services: Services) {
  // `outreach x connect`: the authorize URL for a person to open in any browser (docs/x-channel.md).
  app.post('/x/connect', { schema: { hide: true, body: Type.Object({ workspaceId: Uuid() }, { additionalProperties: false }) } }, async (req) => {
    const started = await services.xConnect.begin(req.body.workspaceId);
    return { authorizeUrl: started.authorizeUrl, expiresAt: started.expiresAt.toISOString(), callbackUrl: services.xConnect.callbackUrl() };
  });
  // `outreach x disconnect`: the account's tokens deleted here and revoked at X.
  app.post(
    '/x/disconnect',
    {
      schema: {
        hide: true,
        body: Type.Object({ workspaceId: Uuid(), userId: Type.String({ minLength: 1, maxLength: 32, pattern: '^[0-9]+$' }) }, { additionalProperties: false }),
      },
    },
    async (req) => services.xConnect.disconnect(req.body.workspaceId, req.body.userId),
  );
}

/** `outreach linkedin connect|tasks|sandbox` (docs/linkedin.md): a LinkedIn account's delivery. */
function registerLinkedinRoutes(app: AppInstance, services: Services) {
  const accountId = Type.String({ minLength: 1, maxLength: 100 });
  app.post(
    '/linkedin/connect',
    {
      schema: {
        hide: true,
        body: Type.Object({ workspaceId: Uuid(), accountId, gatewayAccountId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
      },
    },
    async (req) => services.linkedin.linkGateway(req.body.workspaceId, req.body.accountId, req.body.gatewayAccountId),
  );
  app.post(
    '/linkedin/delivery',
    {
      schema: {
        hide: true,
        body: Type.Object({ workspaceId: Type.Optional(Uuid()), accountId, delivery: OneOf(['sandbox', 'tasks'] as const) }, { additionalProperties: false }),
      },
    },
    async (req) => {
      const workspaceId = req.body.workspaceId ?? (await services.linkedin.workspaceOf(req.body.accountId));
      if (!workspaceId) throw notFound('messaging account');
      return services.linkedin.setDelivery(workspaceId, req.body.accountId, req.body.delivery);
    },
  );
}

/** `outreach meetings endpoint …` through a running server (modules/meetings, docs/meetings.md). */
function registerMeetingsRoutes(app: AppInstance, services: Services) {
  app.post(
    '/meetings/endpoints',
    {
      schema: {
        hide: true,
        body: Type.Object(
          {
            op: OneOf(['create', 'list', 'rotate', 'remove', 'subscribe', 'unsubscribe'] as const),
            workspaceId: Uuid(),
            tool: Type.Optional(OneOf(BOOKING_TOOLS)),
            label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
            id: Type.Optional(Uuid()),
            personalAccessToken: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
            scope: Type.Optional(OneOf(['user', 'organization'] as const)),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (req) => services.meetings.endpointCommand(req.body),
  );
}

/** `outreach person …` through a running server (modules/people, docs/roles.md "People"); the operator acts as owner. */
function registerPeopleRoutes(app: AppInstance, services: Services) {
  app.post(
    '/people',
    {
      schema: {
        hide: true,
        body: Type.Object(
          {
            op: OneOf(['invite', 'list', 'role', 'remove', 'link'] as const),
            workspaceId: Uuid(),
            email: Type.Optional(Type.String({ minLength: 3, maxLength: 254 })),
            role: Type.Optional(OneOf(ROLES)),
            name: Type.Optional(Type.String({ maxLength: 120 })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (req) => services.people.operatorCommand(req.body as PeopleCommand),
  );
}

import { readFileSync } from 'node:fs';
import { findControlCharacter } from '../lib/control-characters.js';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { openApiWebhooks } from '../webhooks/event-catalog.js';
import Fastify, { LogController, type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import { isDatabaseUnavailable } from '../db/database.js';
import { newId } from '../lib/ids.js';
import { AppError } from '../lib/errors.js';
import { createAuthHook, requireRouteAction } from './plugins/auth.js';
import { drainRefusedBody, handleClientError, checkRequestUrl, serializeRequest } from './plugins/http-edge.js';
import { buildLazySerializer, formatSchemaErrors, validatorCompiler } from './validation.js';
import { registerDeprecationHeaders } from './plugins/deprecation.js';
import { createMemoryRateLimitStore } from './plugins/rate-limit.js';
import { registerDocs } from './plugins/docs.js';
import { registerFavicon } from './favicon.js';
import { registerRequestTracing } from '../lib/tracing.js';
import { registerMetrics } from './metrics.js';
import { registerReadiness } from './probes.js';
import { registerApiRoutes, registerAdminRoutes } from './routes.js';
import { mcpRoutes } from '../mcp/http.js';
import type { AppDeps } from './deps.js';
import type { AppInstance } from './types.js';
import { consolePlugin } from '../console/plugin.js';
import { unsubscribeRoutes } from '../modules/unsubscribe/index.js';
import { meetingsInboundRoutes } from '../modules/meetings/index.js';

export type { AppDeps } from './deps.js';

export const API_PREFIX = '/api/v1';

/**
 * Fastify's per-request lines ("incoming request", "request completed", a route not found) at `debug` instead of
 * `info`: two JSON lines a request scrolled the start-up banner (the demo key, shown once) out of sight. LOG_LEVEL=debug
 * (or trace) brings them back; a request that errored still logs at `error`, and the start-up lines (listening
 * address, warnings) stay at `info` (docs/deploy.md "Logs").
 */
export class DebugRequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error || this.isLogDisabled(request)) return super.requestCompleted(error, request, reply);
    reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }

  override routeNotFound(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug(`Route ${request.method} not found`);
  }
}

export async function buildApp(deps: AppDeps): Promise<AppInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    logController: new DebugRequestLogController(),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : newId();
    },
    bodyLimit: 1024 * 1024,
    // X-Forwarded-For is believed only from the proxies in OUTREACH_TRUST_PROXY (req.ip is then the client's address,
    // which the console's sign-in limit keys on); from anyone else it is ignored.
    trustProxy: deps.config.trustProxy.length > 0 ? [...deps.config.trustProxy] : false,
    schemaErrorFormatter: formatSchemaErrors,
    schemaController: { compilersFactory: { buildSerializer: buildLazySerializer } },
    // Node's parser refusals (URL or headers over 16 KiB, malformed requests) get the project's JSON error body.
    clientErrorHandler: handleClientError,
    // Every request log line serializes the request through here, so credential query parameters never reach a log.
    childLoggerFactory: (logger, bindings, opts) => logger.child(bindings, { ...opts, serializers: { ...opts.serializers, req: serializeRequest } }),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // The router's own refusals (a path parameter over maxParamLength, an undecodable path) get the project's
    // JSON error body, not the framework's `{code: "FST_…"}` shape; the path is not echoed.
    frameworkErrors: (error, req, reply) => {
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const body = tooLong
        ? { error: 'uri_too_long', message: 'a path parameter is longer than 200 characters' }
        : { error: 'invalid_request', message: 'the request path is not a valid URL' };
      void (reply as FastifyReply)
        .status(tooLong ? 414 : 400)
        .header('x-request-id', req.id)
        .send(body);
    },
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as AppInstance;
  // A span per request when tracing is on (src/lib/tracing.ts); first, since each route takes the request logger factory it wraps.
  registerRequestTracing(app);

  // A connection that never sent a request (a client's or a browser's spare) counts as busy until Node's headers
  // timeout (60 s), so close() would wait on it: closing ends those at once. Idle keep-alive connections close by
  // Fastify's default (forceCloseConnections 'idle'); requests in flight finish; event streams end in their preClose.
  const unusedSockets = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    unusedSockets.add(socket);
    socket.once('close', () => unusedSockets.delete(socket));
  });
  app.server.on('request', (req: IncomingMessage) => unusedSockets.delete(req.socket));
  app.addHook('preClose', (done) => {
    for (const socket of unusedSockets) socket.destroy();
    done();
  });

  app.setValidatorCompiler(validatorCompiler);
  app.decorateRequest('auth', null as never);

  // An empty body with a JSON content type means "no body" (a bare POST .../stop), not a parse error.
  // `application/json` and `application/*+json`, with any parameters (`; charset=utf-8` has no effect, RFC 8259).
  app.removeContentTypeParser('application/json');
  // Every operation takes JSON; a text body is refused as an unsupported media type (docs/foundation.md).
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(/^application\/([\w!#$&^.+-]+\+)?json(\s*;.*)?$/i, { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new AppError(400, 'invalid_json', 'request body is not valid JSON'), undefined);
    }
  });

  // First on every request, as a callback hook (no promise on the hot path): the request id header, which error
  // answers keep, and the URL checks (414, a key in the query string).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    try {
      checkRequestUrl(req);
    } catch (err) {
      return done(err as Error);
    }
    done();
  });

  // Text with control characters (a NUL) is refused before any route reads it, whatever the route (src/lib/control-characters.ts).
  app.addHook('preValidation', (req, _reply, done) => {
    // A path parameter or query value too (a NUL in a path id would otherwise reach PostgreSQL's text type).
    const found =
      findControlCharacter(req.params ?? null) ??
      findControlCharacter(req.query ?? null) ??
      (req.body === undefined || req.body === null ? null : findControlCharacter(req.body));
    if (!found) return done();
    done(
      new AppError(400, 'invalid_request', `${found.field}: text may not hold control characters (found ${found.codePoint}); remove it`, {
        field: found.field,
      }),
    );
  });

  app.setErrorHandler((error: FastifyError | AppError, req, reply) => {
    // A refused request whose body was not read: drop the rest (bounded) instead of closing on a client still sending.
    if (!req.raw.complete) {
      reply.removeHeader('connection');
      drainRefusedBody(req.raw);
    }
    if (error instanceof AppError) {
      for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
      const body: Record<string, unknown> = { ...error.body, error: error.code };
      if (error.message && error.message !== error.code) body.message = error.message;
      return reply.status(error.statusCode).send(body);
    }
    const fe = error;
    if (fe.validation) {
      return reply.status(400).send({ error: 'invalid_request', message: fe.message });
    }
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.status(400).send({ error: 'unsupported_content_type', message: 'request body must be application/json' });
    }
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.status(413).send({ error: 'body_too_large', message: `request body is larger than ${req.routeOptions.bodyLimit ?? 1024 * 1024} bytes` });
    }
    if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
      return reply.status(fe.statusCode === 415 ? 400 : fe.statusCode).send({ error: 'invalid_request', message: fe.message });
    }
    if (isDatabaseUnavailable(error)) {
      req.log.warn({ err: { type: fe.name, code: fe.code } }, 'database unavailable');
      return reply.status(503).header('retry-after', '1').send({ error: 'database_unavailable', message: 'the database is unavailable; retry shortly' });
    }
    req.log.error({ err: { type: fe.name, message: fe.message, stack: fe.stack } }, 'request failed');
    return reply.status(500).send({ error: 'internal_error', requestId: req.id });
  });

  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send({ error: 'not_found', message: `no route ${req.method} ${req.url.split('?')[0]}` });
  });

  registerDeprecationHeaders(app, () => deps.clock.now());
  // Before any route: each route's HTTP histogram hook is bound as it is registered (src/app/metrics.ts).
  registerMetrics(app, { config: deps.config.metrics, db: deps.db, clock: deps.clock });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Workspace Outreach Service',
        version: '1.0.0',
        description:
          'A workspace-scoped JSON API to read and control outreach (LinkedIn, email and X sequences, review candidates, leads, replies, funnel, signed webhooks).',
      },
      components: { securitySchemes: { workspaceKey: { type: 'http', scheme: 'bearer', description: 'Workspace API key' } } },
      security: [{ workspaceKey: [] }],
    },
    transformObject: (documents) => completeOpenApiDocument((documents as { openapiObject: Record<string, unknown> }).openapiObject),
  });

  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));
  // /favicon.ico and /favicon.svg, so a browser's automatic request is not a 404 (src/app/favicon.ts).
  registerFavicon(app);
  // Database, migrations and this process's engine loop; 503 with the reason (src/app/probes.ts, docs/deploy.md).
  registerReadiness(app, { db: deps.db });

  const rateLimitStore = deps.rateLimitStore ?? createMemoryRateLimitStore();
  const limit = deps.config.rateLimitPerMinute;
  const authHook = createAuthHook({ workspaces: deps.services.workspaces, rateLimitStore, rateLimitPerMinute: limit });
  // Start listening for key, Team link and setting changes before the first request, and stop with the app.
  deps.services.workspaces.authCache.start();
  app.addHook('onClose', async () => deps.services.workspaces.close());
  // Pooled SMTP connections (one transport per mailbox) end with the app, so a stopping server leaves no socket open.
  app.addHook('onClose', async () => (deps.services.drivers as { close?: () => void }).close?.());

  await app.register(
    async (api) => {
      api.addHook('onRequest', authHook);
      api.addHook('onRoute', requireRouteAction);
      // The security-relevant acts that succeeded go to the audit trail (docs/roles.md "Audit trail").
      api.addHook('onResponse', async (req, reply) => {
        const action = req.routeOptions.config?.action;
        if (!action || !req.auth || reply.statusCode >= 400) return;
        const route = `${req.method} ${req.routeOptions.url ?? ''}`;
        await deps.services.audit.recordAct({ auth: req.auth, action, route, params: req.params, body: req.body });
      });
      await registerApiRoutes(api, deps, { store: rateLimitStore, perMinute: limit });
    },
    { prefix: API_PREFIX },
  );

  await app.register(mcpRoutes, { services: deps.services, rateLimitStore, rateLimitPerMinute: limit });
  await app.register(async (admin) => registerAdminRoutes(admin as AppInstance, deps), { prefix: '/admin/v1' });
  await registerDocs(app, API_PREFIX, deps.config.publicBase);
  // The web console in its own scope (cookies, forms, CSRF, CSP and HTML errors stay out of the API).
  await app.register(unsubscribeRoutes, { unsubscribe: deps.services.unsubscribe });
  // Booking tools' webhooks (docs/meetings.md): public, verified by each endpoint's secret, outside /api/v1.
  await app.register(meetingsInboundRoutes, { meetings: deps.services.meetings, rateLimit: { store: rateLimitStore, perMinute: limit } });
  await app.register(consolePlugin, { services: deps.services, config: deps.config, rateLimitStore });
  return app;
}

// The spec's common error body, as errorResponses() publishes it on every other status.
const ERROR_BODY_SCHEMA = {
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' }, status: { type: 'string' }, reason: { type: 'string' } },
  additionalProperties: true,
};

type OpenApiContent = Record<string, { example?: unknown; schema?: unknown }>;
type OpenApiOperation = {
  parameters?: { in?: string; name?: string; schema?: Record<string, unknown> }[];
  requestBody?: { content?: OpenApiContent };
  responses?: Record<string, { description?: string; content?: OpenApiContent } | undefined>;
};

/** One real request and answer per operation, from `npm run gen:examples` (a run on the demo world). */
const OPERATION_EXAMPLES = JSON.parse(readFileSync(new URL('./openapi-examples.json', import.meta.url), 'utf8')) as Record<
  string,
  { request?: unknown; status: number; response: unknown }
>;

/**
 * Two facts the route schemas cannot state, written into the published document:
 * - The spec types X-Workspace-Client as a uuid. The route schemas leave it a plain string on purpose: the service
 *   checks it and answers 400 `invalid_workspace_client` (also for a header sent twice), which a schema format
 *   would turn into a generic validation error. The published document still says uuid.
 * - An example request and answer for each operation (src/app/openapi-examples.json, from `npm run gen:examples`).
 * - The `webhooks` section: each event's payload and the signature headers (src/webhooks/event-catalog.ts).
 * - Every operation that takes a body answers 413 `body_too_large` past the body limit, and every operation 414
 *   `uri_too_long` and 431 `headers_too_large` past the URL and header limits, before its route runs.
 */
function completeOpenApiDocument<T>(doc: T): T {
  // The events a subscription receives, as OpenAPI 3.1 webhooks (payload, signature headers, an example each).
  (doc as { webhooks?: unknown }).webhooks = openApiWebhooks();
  const paths = (doc as { paths?: Record<string, Record<string, OpenApiOperation>> }).paths ?? {};
  for (const [route, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const example = OPERATION_EXAMPLES[`${method.toUpperCase()} ${route}`];
      if (example) {
        const requestMedia = op.requestBody?.content?.['application/json'];
        if (requestMedia && example.request !== undefined) requestMedia.example = example.request;
        const answer = op.responses?.[String(example.status)]?.content;
        const media = answer ? Object.values(answer)[0] : undefined;
        if (media) media.example = example.response;
      }
      for (const p of op.parameters ?? []) {
        if (p.in === 'header' && p.name?.toLowerCase() === 'x-workspace-client') p.schema = { ...p.schema, format: 'uuid' };
      }
      const limits: [string, string][] = [
        ...(op.requestBody ? [['413', 'request body larger than the limit (1 MiB)'] as [string, string]] : []),
        ['414', 'request URL longer than the limit (8 KiB)'],
        ['431', 'request headers larger than the limit (16 KiB)'],
      ];
      for (const [status, description] of limits) {
        if (op.responses && !op.responses[status]) op.responses[status] = { description, content: { 'application/json': { schema: ERROR_BODY_SCHEMA } } };
      }
    }
  }
  return doc;
}

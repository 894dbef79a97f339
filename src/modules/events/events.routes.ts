import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';
import { ErrorBody, WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { WorkspacesService } from '../workspaces/index.js';
import { WEBHOOK_EVENTS } from '../../webhooks/outbox.js';
import { createEventsService, parseEventList } from './events.service.js';
import { createStreamRegistry } from './events.streams.js';

const POLL_MS = 500;

const StreamQuery = Type.Object(
  { events: Type.Optional(Type.String({ maxLength: 500, description: `comma-separated event types (default: all): ${WEBHOOK_EVENTS.join(', ')}` })) },
  { additionalProperties: false },
);
const StreamHeaders = Type.Object(
  {
    ...WorkspaceClientHeader.properties,
    'last-event-id': Type.Optional(
      Type.String({
        maxLength: 200,
        description: 'Resume after this event (the `id:` of the last event received): the stream starts with the events after it, in order.',
      }),
    ),
  },
  { additionalProperties: true },
);
const TriggerBody = Type.Object(
  { event: Type.Enum([...WEBHOOK_EVENTS], { description: 'the event type to emit a sample of' }) },
  { additionalProperties: false },
);
const TriggerResponse = Type.Object({
  ok: Type.Literal(true),
  id: Type.String({ description: 'the outbox event id (receivers see it as the delivery id of their own copy)' }),
  event: Type.Enum([...WEBHOOK_EVENTS]),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'the sample data; always has `test: true`' }),
});

/** Why a re-check ends a stream, in the closing comment; null when the key still opens this workspace. */
async function recheckAuth(workspaces: WorkspacesService, req: FastifyRequest): Promise<string | null> {
  try {
    const key = await workspaces.authenticate(req.headers.authorization);
    const auth = await workspaces.selectWorkspace(key, req.headers['x-workspace-client']);
    return auth.workspaceId === req.auth.workspaceId ? null : 'the key no longer selects this workspace';
  } catch (err) {
    // 401 (revoked, expired) or 403 (the Team link is gone); anything else (the database away) keeps the stream.
    if (err instanceof AppError && (err.statusCode === 401 || err.statusCode === 403)) return `${err.code}: ${err.message}`;
    req.log.warn({ err }, 'event stream: key re-check failed; the stream stays open');
    return null;
  }
}

/** The event stream (`outreach listen`) and sample events (`outreach trigger`): extensions, not in the spec. */
/** What the event stream's routes need of the app (a part of app/build-app.ts AppDeps, named here so the module does not import the app's builder). */
export interface EventsRouteDeps {
  config: Config;
  db: Database;
  clock: Clock;
  services: { workspaces: WorkspacesService };
}

export async function eventsRoutes(app: AppInstance, opts: { deps: EventsRouteDeps }) {
  const { config, services } = opts.deps;
  const events = createEventsService({ db: opts.deps.db, clock: opts.deps.clock });
  const { perKey, perProcess, heartbeatSeconds, maxAgeSeconds } = config.eventStream;
  const heartbeatMs = heartbeatSeconds * 1000;
  const maxAgeMs = maxAgeSeconds * 1000;
  const streams = createStreamRegistry({ perKey, perProcess });
  // Streams never end by themselves within the hour: they are ended before the server stops accepting, because
  // close() waits for every in-flight response and a stream is one (an onClose hook would run too late).
  app.addHook('preClose', (done) => {
    streams.closeAll();
    done();
  });

  app.get(
    '/events/stream',
    {
      schema: {
        'x-extension': true,
        summary: 'Stream the workspace’s events as server-sent events (extension: not in the spec)',
        description:
          'A `text/event-stream` of the events the workspace emits from the moment the stream opens, each once, oldest first: ' +
          '`id:` is the event id, `event:` its type, `data:` the JSON `{id, event, createdAt, data}` a webhook delivery carries. ' +
          'Message text (`theirMessage`, `draft`) is null on the stream; read it through GET /replies. ' +
          'A `: keep-alive` comment is sent every 15 s (OUTREACH_STREAM_HEARTBEAT, at most 30), and at each one the key is ' +
          'checked again: a revoked or expired key, or (with X-Workspace-Client) a removed Team link, ends the stream. ' +
          'A stream lasts at most an hour (OUTREACH_STREAM_MAX_AGE); the server then ends it cleanly, and a client reconnects ' +
          'with `Last-Event-ID` (the last `id:` it received) to continue after that event, nothing lost or repeated. ' +
          'Limits: 5 open streams per key (OUTREACH_STREAMS_PER_KEY) and 200 per server process (OUTREACH_STREAMS_PER_PROCESS); ' +
          'past either, 429 `too_many_streams` with `Retry-After` (`reason`: `key` or `process`, and the `limit`). ' +
          'A shutting-down server ends every stream. `outreach listen` reads it, forwards each event to a local URL, and ' +
          'reconnects with Last-Event-ID. Honors X-Workspace-Client.',
        tags: ['webhooks'],
        headers: StreamHeaders,
        querystring: StreamQuery,
        response: {
          200: { description: 'a text/event-stream that stays open', content: { 'text/event-stream': { schema: Type.String() } } },
          ...errorResponses(),
          429: Type.Object(ErrorBody.properties, {
            additionalProperties: true,
            description: 'too many open streams (`too_many_streams`: `reason` `key` or `process`, `limit`) or the per-minute rate limit; respect Retry-After',
          }),
        },
      },
    },
    async (req, reply) => {
      const filter = parseEventList(req.query.events);
      const lastEventId = req.headers['last-event-id'];
      const lease = streams.acquire(req.auth.keyId);
      let read: Awaited<ReturnType<typeof events.openReader>>;
      let resumed: Awaited<ReturnType<typeof events.resumePoint>>;
      try {
        resumed = await events.resumePoint(req.auth.workspaceId, lastEventId);
        read = await events.openReader(req.auth.workspaceId, filter, resumed);
      } catch (err) {
        lease.release();
        throw err;
      }
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        // The connection ends with the stream: a server-ended stream (max age, revocation, shutdown) leaves no idle
        // keep-alive socket behind for a closing server to wait on.
        connection: 'close',
        'x-accel-buffering': 'no',
      });
      res.write(`: streaming events of workspace ${req.auth.workspaceId}${filter ? ` (${filter.join(',')})` : ''}\n\n`);
      if (resumed) res.write(`: resuming after event ${resumed.id}\n\n`);
      else if (lastEventId) res.write(': Last-Event-ID is not an event of this workspace; streaming from now\n\n');

      let ended = false;
      let wake: () => void = () => undefined;
      /** Every close path: the lease goes back before the response ends, so a client that reconnects at once finds its slot. */
      const end = (comment: string | null) => {
        if (ended) return;
        ended = true;
        lease.release();
        if (comment !== null && !res.writableEnded && !res.destroyed) res.end(`: ${comment}\n\n`);
        wake();
      };
      res.on('close', () => end(null));
      lease.onShutdown(() => end('the server is shutting down; reconnect with Last-Event-ID to resume'));

      const openedAt = Date.now();
      const endsAt = openedAt + maxAgeMs;
      let nextCheck = openedAt + heartbeatMs;
      try {
        while (!ended) {
          try {
            for (const e of await read()) {
              if (ended) break;
              res.write(`id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(e)}\n\n`);
            }
          } catch (err) {
            // A passing database failure does not end the stream; the next read starts from the same position.
            req.log.warn({ err }, 'event stream read failed');
          }
          if (ended) break;
          if (Date.now() >= endsAt) {
            end(`this stream is ${maxAgeSeconds} s old, the longest a stream lasts; reconnect with Last-Event-ID to resume`);
            break;
          }
          if (Date.now() >= nextCheck) {
            const refused = await recheckAuth(services.workspaces, req);
            if (refused) {
              end(`closed: ${refused}`);
              break;
            }
            if (ended) break;
            res.write(': keep-alive\n\n');
            nextCheck = Date.now() + heartbeatMs;
          }
          const pause = Math.max(0, Math.min(POLL_MS, nextCheck - Date.now(), endsAt - Date.now()));
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, pause);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      } finally {
        end(null);
        if (!res.writableEnded && !res.destroyed) res.end();
      }
    },
  );

  app.post(
    '/events/trigger',
    {
      config: { action: 'webhooks.manage' },
      schema: {
        'x-extension': true,
        summary: 'Emit a sample event (extension: not in the spec)',
        description:
          'Emits a realistic sample of the event type, marked `data.test: true`, to the workspace’s webhook subscriptions that list ' +
          'it (through the outbox, signed and retried like any event) and to its open event streams. Sends nothing to a lead.',
        tags: ['webhooks'],
        headers: WorkspaceClientHeader,
        body: TriggerBody,
        response: { 202: TriggerResponse, ...errorResponses() },
      },
    },
    async (req, reply) => reply.code(202).send(await events.trigger(req.auth.workspaceId, req.body.event)),
  );
}

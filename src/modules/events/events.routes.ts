import { Type } from 'typebox';
import type { ServerResponse } from 'node:http';
import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { AppDeps } from '../../app/build-app.js';
import { WEBHOOK_EVENTS } from '../../webhooks/outbox.js';
import { createEventsService, parseEventList } from './events.service.js';

const POLL_MS = 500;
const HEARTBEAT_MS = 15_000;

const StreamQuery = Type.Object(
  { events: Type.Optional(Type.String({ maxLength: 500, description: `comma-separated event types (default: all): ${WEBHOOK_EVENTS.join(', ')}` })) },
  { additionalProperties: false },
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

/** The event stream (`outreach listen`) and sample events (`outreach trigger`): extensions, not in the spec. */
export async function eventsRoutes(app: AppInstance, opts: { deps: AppDeps }) {
  const events = createEventsService({ db: opts.deps.db, clock: opts.deps.clock });
  const open = new Set<ServerResponse>();
  // A stream never ends by itself: closing the app ends the open ones so that close() does not wait on them.
  app.addHook('onClose', async () => {
    for (const res of open) res.end();
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
          'Message text (`theirMessage`, `draft`) is null on the stream; read it through GET /replies. A comment line is sent every ' +
          '15 s to keep the connection open. `outreach listen` reads it and forwards each event to a local URL. Honors X-Workspace-Client.',
        tags: ['webhooks'],
        headers: WorkspaceClientHeader,
        querystring: StreamQuery,
        response: {
          200: { description: 'a text/event-stream that stays open', content: { 'text/event-stream': { schema: Type.String() } } },
          ...errorResponses(),
        },
      },
    },
    async (req, reply) => {
      const filter = parseEventList(req.query.events);
      const read = events.openReader(req.auth.workspaceId, filter);
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write(`: streaming events of workspace ${req.auth.workspaceId}${filter ? ` (${filter.join(',')})` : ''}\n\n`);
      open.add(res);
      let closed = false;
      const onClose = () => {
        closed = true;
        open.delete(res);
      };
      res.on('close', onClose);
      let lastWrite = Date.now();
      while (!closed) {
        try {
          for (const e of await read()) {
            res.write(`id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(e)}\n\n`);
            lastWrite = Date.now();
          }
        } catch (err) {
          // A passing database failure does not end the stream; the next read catches up from the look-back window.
          req.log.warn({ err }, 'event stream read failed');
        }
        if (Date.now() - lastWrite >= HEARTBEAT_MS) {
          res.write(': keep-alive\n\n');
          lastWrite = Date.now();
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    },
  );

  app.post(
    '/events/trigger',
    {
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

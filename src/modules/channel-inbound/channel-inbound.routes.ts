import { errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { RateLimitStore } from '../../app/plugins/rate-limit.js';
import { perCallerBudget, rawBodyScope } from '../../app/plugins/raw-webhook.js';
import type { ChannelInboundService } from './channel-inbound.service.js';
import { PUSH_BODY_LIMIT, PushParams, PushQuery, PushResponse, UnverifiedPush } from './channel-inbound.schemas.js';

/**
 * POST /channels/{channel}/inbound: a platform's webhook (docs/channels.md "Push inbound"). No API key: the channel's
 * `push.verify` checks the request's signature over the raw body, so the body is read as bytes, whatever its type,
 * up to PUSH_BODY_LIMIT. Each caller (channel and client address) has the API's per-minute budget
 * (OUTREACH_RATE_LIMIT_PER_MINUTE), counted before the body is read or verified: 429 with Retry-After past it.
 */
export async function channelInboundRoutes(
  app: AppInstance,
  opts: { channelInbound: ChannelInboundService; rateLimit: { store: RateLimitStore; perMinute: number } },
) {
  const { channelInbound, rateLimit } = opts;
  // This scope only: a signature is over the bytes as sent, so nothing parses them before the channel does.
  rawBodyScope(app, PUSH_BODY_LIMIT);

  app.post(
    '/channels/:channel/inbound',
    {
      bodyLimit: PUSH_BODY_LIMIT,
      config: { public: true },
      onRequest: perCallerBudget(rateLimit, (req) => `push:${(req.params as { channel: string }).channel}:${req.ip}`),
      schema: {
        'x-extension': true,
        summary: 'Inbound a channel’s platform pushes: replies and other observations (extension: not in the spec)',
        description:
          'The webhook URL a platform that pushes its inbound is given, with `?workspace=<workspace id>`. No API key: the channel ' +
          'checks the request’s signature over the raw body with its own secret (its descriptor’s `push.verify`); the body is the ' +
          'platform’s own payload, at most 256 KiB, in whatever type it sends. Each observation it carries is recorded on its own ' +
          'through the same path a poll uses (a reply freezes the lead, is listed under GET /replies, and a request to stop opts ' +
          'the person out); one that fails does not stop the rest. 202 with counts; 401 when the signature does not verify ' +
          '(nothing changes); 404 for a channel that is not registered or receives nothing by push; 413 past the size bound; 429 ' +
          'past the per-minute budget of a caller (the channel and the client address; OUTREACH_RATE_LIMIT_PER_MINUTE, as for a key). ' +
          'No channel built into this service pushes today (docs/channels.md).',
        tags: ['channels'],
        security: [],
        params: PushParams,
        querystring: PushQuery,
        response: { 202: PushResponse, ...errorResponses(404, 413), 401: UnverifiedPush },
      },
    },
    async (req, reply) => {
      const counts = await channelInbound.receive(
        {
          channel: req.params.channel,
          workspaceId: req.query.workspace,
          headers: req.headers,
          rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
        },
        (err) => {
          const e = err as Error;
          // Only the error's class and message: an item's text must never reach a log.
          req.log.warn({ err: { type: e?.name, message: e?.message }, channel: req.params.channel }, 'pushed item not applied');
        },
      );
      return reply.status(202).send(counts);
    },
  );
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../types.js';
import { tooManyRequests } from '../../lib/errors.js';
import type { RateLimitStore } from './rate-limit.js';

/**
 * A public webhook's plugin scope reads every body as raw bytes (a signature is over the bytes as sent, so nothing
 * parses them first), whatever its content type, up to `bodyLimit` bytes (413 past it). Call it inside the route's own
 * registered plugin: it removes that scope's parsers only.
 */
export function rawBodyScope(app: AppInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_req, body, done) => done(null, body));
}

/**
 * An `onRequest` hook giving each caller of a public webhook the API's per-minute budget (OUTREACH_RATE_LIMIT_PER_MINUTE,
 * as for a key), counted before the body is read or verified: `keyOf` names the caller (the route's target and the
 * client address). Sets `x-ratelimit-limit` and `x-ratelimit-remaining`; 429 `rate_limited` with Retry-After past it.
 */
export function perCallerBudget(rateLimit: { store: RateLimitStore; perMinute: number }, keyOf: (req: FastifyRequest) => string) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const { count, resetAt } = await rateLimit.store.hit(keyOf(req), 60_000);
    reply.header('x-ratelimit-limit', String(rateLimit.perMinute));
    reply.header('x-ratelimit-remaining', String(Math.max(0, rateLimit.perMinute - count)));
    if (count > rateLimit.perMinute) throw tooManyRequests('rate_limited', (resetAt - Date.now()) / 1000);
  };
}

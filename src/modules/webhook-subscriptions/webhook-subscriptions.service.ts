import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import { AppError, badRequest, conflict, notFound } from '../../lib/errors.js';
import { isUuid, newId } from '../../lib/ids.js';
import { enqueueEvent, isWebhookEvent, WEBHOOK_EVENTS, type OutboxSignal, type WebhookEvent } from '../../webhooks/outbox.js';
import { checkReceiverUrl, MAX_RECEIVER_URL_LENGTH, systemResolver, type Resolver } from '../../webhooks/safe-url.js';
import { generateWebhookSecret } from '../../webhooks/sign.js';
import * as repo from './webhook-subscriptions.repository.js';
import { MAX_EVENTS_PER_WEBHOOK, MAX_WEBHOOKS_PER_WORKSPACE } from './webhook-subscriptions.schemas.js';

export const PING_MESSAGE = 'Test ping from the Workspace Outreach Service. Verify the signature, then answer 2xx.';

/**
 * The precise 400 for an events list, or null when it is acceptable. The HTTP schema already rejects
 * these shapes; this names the offending event for the caller (and guards callers that skip HTTP).
 */
export function explainEventsError(events: unknown): AppError | null {
  if (!Array.isArray(events)) return badRequest('invalid_request', 'events must be an array of event names');
  if (events.length < 1 || events.length > MAX_EVENTS_PER_WEBHOOK) {
    return badRequest('invalid_request', `events must list 1 to ${MAX_EVENTS_PER_WEBHOOK} events`);
  }
  const names = events as unknown[];
  const unknown = names.find((e) => !isWebhookEvent(e));
  if (unknown !== undefined) {
    return badRequest('unknown_event', `unknown event ${JSON.stringify(unknown)}; known events: ${WEBHOOK_EVENTS.join(', ')}`, {
      events: [...WEBHOOK_EVENTS],
    });
  }
  const duplicate = names.find((e, i) => names.indexOf(e) !== i);
  if (duplicate !== undefined) return badRequest('duplicate_event', `event ${JSON.stringify(duplicate)} is listed more than once`);
  return null;
}

/**
 * Turns a create body the schema refused into the most specific 400 available, or null to keep the
 * schema's own message. `failingPath` is the JSON pointer of the first schema error.
 */
export function explainInvalidCreateBody(body: unknown, failingPath: string | undefined): AppError | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const { url, events } = body as { url?: unknown; events?: unknown };
  if (failingPath?.startsWith('/events') && events !== undefined) return explainEventsError(events);
  if (failingPath === '/url' && typeof url === 'string') {
    return url.length > MAX_RECEIVER_URL_LENGTH
      ? new AppError(400, 'invalid_webhook_url', `URL must be at most ${MAX_RECEIVER_URL_LENGTH} characters`, { reason: 'url_too_long' })
      : new AppError(400, 'invalid_webhook_url', 'URL is not a valid absolute URL', { reason: 'invalid_url' });
  }
  return null;
}

export function createWebhooksService(deps: {
  db: Database;
  config: Config;
  clock: Clock;
  cipher: TextCipher;
  resolver?: Resolver;
  outboxSignal?: OutboxSignal;
}) {
  const { db, config, clock } = deps;
  const resolver = deps.resolver ?? systemResolver;

  async function listWebhooks(workspaceId: string) {
    const rows = await repo.listEnabledWebhooks(db, workspaceId);
    return {
      webhooks: rows.map((r) => ({ id: r.id, url: r.url, events: r.events as WebhookEvent[], createdAt: r.created_at.toISOString() })),
      events: [...WEBHOOK_EVENTS],
    };
  }

  /** Not idempotent (spec): a retry after an uncertain outcome must list first. */
  async function createWebhook(workspaceId: string, input: { url: string; events: string[] }) {
    const eventsError = explainEventsError(input.events);
    if (eventsError) throw eventsError;
    if (typeof input.url !== 'string' || input.url.length > MAX_RECEIVER_URL_LENGTH) {
      throw badRequest('invalid_request', `url must be a string of at most ${MAX_RECEIVER_URL_LENGTH} characters`);
    }
    // DNS runs before the transaction: a slow resolver must not hold the workspace lock.
    const checked = await checkReceiverUrl(input.url, { resolver, allowInsecure: config.webhooksAllowInsecure });
    if (!checked.ok) throw new AppError(400, 'invalid_webhook_url', checked.message, { reason: checked.reason });

    const id = newId();
    const secret = generateWebhookSecret();
    const events = input.events as WebhookEvent[];
    const createdAt = clock.now();
    await db.transaction().execute(async (trx) => {
      // Without the row lock two concurrent creates could both count 9 and both insert.
      if (!(await repo.lockWorkspace(trx, workspaceId))) throw notFound('workspace');
      const enabled = await repo.countEnabledWebhooks(trx, workspaceId);
      if (enabled >= MAX_WEBHOOKS_PER_WORKSPACE) {
        throw conflict('webhook_limit_reached', `a workspace can have at most ${MAX_WEBHOOKS_PER_WORKSPACE} enabled webhooks; delete one first`, {
          limit: MAX_WEBHOOKS_PER_WORKSPACE,
        });
      }
      await repo.insertWebhook(trx, { id, workspace_id: workspaceId, url: input.url, events, secret, created_at: createdAt }, deps.cipher);
    });
    // createdAt as in the subscription model, which the creation response extends with the secret.
    return { id, url: input.url, events, createdAt: createdAt.toISOString(), secret };
  }

  async function deleteWebhook(workspaceId: string, webhookId: string) {
    if (!isUuid(webhookId)) throw notFound('webhook');
    const id = await repo.disableWebhook(db, workspaceId, webhookId.toLowerCase(), clock.now());
    if (!id) throw notFound('webhook');
    return { ok: true as const, id };
  }

  /** 202 means scheduled: the ping rides the same outbox and worker as every other event. */
  async function sendTestPing(workspaceId: string, webhookId: string) {
    if (!isUuid(webhookId)) throw notFound('webhook');
    const id = webhookId.toLowerCase();
    await db.transaction().execute(async (trx) => {
      if (!(await repo.findEnabledWebhook(trx, workspaceId, id))) throw notFound('webhook');
      await enqueueEvent(trx, { workspaceId, event: 'ping', data: { webhookId: id, message: PING_MESSAGE }, webhookId: id, createdAt: clock.now() });
    });
    deps.outboxSignal?.notify();
    return { ok: true as const, id, event: 'ping' as const };
  }

  return { listWebhooks, createWebhook, deleteWebhook, sendTestPing };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;

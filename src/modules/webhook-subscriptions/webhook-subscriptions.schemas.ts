import { Type } from 'typebox';
import { Timestamp, Uuid } from '../../app/schemas.js';
import { WEBHOOK_EVENTS, type WebhookEvent } from '../../webhooks/outbox.js';
import { MAX_RECEIVER_URL_LENGTH } from '../../webhooks/safe-url.js';

export const MAX_WEBHOOKS_PER_WORKSPACE = 10;
export const MAX_EVENTS_PER_WEBHOOK = 8;

export const WebhookEventName = Type.Unsafe<WebhookEvent>({ type: 'string', enum: [...WEBHOOK_EVENTS] });

export const Webhook = Type.Object({
  id: Uuid(),
  url: Type.String(),
  events: Type.Array(WebhookEventName),
  createdAt: Timestamp(),
});

export const ListWebhooksResponse = Type.Object({
  webhooks: Type.Array(Webhook, { description: 'enabled subscriptions of the workspace, oldest first; secrets are never returned' }),
  events: Type.Array(WebhookEventName, { description: 'the event catalog' }),
});

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      maxLength: MAX_RECEIVER_URL_LENGTH,
      description:
        'HTTPS on port 443; the name must resolve to public IPv4 addresses only. Credentials, fragments and IP literals are rejected. ' +
        'A rejected URL answers 400 invalid_webhook_url with a `reason` code.',
    }),
    events: Type.Array(WebhookEventName, { minItems: 1, maxItems: MAX_EVENTS_PER_WEBHOOK, uniqueItems: true }),
  },
  { additionalProperties: false },
);

export const CreateWebhookResponse = Type.Object({
  id: Uuid(),
  url: Type.String(),
  events: Type.Array(WebhookEventName),
  createdAt: Timestamp(),
  secret: Type.String({ description: 'The signing secret (whsec_…). Shown only in this response.' }),
});

export const WebhookIdParams = Type.Object({ id: Uuid({ description: 'Webhook subscription uuid' }) });

export const DeleteWebhookResponse = Type.Object({ ok: Type.Literal(true), id: Uuid() });

export const TestWebhookResponse = Type.Object({
  ok: Type.Literal(true),
  id: Uuid({ description: 'the subscription the ping is scheduled for' }),
  event: Type.Literal('ping'),
});

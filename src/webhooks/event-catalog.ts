import { Type, type TSchema } from 'typebox';
import { EXTENSION_EVENTS, type WebhookEvent } from './outbox.js';

// What each event's `data` holds, in one place: the OpenAPI document's `webhooks` section is built from these
// schemas and samples, and `POST /events/trigger` (`outreach trigger`) sends the samples. The shapes are the ones the
// emitters write (engine/record.ts, engine/observe.ts, engine/discovery.ts, replies, webhooks.service), which
// follow the spec's event catalog; test/api/openapi-webhooks.test.ts checks real events against these schemas.

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Uuid = Type.String({ format: 'uuid' });

/** The spec's event `lead` object: `{id, person, company, title, email, linkedinUrl, account, sequenceId, stage}`. */
export const EventLead = Type.Object(
  {
    id: Uuid,
    person: Nullable(Type.String()),
    company: Nullable(Type.String()),
    title: Nullable(Type.String()),
    email: Nullable(Type.String()),
    linkedinUrl: Nullable(Type.String()),
    account: Nullable(Type.String({ description: 'messaging account id (onb_…)' })),
    sequenceId: Nullable(Uuid),
    stage: Type.String(),
  },
  { additionalProperties: false },
);

const LeadEvent = (extra: Record<string, TSchema> = {}) =>
  Type.Object({ lead: EventLead, ...extra, test: Type.Optional(Type.Boolean({ description: 'present (true) on a sample sent by POST /events/trigger' })) });

/** The mailbox a reputation guard event is about (docs/deliverability.md). */
const MailboxRef = {
  mailboxId: Type.String({ description: 'mailbox id (mbx_…)' }),
  address: Type.String(),
  account: Type.String({ description: 'the messaging account (onb_…) that carries it' }),
};

const XFollower = Type.Object({ xUserId: Type.String(), username: Nullable(Type.String()), name: Type.Optional(Nullable(Type.String())) });

export const EVENT_DATA_SCHEMAS: Record<WebhookEvent, TSchema> = {
  'reply.received': LeadEvent({
    replyId: Uuid,
    classification: Nullable(Type.String()),
    theirMessage: Nullable(Type.String({ description: 'their message; null when it cannot be read (some X replies)' })),
    theirMessageTruncated: Type.Optional(Type.Boolean()),
    needsReview: Type.Optional(
      Type.Literal(true, { description: 'extension: the classification is below the confidence floor; nothing automatic happened, a person decides' }),
    ),
    draft: Nullable(Type.String({ description: 'a suggested answer; null for social-network replies' })),
    channel: Type.Optional(Type.Literal('x')),
  }),
  'lead.invited': LeadEvent(),
  'lead.accepted': LeadEvent(),
  'lead.messaged': LeadEvent({ channel: Type.Optional(Type.Literal('x', { description: 'present on a social-network DM' })) }),
  'lead.emailed': LeadEvent(),
  'lead.meeting_booked': LeadEvent(),
  'x.followed': Type.Object({
    accountUserId: Type.String({ description: 'the connected X account that was followed' }),
    accountHandle: Type.Optional(Nullable(Type.String())),
    follower: XFollower,
    leadId: Nullable(Uuid),
    source: Type.Union([Type.Literal('discovery'), Type.Literal('follow_back')]),
    playId: Type.Optional(Uuid),
    candidateId: Type.Optional(Uuid),
    checkedAt: Type.Optional(Type.String({ format: 'date-time' })),
    enrolled: Type.Optional(Type.Boolean()),
    test: Type.Optional(Type.Boolean()),
  }),
  ping: Type.Object({ webhookId: Type.String(), message: Type.String(), test: Type.Optional(Type.Boolean()) }),
  'mailbox.paused': Type.Object({
    ...MailboxRef,
    reason: Type.Union([Type.Literal('bounces'), Type.Literal('complaints')]),
    detail: Type.String({ description: 'what tripped the guard, e.g. "2 hard bounces among its last 20 sends"' }),
    pausedAt: Type.String({ format: 'date-time' }),
    test: Type.Optional(Type.Boolean()),
  }),
  'mailbox.resumed': Type.Object({
    ...MailboxRef,
    pausedReason: Type.Union([Type.Literal('bounces'), Type.Literal('complaints')]),
    by: Type.Union([Type.Literal('cli'), Type.Literal('console')]),
    resumedAt: Type.String({ format: 'date-time' }),
    test: Type.Optional(Type.Boolean()),
  }),
};

const EVENT_DESCRIPTIONS: Record<WebhookEvent, string> = {
  'reply.received': 'a prospect replied and the sequence froze',
  'lead.invited': 'a connection request went out',
  'lead.accepted': 'a prospect accepted the connection',
  'lead.messaged': 'a message or follow-up was sent; a social-network DM carries `channel: "x"`',
  'lead.emailed': 'an email step was sent',
  'lead.meeting_booked': 'a meeting was recorded for a lead',
  'x.followed': 'an inbound follow of the connected social-network account (discovery of a Play, or a follow-back)',
  ping: 'POST /webhooks/{id}/test was called',
  'mailbox.paused': 'a reputation guard paused a mailbox (too many hard bounces among its last sends, or an abuse complaint); it sends nothing until resumed',
  'mailbox.resumed': 'a person resumed a paused mailbox (`outreach mailbox resume` or the console)',
};

/** A realistic `data` for each event, with the given ids; the trigger adds `test: true`. */
export function sampleEventData(event: WebhookEvent, ids: { leadId: string; replyId: string; webhookId: string; sequenceId: string }, now: Date) {
  const lead = {
    id: ids.leadId,
    person: 'Ada Lovelace',
    company: 'Analytical Engines Ltd',
    title: 'Founder',
    email: 'ada@analytical-engines.example',
    linkedinUrl: 'https://www.linkedin.com/in/ada-lovelace-sample',
    account: 'onb_00000000-0000-4000-8000-000000000000',
    sequenceId: ids.sequenceId,
    stage: 'invited',
  };
  switch (event) {
    case 'reply.received':
      return {
        lead: { ...lead, stage: 'replied' },
        replyId: ids.replyId,
        classification: 'interested',
        theirMessage: 'Thanks for reaching out, happy to talk next week.',
        draft: 'Great, does Tuesday 10:00 work?',
      };
    case 'lead.invited':
      return { lead };
    case 'lead.accepted':
      return { lead: { ...lead, stage: 'accepted' } };
    case 'lead.messaged':
      return { lead: { ...lead, stage: 'messaged' } };
    case 'lead.emailed':
      return { lead: { ...lead, stage: 'messaged' } };
    case 'lead.meeting_booked':
      return { lead: { ...lead, stage: 'replied' } };
    case 'x.followed':
      return {
        accountUserId: '1550000000000000001',
        follower: { xUserId: '1234567890', username: 'ada_sample' },
        leadId: ids.leadId,
        source: 'follow_back',
        checkedAt: now.toISOString(),
      };
    case 'ping':
      return { webhookId: ids.webhookId, message: 'This is a test event from outreach trigger.' };
    case 'mailbox.paused':
    case 'mailbox.resumed': {
      const mailbox = { mailboxId: 'mbx_00000000-0000-4000-8000-000000000001', address: 'dana@acme.example', account: lead.account };
      return event === 'mailbox.paused'
        ? { ...mailbox, reason: 'bounces', detail: '2 hard bounces among its last 20 sends', pausedAt: now.toISOString() }
        : { ...mailbox, pausedReason: 'bounces', by: 'cli', resumedAt: now.toISOString() };
    }
  }
}

const SIGNATURE_HEADERS = [
  { name: 'X-Service-Event', in: 'header', required: true, schema: { type: 'string' }, description: 'the event name' },
  {
    name: 'X-Service-Delivery',
    in: 'header',
    required: true,
    schema: { type: 'string', format: 'uuid' },
    description: 'the same for every attempt of one event and equal to the body `id`: deduplicate on it',
  },
  {
    name: 'X-Service-Signature',
    in: 'header',
    required: true,
    schema: { type: 'string', pattern: '^t=[0-9]+,v1=[0-9a-f]{64}$' },
    description:
      '`t=<unix seconds>,v1=<hex>`: HMAC-SHA256 keyed with the subscription secret over `<t>.<raw body>`. Verify before parsing, in constant time, ' +
      'and reject a `t` more than 300 s from now (`verifyWebhook` from this package, or Stripe’s SDK, which verifies the same scheme).',
  },
];

/** The OpenAPI 3.1 `webhooks` section: one POST per event, with its payload, signature headers and an example. */
export function openApiWebhooks(): Record<string, unknown> {
  const now = new Date('2026-11-24T09:30:00.000Z');
  const ids = {
    leadId: '6f1c2b9e-4d3a-4e8f-9a51-2b7c0d9e8f10',
    replyId: '0b9d6a4e-1c2f-4a7b-8e3d-5f6a7b8c9d0e',
    webhookId: '3a2b1c0d-9e8f-4a6b-8c5d-4e3f2a1b0c9d',
    sequenceId: '8e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968',
  };
  return Object.fromEntries(
    (Object.keys(EVENT_DATA_SCHEMAS) as WebhookEvent[]).map((event) => [
      event,
      {
        post: {
          summary: event,
          ...(EXTENSION_EVENTS.has(event) && { 'x-extension': true }),
          description: `Sent when ${EVENT_DESCRIPTIONS[event]}. Delivery is at least once: a timeout, network error, 429 or 5xx is retried 1 s and 4 s later with the same delivery id.`,
          parameters: SIGNATURE_HEADERS,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['id', 'event', 'createdAt', 'data'],
                  properties: {
                    id: { type: 'string', format: 'uuid', description: 'the delivery id (X-Service-Delivery)' },
                    event: { const: event },
                    createdAt: { type: 'string', format: 'date-time' },
                    data: EVENT_DATA_SCHEMAS[event],
                  },
                },
                example: { id: '5b0f7f0e-2f7c-4a43-9a39-7d7f3f1f2c11', event, createdAt: now.toISOString(), data: sampleEventData(event, ids, now) },
              },
            },
          },
          responses: { '2XX': { description: 'received; any 2xx within 10 seconds ends delivery' } },
        },
      },
    ]),
  );
}

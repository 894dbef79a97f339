import { Type } from 'typebox';
import { Nullable, OneOf, Timestamp, Uuid } from '../../app/schemas.js';
import { CrossChannelLead } from '../leads/index.js';
import { MEETING_OUTCOMES } from './meetings.effects.js';
import { BOOKING_TOOLS, MEETING_KINDS } from './tools/types.js';

// Meetings (docs/meetings.md): extensions of the spec, each marked `x-extension` where its route is declared.

/** The largest booking-tool request read, in bytes: one booking's JSON is a few kilobytes. */
export const MEETING_BODY_LIMIT = 256 * 1024;
export const MAX_NOTE = 2000;
const SUBSCRIPTION_SCOPES = ['user', 'organization'] as const;

export const EndpointIdParams = Type.Object({ id: Uuid({ description: 'the endpoint id' }) });
export const InboundParams = Type.Object({ endpointId: Type.String({ maxLength: 64, description: 'the endpoint id from its URL' }) });

export const CreateEndpointBody = Type.Object(
  {
    tool: OneOf(BOOKING_TOOLS, { description: 'the booking tool: `calendly` or `cal` (Cal.com, cloud or self-hosted)' }),
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'a name to tell endpoints apart' })),
  },
  { additionalProperties: false },
);

const EndpointFields = {
  id: Uuid(),
  tool: OneOf(BOOKING_TOOLS),
  label: Nullable(Type.String()),
  url: Type.String({ description: 'the URL to give the tool: <public URL>/inbound/meetings/<id>' }),
  createdAt: Timestamp(),
  rotatedAt: Nullable(Timestamp()),
  subscription: Nullable(
    Type.Object(
      {
        uri: Type.String({ description: 'the subscription at Calendly' }),
        scope: OneOf(SUBSCRIPTION_SCOPES),
        subscribedAt: Timestamp(),
      },
      { additionalProperties: false, description: 'the Calendly webhook subscription made from here (POST …/subscription), or null' },
    ),
  ),
};

export const Endpoint = Type.Object(EndpointFields, { additionalProperties: false });

export const EndpointWithSecret = Type.Object(
  {
    ...EndpointFields,
    secret: Type.String({ description: 'the signing secret to give the tool; shown only in this answer' }),
    steps: Type.Array(Type.String(), { description: 'how to register the URL and secret at the tool' }),
  },
  { additionalProperties: false },
);

export const SubscribeBody = Type.Object(
  {
    personalAccessToken: Type.String({
      minLength: 1,
      maxLength: 4000,
      description: 'a Calendly personal access token (Integrations → API and webhooks); kept encrypted, never shown again',
    }),
    scope: Type.Optional(
      OneOf(SUBSCRIPTION_SCOPES, { default: 'user', description: 'user: the token’s own bookings; organization: everyone’s (owner or admin token)' }),
    ),
  },
  { additionalProperties: false },
);

export const RemovedEndpointResponse = Type.Object(
  {
    ok: Type.Literal(true),
    subscription: OneOf(['none', 'deleted', 'left_at_calendly'] as const, {
      description: 'the Calendly subscription made from here: none held, deleted, or left there (Calendly refused the stored token)',
    }),
  },
  { additionalProperties: false },
);

export const EndpointsResponse = Type.Object({ endpoints: Type.Array(Endpoint) }, { additionalProperties: false });

export const EventsQuery = Type.Object(
  {
    status: Type.Optional(OneOf(['applied', 'unchanged', 'unmatched', 'ignored'] as const, { description: 'only events of this status' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'the `nextCursor` of the previous page' })),
  },
  { additionalProperties: false },
);

export const MeetingEvent = Type.Object(
  {
    id: Uuid(),
    tool: OneOf(BOOKING_TOOLS),
    trigger: Type.String({ description: 'the tool’s own name of the event' }),
    kind: OneOf(MEETING_KINDS),
    bookingUid: Type.String(),
    inviteeEmail: Nullable(Type.String()),
    startsAt: Nullable(Timestamp()),
    leadId: Nullable(Uuid()),
    matchedBy: Nullable(OneOf(['uid', 'ref', 'email'] as const)),
    status: OneOf(['applied', 'unchanged', 'unmatched', 'ignored'] as const),
    receivedAt: Timestamp(),
  },
  { additionalProperties: false },
);

export const EventsResponse = Type.Object({ events: Type.Array(MeetingEvent), nextCursor: Nullable(Type.String()) }, { additionalProperties: false });

export const ReceivedResponse = Type.Object(
  {
    ok: Type.Literal(true),
    eventId: Uuid(),
    status: OneOf(['applied', 'unchanged', 'unmatched', 'ignored'] as const),
    kind: OneOf(MEETING_KINDS),
  },
  { additionalProperties: false },
);

export const RecordMeetingBody = Type.Object(
  {
    outcome: Type.Optional(OneOf(MEETING_OUTCOMES, { description: 'qualified and not_qualified imply held' })),
    note: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_NOTE })),
    bookedAt: Type.Optional(Timestamp({ description: 'a meeting booked elsewhere, starting then' })),
    by: Type.Optional(Type.String({ minLength: 1, maxLength: 100, default: 'api' })),
  },
  { additionalProperties: false },
);

export const RecordMeetingResponse = Type.Object({ ok: Type.Literal(true), lead: CrossChannelLead }, { additionalProperties: false });

import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { RateLimitStore } from '../../app/plugins/rate-limit.js';
import { perCallerBudget, rawBodyScope } from '../../app/plugins/raw-webhook.js';
import type { MeetingsService } from './meetings.service.js';
import {
  CreateEndpointBody,
  Endpoint,
  EndpointIdParams,
  EndpointWithSecret,
  EndpointsResponse,
  EventsQuery,
  EventsResponse,
  InboundParams,
  MEETING_BODY_LIMIT,
  ReceivedResponse,
  RecordMeetingBody,
  RecordMeetingResponse,
  RemovedEndpointResponse,
  SubscribeBody,
} from './meetings.schemas.js';
import { Type } from 'typebox';
import { readTimeCursor, timeCursorOf } from '../../lib/keyset.js';
import { Uuid } from '../../app/schemas.js';

const NOTE = 'Extension: not in the spec (docs/meetings.md). Honors X-Workspace-Client; an id of another workspace answers 404.';

/** /api/v1: the workspace's booking-tool endpoints and events, and a person's record of a meeting. */
export async function meetingsRoutes(app: AppInstance, opts: { meetings: MeetingsService }) {
  const { meetings } = opts;
  endpointRoutes(app, meetings);
  subscriptionRoutes(app, meetings);
  eventAndOutcomeRoutes(app, meetings);
}

/** The booking-tool endpoints: list, create, rotate, remove. */
function endpointRoutes(app: AppInstance, meetings: MeetingsService) {
  app.get(
    '/meetings/endpoints',
    {
      schema: {
        'x-extension': true,
        summary: 'List the booking-tool endpoints (extension: not in the spec)',
        description: `Secrets are never returned. ${NOTE}`,
        tags: ['meetings'],
        headers: WorkspaceClientHeader,
        response: { 200: EndpointsResponse, ...errorResponses() },
      },
    },
    async (req) => ({ endpoints: await meetings.listEndpoints(req.auth.workspaceId) }),
  );

  app.post(
    '/meetings/endpoints',
    {
      config: { action: 'meetings.endpoints' },
      schema: {
        'x-extension': true,
        summary: 'Create an inbound endpoint for Calendly or Cal.com; its secret is shown only in this answer (extension)',
        description: `The answer gives the URL, the signing secret and the steps to register them at the tool. ${NOTE}`,
        tags: ['meetings'],
        headers: WorkspaceClientHeader,
        body: CreateEndpointBody,
        response: { 201: EndpointWithSecret, ...errorResponses() },
      },
    },
    async (req, reply) => reply.status(201).send(await meetings.createEndpoint(req.auth.workspaceId, req.body)),
  );

  app.post(
    '/meetings/endpoints/:id/rotate',
    {
      config: { action: 'meetings.endpoints' },
      schema: {
        'x-extension': true,
        summary: 'Give an endpoint a new secret, shown only in this answer; the old one stops verifying at once (extension)',
        description: NOTE,
        tags: ['meetings'],
        headers: WorkspaceClientHeader,
        params: EndpointIdParams,
        response: { 200: EndpointWithSecret, ...errorResponses(404) },
      },
    },
    async (req) => meetings.rotateEndpoint(req.auth.workspaceId, req.params.id),
  );

  app.delete(
    '/meetings/endpoints/:id',
    {
      config: { action: 'meetings.endpoints' },
      schema: {
        'x-extension': true,
        summary: 'Remove an endpoint: its URL answers 404 from now on (extension)',
        description:
          'Events it received stay on record. A Calendly subscription made from here is deleted at Calendly first ' +
          '(`subscription`); 503 `calendly_unavailable` when Calendly does not answer, and nothing changes. ' +
          NOTE,
        tags: ['meetings'],
        headers: WorkspaceClientHeader,
        params: EndpointIdParams,
        response: { 200: RemovedEndpointResponse, ...errorResponses(404) },
      },
    },
    async (req) => meetings.removeEndpoint(req.auth.workspaceId, req.params.id),
  );
}

/** A Calendly endpoint's webhook subscription, made and deleted at Calendly with a person's token. */
function subscriptionRoutes(app: AppInstance, meetings: MeetingsService) {
  app.post(
    '/meetings/endpoints/:id/subscription',
    {
      config: { action: 'meetings.endpoints' },
      schema: {
        'x-extension': true,
        summary: 'Create a Calendly endpoint’s webhook subscription at Calendly with a personal access token (extension)',
        description:
          'Calls Calendly (`POST /webhook_subscriptions`) with the endpoint’s URL, the four invitee events and the endpoint’s ' +
          'secret as signing key; one made before from here is replaced. The token is kept encrypted, to replace the ' +
          'subscription on a rotation and delete it on a removal; it is never shown. 400 `calendly_token_refused` ' +
          '(Calendly answered 401); 409 `wrong_tool` (a Cal.com endpoint), `calendly_forbidden` (no paid plan, or scope ' +
          'organization without an owner or admin), `calendly_refused`; 503 `calendly_unavailable`. Nothing changes on ' +
          `any of them. ${NOTE}`,
        tags: ['meetings'],
        headers: WorkspaceClientHeader,
        params: EndpointIdParams,
        body: SubscribeBody,
        response: { 200: Endpoint, ...errorResponses(404, 409) },
      },
    },
    async (req) => meetings.subscribeEndpoint(req.auth.workspaceId, req.params.id, req.body),
  );

  app.delete(
    '/meetings/endpoints/:id/subscription',
    {
      config: { action: 'meetings.endpoints' },
      schema: {
        'x-extension': true,
        summary: 'Delete the endpoint’s Calendly subscription made from here (extension)',
        description: `One already gone at Calendly counts as deleted. 409 \`no_subscription\` when none was made from here. ${NOTE}`,
        tags: ['meetings'],
        headers: WorkspaceClientHeader,
        params: EndpointIdParams,
        response: { 200: Endpoint, ...errorResponses(404, 409) },
      },
    },
    async (req) => meetings.unsubscribeEndpoint(req.auth.workspaceId, req.params.id),
  );
}

/** The events the tools pushed, and a person's record of a meeting. */
function eventAndOutcomeRoutes(app: AppInstance, meetings: MeetingsService) {
  app.get(
    '/meetings/events',
    {
      schema: {
        'x-extension': true,
        summary: 'Booking events received, newest first; `status=unmatched` lists those that matched no lead (extension)',
        description: `Keyset pages: pass \`nextCursor\` as \`cursor\`. ${NOTE}`,
        tags: ['meetings'],
        headers: WorkspaceClientHeader,
        querystring: EventsQuery,
        response: { 200: EventsResponse, ...errorResponses() },
      },
    },
    async (req) => {
      const limit = req.query.limit ?? 50;
      const rows = await meetings.listEvents(req.auth.workspaceId, { status: req.query.status, limit: limit + 1, before: readTimeCursor(req.query.cursor) });
      const page = rows.slice(0, limit);
      return {
        events: page.map((r) => ({
          id: r.id,
          tool: r.tool as 'calendly' | 'cal',
          trigger: r.trigger,
          kind: r.kind as never,
          bookingUid: r.booking_uid,
          inviteeEmail: r.invitee_email,
          startsAt: r.starts_at?.toISOString() ?? null,
          leadId: r.lead_id,
          matchedBy: r.matched_by as never,
          status: r.status as never,
          receivedAt: r.received_at.toISOString(),
        })),
        nextCursor: rows.length > limit ? timeCursorOf(page[page.length - 1].received_at, page[page.length - 1].id) : null,
      };
    },
  );

  app.post(
    '/leads/:id/meeting',
    {
      config: { action: 'meetings.record' },
      schema: {
        'x-extension': true,
        summary: 'Record a meeting’s outcome, or a meeting booked elsewhere (extension: not in the spec)',
        description:
          '`outcome` (held, no_show, cancelled, qualified, not_qualified; the latter two imply held) sets `meetingOutcome` and ' +
          'writes `meeting_synced` (`meeting_no_show` for a no-show) with `by` and the `note`. `bookedAt` books a meeting made ' +
          'elsewhere as a booking tool would: `meetingBookedAt`, every sequence lane of the person stopped, pending replies ' +
          'closed, `meeting_booked` and the `lead.meeting_booked` event. At least one of the two. 409 `no_meeting` for an ' +
          `outcome of a lead with no booked meeting. ${NOTE}`,
        tags: ['meetings'],
        headers: WorkspaceClientHeader,
        params: Type.Object({ id: Uuid({ description: 'the lead id' }) }),
        body: RecordMeetingBody,
        response: { 200: RecordMeetingResponse, ...errorResponses(404, 409) },
      },
    },
    async (req) => meetings.recordMeeting(req.auth.workspaceId, req.params.id, { ...req.body, by: req.body.by ?? 'api' }),
  );
}

/**
 * POST /inbound/meetings/{endpointId}: a booking tool's webhook (docs/meetings.md). No API key: the endpoint's secret
 * verifies the tool's signature over the raw body, read as bytes up to MEETING_BODY_LIMIT. Each caller (endpoint and
 * client address) has the API's per-minute budget, counted before the body is read.
 */
export async function meetingsInboundRoutes(app: AppInstance, opts: { meetings: MeetingsService; rateLimit: { store: RateLimitStore; perMinute: number } }) {
  const { meetings, rateLimit } = opts;
  rawBodyScope(app, MEETING_BODY_LIMIT);
  app.post(
    '/inbound/meetings/:endpointId',
    {
      bodyLimit: MEETING_BODY_LIMIT,
      config: { public: true },
      onRequest: perCallerBudget(rateLimit, (req) => `meetings:${(req.params as { endpointId: string }).endpointId}:${req.ip}`),
      schema: {
        // Outside /api/v1, so outside the API document (whose paths all carry the prefix); docs/meetings.md describes it.
        hide: true,
        'x-extension': true,
        summary: 'A booking tool’s webhook: Calendly or Cal.com (extension: not in the spec)',
        description:
          'The URL an endpoint created under /api/v1/meetings/endpoints gives its tool. No API key: the tool’s signature over the ' +
          'raw body is checked with the endpoint’s secret (Calendly-Webhook-Signature t=,v1= with at most 180 s of age; ' +
          'X-Cal-Signature-256 with `createdAt` at most 24 h old). 200 with what the event did (`applied`, `unchanged`, ' +
          '`unmatched`, `ignored`); 400 `invalid_payload` naming the field; 401 `signature_invalid` or `signature_stale`; 404 for ' +
          'an unknown or removed endpoint; 409 `duplicate_event` for a replay (same tool, booking, trigger and signed time); 413 ' +
          'past 256 KiB; 429 past the per-minute budget. Nothing changes on any error.',
        tags: ['meetings'],
        security: [],
        params: InboundParams,
        response: { 200: ReceivedResponse, ...errorResponses(400, 401, 404, 409, 413) },
      },
    },
    async (req) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const r = await meetings.receive(req.params.endpointId, req.headers, raw);
      return { ok: true as const, eventId: r.eventId, status: r.status, kind: r.kind as never };
    },
  );
}

import type { Database } from '../../db/database.js';
import type { Config } from '../../config/config.js';
import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import { AppError, badRequest, conflict, notFound } from '../../lib/errors.js';
import { toCrossChannelLeadView } from '../../domain/lead-views.js';
import { isUuid, newId, randomToken, sha256Hex } from '../../lib/ids.js';
import { withTxRetry } from '../../lib/tx-retry.js';
import { rollbackIfDryRun } from '../../lib/dry-run.js';
import { readBookingRef } from '../../domain/booking-link.js';
import { applyMeetingChange, type MeetingChange, type MeetingOutcome } from './meetings.effects.js';
import * as repo from './meetings.repository.js';
import { getBookingLinks, setAccountBookingLink, setWorkspaceBookingLink } from './booking-links.js';
import { calendly } from './tools/calendly.js';
import { cal } from './tools/cal.js';
import { ToolRefusal, type BookingTool, type BookingToolReader, type ToolEvent } from './tools/types.js';
import { endpointSteps, type EndpointView, type EndpointWithSecret } from './meetings.steps.js';
import { createSubscriptions, type SubscriptionOnRemove, type SubscriptionScope } from './subscriptions.js';

const READERS: Record<BookingTool, BookingToolReader> = { calendly, cal };

/** `outreach meetings endpoint create | list | rotate | remove`. */
export interface EndpointCommand {
  op: 'create' | 'list' | 'rotate' | 'remove' | 'subscribe' | 'unsubscribe';
  workspaceId: string;
  tool?: BookingTool;
  label?: string | null;
  id?: string;
  /** `subscribe`: the Calendly personal access token and the subscription's scope (default user). */
  personalAccessToken?: string;
  scope?: SubscriptionScope;
}

/** What one pushed event did (the 200 answer): `applied`, `unchanged` (already so), `unmatched` or `ignored`. */
export interface ReceivedEvent {
  eventId: string;
  status: 'applied' | 'unchanged' | 'unmatched' | 'ignored';
  kind: string;
  leadId: string | null;
}

export type MeetingsService = ReturnType<typeof createMeetingsService>;

/** Meetings (docs/meetings.md): booking tools' endpoints and events, and the outcomes a person records. */
export function createMeetingsService(deps: { db: Database; clock: Clock; cipher: TextCipher; config: Config }) {
  const { db, clock, cipher } = deps;
  const urlOf = (id: string) => `${deps.config.publicBase.url()}/inbound/meetings/${id}`;
  const view = (row: repo.EndpointRow): EndpointView => ({
    id: row.id,
    tool: row.tool,
    label: row.label,
    url: urlOf(row.id),
    createdAt: row.created_at.toISOString(),
    rotatedAt: row.rotated_at?.toISOString() ?? null,
    subscription:
      row.subscription_uri && row.subscription_scope && row.subscribed_at
        ? { uri: row.subscription_uri, scope: row.subscription_scope, subscribedAt: row.subscribed_at.toISOString() }
        : null,
  });
  const subscriptions = createSubscriptions({ db, clock, cipher, apiUrl: deps.config.calendlyApiUrl, urlOf });
  const withSecret = (row: repo.EndpointRow, secret: string): EndpointWithSecret => ({ ...view(row), secret, steps: endpointSteps(row.tool, urlOf(row.id)) });

  /** Matches a verified event to a lead of the endpoint's workspace: by its booking, its reference, or its invitee's address. */
  async function match(trx: Database, workspaceId: string, e: ToolEvent) {
    for (const uid of [e.bookingUid, e.rescheduledFrom]) {
      if (!uid) continue;
      const booking = await repo.bookingOf(trx, workspaceId, e.tool, uid);
      if (booking) return { leadId: booking.lead_id, matchedBy: 'uid' as const, known: uid === e.bookingUid, previous: uid === e.rescheduledFrom };
    }
    const byRef = readBookingRef(cipher, workspaceId, e.ref);
    if (byRef && (await repo.leadInWorkspace(trx, workspaceId, byRef))) return { leadId: byRef, matchedBy: 'ref' as const, known: false, previous: false };
    if (e.inviteeEmail) {
      const [first] = await repo.leadsByEmail(trx, workspaceId, e.inviteeEmail);
      if (first) return { leadId: first.id, matchedBy: 'email' as const, known: false, previous: false };
    }
    return null;
  }

  /** The change a matched event makes, or null when it makes none (a booking already on record, a change to a booking never seen). */
  function changeOf(e: ToolEvent, m: NonNullable<Awaited<ReturnType<typeof match>>>): MeetingChange | null {
    switch (e.kind) {
      case 'booked':
        return m.known ? null : { kind: 'booked', startsAt: e.startsAt, matchedBy: m.matchedBy };
      case 'rescheduled':
        if (m.known) return null;
        return m.previous
          ? { kind: 'rescheduled', startsAt: e.startsAt, previousBookingUid: e.rescheduledFrom! }
          : { kind: 'booked', startsAt: e.startsAt, matchedBy: m.matchedBy };
      case 'ignored':
        return null;
      default:
        return m.known ? { kind: e.kind } : null;
    }
  }

  const BOOKING_STATUS: Record<string, string> = {
    booked: 'booked',
    rescheduled: 'booked',
    cancelled: 'cancelled',
    no_show: 'no_show',
    no_show_cleared: 'booked',
    ended: 'ended',
  };

  return {
    async createEndpoint(workspaceId: string, p: { tool: BookingTool; label?: string | null }): Promise<EndpointWithSecret> {
      const secret = randomToken(32);
      const row = await repo.insertEndpoint(db, {
        id: newId(),
        workspaceId,
        tool: p.tool,
        secret: cipher.encrypt(secret)!,
        label: p.label ?? null,
        at: clock.now(),
      });
      return withSecret(row, secret);
    },

    async listEndpoints(workspaceId: string): Promise<EndpointView[]> {
      return (await repo.listEndpoints(db, workspaceId)).map((r) => view(r));
    },

    /**
     * A new secret, shown once; the old one stops verifying at once. 404 for an unknown or foreign id. A subscription
     * made from here is made again with the new secret first; the errors of `subscribeEndpoint` refuse the rotation.
     */
    async rotateEndpoint(workspaceId: string, id: string): Promise<EndpointWithSecret> {
      if (!isUuid(id)) throw notFound('meeting endpoint');
      const secret = randomToken(32);
      const sub = await subscriptions.beforeRotate(workspaceId, id, secret);
      const row = await repo.rotateEndpoint(db, workspaceId, id, cipher.encrypt(secret)!, clock.now());
      if (!row) throw notFound('meeting endpoint');
      if (!sub) return withSecret(row, secret);
      return withSecret((await repo.setSubscription(db, workspaceId, id, { ...sub, at: clock.now() }))!, secret);
    },

    /** Removes the endpoint, deleting its subscription at Calendly first (`subscription` says what became of it). */
    async removeEndpoint(workspaceId: string, id: string): Promise<{ ok: true; subscription: SubscriptionOnRemove }> {
      if (!isUuid(id)) throw notFound('meeting endpoint');
      const subscription = await subscriptions.beforeRemove(workspaceId, id);
      if (!(await repo.deleteEndpoint(db, workspaceId, id))) throw notFound('meeting endpoint');
      return { ok: true, subscription };
    },

    /** The endpoint's webhook subscription made at Calendly with a person's token (subscriptions.ts). */
    async subscribeEndpoint(workspaceId: string, id: string, p: { personalAccessToken: string; scope?: SubscriptionScope }): Promise<EndpointView> {
      return view(await subscriptions.subscribe(workspaceId, id, p));
    },

    async unsubscribeEndpoint(workspaceId: string, id: string): Promise<EndpointView> {
      return view(await subscriptions.unsubscribe(workspaceId, id));
    },

    /** The CLI's one door onto endpoints (`outreach meetings endpoint …`), through the admin API or the database. */
    async endpointCommand(input: EndpointCommand): Promise<EndpointView | EndpointWithSecret | EndpointView[] | { ok: true }> {
      if (input.op === 'create') return this.createEndpoint(input.workspaceId, { tool: input.tool ?? 'calendly', label: input.label ?? null });
      if (input.op === 'list') return this.listEndpoints(input.workspaceId);
      if (!input.id) throw badRequest('invalid_request', `id is required to ${input.op} an endpoint`);
      if (input.op === 'rotate') return this.rotateEndpoint(input.workspaceId, input.id);
      if (input.op === 'remove') return this.removeEndpoint(input.workspaceId, input.id);
      if (input.op === 'unsubscribe') return this.unsubscribeEndpoint(input.workspaceId, input.id);
      if (!input.personalAccessToken) throw badRequest('invalid_request', 'personalAccessToken is required to subscribe');
      return this.subscribeEndpoint(input.workspaceId, input.id, { personalAccessToken: input.personalAccessToken, scope: input.scope });
    },

    /** The workspace's booking link and each account's (docs/meetings.md "The booking link"). */
    getBookingLinks: (workspaceId: string) => getBookingLinks(db, workspaceId),
    /** 400 naming `bookingLink` for anything but an http(s) URL of at most 2,000 characters; null or empty clears it. */
    setWorkspaceBookingLink: (workspaceId: string, link: string | null) => setWorkspaceBookingLink(db, workspaceId, link),
    /** As the workspace's; 404 for an account of another workspace. */
    setAccountBookingLink: (workspaceId: string, accountId: string, link: string | null) => setAccountBookingLink(db, workspaceId, accountId, link),

    /** Each lead's meeting (booked, outcome, invitation answer) by id, in one read; ids not of the workspace are absent. */
    async meetingsOfLeads(workspaceId: string, leadIds: string[]) {
      const rows = await repo.meetingFieldsOf(db, workspaceId, [...new Set(leadIds)].filter(isUuid));
      return new Map(
        rows.map((r) => [
          r.id,
          { id: r.id, meetingBookedAt: r.meeting_booked_at?.toISOString() ?? null, meetingOutcome: r.meeting_outcome, meetingResponse: r.meeting_response },
        ]),
      );
    },

    async listEvents(workspaceId: string, p: { status?: string; limit: number; before?: { at: Date; id: string } }) {
      return repo.listEvents(db, workspaceId, p);
    },

    /**
     * One request a booking tool sent to `endpointId`: verified with that endpoint's secret, read, recorded once by its
     * idempotency key, matched to a lead of the endpoint's workspace and applied, all in one transaction.
     * Errors: 404 unknown endpoint; 401 `signature_invalid`, `signature_stale`; 400 `invalid_payload` naming the
     * field; 409 `duplicate_event` for a replay. Nothing changes on any of them.
     */
    async receive(endpointId: string, headers: Record<string, string | string[] | undefined>, raw: Buffer): Promise<ReceivedEvent> {
      const endpoint = isUuid(endpointId) ? await repo.endpointWithSecret(db, endpointId) : undefined;
      if (!endpoint) throw notFound('meeting endpoint');
      const reader = READERS[endpoint.tool];
      const now = clock.now();
      let event: ToolEvent;
      try {
        const { signedAt } = reader.verify(headers, raw, cipher.decrypt(endpoint.secret) ?? '', now);
        let body: unknown;
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          throw new ToolRefusal(400, 'invalid_payload', 'body must be JSON');
        }
        event = reader.read(body, signedAt, now);
      } catch (err) {
        if (err instanceof ToolRefusal) throw new AppError(err.status, err.code, err.message);
        throw err;
      }
      const workspaceId = endpoint.workspace_id;
      const key = sha256Hex([event.tool, event.bookingUid, event.trigger, event.signedAt].join('\n'));
      return withTxRetry(() =>
        db.transaction().execute(async (trx) => {
          const m = await match(trx, workspaceId, event);
          const change = m ? changeOf(event, m) : null;
          // A change to a booking never on record matches nothing to change, whoever its invitee is.
          const orphan = !!m && !m.known && !m.previous && !['booked', 'rescheduled', 'ignored'].includes(event.kind);
          const status: ReceivedEvent['status'] = !m || orphan ? 'unmatched' : event.kind === 'ignored' ? 'ignored' : change ? 'applied' : 'unchanged';
          const eventId = newId();
          const fresh = await repo.insertEvent(trx, {
            id: eventId,
            workspaceId,
            endpointId: endpoint.id,
            tool: event.tool,
            idempotencyKey: key,
            bookingUid: event.bookingUid,
            kind: event.kind,
            trigger: event.trigger,
            inviteeEmail: event.inviteeEmail,
            startsAt: event.startsAt,
            leadId: orphan ? null : (m?.leadId ?? null),
            matchedBy: orphan ? null : (m?.matchedBy ?? null),
            status,
            at: now,
          });
          if (!fresh) throw conflict('duplicate_event', 'this event was already received (same tool, booking, trigger and signed time)');
          if (m && change) {
            await applyMeetingChange(trx, {
              workspaceId,
              leadId: m.leadId,
              source: event.tool,
              bookingUid: event.bookingUid,
              by: event.tool,
              change,
              at: change.kind === 'booked' ? new Date(event.signedAt) : now,
              now,
            });
            await repo.upsertBooking(trx, {
              workspaceId,
              tool: event.tool,
              bookingUid: event.bookingUid,
              leadId: m.leadId,
              startsAt: event.startsAt,
              status: BOOKING_STATUS[event.kind] ?? 'booked',
              rescheduledFrom: event.rescheduledFrom,
              now,
            });
            if (change.kind === 'rescheduled')
              await repo.upsertBooking(trx, {
                workspaceId,
                tool: event.tool,
                bookingUid: change.previousBookingUid,
                leadId: m.leadId,
                startsAt: null,
                status: 'rescheduled',
                rescheduledFrom: null,
                now,
              });
          }
          return { eventId, status, kind: event.kind, leadId: orphan ? null : (m?.leadId ?? null) };
        }),
      );
    },

    /**
     * A person's record of a meeting (POST /leads/{id}/meeting): `bookedAt` books one made elsewhere, `outcome` (with an
     * optional `note`) records how it went. 400 `invalid_request` with neither, or a note without an outcome; 404 for a
     * foreign lead; 409 `no_meeting` for an outcome of a lead with no booked meeting. `dryRun`: runs and rolls back.
     */
    async recordMeeting(workspaceId: string, leadId: string, p: { outcome?: MeetingOutcome; note?: string; bookedAt?: string; by: string; dryRun?: boolean }) {
      if (!p.outcome && !p.bookedAt) throw badRequest('invalid_request', 'body must have outcome or bookedAt (or both)');
      if (p.note && !p.outcome) throw badRequest('invalid_request', 'note goes with an outcome');
      const now = clock.now();
      // Under dryRun (MCP) the real change runs and rolls back: the answer and every refusal are the real ones.
      return withTxRetry(() =>
        rollbackIfDryRun(
          p.dryRun,
          (work) => db.transaction().execute(work),
          async (trx: Database) => {
            const lead = isUuid(leadId) ? await repo.lockLead(trx, workspaceId, leadId) : undefined;
            if (!lead) throw notFound('lead');
            const base = { workspaceId, leadId, source: 'person' as const, by: p.by, now };
            if (p.bookedAt) await applyMeetingChange(trx, { ...base, change: { kind: 'booked', startsAt: new Date(p.bookedAt), matchedBy: 'lead' }, at: now });
            if (p.outcome) {
              const booked = p.bookedAt || lead.meeting_booked_at;
              if (!booked) throw conflict('no_meeting', 'the lead has no booked meeting: send bookedAt with the outcome to record one made elsewhere');
              const latest = await repo.latestBookingOfLead(trx, workspaceId, leadId);
              await applyMeetingChange(trx, {
                ...base,
                ...(latest && { bookingUid: latest.booking_uid }),
                change: { kind: 'outcome', outcome: p.outcome, ...(p.note && { note: p.note }) },
                at: now,
              });
            }
            return { ok: true as const, lead: toCrossChannelLeadView((await repo.lockLead(trx, workspaceId, leadId))!) };
          },
        ),
      );
    },
  };
}

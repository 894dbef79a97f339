import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { emailKey } from '../../domain/identity.js';

// The meetings module's SQL (docs/meetings.md). The meeting milestones of `leads` (meeting_booked_at,
// meeting_outcome, meeting_response) are written here and by nothing else outside a world file's seed.

const ENDPOINT_COLUMNS = [
  'id',
  'workspace_id',
  'tool',
  'label',
  'created_at',
  'rotated_at',
  'subscription_uri',
  'subscription_scope',
  'subscribed_at',
] as const;

export async function insertEndpoint(
  db: Database,
  row: { id: string; workspaceId: string; tool: 'calendly' | 'cal'; secret: string; label: string | null; at: Date },
) {
  return db
    .insertInto('meeting_endpoints')
    .values({ id: row.id, workspace_id: row.workspaceId, tool: row.tool, secret: row.secret, label: row.label, created_at: row.at })
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function listEndpoints(db: Database, workspaceId: string) {
  return db
    .selectFrom('meeting_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at')
    .orderBy('id')
    .limit(100)
    .execute();
}

export type EndpointRow = Awaited<ReturnType<typeof listEndpoints>>[number];

/** An endpoint with its (encrypted) secret, by id alone: the inbound URL names no workspace. */
export async function endpointWithSecret(db: Database, id: string) {
  return db
    .selectFrom('meeting_endpoints')
    .select([...ENDPOINT_COLUMNS, 'secret'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** An endpoint of the workspace with its (encrypted) secret and subscription token. */
export async function endpointOfWorkspace(db: Database, workspaceId: string, id: string) {
  return db
    .selectFrom('meeting_endpoints')
    .select([...ENDPOINT_COLUMNS, 'secret', 'subscription_token'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Records the Calendly subscription made for an endpoint (its token encrypted), or clears it (`sub` null). */
export async function setSubscription(
  db: Database,
  workspaceId: string,
  id: string,
  sub: { uri: string; scope: 'user' | 'organization'; token: string; at: Date } | null,
) {
  return db
    .updateTable('meeting_endpoints')
    .set({
      subscription_uri: sub?.uri ?? null,
      subscription_scope: sub?.scope ?? null,
      subscription_token: sub?.token ?? null,
      subscribed_at: sub?.at ?? null,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirst();
}

export async function rotateEndpoint(db: Database, workspaceId: string, id: string, secret: string, at: Date) {
  return db
    .updateTable('meeting_endpoints')
    .set({ secret, rotated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirst();
}

export async function deleteEndpoint(db: Database, workspaceId: string, id: string): Promise<boolean> {
  const res = await db.deleteFrom('meeting_endpoints').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export interface EventRow {
  id: string;
  workspaceId: string;
  endpointId: string | null;
  tool: string;
  idempotencyKey: string;
  bookingUid: string;
  kind: string;
  trigger: string;
  inviteeEmail: string | null;
  startsAt: Date | null;
  leadId: string | null;
  matchedBy: string | null;
  status: string;
  at: Date;
}

/** Records an event once: false when its idempotency key is already recorded (a replay), and nothing is written. */
export async function insertEvent(db: Database, e: EventRow): Promise<boolean> {
  const rows = await db
    .insertInto('meeting_events')
    .values({
      id: e.id,
      workspace_id: e.workspaceId,
      endpoint_id: e.endpointId,
      tool: e.tool,
      idempotency_key: e.idempotencyKey,
      booking_uid: e.bookingUid,
      kind: e.kind,
      trigger: e.trigger,
      invitee_email: e.inviteeEmail,
      starts_at: e.startsAt,
      lead_id: e.leadId,
      matched_by: e.matchedBy,
      status: e.status,
      received_at: e.at,
    })
    .onConflict((oc) => oc.columns(['workspace_id', 'idempotency_key']).doNothing())
    .returning('id')
    .execute();
  return rows.length > 0;
}

/** A workspace's events, newest first, keyset-paged by (received_at, id); `status` narrows (e.g. `unmatched`). */
export async function listEvents(db: Database, workspaceId: string, p: { status?: string; limit: number; before?: { at: Date; id: string } }) {
  let q = db
    .selectFrom('meeting_events')
    .select(['id', 'tool', 'trigger', 'kind', 'booking_uid', 'invitee_email', 'starts_at', 'lead_id', 'matched_by', 'status', 'received_at'])
    .where('workspace_id', '=', workspaceId);
  if (p.status) q = q.where('status', '=', p.status);
  if (p.before) {
    const { at, id } = p.before;
    q = q.where((eb) => eb.or([eb('received_at', '<', at), eb.and([eb('received_at', '=', at), eb('id', '<', id)])]));
  }
  return q.orderBy('received_at', 'desc').orderBy('id', 'desc').limit(p.limit).execute();
}

export type MeetingEventListRow = Awaited<ReturnType<typeof listEvents>>[number];

/** A lead of the workspace by id (a tracking reference's), or undefined. */
export async function leadInWorkspace(db: Database, workspaceId: string, leadId: string) {
  return db.selectFrom('leads').select(['id', 'email']).where('workspace_id', '=', workspaceId).where('id', '=', leadId).executeTakeFirst();
}

/**
 * The leads of the workspace whose e-mail identity key (domain/identity.ts) is the address's, the one a booking is
 * given to first: the most recently messaged, then the most recently active, then the newest.
 */
export async function leadsByEmail(db: Database, workspaceId: string, address: string) {
  return db
    .selectFrom('lead_identities as li')
    .innerJoin('leads as l', (j) => j.onRef('l.id', '=', 'li.lead_id').onRef('l.workspace_id', '=', 'li.workspace_id'))
    .select(['l.id', 'l.email'])
    .where('li.workspace_id', '=', workspaceId)
    .where('li.channel', '=', 'email')
    .where('li.key', '=', emailKey(address))
    .orderBy(sql`l.messaged_at DESC NULLS LAST`)
    .orderBy(sql`l.last_activity_at DESC NULLS LAST`)
    .orderBy('l.created_at', 'desc')
    .orderBy('l.id')
    .limit(50)
    .execute();
}

export async function bookingOf(db: Database, workspaceId: string, tool: string, bookingUid: string) {
  return db
    .selectFrom('meeting_bookings')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('tool', '=', tool)
    .where('booking_uid', '=', bookingUid)
    .forUpdate()
    .executeTakeFirst();
}

export async function upsertBooking(
  db: Database,
  b: {
    workspaceId: string;
    tool: string;
    bookingUid: string;
    leadId: string;
    startsAt: Date | null;
    status: string;
    rescheduledFrom: string | null;
    now: Date;
  },
) {
  await db
    .insertInto('meeting_bookings')
    .values({
      workspace_id: b.workspaceId,
      tool: b.tool,
      booking_uid: b.bookingUid,
      lead_id: b.leadId,
      starts_at: b.startsAt,
      status: b.status,
      rescheduled_from: b.rescheduledFrom,
      created_at: b.now,
      updated_at: b.now,
    })
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'tool', 'booking_uid']).doUpdateSet((eb) => ({
        status: eb.ref('excluded.status'),
        starts_at: sql`coalesce(excluded.starts_at, meeting_bookings.starts_at)`,
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/** The lead's latest booking (any tool), for a person's outcome. */
export async function latestBookingOfLead(db: Database, workspaceId: string, leadId: string) {
  return db
    .selectFrom('meeting_bookings')
    .select(['tool', 'booking_uid', 'status', 'starts_at'])
    .where('workspace_id', '=', workspaceId)
    .where('lead_id', '=', leadId)
    .orderBy('created_at', 'desc')
    .orderBy('booking_uid', 'desc')
    .executeTakeFirst();
}

/** Writes the lead's meeting milestones; returns the row for events and answers. */
export async function setMeetingFields(
  db: Database,
  workspaceId: string,
  leadId: string,
  set: { meeting_booked_at?: Date; meeting_outcome?: string | null; meeting_response?: string | null; now: Date },
) {
  // Each milestone named on its own (undefined keeps the stored value), so no lane column can ride along.
  const keep = <T>(c: 'meeting_booked_at' | 'meeting_outcome' | 'meeting_response') => sql<T>`leads.${sql.ref(c)}`;
  return db
    .updateTable('leads')
    .set({
      meeting_booked_at: set.meeting_booked_at ?? keep<Date>('meeting_booked_at'),
      meeting_outcome: set.meeting_outcome === undefined ? keep<string | null>('meeting_outcome') : set.meeting_outcome,
      meeting_response: set.meeting_response === undefined ? keep<string | null>('meeting_response') : set.meeting_response,
      last_activity_at: set.now,
      updated_at: set.now,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', leadId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function lockLead(db: Database, workspaceId: string, leadId: string) {
  return db.selectFrom('leads').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', leadId).forUpdate().executeTakeFirst();
}

/** The meeting fields of up to 500 of the workspace's leads, in one read (the replies page's Meeting blocks). */
export async function meetingFieldsOf(db: Database, workspaceId: string, leadIds: string[]) {
  if (leadIds.length === 0) return [];
  return db
    .selectFrom('leads')
    .select(['id', 'meeting_booked_at', 'meeting_outcome', 'meeting_response'])
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', leadIds.slice(0, 500))
    .execute();
}

import { sql, type Insertable } from 'kysely';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';

const LEAD_COLUMNS = [
  'leads.id as lead_id',
  'leads.person',
  'leads.company',
  'leads.title',
  'leads.email',
  'leads.linkedin_url',
  'leads.account_id',
  'leads.sequence_id',
  'leads.opted_out_at',
  'leads.meeting_booked_at',
  // Where an X reply is answered (the console's "Open on X"): the prospect and the X account that wrote to them.
  'leads.x_user_id',
  'leads.username',
  'leads.account_user_id',
] as const;

/** Pending replies plus snoozed ones that are due again, oldest first. */
export async function listPending(db: Database, workspaceId: string, now: Date, limit: number) {
  return db
    .selectFrom('replies')
    .innerJoin('leads', (join) => join.onRef('leads.id', '=', 'replies.lead_id').onRef('leads.workspace_id', '=', 'replies.workspace_id'))
    .leftJoin('messaging_accounts', (join) =>
      join.onRef('messaging_accounts.id', '=', 'leads.account_id').onRef('messaging_accounts.workspace_id', '=', 'leads.workspace_id'),
    )
    .select([
      'replies.id',
      'replies.channel',
      'replies.classification',
      'replies.their_message',
      'replies.their_message_truncated',
      'replies.needs_review',
      'replies.confidence',
      'replies.draft',
      'replies.replied_at',
      'replies.snoozed_until',
      ...LEAD_COLUMNS,
      // The lead's sender's own booking link (domain/booking-link.ts senderBookingLink), before the workspace's.
      'messaging_accounts.booking_link as account_booking_link',
    ])
    .where('replies.workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('replies.state', '=', 'pending'), eb.and([eb('replies.state', '=', 'snoozed'), eb('replies.snoozed_until', '<=', now)])]))
    .orderBy('replies.replied_at')
    .orderBy('replies.id')
    .limit(limit)
    .execute();
}

export type PendingRow = Awaited<ReturnType<typeof listPending>>[number];

/** Every reply of one lead (the console's lead page), newest first, whatever its state; bounded by `limit`. */
export async function listByLead(db: Database, workspaceId: string, leadId: string, limit: number) {
  return db
    .selectFrom('replies')
    .select([
      'id',
      'channel',
      'classification',
      'their_message',
      'their_message_truncated',
      'replied_at',
      'state',
      'decision',
      'decided_at',
      'decided_by',
      'snoozed_until',
    ])
    .where('workspace_id', '=', workspaceId)
    .where('lead_id', '=', leadId)
    .orderBy('replied_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** What allowedDecisions needs from the workspace: its booking link and a usable follow-up sequence. */
export async function findDecisionSettings(db: Database, workspaceId: string) {
  return db
    .selectFrom('workspaces')
    .leftJoin('sequences', (join) =>
      join
        .onRef('sequences.id', '=', 'workspaces.follow_up_sequence_id')
        .onRef('sequences.workspace_id', '=', 'workspaces.id')
        .on('sequences.status', '<>', 'archived'),
    )
    .select(['workspaces.booking_link', 'sequences.id as follow_up_sequence_id'])
    .where('workspaces.id', '=', workspaceId)
    .executeTakeFirst();
}

/** A messaging account's own booking link (migration 0043); null without one, or without an account of this workspace. */
export async function accountBookingLink(db: Database, workspaceId: string, accountId: string | null): Promise<string | null> {
  if (!accountId) return null;
  const row = await db
    .selectFrom('messaging_accounts')
    .select('booking_link')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', accountId)
    .executeTakeFirst();
  return row?.booking_link ?? null;
}

/** Serializes requests that carry the same idempotency key, whatever reply they name. */
export async function lockIdempotencyKey(db: Database, workspaceId: string, scope: string, key: string) {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${workspaceId}:${scope}:${key}`}, 0))`.execute(db);
}

export async function findIdempotencyRecord(db: Database, workspaceId: string, scope: string, key: string) {
  return db
    .selectFrom('idempotency_records')
    .select(['request_hash', 'status_code', 'response'])
    .where('workspace_id', '=', workspaceId)
    .where('scope', '=', scope)
    .where('key', '=', key)
    .executeTakeFirst();
}

export async function insertIdempotencyRecord(db: Database, row: Insertable<DB['idempotency_records']>) {
  await db.insertInto('idempotency_records').values(row).execute();
}

/** The row lock is what makes two concurrent decisions on one reply queue up: the second sees the first's result. */
export async function lockReply(db: Database, workspaceId: string, replyId: string) {
  return db.selectFrom('replies').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', replyId).forUpdate().executeTakeFirst();
}

export async function lockLead(db: Database, workspaceId: string, leadId: string) {
  return db.selectFrom('leads').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', leadId).forUpdate().executeTakeFirst();
}

export type LeadRow = NonNullable<Awaited<ReturnType<typeof lockLead>>>;

export async function updateReply(
  db: Database,
  workspaceId: string,
  replyId: string,
  set: { state: 'decided' | 'snoozed'; decision: string; decided_at: Date; decided_by: string; snoozed_until: Date | null; draft?: string | null },
) {
  await db.updateTable('replies').set(set).where('workspace_id', '=', workspaceId).where('id', '=', replyId).execute();
}

export async function updateLead(
  db: Database,
  workspaceId: string,
  leadId: string,
  set: Partial<{ meeting_booked_at: Date; last_activity_at: Date }> & { updated_at: Date },
) {
  return db
    .updateTable('leads')
    .set({
      updated_at: set.updated_at,
      ...(set.meeting_booked_at && { meeting_booked_at: set.meeting_booked_at }),
      ...(set.last_activity_at && { last_activity_at: set.last_activity_at }),
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', leadId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** How the lead's LinkedIn account delivers (domain/policy.ts); null without an account of this workspace. */
export async function linkedinDeliveryOf(db: Database, workspaceId: string, accountId: string | null) {
  if (!accountId) return null;
  const row = await db
    .selectFrom('messaging_accounts')
    .select('linkedin_delivery')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', accountId)
    .executeTakeFirst();
  return row?.linkedin_delivery ?? null;
}

/**
 * Closes the pending (or snoozed) replies of the given leads as decided by a booking (modules/meetings: the person
 * booked, so `meeting_booked` is the decision); returns their ids.
 */
export async function closeRepliesByBooking(db: Database, workspaceId: string, leadIds: string[], by: string, now: Date): Promise<string[]> {
  if (leadIds.length === 0) return [];
  const rows = await db
    .updateTable('replies')
    .set({ state: 'decided', decision: 'meeting_booked', decided_at: now, decided_by: by })
    .where('workspace_id', '=', workspaceId)
    .where('lead_id', 'in', leadIds)
    .where('state', 'in', ['pending', 'snoozed'])
    .returning('id')
    .execute();
  return rows.map((r) => r.id).sort();
}

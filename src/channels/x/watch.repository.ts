import { sql } from 'kysely';
import { refreshLeadIdentities } from '../../domain/identity.repository.js';
import type { Database } from '../../db/database.js';
import { observedLeadQuery } from '../observed-lead.js';
import type { ObservedLead } from '../types.js';

/** A connected X account whose DMs (and followers) are due to be read. */
export interface WatchedXAccount {
  workspaceId: string;
  userId: string;
  newestEventId: string | null;
  connectedAt: Date;
  followersDue: boolean;
}

/** Takes the accounts whose poll is due by `dueBy` (default `now`), leasing them (SKIP LOCKED: several workers share them, none reads one twice). */
export async function claimDueXAccounts(db: Database, p: { now: Date; dueBy?: Date; limit: number; leaseSeconds: number }): Promise<WatchedXAccount[]> {
  const now = p.now.toISOString();
  const dueBy = (p.dueBy ?? p.now).toISOString();
  const { rows } = await sql<{ workspace_id: string; user_id: string; dm_newest_event_id: string | null; connected_at: Date; followers_due: boolean }>`
    WITH due AS (
      SELECT workspace_id, user_id FROM x_account_oauth
      WHERE disconnected_at IS NULL AND next_poll_at <= ${dueBy}::timestamptz
      ORDER BY next_poll_at, workspace_id, user_id LIMIT ${p.limit} FOR UPDATE SKIP LOCKED
    )
    UPDATE x_account_oauth a SET next_poll_at = ${now}::timestamptz + make_interval(secs => ${p.leaseSeconds})
    FROM due WHERE a.workspace_id = due.workspace_id AND a.user_id = due.user_id
    RETURNING a.workspace_id, a.user_id, a.dm_newest_event_id, a.connected_at, (a.followers_next_at <= ${now}::timestamptz) AS followers_due`.execute(db);
  return rows.map((r) => ({
    workspaceId: r.workspace_id,
    userId: r.user_id,
    newestEventId: r.dm_newest_event_id,
    connectedAt: new Date(r.connected_at),
    followersDue: r.followers_due,
  }));
}

export async function saveXPollPosition(
  db: Database,
  p: { workspaceId: string; userId: string; newestEventId?: string | null; nextPollAt: Date; followersNextAt?: Date },
): Promise<void> {
  await db
    .updateTable('x_account_oauth')
    .set({
      next_poll_at: p.nextPollAt,
      ...(p.newestEventId !== undefined && { dm_newest_event_id: p.newestEventId }),
      ...(p.followersNextAt && { followers_next_at: p.followersNextAt }),
    })
    .where('workspace_id', '=', p.workspaceId)
    .where('user_id', '=', p.userId)
    .execute();
}

/** Claims one DM event inside the transaction that applies it; false when another worker (or an earlier poll) had it. */
export async function claimDmEvent(trx: Database, p: { workspaceId: string; accountUserId: string; eventId: string; leadId: string | null; now: Date }) {
  const row = await trx
    .insertInto('x_dm_events_seen')
    .values({ workspace_id: p.workspaceId, account_user_id: p.accountUserId, event_id: p.eventId, lead_id: p.leadId, seen_at: p.now })
    .onConflict((oc) => oc.columns(['workspace_id', 'account_user_id', 'event_id']).doNothing())
    .returning('event_id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The lead a DM sender is, among this X account's leads: the most recently messaged, then followed, then created.
 * Any lead of the account counts, contacted or not: someone who writes first (or whose DM is still being recorded,
 * or who was only liked) has answered all the same, and their lead must stop.
 */
export async function leadByXUser(db: Database, p: { workspaceId: string; accountUserId: string; senderId: string }): Promise<ObservedLead | null> {
  const row = await observedLeadQuery(db)
    .where('l.workspace_id', '=', p.workspaceId)
    .where('l.x_user_id', '=', p.senderId)
    .where(sql<boolean>`COALESCE(l.account_user_id, p.account_user_id) = ${p.accountUserId}`)
    .orderBy(sql`l.messaged_at DESC NULLS LAST`)
    .orderBy(sql`l.followed_at DESC NULLS LAST`)
    .orderBy('l.created_at', 'desc')
    .orderBy('l.id')
    .limit(1)
    .executeTakeFirst();
  return row ?? null;
}

/** Leads this account followed that have not followed back yet (followed within `sinceDays`). */
export async function awaitingFollowBack(db: Database, p: { workspaceId: string; accountUserId: string; since: Date; limit: number }): Promise<ObservedLead[]> {
  return observedLeadQuery(db)
    .where('l.workspace_id', '=', p.workspaceId)
    .where('l.followed_at', 'is not', null)
    .where('l.followed_back_at', 'is', null)
    .where('l.followed_at', '>=', p.since)
    .where('l.x_user_id', 'is not', null)
    .where(sql<boolean>`COALESCE(l.account_user_id, p.account_user_id) = ${p.accountUserId}`)
    .orderBy('l.followed_at')
    .limit(p.limit)
    .execute();
}

/**
 * The X user id a lead known only by its username turned out to have: stored so its DMs and follow-backs match it
 * (the watcher matches by user id). Only when the lead has none yet.
 */
export async function rememberLeadXUserId(db: Database, p: { workspaceId: string; leadId: string; xUserId: string }): Promise<void> {
  await db
    .updateTable('leads')
    .set({ x_user_id: p.xUserId })
    .where('workspace_id', '=', p.workspaceId)
    .where('id', '=', p.leadId)
    .where('x_user_id', 'is', null)
    .execute();
  await refreshLeadIdentities(db, p.workspaceId, [p.leadId]);
}

/**
 * Records that a person wrote to the account (X allows automated DMs only to them: domain/policy.ts). Ids only,
 * the first time kept.
 */
export async function rememberDmSender(db: Database, p: { workspaceId: string; accountUserId: string; senderId: string; at: Date }): Promise<void> {
  await db
    .insertInto('x_dm_senders')
    .values({ workspace_id: p.workspaceId, account_user_id: p.accountUserId, sender_id: p.senderId, first_at: p.at })
    .onConflict((oc) => oc.columns(['workspace_id', 'account_user_id', 'sender_id']).doNothing())
    .execute();
}

/** Whether this person has ever written to the account, as the watcher or an earlier look recorded it. */
export async function hasWrittenFirst(db: Database, p: { workspaceId: string; accountUserId: string; senderId: string }): Promise<boolean> {
  const row = await db
    .selectFrom('x_dm_senders')
    .select('sender_id')
    .where('workspace_id', '=', p.workspaceId)
    .where('account_user_id', '=', p.accountUserId)
    .where('sender_id', '=', p.senderId)
    .executeTakeFirst();
  return row !== undefined;
}

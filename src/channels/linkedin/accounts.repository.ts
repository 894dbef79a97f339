import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { LinkedinDelivery } from '../../db/schema.js';
import { OBSERVED_LEAD_COLUMNS } from '../observed-lead.js';
import type { ObservedLead } from '../types.js';

// The LinkedIn channel's SQL: a messaging account's delivery and gateway state, the LinkedIn ids kept on its leads,
// and the gateway watcher's schedule. Every query names the workspace.

/** What the gateway watcher keeps per account (messaging_accounts.linkedin_watch_state). */
export interface LinkedinWatchState {
  /** Messages and chats at or before this instant were read (ISO 8601); a first poll reads from `since`. */
  readUntil?: string;
  /** When the account was linked: a first poll looks back from here. */
  since?: string;
}

export interface LinkedinAccountRow {
  id: string;
  workspaceId: string;
  mode: string;
  delivery: LinkedinDelivery;
  gatewayAccountId: string | null;
  gatewayError: string | null;
  gatewayErrorAt: Date | null;
  timeZone: string;
}

export async function accountOf(q: Database, workspaceId: string, accountId: string): Promise<LinkedinAccountRow | null> {
  const r = await q
    .selectFrom('messaging_accounts')
    .select([
      'id',
      'workspace_id as workspaceId',
      'mode',
      'linkedin_delivery as delivery',
      'linkedin_gateway_account_id as gatewayAccountId',
      'linkedin_gateway_error as gatewayError',
      'linkedin_gateway_error_at as gatewayErrorAt',
      'time_zone as timeZone',
    ])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', accountId)
    .executeTakeFirst();
  return r ? { ...r, gatewayErrorAt: r.gatewayErrorAt ? new Date(r.gatewayErrorAt) : null } : null;
}

/** The workspace a messaging account belongs to (an operator command names only the account). */
export async function workspaceOfAccount(q: Database, accountId: string): Promise<string | null> {
  const r = await q.selectFrom('messaging_accounts').select('workspace_id').where('id', '=', accountId).executeTakeFirst();
  return r?.workspace_id ?? null;
}

/** The gateway refused the account (401/403): nothing is sent from it, nor read, until it is linked again. */
export async function setGatewayError(q: Database, p: { workspaceId: string; accountId: string; error: string; at: Date }): Promise<void> {
  await q
    .updateTable('messaging_accounts')
    .set({ linkedin_gateway_error: p.error, linkedin_gateway_error_at: p.at })
    .where('workspace_id', '=', p.workspaceId)
    .where('id', '=', p.accountId)
    .execute();
}

export async function saveDelivery(
  q: Database,
  p: { workspaceId: string; accountId: string; delivery: LinkedinDelivery; gatewayAccountId?: string; watchState?: LinkedinWatchState; nextPollAt?: Date },
): Promise<void> {
  await q
    .updateTable('messaging_accounts')
    .set({
      linkedin_delivery: p.delivery,
      ...(p.gatewayAccountId !== undefined && {
        linkedin_gateway_account_id: p.gatewayAccountId,
        linkedin_gateway_error: null,
        linkedin_gateway_error_at: null,
        linkedin_poll_lease_until: null,
      }),
      ...(p.watchState !== undefined && { linkedin_watch_state: JSON.stringify(p.watchState) }),
      ...(p.nextPollAt !== undefined && { linkedin_next_poll_at: p.nextPollAt }),
    })
    .where('workspace_id', '=', p.workspaceId)
    .where('id', '=', p.accountId)
    .execute();
}

export async function watchStateOf(
  q: Database,
  workspaceId: string,
  accountId: string,
): Promise<{ gatewayAccountId: string | null; state: LinkedinWatchState | null }> {
  const r = await q
    .selectFrom('messaging_accounts')
    .select(['linkedin_gateway_account_id', 'linkedin_watch_state'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', accountId)
    .executeTakeFirst();
  return { gatewayAccountId: r?.linkedin_gateway_account_id ?? null, state: parseState(r?.linkedin_watch_state) };
}

function parseState(v: unknown): LinkedinWatchState | null {
  const o = typeof v === 'string' ? (JSON.parse(v) as unknown) : v;
  return o && typeof o === 'object' && !Array.isArray(o) ? o : null;
}

/** LinkedIn's id of the person and the gateway chat with them, as kept on the lead. */
export async function leadLinkedinIds(q: Database, workspaceId: string, leadId: string): Promise<{ providerId: string | null; chatId: string | null }> {
  const r = await q
    .selectFrom('leads')
    .select(['linkedin_provider_id', 'linkedin_chat_id'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', leadId)
    .executeTakeFirst();
  return { providerId: r?.linkedin_provider_id ?? null, chatId: r?.linkedin_chat_id ?? null };
}

export async function rememberLeadIds(q: Database, p: { workspaceId: string; leadId: string; providerId?: string; chatId?: string | null }): Promise<void> {
  if (p.providerId === undefined && p.chatId === undefined) return;
  await q
    .updateTable('leads')
    .set({
      ...(p.providerId !== undefined && { linkedin_provider_id: p.providerId }),
      ...(p.chatId !== undefined && { linkedin_chat_id: p.chatId }),
    })
    .where('workspace_id', '=', p.workspaceId)
    .where('id', '=', p.leadId)
    .execute();
}

/** Of `leadIds`, those whose account sends through the gateway (the gateway watcher hears them, not the sandbox). */
export async function gatewayLeadIds(q: Database, workspaceId: string, leadIds: string[]): Promise<Set<string>> {
  if (leadIds.length === 0) return new Set();
  const rows = await q
    .selectFrom('leads as l')
    .innerJoin('messaging_accounts as a', (j) => j.onRef('a.id', '=', 'l.account_id').onRef('a.workspace_id', '=', 'l.workspace_id'))
    .select('l.id')
    .where('l.workspace_id', '=', workspaceId)
    .where('l.id', 'in', leadIds)
    .where('a.linkedin_delivery', '=', 'gateway')
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** A gateway account whose chats and relations are due to be read. */
export interface WatchedLinkedinAccount {
  workspaceId: string;
  accountId: string;
  gatewayAccountId: string;
  state: LinkedinWatchState | null;
}

/** Takes the gateway accounts whose poll is due by `dueBy` (default `now`), leasing them (SKIP LOCKED: workers share them, none reads one twice). */
export async function claimDueAccounts(db: Database, p: { now: Date; dueBy?: Date; limit: number; leaseSeconds: number }): Promise<WatchedLinkedinAccount[]> {
  const now = p.now.toISOString();
  const dueBy = (p.dueBy ?? p.now).toISOString();
  const { rows } = await sql<{ workspace_id: string; id: string; linkedin_gateway_account_id: string; linkedin_watch_state: unknown }>`
    WITH due AS (
      SELECT workspace_id, id FROM messaging_accounts
      WHERE linkedin_delivery = 'gateway' AND linkedin_gateway_account_id IS NOT NULL AND linkedin_gateway_error IS NULL
        AND (linkedin_next_poll_at IS NULL OR linkedin_next_poll_at <= ${dueBy}::timestamptz)
        AND (linkedin_poll_lease_until IS NULL OR linkedin_poll_lease_until <= ${now}::timestamptz)
      ORDER BY linkedin_next_poll_at NULLS FIRST, workspace_id, id LIMIT ${p.limit} FOR UPDATE SKIP LOCKED
    )
    UPDATE messaging_accounts a SET linkedin_poll_lease_until = ${now}::timestamptz + make_interval(secs => ${p.leaseSeconds})
    FROM due WHERE a.workspace_id = due.workspace_id AND a.id = due.id
    RETURNING a.workspace_id, a.id, a.linkedin_gateway_account_id, a.linkedin_watch_state`.execute(db);
  return rows.map((r) => ({
    workspaceId: r.workspace_id,
    accountId: r.id,
    gatewayAccountId: r.linkedin_gateway_account_id,
    state: parseState(r.linkedin_watch_state),
  }));
}

/** Ends a poll: the next one's time, the position read up to (when it moved), and the lease released. */
export async function savePollPosition(
  db: Database,
  p: { workspaceId: string; accountId: string; nextPollAt: Date; state?: LinkedinWatchState },
): Promise<void> {
  await db
    .updateTable('messaging_accounts')
    .set({
      linkedin_next_poll_at: p.nextPollAt,
      linkedin_poll_lease_until: null,
      ...(p.state !== undefined && { linkedin_watch_state: JSON.stringify(p.state) }),
    })
    .where('workspace_id', '=', p.workspaceId)
    .where('id', '=', p.accountId)
    .execute();
}

const observedLead = (q: Database) =>
  q
    .selectFrom('leads as l')
    .select([
      ...OBSERVED_LEAD_COLUMNS,
      sql<string | null>`NULL::text`.as('x_account_user_id'),
      'l.linkedin_provider_id',
      'l.linkedin_chat_id',
      'l.linkedin_url',
      'l.invited_at',
    ]);

export type LinkedinLead = ObservedLead & {
  linkedin_provider_id: string | null;
  linkedin_chat_id: string | null;
  linkedin_url: string | null;
  invited_at: Date | null;
};

/**
 * The lead of this account a chat is with: by the chat id kept on the lead, else by LinkedIn's id of the person
 * (the chat's attendee). Only leads of this messaging account: another account's chat with the same person is not
 * this account's to hear.
 */
export async function leadForChat(
  db: Database,
  p: { workspaceId: string; accountId: string; chatId: string; providerId: string | null },
): Promise<LinkedinLead | null> {
  const row = await observedLead(db)
    .where('l.workspace_id', '=', p.workspaceId)
    .where('l.account_id', '=', p.accountId)
    .where((eb) =>
      p.providerId
        ? eb.or([eb('l.linkedin_chat_id', '=', p.chatId), eb('l.linkedin_provider_id', '=', p.providerId)])
        : eb('l.linkedin_chat_id', '=', p.chatId),
    )
    .orderBy(sql`(l.linkedin_chat_id = ${p.chatId}) DESC NULLS LAST`)
    .orderBy(sql`l.messaged_at DESC NULLS LAST`)
    .orderBy('l.created_at', 'desc')
    .orderBy('l.id')
    .limit(1)
    .executeTakeFirst();
  return row ?? null;
}

/** Leads this account invited (within `since`) whose acceptance is not on record yet. */
export async function awaitingAcceptance(db: Database, p: { workspaceId: string; accountId: string; since: Date; limit: number }): Promise<LinkedinLead[]> {
  const rows = await observedLead(db)
    .where('l.workspace_id', '=', p.workspaceId)
    .where('l.account_id', '=', p.accountId)
    .where('l.invited_at', 'is not', null)
    .where('l.invited_at', '>=', p.since)
    .where('l.connected_at', 'is', null)
    .orderBy('l.invited_at')
    .limit(p.limit)
    .execute();
  return rows;
}

/** The messaging account (of any workspace) linked to a gateway account, or undefined: one per installation (migration 0045). */
export async function holderOfGatewayAccount(q: Database, gatewayAccountId: string) {
  return q.selectFrom('messaging_accounts').select(['id', 'workspace_id']).where('linkedin_gateway_account_id', '=', gatewayAccountId).executeTakeFirst();
}

import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import { emailKey } from './identity.js';
import type { SuppressedAddressesTable } from '../db/schema-delivery.js';

type SuppressionReason = SuppressedAddressesTable['reason'];

// SQL of the suppression list (suppression.ts holds its rules).

export interface SuppressionRow {
  address: string;
  reason: SuppressionReason;
  lead_id: string | null;
  source_message_id: string | null;
  created_at: Date;
}

export async function isSuppressed(db: Database, workspaceId: string, address: string): Promise<boolean> {
  const r = await db
    .selectFrom('suppressed_addresses')
    .select('address')
    .where('workspace_id', '=', workspaceId)
    .where('address', '=', emailKey(address))
    .executeTakeFirst();
  return r !== undefined;
}

/** An address to put on a workspace's suppression list, and why. */
export interface Suppression {
  workspaceId: string;
  /** Any spelling; stored as its identity key. */
  address: string;
  reason: SuppressionReason;
  leadId: string | null;
  /** Our Message-ID that the report or reply was tied to, when there was one. */
  sourceMessageId?: string | null;
  at: Date;
}

export async function upsertSuppression(trx: Database, s: Suppression & { rank: Record<SuppressionReason, number> }): Promise<void> {
  const rankOf = (col: 'excluded.reason' | 'suppressed_addresses.reason') =>
    sql`CASE ${sql.ref(col)} ${sql.join(
      Object.entries(s.rank).map(([r, n]) => sql`WHEN ${r} THEN ${n}`),
      sql` `,
    )} ELSE 0 END`;
  await trx
    .insertInto('suppressed_addresses')
    .values({
      workspace_id: s.workspaceId,
      address: s.address,
      reason: s.reason,
      lead_id: s.leadId,
      source_message_id: s.sourceMessageId ?? null,
      created_at: s.at,
    })
    .onConflict((oc) =>
      oc
        .columns(['workspace_id', 'address'])
        .doUpdateSet({ reason: sql`excluded.reason`, lead_id: sql`excluded.lead_id`, source_message_id: sql`excluded.source_message_id` })
        .where(sql<boolean>`${rankOf('excluded.reason')} > ${rankOf('suppressed_addresses.reason')}`),
    )
    .execute();
}

/** Adds one to the address's soft-bounce count (restarting it when its first is before `windowStart`); the new count. */
export async function bumpSoftBounces(trx: Database, p: { workspaceId: string; address: string; at: Date; windowStart: Date }): Promise<number> {
  const row = await trx
    .insertInto('email_soft_bounces')
    .values({ workspace_id: p.workspaceId, address: p.address, count: 1, first_at: p.at, last_at: p.at })
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'address']).doUpdateSet({
        count: sql`CASE WHEN email_soft_bounces.first_at < ${p.windowStart} THEN 1 ELSE email_soft_bounces.count + 1 END`,
        first_at: sql`CASE WHEN email_soft_bounces.first_at < ${p.windowStart} THEN excluded.first_at ELSE email_soft_bounces.first_at END`,
        last_at: sql`excluded.last_at`,
      }),
    )
    .returning('count')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function lockSuppression(trx: Database, workspaceId: string, address: string): Promise<SuppressionRow | undefined> {
  return trx
    .selectFrom('suppressed_addresses')
    .select(['address', 'reason', 'lead_id', 'source_message_id', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .where('address', '=', address)
    .forUpdate()
    .executeTakeFirst();
}

export async function deleteSuppression(trx: Database, p: { id: string; workspaceId: string; row: SuppressionRow; by: string; now: Date }): Promise<void> {
  await trx.deleteFrom('suppressed_addresses').where('workspace_id', '=', p.workspaceId).where('address', '=', p.row.address).execute();
  await trx.deleteFrom('email_soft_bounces').where('workspace_id', '=', p.workspaceId).where('address', '=', p.row.address).execute();
  await trx
    .insertInto('suppression_removals')
    .values({
      id: p.id,
      workspace_id: p.workspaceId,
      address: p.row.address,
      reason: p.row.reason,
      lead_id: p.row.lead_id,
      source_message_id: p.row.source_message_id,
      suppressed_at: p.row.created_at,
      removed_at: p.now,
      removed_by: p.by,
    })
    .execute();
}

/** The lead's account (for its ledger entry); undefined when the lead is not in the workspace. */
export async function leadAccount(db: Database, workspaceId: string, leadId: string): Promise<string | null | undefined> {
  const r = await db.selectFrom('leads').select('account_id').where('workspace_id', '=', workspaceId).where('id', '=', leadId).executeTakeFirst();
  return r ? r.account_id : undefined;
}

export interface SuppressionPage {
  items: SuppressionRow[];
  /** Pass as `after` for the next page; null on the last. */
  nextCursor: string | null;
}

/**
 * One page of the list, newest first (keyset on created_at, address; index suppressed_addresses_list). `q` narrows to
 * addresses starting with it (its identity key; index suppressed_addresses_prefix) or, with an `@` first, to a domain.
 */
export async function listSuppressions(
  db: Database,
  workspaceId: string,
  p: { q?: string; reason?: SuppressionReason; after?: string; limit: number },
): Promise<SuppressionPage> {
  let query = db
    .selectFrom('suppressed_addresses')
    .select(['address', 'reason', 'lead_id', 'source_message_id', 'created_at'])
    .where('workspace_id', '=', workspaceId);
  // A search is part of an address, not an address: trimmed and lower-cased only (emailKey may normalize a whole
  // address further), as the stored keys are lower case.
  const q = p.q ? p.q.trim().toLowerCase() : '';
  const like = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
  if (q) query = q.startsWith('@') ? query.where('address', 'like', `%${like(q)}`) : query.where('address', 'like', `${like(q)}%`);
  if (p.reason) query = query.where('reason', '=', p.reason);
  const cursor = p.after ? decodeCursor(p.after) : null;
  if (cursor)
    query = query.where((eb) => eb.or([eb('created_at', '<', cursor.at), eb.and([eb('created_at', '=', cursor.at), eb('address', '<', cursor.address)])]));
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('address', 'desc')
    .limit(p.limit + 1)
    .execute();
  const items = rows.slice(0, p.limit).map((r) => ({ ...r, created_at: new Date(r.created_at) }));
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > p.limit && last ? encodeCursor(last.created_at, last.address) : null };
}

const encodeCursor = (at: Date, address: string) => Buffer.from(JSON.stringify([at.toISOString(), address])).toString('base64url');

/** A cursor this list made, or null for anything else (the service answers a 400 naming `after`). */
export function decodeCursor(c: string): { at: Date; address: string } | null {
  try {
    const [at, address] = JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as unknown[];
    if (typeof at !== 'string' || typeof address !== 'string' || Number.isNaN(Date.parse(at))) return null;
    return { at: new Date(at), address };
  } catch {
    return null;
  }
}

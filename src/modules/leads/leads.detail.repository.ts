import { sql, type SqlBool } from 'kysely';
import type { Database } from '../../db/database.js';
import { LEAD_LIST_COLUMNS, where, type LeadFilters } from './leads.repository.js';

// The SQL behind the console's lead page and its keyset pages of the lead list (leads.detail.ts).

/** One lead with the names of what it runs in: its sequence, its messaging account, its mailbox and its X account. */
export async function findLeadDetail(db: Database, workspaceId: string, leadId: string) {
  return db
    .selectFrom('leads')
    .leftJoin('sequences', (j) => j.onRef('sequences.id', '=', 'leads.sequence_id').onRef('sequences.workspace_id', '=', 'leads.workspace_id'))
    .leftJoin('messaging_accounts as ma', (j) => j.onRef('ma.id', '=', 'leads.account_id').onRef('ma.workspace_id', '=', 'leads.workspace_id'))
    .leftJoin('mailboxes', (j) => j.onRef('mailboxes.id', '=', 'leads.mailbox_id').onRef('mailboxes.workspace_id', '=', 'leads.workspace_id'))
    .leftJoin('x_accounts', (j) => j.onRef('x_accounts.user_id', '=', 'leads.account_user_id').onRef('x_accounts.workspace_id', '=', 'leads.workspace_id'))
    .selectAll('leads')
    .select(['sequences.name as sequence_name', 'ma.name as account_name', 'mailboxes.address as mailbox_address', 'x_accounts.handle as x_account_handle'])
    .where('leads.workspace_id', '=', workspaceId)
    .where('leads.id', '=', leadId)
    .executeTakeFirst();
}

export type LeadDetailRow = NonNullable<Awaited<ReturnType<typeof findLeadDetail>>>;

export async function leadExists(db: Database, workspaceId: string, leadId: string) {
  const row = await db.selectFrom('leads').select('id').where('workspace_id', '=', workspaceId).where('id', '=', leadId).executeTakeFirst();
  return row !== undefined;
}

export async function countLeads(db: Database, workspaceId: string, f: LeadFilters) {
  const row = await db
    .selectFrom('leads')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(where(workspaceId, f))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Where a keyset page of leads starts: the leads older (or newer) than lead `id`, in (created_at, id) order. */
export interface LeadCursor {
  direction: 'older' | 'newer';
  id: string;
}

/**
 * One page of the lead list, newest first (the API's order), by keyset: the `limit` leads just older (or newer) than
 * the cursor's lead, compared as the pair (created_at, id) read from the cursor's own row at full precision.
 */
export async function listLeadsPage(db: Database, workspaceId: string, f: LeadFilters, limit: number, cursor?: LeadCursor) {
  const newer = cursor?.direction === 'newer';
  const at = cursor
    ? sql<SqlBool>`(leads.created_at, leads.id) ${sql.raw(newer ? '>' : '<')} (SELECT c.created_at, c.id FROM leads c WHERE c.workspace_id = ${workspaceId} AND c.id = ${cursor.id})`
    : null;
  const rows = await db
    .selectFrom('leads')
    .select([...LEAD_LIST_COLUMNS, 'username'])
    .where(where(workspaceId, f))
    .$if(at !== null, (qb) => qb.where(at!))
    .orderBy('created_at', newer ? 'asc' : 'desc')
    .orderBy('id', newer ? 'asc' : 'desc')
    .limit(limit)
    .execute();
  return newer ? rows.reverse() : rows;
}

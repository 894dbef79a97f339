import type { Database } from '../../db/database.js';
import type { PacingAccountRow } from './rows.js';

const COLUMNS = ['id', 'workspace_id', 'time_zone', 'warmup_started_at'] as const;

/** Every messaging account of the workspace, as pacing reads it. */
export async function readWorkspacePacingAccounts(db: Database, workspaceId: string): Promise<PacingAccountRow[]> {
  return db.selectFrom('messaging_accounts').select(COLUMNS).where('workspace_id', '=', workspaceId).execute();
}

/** One messaging account, as pacing reads it; undefined for an unknown id. */
export async function readPacingAccount(db: Database, accountId: string): Promise<PacingAccountRow | undefined> {
  return db.selectFrom('messaging_accounts').select(COLUMNS).where('id', '=', accountId).executeTakeFirst();
}

/** The mailboxes of a workspace's messaging accounts (of one account, when named): their budgets follow the account. */
export async function readPacingMailboxes(db: Database, workspaceId: string, accountId?: string): Promise<{ id: string; account_id: string }[]> {
  return db
    .selectFrom('mailboxes')
    .select(['id', 'account_id'])
    .where('workspace_id', '=', workspaceId)
    .$if(accountId !== undefined, (q) => q.where('account_id', '=', accountId!))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../../db/database.js';
import type { ChannelRegistry } from '../../channels/descriptor.js';
import { SANDBOX_DELIVERY } from '../../domain/policy.js';
import type { PacingAccountRow } from './rows.js';

const COLUMNS = ['ma.id', 'ma.workspace_id', 'ma.time_zone', 'ma.warmup_started_at'] as const;

/**
 * How the account reaches each channel that lists budgets of its own (channels/descriptor.ts `accountBudgets`), as the
 * channel's `deliverySql` says over the account: `{channel: delivery}`, `{}` when no channel lists any.
 */
function deliveriesSql(channels: ChannelRegistry | undefined): RawBuilder<Record<string, string>> {
  const refs = { workspaceId: sql<string>`ma.workspace_id`, account: 'ma', accountUserId: sql<string | null>`NULL::text` };
  const pairs = (channels?.all() ?? [])
    .filter((d) => d.accountBudgets !== undefined)
    .map((d) => sql`${d.channel}::text, ${d.deliverySql ? d.deliverySql(refs) : sql`${SANDBOX_DELIVERY}::text`}`);
  return pairs.length === 0 ? sql`'{}'::jsonb` : sql`jsonb_build_object(${sql.join(pairs)})`;
}

/** Every messaging account of the workspace, as pacing reads it. */
export async function readWorkspacePacingAccounts(db: Database, workspaceId: string, channels?: ChannelRegistry): Promise<PacingAccountRow[]> {
  return db
    .selectFrom('messaging_accounts as ma')
    .select([...COLUMNS, deliveriesSql(channels).as('deliveries')])
    .where('ma.workspace_id', '=', workspaceId)
    .execute();
}

/** One messaging account, as pacing reads it; undefined for an unknown id. */
export async function readPacingAccount(db: Database, accountId: string, channels?: ChannelRegistry): Promise<PacingAccountRow | undefined> {
  return db
    .selectFrom('messaging_accounts as ma')
    .select([...COLUMNS, deliveriesSql(channels).as('deliveries')])
    .where('ma.id', '=', accountId)
    .executeTakeFirst();
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

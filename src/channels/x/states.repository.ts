// What X's connect saves beside its tokens (the pending connects themselves are channels/oauth's).
import type { Database } from '../../db/database.js';

/** The connected account as a row of GET /x/accounts (its handle refreshed when it changed on X). */
export async function upsertXAccount(db: Database, p: { workspaceId: string; userId: string; handle: string }): Promise<void> {
  await db
    .insertInto('x_accounts')
    .values({ workspace_id: p.workspaceId, user_id: p.userId, handle: p.handle })
    .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doUpdateSet({ handle: p.handle }))
    .execute();
}

export async function workspaceExists(db: Database, workspaceId: string): Promise<boolean> {
  return (await db.selectFrom('workspaces').select('id').where('id', '=', workspaceId).executeTakeFirst()) !== undefined;
}

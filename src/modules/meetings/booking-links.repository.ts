import type { Database } from '../../db/database.js';

// The SQL behind booking-links.ts: the workspace's booking link (workspaces.booking_link) and each messaging
// account's own (messaging_accounts.booking_link, migration 0043).

export async function workspaceBookingLink(db: Database, workspaceId: string) {
  const row = await db.selectFrom('workspaces').select('booking_link').where('id', '=', workspaceId).executeTakeFirst();
  return row?.booking_link ?? null;
}

/** The workspace's messaging accounts with their own booking links, by name. */
export async function accountBookingLinks(db: Database, workspaceId: string) {
  return db
    .selectFrom('messaging_accounts')
    .select(['id', 'name', 'mode', 'booking_link'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('name')
    .orderBy('id')
    .execute();
}

export async function updateWorkspaceBookingLink(db: Database, workspaceId: string, link: string | null) {
  const row = await db.updateTable('workspaces').set({ booking_link: link }).where('id', '=', workspaceId).returning('booking_link').executeTakeFirst();
  return row !== undefined;
}

export async function updateAccountBookingLink(db: Database, workspaceId: string, accountId: string, link: string | null) {
  const row = await db
    .updateTable('messaging_accounts')
    .set({ booking_link: link })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', accountId)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

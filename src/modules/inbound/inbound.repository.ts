import type { Database } from '../../db/database.js';

/** The names a page shows for the leads it links to, in one query (at most a page's rows): person, X handle, address. */
export async function leadLabels(
  db: Database,
  workspaceId: string,
  ids: string[],
): Promise<{ id: string; person: string | null; username: string | null; email: string | null }[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('leads').select(['id', 'person', 'username', 'email']).where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute();
}

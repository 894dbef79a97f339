import type { Database } from '../../db/database.js';

/** Which of these X users the Play already has as candidates. */
export async function existingCandidateIds(trx: Database, workspaceId: string, playId: string, xUserIds: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < xUserIds.length; i += 1000) {
    const rows = await trx
      .selectFrom('candidates')
      .select('x_user_id')
      .where('workspace_id', '=', workspaceId)
      .where('play_id', '=', playId)
      .where('x_user_id', 'in', xUserIds.slice(i, i + 1000))
      .execute();
    for (const r of rows) found.add(r.x_user_id);
  }
  return found;
}

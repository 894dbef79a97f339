import type { Database } from '../../db/database.js';

export async function insertSession(
  db: Database,
  row: { id_hash: string; workspace_id: string; key_id: string | null; person_id: string | null; created_at: Date; expires_at: Date },
): Promise<void> {
  await db.insertInto('console_sessions').values(row).execute();
}

/** The session and, when it was made with a key, that key's revocation and expiry (read fresh on every request). */
export async function findSessionWithKey(db: Database, idHash: string) {
  return db
    .selectFrom('console_sessions as s')
    .leftJoin('api_keys as k', 'k.id', 's.key_id')
    .select([
      's.id_hash',
      's.workspace_id',
      's.key_id',
      's.person_id',
      's.selected_workspace_id',
      's.created_at',
      's.expires_at',
      'k.revoked_at as key_revoked_at',
      'k.expires_at as key_expires_at',
      'k.role as key_role',
    ])
    .where('s.id_hash', '=', idHash)
    .executeTakeFirst();
}

export async function deleteSession(db: Database, idHash: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('id_hash', '=', idHash).execute();
}

/** Every session of a workspace (signed in to it, with any of its keys or a login link); answers how many ended. */
export async function deleteWorkspaceSessions(db: Database, workspaceId: string): Promise<number> {
  const result = await db.deleteFrom('console_sessions').where('workspace_id', '=', workspaceId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Every session a key opened; answers how many ended. */
export async function deleteKeySessions(db: Database, keyId: string): Promise<number> {
  const result = await db.deleteFrom('console_sessions').where('key_id', '=', keyId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The sessions a key of `workspaceId` opened; null when the key is not one of that workspace's. */
export async function deleteKeySessionsInWorkspace(db: Database, workspaceId: string, keyId: string): Promise<number | null> {
  const key = await db.selectFrom('api_keys').select('id').where('id', '=', keyId).where('workspace_id', '=', workspaceId).executeTakeFirst();
  if (!key) return null;
  return deleteKeySessions(db, keyId);
}

/** Sessions past their end, and sessions whose key has been revoked or has expired (they can never resume). */
export async function deleteDeadSessions(db: Database, now: Date): Promise<void> {
  await db.deleteFrom('console_sessions').where('expires_at', '<=', now).execute();
  await db
    .deleteFrom('console_sessions')
    .where('key_id', 'in', (qb) =>
      qb
        .selectFrom('api_keys')
        .select('id')
        .where((eb) => eb.or([eb('revoked_at', 'is not', null), eb('expires_at', '<=', now)])),
    )
    .execute();
}

export async function setSelectedWorkspace(db: Database, idHash: string, workspaceId: string | null): Promise<void> {
  await db.updateTable('console_sessions').set({ selected_workspace_id: workspaceId }).where('id_hash', '=', idHash).execute();
}

export async function insertLoginLink(db: Database, row: { token_hash: string; workspace_id: string; expires_at: Date }): Promise<void> {
  await db.insertInto('console_login_links').values(row).execute();
}

/** Marks an unused, unexpired link used and answers its workspace; a second use (or a race) answers undefined. */
export async function consumeLoginLink(db: Database, tokenHash: string, now: Date) {
  return db
    .updateTable('console_login_links')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['workspace_id'])
    .executeTakeFirst();
}

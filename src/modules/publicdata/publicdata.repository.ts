import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { SandboxWorld } from '../../providers/publicdata/index.js';

/** `handle` is already lower-cased without '@'; stored handles may carry a leading '@'. */
export async function findXAccountByHandle(db: Database, workspaceId: string, handle: string) {
  return db
    .selectFrom('x_accounts')
    .select(['user_id', 'handle'])
    .where('workspace_id', '=', workspaceId)
    .where(sql<string>`lower(handle)`, 'in', [handle, `@${handle}`])
    .executeTakeFirst();
}

export async function listMessagingAccounts(db: Database, workspaceId: string) {
  return db
    .selectFrom('messaging_accounts')
    .select(['id', 'name', 'mode', 'stored_status'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The sandbox's simulated outside world, as seeded from world files. */
export async function loadSandboxWorld(db: Database): Promise<SandboxWorld> {
  const [users, follows, unavailable] = await Promise.all([
    db.selectFrom('publicdata_users').select(['x_user_id', 'username', 'name']).orderBy('x_user_id').execute(),
    db.selectFrom('publicdata_follows').select(['follower', 'followed']).orderBy('followed').orderBy('follower').execute(),
    db.selectFrom('publicdata_unavailable').select(['handle']).execute(),
  ]);
  return {
    users: users.map((u) => ({ xUserId: u.x_user_id, username: u.username, name: u.name })),
    follows,
    unavailable: unavailable.map((u) => u.handle),
  };
}

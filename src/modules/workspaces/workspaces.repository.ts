import { sql } from 'kysely';
import pg from 'pg';
import type { Database } from '../../db/database.js';
import type { Role } from '../../domain/vocabulary.js';
import type { AuthChangeListener } from './auth-cache.js';

/** The PostgreSQL notification channel on which key, Team link and workspace-setting changes are announced. */
export const AUTH_CHANGES_CHANNEL = 'outreach_auth_changes';

/** Announces a change to every listening process; inside a transaction it is delivered only if that commits. */
export async function notifyAuthChange(db: Database, message: string) {
  await sql`select pg_notify(${AUTH_CHANGES_CHANNEL}, ${message})`.execute(db);
}

/**
 * A dedicated connection (outside the pool, which would recycle it) that LISTENs for auth changes.
 * `onDrop` fires once when the connection fails or the server ends it.
 */
export async function listenForAuthChanges(url: string, handlers: { onMessage(payload: string): void; onDrop(): void }): Promise<AuthChangeListener> {
  const client = new pg.Client({ connectionString: url, keepAlive: true });
  let closing = false;
  let dropped = false;
  const drop = () => {
    if (closing || dropped) return;
    dropped = true;
    handlers.onDrop();
    void client.end().catch(() => undefined);
  };
  client.on('error', drop);
  client.on('end', drop);
  client.on('notification', (n) => {
    if (n.channel === AUTH_CHANGES_CHANNEL) handlers.onMessage(n.payload ?? '');
  });
  try {
    await client.connect();
    await client.query(`LISTEN ${AUTH_CHANGES_CHANNEL}`);
  } catch (err) {
    closing = true;
    await client.end().catch(() => undefined);
    throw err;
  }
  return {
    close: async () => {
      closing = true;
      await client.end().catch(() => undefined);
    },
  };
}

export async function findWorkspaceSettings(db: Database, workspaceId: string) {
  return db.selectFrom('workspaces').select(['x_channel_enabled']).where('id', '=', workspaceId).executeTakeFirst();
}

export async function findApiKeyByHash(db: Database, keyHash: string) {
  return db.selectFrom('api_keys').select(['id', 'workspace_id', 'role', 'expires_at', 'revoked_at']).where('key_hash', '=', keyHash).executeTakeFirst();
}

export async function findTeamLink(db: Database, ownerWorkspaceId: string, clientWorkspaceId: string) {
  return db
    .selectFrom('team_links')
    .select(['role'])
    .where('owner_workspace_id', '=', ownerWorkspaceId)
    .where('client_workspace_id', '=', clientWorkspaceId)
    .executeTakeFirst();
}

export async function findWorkspace(db: Database, workspaceId: string) {
  return db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirst();
}

export async function listHomeAndClientWorkspaces(db: Database, homeWorkspaceId: string) {
  const home = db
    .selectFrom('workspaces')
    .select(['id', 'name', 'created_at'])
    .select((eb) => eb.val<Role>('owner').as('role'))
    .where('id', '=', homeWorkspaceId);
  const clients = db
    .selectFrom('team_links')
    .innerJoin('workspaces', 'workspaces.id', 'team_links.client_workspace_id')
    .select(['workspaces.id', 'workspaces.name', 'workspaces.created_at', 'team_links.role'])
    .where('team_links.owner_workspace_id', '=', homeWorkspaceId);
  const rows = await home.unionAll(clients).execute();
  // The home workspace comes first; clients follow in a stable order.
  return rows.sort((a, b) =>
    a.id === homeWorkspaceId ? -1 : b.id === homeWorkspaceId ? 1 : a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id),
  );
}

export async function insertWorkspace(db: Database, row: { id: string; name: string }) {
  await db.insertInto('workspaces').values(row).execute();
}

export async function insertApiKey(
  db: Database,
  row: { id: string; workspace_id: string; key_hash: string; prefix: string; role: Role; expires_at: Date | null; revoked_at: Date | null },
) {
  await db.insertInto('api_keys').values(row).execute();
}

export async function revokeApiKey(db: Database, keyId: string, at: Date) {
  const result = await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', keyId).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function findApiKey(db: Database, keyId: string) {
  return db.selectFrom('api_keys').select(['id', 'workspace_id', 'revoked_at']).where('id', '=', keyId).executeTakeFirst();
}

export async function upsertTeamLink(db: Database, row: { owner_workspace_id: string; client_workspace_id: string; role: Role }) {
  await db
    .insertInto('team_links')
    .values(row)
    .onConflict((oc) => oc.columns(['owner_workspace_id', 'client_workspace_id']).doUpdateSet({ role: row.role }))
    .execute();
}

/** The workspace's saved X identities, in the order they were connected. */
export async function listXAccounts(db: Database, workspaceId: string) {
  return db.selectFrom('x_accounts').select(['user_id', 'handle']).where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('user_id').execute();
}

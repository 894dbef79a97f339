import type { Database } from '../../db/database.js';

/** A pending "Connect X account": its state, the encrypted PKCE verifier, the redirect URI used, its expiry. */
export interface PendingConnect {
  state: string;
  workspaceId: string;
  codeVerifier: string;
  redirectUri: string;
  expiresAt: Date;
  /** The console session that started it; null when started by `outreach x connect`. */
  sessionIdHash: string | null;
}

export async function insert(db: Database, p: PendingConnect & { createdAt: Date }): Promise<void> {
  await db
    .insertInto('x_oauth_states')
    .values({
      state: p.state,
      workspace_id: p.workspaceId,
      code_verifier: p.codeVerifier,
      redirect_uri: p.redirectUri,
      created_at: p.createdAt,
      expires_at: p.expiresAt,
      session_id_hash: p.sessionIdHash,
    })
    .execute();
}

/** Spends a state: deleted as it is read, so two callbacks with the same state cannot both succeed. */
export async function take(db: Database, state: string): Promise<PendingConnect | null> {
  const row = await db.deleteFrom('x_oauth_states').where('state', '=', state).returningAll().executeTakeFirst();
  return row
    ? {
        state: row.state,
        workspaceId: row.workspace_id,
        codeVerifier: row.code_verifier,
        redirectUri: row.redirect_uri,
        expiresAt: new Date(row.expires_at),
        sessionIdHash: row.session_id_hash,
      }
    : null;
}

export async function deleteExpired(db: Database, now: Date): Promise<void> {
  await db.deleteFrom('x_oauth_states').where('expires_at', '<=', now).execute();
}

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

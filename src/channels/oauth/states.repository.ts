import type { Database } from '../../db/database.js';

/** A pending OAuth connect as stored (table `oauth_states`, migration 0041). */
export interface StoredOauthState {
  state: string;
  workspaceId: string;
  /** Whose connect it is: `x`, `mailbox`. */
  flow: string;
  /** The PKCE code verifier, encrypted with the service's key. */
  codeVerifier: string;
  redirectUri: string;
  /** SHA-256 of the console session that started it; null when started by the CLI. */
  sessionIdHash: string | null;
  /** What only this flow keeps (a mailbox's provider, account and server overrides). */
  details: Record<string, unknown>;
  expiresAt: Date;
}

export async function insertState(db: Database, s: StoredOauthState & { createdAt: Date }): Promise<void> {
  await db
    .insertInto('oauth_states')
    .values({
      state: s.state,
      workspace_id: s.workspaceId,
      flow: s.flow,
      code_verifier: s.codeVerifier,
      redirect_uri: s.redirectUri,
      session_id_hash: s.sessionIdHash,
      details: JSON.stringify(s.details),
      created_at: s.createdAt,
      expires_at: s.expiresAt,
    })
    .execute();
}

/** Spends a state of `flow`: deleted as it is read, so two callbacks with the same state cannot both succeed. */
export async function takeState(db: Database, flow: string, state: string): Promise<StoredOauthState | null> {
  const r = await db.deleteFrom('oauth_states').where('state', '=', state).where('flow', '=', flow).returningAll().executeTakeFirst();
  if (!r) return null;
  const details = typeof r.details === 'string' ? (JSON.parse(r.details) as Record<string, unknown>) : (r.details ?? {});
  return {
    state: r.state,
    workspaceId: r.workspace_id,
    flow: r.flow,
    codeVerifier: r.code_verifier,
    redirectUri: r.redirect_uri,
    sessionIdHash: r.session_id_hash,
    details,
    expiresAt: new Date(r.expires_at),
  };
}

/** Clears every flow's states that have expired. */
export async function deleteExpiredStates(db: Database, now: Date): Promise<void> {
  await db.deleteFrom('oauth_states').where('expires_at', '<=', now).execute();
}

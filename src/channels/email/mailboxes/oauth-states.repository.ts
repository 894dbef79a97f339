import type { MailOauthProvider } from '../../../config/mail-oauth.js';
import type { Database } from '../../../db/database.js';

/** A pending mailbox connect: its state, the encrypted PKCE verifier, where it returns, what it is for, its expiry. */
export interface PendingMailboxConnect {
  state: string;
  workspaceId: string;
  provider: MailOauthProvider;
  /** The messaging account that gets the mailbox; null: a new `mode: email` account is made. */
  accountId: string | null;
  codeVerifier: string;
  redirectUri: string;
  /** Per-mailbox servers (no credentials); null: the provider's own. */
  smtpUrl: string | null;
  imapUrl: string | null;
  /** The console session that started it; null when started by `outreach mailbox connect`. */
  sessionIdHash: string | null;
  expiresAt: Date;
}

export async function insertPendingConnect(db: Database, p: PendingMailboxConnect & { createdAt: Date }): Promise<void> {
  await db
    .insertInto('mailbox_oauth_states')
    .values({
      state: p.state,
      workspace_id: p.workspaceId,
      provider: p.provider,
      account_id: p.accountId,
      code_verifier: p.codeVerifier,
      redirect_uri: p.redirectUri,
      smtp_url: p.smtpUrl,
      imap_url: p.imapUrl,
      session_id_hash: p.sessionIdHash,
      created_at: p.createdAt,
      expires_at: p.expiresAt,
    })
    .execute();
}

/** Spends a state: deleted as it is read, so two callbacks with the same state cannot both succeed. */
export async function takePendingConnect(db: Database, state: string): Promise<PendingMailboxConnect | null> {
  const r = await db.deleteFrom('mailbox_oauth_states').where('state', '=', state).returningAll().executeTakeFirst();
  return r
    ? {
        state: r.state,
        workspaceId: r.workspace_id,
        provider: r.provider,
        accountId: r.account_id,
        codeVerifier: r.code_verifier,
        redirectUri: r.redirect_uri,
        smtpUrl: r.smtp_url,
        imapUrl: r.imap_url,
        sessionIdHash: r.session_id_hash,
        expiresAt: new Date(r.expires_at),
      }
    : null;
}

export async function deleteExpiredConnects(db: Database, now: Date): Promise<void> {
  await db.deleteFrom('mailbox_oauth_states').where('expires_at', '<=', now).execute();
}

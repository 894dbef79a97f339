import type { Database } from '../../db/database.js';
import type { XDisconnectReason } from '../../db/schema.js';
import type { TextCipher } from '../../lib/crypto.js';

export interface XTokens {
  accessToken: string;
  refreshToken: string;
  expiresAt: Date;
  scopes: string[];
}
export interface XTokenRow extends XTokens {
  disconnected: boolean;
}

/** The only code that reads or writes x_account_oauth; tokens go in and come out through the cipher. */
export function xOauthRepository(cipher: TextCipher) {
  const open = (r: { access_token: string; refresh_token: string; expires_at: Date; scopes: string; disconnected_at: Date | null }): XTokenRow | null => {
    const accessToken = cipher.decrypt(r.access_token);
    const refreshToken = cipher.decrypt(r.refresh_token);
    if (accessToken === null || refreshToken === null) return null;
    return {
      accessToken,
      refreshToken,
      expiresAt: new Date(r.expires_at),
      scopes: r.scopes ? r.scopes.split(' ') : [],
      disconnected: r.disconnected_at !== null,
    };
  };
  /** The row, locked until the transaction ends, with its tokens if they still decrypt here. */
  async function lockRow(
    trx: Database,
    workspaceId: string,
    userId: string,
  ): Promise<{ tokens: XTokenRow | null; disconnectReason: XDisconnectReason | null } | undefined> {
    const r = await trx
      .selectFrom('x_account_oauth')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('user_id', '=', userId)
      .forUpdate()
      .executeTakeFirst();
    if (!r) return undefined;
    return { tokens: open(r), disconnectReason: r.disconnected_at === null ? null : (r.disconnect_reason ?? 'token_refused') };
  }
  return {
    async save(db: Database, workspaceId: string, userId: string, t: XTokens): Promise<void> {
      const row = {
        access_token: cipher.encrypt(t.accessToken)!,
        refresh_token: cipher.encrypt(t.refreshToken)!,
        expires_at: t.expiresAt,
        scopes: t.scopes.join(' '),
        disconnected_at: null,
        disconnect_reason: null,
        updated_at: new Date(),
      };
      await db
        .insertInto('x_account_oauth')
        .values({ workspace_id: workspaceId, user_id: userId, ...row })
        .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doUpdateSet(row))
        .execute();
    },
    async find(db: Database, workspaceId: string, userId: string): Promise<XTokenRow | null> {
      const r = await db.selectFrom('x_account_oauth').selectAll().where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst();
      return r ? open(r) : null;
    },
    /** Inside a transaction: the row, locked until the transaction ends (the refresh lock). */
    async findForUpdate(trx: Database, workspaceId: string, userId: string): Promise<XTokenRow | null> {
      return (await lockRow(trx, workspaceId, userId))?.tokens ?? null;
    },
    /**
     * Inside a transaction: the row locked (as `findForUpdate`), whether or not its tokens can still be decrypted
     * (a Disconnect must work on a row written under another key). Undefined when there is no row.
     */
    lockForDisconnect: lockRow,
    /** X refused the refresh token: the account waits for a person to connect it again. */
    async markDisconnected(db: Database, workspaceId: string, userId: string): Promise<void> {
      await db
        .updateTable('x_account_oauth')
        .set({ disconnected_at: new Date(), disconnect_reason: 'token_refused', updated_at: new Date() })
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .execute();
    },
    /**
     * A person disconnected the account: its tokens are overwritten (nothing of them stays here) and it is marked
     * disconnected. The row stays, so the account's steps wait instead of falling back to the sandbox.
     */
    async disconnectByPerson(db: Database, workspaceId: string, userId: string, at: Date): Promise<void> {
      await db
        .updateTable('x_account_oauth')
        .set({
          access_token: cipher.encrypt('')!,
          refresh_token: cipher.encrypt('')!,
          expires_at: at,
          disconnected_at: at,
          disconnect_reason: 'by_person',
          rate_limited_until: null,
          updated_at: at,
        })
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .execute();
    },
    /** What the X driver checks before a call: is the account connected here, disconnected, or paused by a 429. */
    async connection(db: Database, workspaceId: string, userId: string): Promise<{ disconnected: boolean; rateLimitedUntil: Date | null } | null> {
      const r = await db
        .selectFrom('x_account_oauth')
        .select(['disconnected_at', 'rate_limited_until'])
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return r ? { disconnected: r.disconnected_at !== null, rateLimitedUntil: r.rate_limited_until ? new Date(r.rate_limited_until) : null } : null;
    },
    /** X answered 429: every worker leaves the account alone until the window resets. */
    async pauseUntil(db: Database, workspaceId: string, userId: string, until: Date): Promise<void> {
      await db
        .updateTable('x_account_oauth')
        .set({ rate_limited_until: until })
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        // A 429 answered to a call that left before a Disconnect must not pause the account once connected again.
        .where('disconnected_at', 'is', null)
        .execute();
    },
    /**
     * Which of these accounts of a workspace have tokens on record (connected, or disconnected until a person connects
     * them again): the real X driver serves them, never the sandbox.
     */
    async connectedUserIds(db: Database, workspaceId: string, userIds: string[]): Promise<Set<string>> {
      if (userIds.length === 0) return new Set();
      const rows = await db.selectFrom('x_account_oauth').select('user_id').where('workspace_id', '=', workspaceId).where('user_id', 'in', userIds).execute();
      return new Set(rows.map((r) => r.user_id));
    },
    /** Every X account of the workspace that has tokens on record, and whether X still accepts them. */
    async listConnections(
      db: Database,
      workspaceId: string,
    ): Promise<{ userId: string; disconnected: boolean; disconnectReason: XDisconnectReason | null; rateLimitedUntil: Date | null }[]> {
      const rows = await db
        .selectFrom('x_account_oauth')
        .select(['user_id', 'disconnected_at', 'disconnect_reason', 'rate_limited_until'])
        .where('workspace_id', '=', workspaceId)
        .execute();
      return rows.map((r) => ({
        userId: r.user_id,
        disconnected: r.disconnected_at !== null,
        disconnectReason: r.disconnected_at === null ? null : (r.disconnect_reason ?? 'token_refused'),
        rateLimitedUntil: r.rate_limited_until ? new Date(r.rate_limited_until) : null,
      }));
    },
    async listDisconnected(db: Database, workspaceId: string): Promise<{ userId: string; reason: XDisconnectReason }[]> {
      const rows = await db
        .selectFrom('x_account_oauth')
        .select(['user_id', 'disconnect_reason'])
        .where('workspace_id', '=', workspaceId)
        .where('disconnected_at', 'is not', null)
        .execute();
      return rows.map((r) => ({ userId: r.user_id, reason: r.disconnect_reason ?? 'token_refused' }));
    },
  };
}
export type XOauthRepository = ReturnType<typeof xOauthRepository>;

/** Every X account of a workspace, oldest first, and whether it has tokens on record (its steps go through X). */
export async function readXSenders(db: Database, workspaceId: string): Promise<{ accountUserId: string; handle: string; connected: boolean }[]> {
  const rows = await db
    .selectFrom('x_accounts as a')
    .leftJoin('x_account_oauth as o', (j) => j.onRef('o.workspace_id', '=', 'a.workspace_id').onRef('o.user_id', '=', 'a.user_id'))
    .select(['a.user_id', 'a.handle', 'o.user_id as token_user'])
    .where('a.workspace_id', '=', workspaceId)
    .orderBy('a.created_at')
    .orderBy('a.user_id')
    .execute();
  return rows.map((r) => ({ accountUserId: r.user_id, handle: r.handle, connected: r.token_user !== null }));
}

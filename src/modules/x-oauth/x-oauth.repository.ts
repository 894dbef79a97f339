import type { Database } from '../../db/database.js';
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
  return {
    async save(db: Database, workspaceId: string, userId: string, t: XTokens): Promise<void> {
      const row = {
        access_token: cipher.encrypt(t.accessToken)!,
        refresh_token: cipher.encrypt(t.refreshToken)!,
        expires_at: t.expiresAt,
        scopes: t.scopes.join(' '),
        disconnected_at: null,
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
      const r = await trx
        .selectFrom('x_account_oauth')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .forUpdate()
        .executeTakeFirst();
      return r ? open(r) : null;
    },
    async markDisconnected(db: Database, workspaceId: string, userId: string): Promise<void> {
      await db
        .updateTable('x_account_oauth')
        .set({ disconnected_at: new Date(), updated_at: new Date() })
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .execute();
    },
    async listDisconnected(db: Database, workspaceId: string): Promise<string[]> {
      const rows = await db
        .selectFrom('x_account_oauth')
        .select('user_id')
        .where('workspace_id', '=', workspaceId)
        .where('disconnected_at', 'is not', null)
        .execute();
      return rows.map((r) => r.user_id);
    },
  };
}
export type XOauthRepository = ReturnType<typeof xOauthRepository>;

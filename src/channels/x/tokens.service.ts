import type { Database } from '../../db/database.js';
import { xOauthPost, type XOauthClient } from './api.js';
import type { XOauthRepository, XTokens } from './oauth.repository.js';
import { refreshLocked, tokenStillFresh } from '../oauth/refresh.js';

export class XAccountDisconnectedError extends Error {
  readonly code = 'x_account_disconnected';
  constructor(readonly userId: string) {
    super(`X account ${userId} is disconnected; its steps wait until a person connects it again`);
  }
}

/**
 * A usable access token for a connected X account. Refreshing happens under the row's lock (SELECT … FOR UPDATE)
 * and re-reads the row once locked: X rotates refresh tokens, so a second worker that waited for the lock finds
 * fresh tokens and uses them instead of spending the old (now dead) refresh token. A refused refresh marks the
 * account disconnected (readiness reports `x_account_disconnected`).
 */
export function xTokensService(deps: { db: Database; repo: XOauthRepository; settings: XOauthClient; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());
  /**
   * Access tokens X answered 401 to inside a caller's transaction (a console click), where no refresh may run: the
   * next use outside a transaction refreshes first. In memory: at worst another process waits for the expiry.
   */
  const rejected = new Set<string>();

  async function exchangeRefresh(refreshToken: string): Promise<XTokens | { refused: true }> {
    const res = await xOauthPost<{ access_token?: string; refresh_token?: string; expires_in?: number; scope?: string }>(deps.settings, '/2/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
    }).catch(() => {
      // X's token endpoint out of reach is trouble of the moment, not a refusal: retried, the account stays connected.
      throw new Error('x_token_refresh_failed: unreachable');
    });
    const body = res.body;
    if (res.status === 400 || res.status === 401) return { refused: true };
    if (res.status !== 200 || !body?.access_token || !body.refresh_token) throw new Error(`x_token_refresh_failed: HTTP ${res.status}`);
    return {
      accessToken: body.access_token,
      refreshToken: body.refresh_token,
      expiresAt: new Date(now().getTime() + (body.expires_in ?? 7200) * 1000),
      scopes: (body.scope ?? '').split(' ').filter(Boolean),
    };
  }

  /** Refresh now if the stored token expires within the margin (or `force`, after a 401 answered by X). */
  async function refresh(workspaceId: string, userId: string, opts: { force?: boolean; staleAccessToken?: string } = {}): Promise<string> {
    const outcome = await deps.db.transaction().execute(async (trx) => {
      const row = await deps.repo.findForUpdate(trx, workspaceId, userId);
      if (!row || row.disconnected) return 'disconnected' as const;
      const outcome = await refreshLocked(row, {
        now: now(),
        force: opts.force,
        staleAccessToken: opts.staleAccessToken,
        exchange: exchangeRefresh,
        save: (fresh) => deps.repo.save(trx, workspaceId, userId, fresh),
        refused: () => deps.repo.markDisconnected(trx, workspaceId, userId),
      });
      return typeof outcome === 'string' ? outcome : ('disconnected' as const);
    });
    if (opts.staleAccessToken) rejected.delete(opts.staleAccessToken);
    if (outcome === 'disconnected') throw new XAccountDisconnectedError(userId);
    return outcome;
  }

  return {
    refresh,
    /**
     * `q`: the caller's transaction, if any (the console's X button runs inside the task's). The token is read through
     * it: on PGlite's single connection a read on the pool would wait for that transaction for ever.
     */
    async accessToken(workspaceId: string, userId: string, q: Database = deps.db): Promise<string> {
      const row = await deps.repo.find(q, workspaceId, userId);
      if (!row || row.disconnected) throw new XAccountDisconnectedError(userId);
      if (rejected.has(row.accessToken) && !q.isTransaction) return refresh(workspaceId, userId, { force: true, staleAccessToken: row.accessToken });
      if (tokenStillFresh(row.expiresAt, now())) return row.accessToken;
      return refresh(workspaceId, userId);
    },
    /** X refused `accessToken` (401) inside a transaction: the next use outside one refreshes it. */
    rejectedInTransaction(accessToken: string): void {
      rejected.add(accessToken);
    },
  };
}
export type XTokensService = ReturnType<typeof xTokensService>;

import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { authorizeUrlOf } from '../../lib/pkce.js';
import { beginOauthConnect, completeOauthConnect, OAUTH_CONNECT_TTL_MS, type OauthCallback } from '../oauth/index.js';
import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import { xCall, xOauthPost, XTransportError, type XOauthClient } from './api.js';
import type { XOauthRepository } from './oauth.repository.js';
import * as states from './states.repository.js';

/** What the service asks a person to grant (issue 18; docs/x-channel.md says what each is for). */
export const X_SCOPES = ['tweet.read', 'users.read', 'follows.read', 'follows.write', 'like.write', 'dm.read', 'dm.write', 'offline.access'] as const;
/** A pending connect (its state and PKCE verifier) is worthless after this long, and good once (channels/oauth). */
export const CONNECT_TTL_MS = OAUTH_CONNECT_TTL_MS;
/** Where X sends the person back: a console page of this service. */
export const CALLBACK_PATH = '/console/accounts/x/callback';

export interface XConnectDeps {
  db: Database;
  config: Config;
  cipher: TextCipher;
  clock: Clock;
  repo: XOauthRepository;
}

const fail = (status: number, code: string, message: string) => new AppError(status, code, message);

/**
 * "Connect X account": OAuth 2.0 Authorization Code with PKCE (S256). `begin` stores a single-use state with its
 * encrypted code verifier (10 minutes) and gives the authorize URL; `complete` spends the state, exchanges the code,
 * asks `GET /2/users/me` who connected, and saves the account (a row of `GET /x/accounts`) with its tokens encrypted.
 */
export function createXConnectService(deps: XConnectDeps) {
  const { db, config, cipher, clock, repo } = deps;

  /** The X app's OAuth client, or null when OUTREACH_X_CLIENT_ID / OUTREACH_X_CLIENT_SECRET are not set. */
  function oauthClient(): XOauthClient | null {
    const { clientId, clientSecret, apiUrl, timeoutMs } = config.x;
    return clientId && clientSecret ? { clientId, clientSecret, apiUrl, timeoutMs } : null;
  }

  function requireClient(): XOauthClient {
    const client = oauthClient();
    if (!client) {
      throw fail(503, 'x_not_configured', 'connecting an X account needs OUTREACH_X_CLIENT_ID and OUTREACH_X_CLIENT_SECRET (docs/x-developer-app.md)');
    }
    return client;
  }

  /**
   * RFC 7009 revocation at X (`POST /2/oauth2/revoke`, the app's Basic credentials). True when X said 200; false
   * when X could not be reached, refused, or the app's credentials are not configured here.
   */
  async function revokeAtX(token: string, hint: 'access_token' | 'refresh_token'): Promise<boolean> {
    const client = oauthClient();
    if (!token || !client) return false;
    const res = await xOauthPost(client, '/2/oauth2/revoke', { token, token_type_hint: hint }).catch(() => null);
    return res?.status === 200;
  }

  const callbackUrl = () => `${config.publicBase.url()}${CALLBACK_PATH}`;

  return {
    callbackUrl,

    /** Whether connecting is possible here (the X app's client id and secret are set). */
    configured: () => oauthClient() !== null,

    /**
     * Per X account with tokens: `connected`, or `disconnected` with why (X refused its refresh token, or a person
     * disconnected it). Accounts without tokens are sandbox accounts.
     */
    async connections(
      workspaceId: string,
    ): Promise<Map<string, { status: 'connected' | 'disconnected'; disconnectReason: 'token_refused' | 'by_person' | null; rateLimitedUntil: Date | null }>> {
      const rows = await repo.listConnections(db, workspaceId);
      return new Map(
        rows.map((r) => [
          r.userId,
          { status: r.disconnected ? 'disconnected' : 'connected', disconnectReason: r.disconnectReason, rateLimitedUntil: r.rateLimitedUntil },
        ]),
      );
    },

    /**
     * A person disconnects a connected X account. Under the row's lock (so a refresh in flight finishes first and its
     * fresh tokens are the ones revoked) the tokens are overwritten and the account is marked disconnected; then both
     * tokens are revoked at X. The account stays in `GET /x/accounts`, and its steps wait (never the sandbox) until a
     * person connects it again. Revocation is best effort: the tokens are gone from here whatever X answers.
     * An account of another workspace, or one without tokens (a sandbox account), is 404.
     */
    async disconnect(workspaceId: string, userId: string): Promise<{ userId: string; revokedAtX: boolean; alreadyDisconnected: boolean }> {
      if (!isUuid(workspaceId)) throw notFound('X account');
      const taken = await db.transaction().execute(async (trx) => {
        const row = await repo.lockForDisconnect(trx, workspaceId, userId);
        // Disconnected by a person already (a resubmitted form): nothing to write, nothing to revoke.
        if (!row || row.disconnectReason === 'by_person') return row;
        await repo.disconnectByPerson(trx, workspaceId, userId, clock.now());
        return row;
      });
      if (!taken) throw notFound('X account');
      if (taken.disconnectReason === 'by_person') return { userId, revokedAtX: false, alreadyDisconnected: true };
      // Revoking the refresh token ends the grant; the access token is revoked too so it stops working at once.
      // Tokens that no longer decrypt here (another key) are wiped all the same; X cannot be told about them.
      const tokens = taken.tokens;
      const [refreshRevoked, accessRevoked] = tokens
        ? await Promise.all([revokeAtX(tokens.refreshToken, 'refresh_token'), revokeAtX(tokens.accessToken, 'access_token')])
        : [false, false];
      return { userId, revokedAtX: refreshRevoked && accessRevoked, alreadyDisconnected: false };
    },

    /**
     * Starts a connect for the workspace: the URL to send the person to, and when it stops working. Started from the
     * console, it is bound to that session (`sessionIdHash`) and completes only in the same browser.
     */
    async begin(workspaceId: string, opts: { sessionIdHash?: string } = {}): Promise<{ authorizeUrl: string; expiresAt: Date }> {
      const { clientId } = requireClient();
      if (!isUuid(workspaceId) || !(await states.workspaceExists(db, workspaceId))) throw notFound('workspace');
      const redirectUri = callbackUrl();
      const { state, challenge, expiresAt } = await beginOauthConnect(
        { db, cipher, clock },
        { flow: 'x', workspaceId, redirectUri, sessionIdHash: opts.sessionIdHash, details: {} },
      );
      const authorizeUrl = authorizeUrlOf(config.x.authorizeUrl, { clientId, redirectUri, scopes: X_SCOPES, state, challenge });
      return { authorizeUrl, expiresAt };
    },

    /**
     * X sent the person back. The state is spent first (single use, whatever happens next); an unknown, used or
     * expired one is refused. Returns the account connected.
     */
    async complete(input: OauthCallback): Promise<{ workspaceId: string; userId: string; handle: string }> {
      const client = requireClient();
      const back = await completeOauthConnect({ db, cipher, clock }, { flow: 'x', codePrefix: 'x_connect', providerName: 'X', input });
      const pending = { workspaceId: back.workspaceId, redirectUri: back.redirectUri };
      const verifier = back.codeVerifier;
      const now = clock.now();

      const tokenAnswer = await xOauthPost<{ access_token?: string; refresh_token?: string; expires_in?: number; scope?: string }>(client, '/2/oauth2/token', {
        grant_type: 'authorization_code',
        code: back.code,
        redirect_uri: pending.redirectUri,
        code_verifier: verifier,
      }).catch(() => {
        throw fail(502, 'x_unreachable', 'X did not answer the token request; try again');
      });
      const tokens = tokenAnswer.body;
      if (tokenAnswer.status !== 200 || !tokens?.access_token) {
        throw fail(502, 'x_connect_token_refused', `X refused the authorization code (HTTP ${tokenAnswer.status}); start again from Accounts`);
      }
      if (!tokens.refresh_token) throw fail(502, 'x_connect_no_refresh_token', 'X returned no refresh token: the app must request offline.access');

      let me;
      try {
        me = await xCall<{ data?: { id?: string; username?: string } }>(
          { apiUrl: config.x.apiUrl, timeoutMs: config.x.timeoutMs },
          tokens.access_token,
          'GET',
          '/2/users/me',
        );
      } catch (err) {
        if (err instanceof XTransportError) throw fail(502, 'x_unreachable', 'X did not answer GET /2/users/me; try again');
        throw err;
      }
      const userId = me.body?.data?.id;
      const handle = me.body?.data?.username;
      if (me.status !== 200 || !userId || !handle) throw fail(502, 'x_connect_user_unknown', `X did not say who connected (HTTP ${me.status})`);

      const save = db.transaction().execute(async (trx) => {
        await states.upsertXAccount(trx, { workspaceId: pending.workspaceId, userId, handle });
        await repo.save(trx, pending.workspaceId, userId, {
          accessToken: tokens.access_token!,
          refreshToken: tokens.refresh_token!,
          expiresAt: new Date(now.getTime() + (tokens.expires_in ?? 7200) * 1000),
          scopes: (tokens.scope ?? '').split(' ').filter(Boolean),
        });
      });
      await save.catch((err: unknown) => {
        // Another X account of this workspace already goes by this handle (X handles change hands).
        if ((err as { code?: string }).code === '23505') throw fail(409, 'x_handle_taken', `another connected X account of this workspace is named @${handle}`);
        throw err;
      });
      return { workspaceId: pending.workspaceId, userId, handle };
    },
  };
}

export type XConnectService = ReturnType<typeof createXConnectService>;

/** What a Disconnect did, in the words the console and the CLI show. */
export function disconnectOutcomeText(done: { revokedAtX: boolean; alreadyDisconnected: boolean }): string {
  if (done.alreadyDisconnected) return 'That X account was already disconnected; its tokens are deleted here.';
  if (done.revokedAtX) return 'Disconnected: its tokens are deleted here and revoked at X.';
  return 'Disconnected: its tokens are deleted here, but X did not confirm the revocation; remove the app under "Connected apps" in its X settings.';
}

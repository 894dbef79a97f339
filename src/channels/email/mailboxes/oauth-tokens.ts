import { request } from 'undici';
import type { Config } from '../../../config/config.js';
import type { MailOauthApp, MailOauthProvider } from '../../../config/mail-oauth.js';
import type { Database } from '../../../db/database.js';
import type { TextCipher } from '../../../lib/crypto.js';
import * as repo from './mailboxes.repository.js';
import { refreshLocked, tokenStillFresh } from '../../oauth/refresh.js';

/**
 * What a mailbox connect asks a person to grant: IMAP and SMTP access (Google has one scope for both; Microsoft one
 * each, plus `offline_access` for a refresh token), and `openid email` so the ID token names the mailbox's address.
 */
export const MAIL_SCOPES: Readonly<Record<MailOauthProvider, readonly string[]>> = {
  google: ['https://mail.google.com/', 'openid', 'email'],
  microsoft: ['https://outlook.office.com/IMAP.AccessAsUser.All', 'https://outlook.office.com/SMTP.Send', 'offline_access', 'openid', 'email'],
};

/** The providers' own servers (overridable per mailbox): Gmail (implicit TLS) and Exchange Online (SMTP with STARTTLS). */
export const MAIL_HOSTS: Readonly<Record<MailOauthProvider, { smtp: string; imap: string }>> = {
  google: { smtp: 'smtps://smtp.gmail.com:465', imap: 'imaps://imap.gmail.com:993' },
  microsoft: { smtp: 'smtp://smtp.office365.com:587', imap: 'imaps://outlook.office365.com:993' },
};

export const PROVIDER_NAMES: Readonly<Record<MailOauthProvider, string>> = { google: 'Google', microsoft: 'Microsoft 365' };

const TOKEN_TIMEOUT_MS = 10_000;
/** A token answer is a few kilobytes; anything larger is not one. */
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

/** The health detail of a mailbox whose provider refused its refresh token: a person must connect it again. */
export const RECONNECT_DETAIL = 'OAuth: the provider refused the refresh token (invalid_grant); reconnect the mailbox';

/** The mailbox cannot log in until a person acts (reconnect, or fix the app's credentials); its health says so. */
export class MailboxOauthRefusedError extends Error {
  readonly code = 'mailbox_auth_failed';
}

/** The provider could not be asked (unreachable, an odd answer, the app not configured here): tried again later. */
export class MailboxOauthUnavailableError extends Error {
  readonly code = 'mailbox_oauth_unavailable';
}

export interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  id_token?: string;
  scope?: string;
  error?: string;
}

/** The app's client id and secret, or null when they are not set in this process. */
export function oauthApp(config: Config, provider: MailOauthProvider): (MailOauthApp & { clientId: string; clientSecret: string }) | null {
  const app = config.mailOauth[provider];
  return app.clientId && app.clientSecret ? { ...app, clientId: app.clientId, clientSecret: app.clientSecret } : null;
}

/** A form POST to the provider's token endpoint, bounded in time and size; the client authenticates in the body. */
export async function postTokenForm(app: { tokenUrl: string }, form: Record<string, string>): Promise<{ status: number; body: TokenAnswer | null }> {
  try {
    const res = await request(app.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      headersTimeout: TOKEN_TIMEOUT_MS,
      bodyTimeout: TOKEN_TIMEOUT_MS,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_TOKEN_ANSWER_BYTES) {
        res.body.destroy();
        return { status: res.statusCode, body: null };
      }
      chunks.push(chunk as Buffer);
    }
    let body: TokenAnswer | null = null;
    try {
      const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      body = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : null;
    } catch {
      body = null;
    }
    return { status: res.statusCode, body };
  } catch {
    throw new MailboxOauthUnavailableError('the provider did not answer the token request');
  }
}

/**
 * A usable access token for an OAuth mailbox (docs/email.md "Connect Google or Microsoft 365"). The stored token is
 * used while it has more than REFRESH_MARGIN_MS left; otherwise (or `force`, after the server refused a login) it is
 * refreshed under the row's lock, re-read once locked, so two workers refresh once and the second uses the first's
 * token (Microsoft rotates refresh tokens: spending the old one twice would fail). A refresh the provider refuses
 * (`invalid_grant`) marks the mailbox `auth_failed` with "reconnect the mailbox": nothing is sent from it.
 */
export function createMailboxTokens(deps: { db: Database; cipher: TextCipher; config: Config; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());

  async function exchange(provider: MailOauthProvider, refreshToken: string): Promise<repo.MailboxOauthTokens | { refused: string }> {
    const app = oauthApp(deps.config, provider);
    if (!app)
      throw new MailboxOauthUnavailableError(
        `refreshing a ${PROVIDER_NAMES[provider]} mailbox's token needs OUTREACH_${provider.toUpperCase()}_CLIENT_ID and _SECRET`,
      );
    const res = await postTokenForm(app, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: app.clientId,
      client_secret: app.clientSecret,
      ...(provider === 'microsoft' && { scope: MAIL_SCOPES.microsoft.join(' ') }),
    });
    const error = typeof res.body?.error === 'string' ? res.body.error : null;
    if (error === 'invalid_grant') return { refused: RECONNECT_DETAIL };
    if (error === 'invalid_client' || error === 'unauthorized_client')
      return {
        refused: `OAuth: the provider refused this service's client credentials (${error}); check OUTREACH_${provider.toUpperCase()}_CLIENT_ID and _SECRET, then reconnect the mailbox`,
      };
    const access = res.body?.access_token;
    if (res.status !== 200 || typeof access !== 'string' || access === '')
      throw new MailboxOauthUnavailableError(`the token refresh failed (HTTP ${res.status})`);
    const ttl = typeof res.body?.expires_in === 'number' && res.body.expires_in > 0 ? res.body.expires_in : 3600;
    // Google keeps the refresh token (none in the answer); Microsoft sends a new one to use from now on.
    const rotated = typeof res.body?.refresh_token === 'string' && res.body.refresh_token !== '' ? res.body.refresh_token : refreshToken;
    return { accessToken: access, refreshToken: rotated, expiresAt: new Date(now().getTime() + ttl * 1000) };
  }

  async function refresh(q: Database, mailboxId: string, opts: { force?: boolean; staleAccessToken?: string }): Promise<string> {
    const run = async (trx: Database): Promise<string | { refused: string }> => {
      const row = await repo.lockMailboxTokens(trx, deps.cipher, mailboxId);
      if (!row) throw new MailboxOauthRefusedError('the mailbox has no OAuth tokens');
      if (!row.tokens) return { refused: 'OAuth: the stored tokens cannot be read with the current encryption key; reconnect the mailbox' };
      return refreshLocked(row.tokens, {
        now: now(),
        force: opts.force,
        staleAccessToken: opts.staleAccessToken,
        exchange: (refreshToken) => exchange(row.provider, refreshToken),
        save: (fresh) => repo.saveMailboxTokens(trx, deps.cipher, mailboxId, fresh),
        refused: (why) => repo.setMailboxHealth(trx, mailboxId, 'auth_failed', why),
      });
    };
    // Inside a caller's transaction (a reply decision) the lock is taken there: PGlite has a single connection.
    const outcome = q.isTransaction ? await run(q) : await deps.db.transaction().execute(run);
    if (typeof outcome !== 'string') throw new MailboxOauthRefusedError(outcome.refused);
    return outcome;
  }

  return {
    refresh,
    /** The access token to log in with now; `q`: the caller's transaction, if any. */
    async accessToken(mailboxId: string, q: Database = deps.db, opts: { force?: boolean; staleAccessToken?: string } = {}): Promise<string> {
      if (!opts.force) {
        const t = await repo.readMailboxTokens(q, deps.cipher, mailboxId);
        if (t && tokenStillFresh(t.expiresAt, now())) return t.accessToken;
      }
      return refresh(q, mailboxId, opts);
    },
  };
}
export type MailboxTokens = ReturnType<typeof createMailboxTokens>;

/** The address an ID token names (`email`, else Microsoft's `preferred_username`), read without a signature check. */
export function addressFromIdToken(idToken: string | undefined): string | null {
  // Received straight from the provider's token endpoint over TLS, so OpenID Connect Core §3.1.3.7 lets the client
  // trust it without checking the signature; it only names the mailbox, which the XOAUTH2 login then proves.
  const payload = idToken?.split('.')[1];
  if (!payload) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { email?: unknown; preferred_username?: unknown };
    const v = typeof claims.email === 'string' ? claims.email : typeof claims.preferred_username === 'string' ? claims.preferred_username : null;
    return v && /^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/.test(v) ? v.toLowerCase() : null;
  } catch {
    return null;
  }
}

/**
 * Revokes an OAuth mailbox's grant where the provider supports it (Google's RFC 7009 endpoint; Microsoft's identity
 * platform has none): true when the provider confirmed, false when it did not or cannot, null for a password mailbox.
 * Called before the mailbox row is deleted; the tokens go with the row whatever the provider answers.
 */
export async function revokeMailboxGrant(
  deps: { db: Database; cipher: TextCipher; config: Config },
  workspaceId: string,
  idOrAddress: string,
): Promise<boolean | null> {
  const held = await repo.takeMailboxTokens(deps.db, deps.cipher, workspaceId, idOrAddress);
  if (!held) return null;
  const url = deps.config.mailOauth[held.provider].revokeUrl;
  if (!url || !held.tokens) return false;
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: held.tokens.refreshToken }).toString(),
      headersTimeout: TOKEN_TIMEOUT_MS,
      bodyTimeout: TOKEN_TIMEOUT_MS,
    });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

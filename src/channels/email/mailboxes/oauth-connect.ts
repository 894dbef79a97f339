import type { Config } from '../../../config/config.js';
import { MAIL_OAUTH_PROVIDERS, type MailOauthProvider } from '../../../config/mail-oauth.js';
import type { Database } from '../../../db/database.js';
import type { Clock } from '../../../lib/clock.js';
import type { TextCipher } from '../../../lib/crypto.js';
import { AppError, notFound } from '../../../lib/errors.js';
import { isUuid } from '../../../lib/ids.js';
import { authorizeUrlOf } from '../../../lib/pkce.js';
import { beginOauthConnect, completeOauthConnect, OAUTH_CONNECT_TTL_MS, type OauthCallback } from '../../oauth/index.js';
import { addMailbox, MailboxError, pinServer } from './mailboxes.service.js';
import type { HostResolver } from '../../../lib/public-address.js';
import * as repo from './mailboxes.repository.js';
import type { MailboxView } from './mailboxes.schemas.js';
import { mailboxInputProblem } from './mailboxes.schemas.js';
import { addressFromIdToken, MAIL_HOSTS, MAIL_SCOPES, MailboxOauthUnavailableError, oauthApp, postTokenForm, PROVIDER_NAMES } from './oauth-tokens.js';

/** A pending connect is worthless after this long, and good once (channels/oauth). */
export const MAILBOX_CONNECT_TTL_MS = OAUTH_CONNECT_TTL_MS;

/** What a pending mailbox connect keeps besides the shared OAuth state (`oauth_states.details`). */
interface MailboxConnectDetails {
  provider: MailOauthProvider;
  /** The messaging account that gets the mailbox; null: a new `mode: email` account is made. */
  accountId: string | null;
  /** Per-mailbox servers (no credentials); null: the provider's own. */
  smtpUrl: string | null;
  imapUrl: string | null;
}
/** Where Google and Microsoft send the person back: a console page of this service (register it with the app). */
export const MAILBOX_CALLBACK_PATH = '/console/accounts/mailbox/callback';

export interface MailboxConnectDeps {
  db: Database;
  config: Config;
  cipher: TextCipher;
  clock: Clock;
  /** DNS for the public-address guard on server overrides (tests map names to chosen addresses). */
  resolver?: HostResolver;
}

/** A refusal whose reason is for the log only (the page says "That server's address is not allowed"). */
export class ServerNotAllowedError extends AppError {
  constructor(readonly logDetail: string) {
    super(400, 'server_not_allowed', "That server's address is not allowed");
  }
}

const fail = (status: number, code: string, message: string) => new AppError(status, code, message);

export interface BeginMailboxConnect {
  workspaceId: string;
  provider: MailOauthProvider;
  /** The messaging account that gets the mailbox; absent: a new `mode: email` account. */
  accountId?: string | null;
  /** Per-mailbox servers, without credentials (the provider's own when absent). */
  smtpUrl?: string | null;
  imapUrl?: string | null;
  sessionIdHash?: string;
  /**
   * The overrides were typed in the console: each must resolve to public addresses (unless
   * OUTREACH_MAILBOX_ALLOW_PRIVATE=1), checked here and again, pinned, when the callback logs in.
   */
  publicServersOnly?: boolean;
}

/**
 * "Connect Google mailbox" and "Connect Microsoft 365 mailbox" (docs/email.md): OAuth 2.0 authorization code with
 * PKCE (S256) and a single-use state, as the X connect does. `begin` gives the URL to open; `complete` spends the
 * state, exchanges the code, reads the address from the ID token, logs in to SMTP and IMAP with XOAUTH2 (nothing is
 * saved unless both work), and saves the mailbox with its tokens encrypted.
 */
export function createMailboxConnectService(deps: MailboxConnectDeps) {
  const { db, config, cipher, clock } = deps;
  const callbackUrl = () => `${config.publicBase.url()}${MAILBOX_CALLBACK_PATH}`;

  function requireApp(provider: MailOauthProvider) {
    const app = oauthApp(config, provider);
    const env = `OUTREACH_${provider.toUpperCase()}`;
    if (!app)
      throw fail(
        503,
        'mailbox_oauth_not_configured',
        `connecting a ${PROVIDER_NAMES[provider]} mailbox needs ${env}_CLIENT_ID and ${env}_CLIENT_SECRET (docs/email.md)`,
      );
    return app;
  }

  /** A per-mailbox server URL: checked like a mailbox's, never with credentials (the address is its user). */
  function serverOverride(value: string | null | undefined, field: 'smtpUrl' | 'imapUrl'): string | null {
    if (value == null || value === '') return null;
    let u: URL;
    try {
      u = new URL(value);
    } catch {
      throw fail(400, 'invalid_mailbox', `${field} must be a ${field === 'smtpUrl' ? 'smtp:// or smtps://' : 'imap:// or imaps://'} URL`);
    }
    if (u.username || u.password)
      throw fail(400, 'invalid_mailbox', `${field} must not carry a user name or password: the mailbox address logs in with XOAUTH2`);
    return u.toString();
  }

  /** The server URL with the address as its user (percent-encoded), for XOAUTH2. */
  function withUser(base: string, address: string): string {
    const u = new URL(base);
    u.username = encodeURIComponent(address);
    return u.toString().replace(/\/$/, '');
  }

  return {
    callbackUrl,
    /** Which providers can be connected here (their client id and secret are set). */
    configured: (): MailOauthProvider[] => MAIL_OAUTH_PROVIDERS.filter((p) => oauthApp(config, p) !== null),

    async begin(input: BeginMailboxConnect): Promise<{ authorizeUrl: string; expiresAt: Date }> {
      const app = requireApp(input.provider);
      if (!isUuid(input.workspaceId) || !(await repo.workspaceExists(db, input.workspaceId))) throw notFound('workspace');
      const smtpUrl = serverOverride(input.smtpUrl, 'smtpUrl');
      const imapUrl = serverOverride(input.imapUrl, 'imapUrl');
      if (input.publicServersOnly) {
        try {
          if (smtpUrl) await pinServer(deps, 'smtp', smtpUrl);
          if (imapUrl) await pinServer(deps, 'imap', imapUrl);
        } catch (e) {
          if (!(e instanceof MailboxError)) throw e;
          if (e.code === 'server_not_allowed') throw new ServerNotAllowedError(e.extra.logDetail ?? e.message);
          throw fail(400, 'invalid_mailbox', e.message);
        }
      }
      if (input.accountId && !(await repo.accountInWorkspace(db, input.workspaceId, input.accountId)))
        throw fail(404, 'account_not_found', `messaging account ${input.accountId} not found in this workspace`);
      const details: MailboxConnectDetails = { provider: input.provider, accountId: input.accountId ?? null, smtpUrl, imapUrl };
      const { state, challenge, expiresAt } = await beginOauthConnect(
        { db, cipher, clock },
        { flow: 'mailbox', workspaceId: input.workspaceId, redirectUri: callbackUrl(), sessionIdHash: input.sessionIdHash, details },
      );
      // Google issues a refresh token only for offline access, and again on a reconnect only with consent asked.
      const extra: Record<string, string> = input.provider === 'google' ? { access_type: 'offline', prompt: 'consent' } : { response_mode: 'query' };
      const authorizeUrl = authorizeUrlOf(app.authorizeUrl, {
        clientId: app.clientId,
        redirectUri: callbackUrl(),
        scopes: MAIL_SCOPES[input.provider],
        state,
        challenge,
        extra,
      });
      return { authorizeUrl, expiresAt };
    },

    /** The provider sent the person back. The state is spent first (single use, whatever happens next). */
    async complete(input: OauthCallback): Promise<{ workspaceId: string; mailbox: MailboxView }> {
      const back = await completeOauthConnect<MailboxConnectDetails>(
        { db, cipher, clock },
        { flow: 'mailbox', codePrefix: 'mailbox_connect', providerName: (d) => PROVIDER_NAMES[d.provider], input },
      );
      const pending = { ...back.details, workspaceId: back.workspaceId, redirectUri: back.redirectUri, sessionIdHash: back.sessionIdHash };
      const name = PROVIDER_NAMES[pending.provider];
      const verifier = back.codeVerifier;
      const now = clock.now();
      const app = requireApp(pending.provider);

      const answer = await postTokenForm(app, {
        grant_type: 'authorization_code',
        code: back.code,
        redirect_uri: pending.redirectUri,
        code_verifier: verifier,
        client_id: app.clientId,
        client_secret: app.clientSecret,
      }).catch((e: unknown) => {
        if (e instanceof MailboxOauthUnavailableError) throw fail(502, 'mailbox_provider_unreachable', `${name} did not answer the token request; try again`);
        throw e;
      });
      const t = answer.body;
      if (answer.status !== 200 || typeof t?.access_token !== 'string' || !t.access_token)
        throw fail(502, 'mailbox_connect_token_refused', `${name} refused the authorization code (HTTP ${answer.status}); start again from Accounts`);
      if (typeof t.refresh_token !== 'string' || !t.refresh_token)
        throw fail(
          502,
          'mailbox_connect_no_refresh_token',
          `${name} returned no refresh token; remove the app's access in the account's security settings and connect again`,
        );
      const address = addressFromIdToken(t.id_token);
      if (!address) throw fail(502, 'mailbox_connect_address_unknown', `${name} did not say which mailbox was connected (no e-mail in the ID token)`);

      const hosts = MAIL_HOSTS[pending.provider];
      const mailbox = {
        address,
        smtpUrl: withUser(pending.smtpUrl ?? hosts.smtp, address),
        imapUrl: withUser(pending.imapUrl ?? hosts.imap, address),
        oauth: {
          provider: pending.provider,
          accessToken: t.access_token,
          refreshToken: t.refresh_token,
          expiresAt: new Date(now.getTime() + (typeof t.expires_in === 'number' && t.expires_in > 0 ? t.expires_in : 3600) * 1000),
        },
      };
      const problem = mailboxInputProblem(mailbox, 'mailbox');
      if (problem) throw fail(400, 'invalid_mailbox', problem);
      try {
        // Both logins are tried with the new token before anything is saved; their failure names the server, never a token.
        // A connect begun in the console (bound to its session) with servers typed there: the guard again, pinned.
        const publicServersOnly = pending.sessionIdHash !== null && (pending.smtpUrl !== null || pending.imapUrl !== null);
        const view = await addMailbox(
          { db, cipher, config, resolver: deps.resolver },
          { ...mailbox, workspaceId: pending.workspaceId, accountId: pending.accountId ?? undefined, publicServersOnly },
        );
        return { workspaceId: pending.workspaceId, mailbox: view };
      } catch (e) {
        if (e instanceof MailboxError && e.code === 'server_not_allowed') throw new ServerNotAllowedError(e.extra.logDetail ?? e.message);
        if (e instanceof MailboxError) throw fail(e.code === 'account_not_found' ? 404 : 502, e.code, e.message);
        throw e;
      }
    },
  };
}
export type MailboxConnectService = ReturnType<typeof createMailboxConnectService>;

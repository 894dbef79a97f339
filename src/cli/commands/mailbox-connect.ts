import type { Command } from 'commander';
import { CliError, type AdminBackend, type MailboxConnectStart } from '../admin-backend.js';
import { MAIL_OAUTH_PROVIDERS, type MailOauthProvider } from '../../config/mail-oauth.js';
import { MAIL_PROVIDER_NAMES as NAMES, type MailboxView } from '../../channels/email/index.js';

interface Deps {
  withBackend<T>(fn: (b: AdminBackend) => Promise<T>): Promise<T>;
  out(json: boolean, value: unknown, human: () => string): void;
}

/** How a mailbox signs in, for `outreach mailbox list`. */
export function mailboxAuthLabel(auth: MailboxView['auth']): string {
  return auth === 'password' ? 'password' : `${auth} (OAuth 2.0)`;
}

/** What `outreach mailbox remove` did, including whether anything is left to do at the provider. */
export function describeMailboxRemoval(mailbox: string, revokedAtProvider: boolean | null | undefined): string {
  if (revokedAtProvider === true) return `Removed mailbox ${mailbox}; its tokens are deleted and its access was revoked at the provider (Google)`;
  if (revokedAtProvider === false)
    return (
      `Removed mailbox ${mailbox}; its tokens are deleted here, but the access was not revoked at the provider (Microsoft offers no revocation, ` +
      'or Google did not confirm it): remove the app in the account (Google: myaccount.google.com/permissions; Microsoft: "My apps", or the tenant admin)'
    );
  return `Removed mailbox ${mailbox} and its stored credentials`;
}

export function describeMailboxConnect(provider: MailOauthProvider, s: MailboxConnectStart): string {
  const env = `OUTREACH_${provider.toUpperCase()}_CLIENT_ID`;
  return [
    s.authorizeUrl,
    `Open this URL in a browser signed in to the ${NAMES[provider]} mailbox, and approve. ${NAMES[provider]} then sends the browser to`,
    `  ${s.callbackUrl}`,
    `which must be a redirect URI registered with the app of ${env}, and must reach this server (OUTREACH_PUBLIC_URL).`,
    `The mailbox is saved once SMTP and IMAP both sign in with its token. The link is good once, until ${s.expiresAt}.`,
  ].join('\n');
}

/** `outreach mailbox connect`: the URL that connects a Google or Microsoft 365 mailbox with OAuth 2.0 (docs/email.md). */
export function registerMailboxConnect(mailbox: Command, deps: Deps) {
  mailbox
    .command('connect')
    .description(
      'print the URL that connects a Google or Microsoft 365 mailbox with OAuth 2.0 (PKCE), for a person to open in a browser; tokens are stored encrypted',
    )
    .requiredOption('--provider <provider>', `the mailbox's provider: ${MAIL_OAUTH_PROVIDERS.join(' or ')}`)
    .requiredOption('--workspace <id>', 'the workspace the mailbox joins')
    .option('--account <id>', 'messaging account (onb_…) that carries it; default: a new e-mail account')
    .option('--smtp-url <url>', "SMTP server without credentials (smtps://host:465 or smtp://host:587); default: the provider's")
    .option('--imap-url <url>', "IMAP server without credentials (imaps://host:993); default: the provider's")
    .option('--json', 'machine-readable output')
    .action(async (opts: { provider: string; workspace: string; account?: string; smtpUrl?: string; imapUrl?: string; json?: boolean }) => {
      const provider = opts.provider.toLowerCase();
      if (!(MAIL_OAUTH_PROVIDERS as readonly string[]).includes(provider))
        throw new CliError(`--provider must be one of: ${MAIL_OAUTH_PROVIDERS.join(', ')} (not ${JSON.stringify(opts.provider)})`);
      const p = provider as MailOauthProvider;
      const started = await deps.withBackend((b) =>
        b.startMailboxConnect({
          workspaceId: opts.workspace,
          provider: p,
          ...(opts.account !== undefined && { accountId: opts.account }),
          ...(opts.smtpUrl !== undefined && { smtpUrl: opts.smtpUrl }),
          ...(opts.imapUrl !== undefined && { imapUrl: opts.imapUrl }),
        }),
      );
      deps.out(!!opts.json, started, () => describeMailboxConnect(p, started));
    });
}

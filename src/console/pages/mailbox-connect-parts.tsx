import { MAIL_HOSTS, MAIL_PROVIDER_NAMES, type MailboxView } from '../../channels/email/index.js';
import { MAIL_OAUTH_PROVIDERS, type MailOauthProvider } from '../../config/mail-oauth.js';
import { CsrfField } from '../layout.js';

// The mailbox connect's pieces that the Accounts and mailbox pages show (mailbox-connect.tsx has the routes), kept
// apart so those pages and the routes never import each other.

/** How a mailbox signs in, in words (the mailbox page, the disconnect page). */
export function mailboxAuthText(auth: MailboxView['auth']): string {
  return auth === 'password' ? 'a password (stored encrypted)' : `${MAIL_PROVIDER_NAMES[auth]} (OAuth 2.0)`;
}

/** What a Disconnect did, said so a person knows whether anything is left to do at the provider. */
export function disconnectNotice(view: Pick<MailboxView, 'address' | 'auth'>, revokedAtProvider: boolean | null): string {
  if (view.auth === 'password' || revokedAtProvider === null) return `Removed mailbox ${view.address} and its stored password.`;
  const name = MAIL_PROVIDER_NAMES[view.auth];
  if (revokedAtProvider) return `Disconnected ${view.address}: its tokens are deleted here and ${name} revoked the access it had granted.`;
  if (view.auth === 'microsoft')
    return (
      `Disconnected ${view.address}: its tokens are deleted here. Microsoft offers no way for this service to revoke the access: ` +
      'remove the app under "My apps" in the Microsoft account (myapps.microsoft.com), or ask the tenant admin to.'
    );
  return `Disconnected ${view.address}: its tokens are deleted here, but ${name} did not confirm the revocation: remove the app's access at myaccount.google.com/permissions.`;
}

/** Where an operator reads how to register the Google and Microsoft apps. */
export const OAUTH_DOCS = { file: 'docs/email.md', section: 'Connect Google or Microsoft 365 (OAuth 2.0, issue 29)' };

/**
 * The connect buttons on the Accounts page, one per provider whose app is configured; for each one that is not, the
 * exact environment variables an operator sets and the callback URL to register (never silently hidden).
 */
export function MailboxConnectButtons(props: { configured: readonly MailOauthProvider[]; csrfToken: string; callbackUrl?: string }) {
  const missing = MAIL_OAUTH_PROVIDERS.filter((p) => !props.configured.includes(p));
  return (
    <>
      {props.configured.map((p) => (
        <form method="post" action="/console/accounts/mailbox/connect" class="mailbox-connect" aria-label={`Connect a ${MAIL_PROVIDER_NAMES[p]} mailbox`}>
          <CsrfField token={props.csrfToken} />
          <input type="hidden" name="provider" value={p} />
          <button type="submit" class="primary" safe>
            {`Connect ${MAIL_PROVIDER_NAMES[p]} mailbox`}
          </button>
          <details>
            <summary>Servers (advanced)</summary>
            <p class="meta" safe>
              {`Empty: ${MAIL_PROVIDER_NAMES[p]}'s own (${MAIL_HOSTS[p].smtp}, ${MAIL_HOSTS[p].imap}). No user name or password: the mailbox signs in with its token.`}
            </p>
            <label for={`mc-${p}-smtp`}>SMTP server URL</label>{' '}
            <input id={`mc-${p}-smtp`} name="smtpUrl" type="url" maxlength="2048" autocomplete="off" placeholder={MAIL_HOSTS[p].smtp} />{' '}
            <label for={`mc-${p}-imap`}>IMAP server URL</label>{' '}
            <input id={`mc-${p}-imap`} name="imapUrl" type="url" maxlength="2048" autocomplete="off" placeholder={MAIL_HOSTS[p].imap} />
          </details>
        </form>
      ))}
      {missing.length > 0 ? (
        <div class="oauth-setup" role="note" aria-label="Connecting with OAuth needs setup">
          <p safe>{`Connecting a ${missing.map((p) => MAIL_PROVIDER_NAMES[p]).join(' or ')} mailbox with OAuth needs an operator to set:`}</p>
          <ul>
            {missing.map((p) => (
              <li>
                <code safe>{`OUTREACH_${p.toUpperCase()}_CLIENT_ID`}</code> and <code safe>{`OUTREACH_${p.toUpperCase()}_CLIENT_SECRET`}</code>{' '}
                <span safe>{`(${MAIL_PROVIDER_NAMES[p]})`}</span>
              </li>
            ))}
          </ul>
          <p>
            {props.callbackUrl ? (
              <>
                and register <code safe>{props.callbackUrl}</code> as the app’s redirect URI.{' '}
              </>
            ) : (
              ''
            )}
            How: <code safe>{OAUTH_DOCS.file}</code>, section <cite safe>{OAUTH_DOCS.section}</cite>. Until then, use Add mailbox (SMTP/IMAP) with an app
            password.
          </p>
        </div>
      ) : (
        ''
      )}
    </>
  );
}

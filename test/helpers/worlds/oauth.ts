import { startDnsFake, type DnsFake } from '../dns-server.js';
import { startDovecot, type Dovecot, type DovecotUser } from '../dovecot.js';
import { startOAuthProviderFake, type OAuthProviderFake, type OAuthProviderFakeOptions } from '../oauth-provider-fake.js';
import { startSmtpReceiver, type SmtpReceiver } from '../smtp-receiver.js';

// The OAuth provider world: the provider fake (test/helpers/oauth-provider-fake.ts) standing for Google and Microsoft,
// an SMTP receiver that takes XOAUTH2 with the fake's tokens, a Dovecot whose oauth2 passdb asks the fake's
// introspection endpoint, and a DNS server that knows nothing (the mailbox page checks the sending domain).

/**
 * The settings that point the service's OAuth apps at `fake`: both providers by default, on one fake (so one Dovecot
 * checks every token); Microsoft has no revocation endpoint.
 */
export function oauthProviderEnv(fake: OAuthProviderFake, which: ('google' | 'microsoft')[] = ['google', 'microsoft']): Record<string, string> {
  return {
    ...(which.includes('google') && {
      OUTREACH_GOOGLE_CLIENT_ID: fake.clientId,
      OUTREACH_GOOGLE_CLIENT_SECRET: fake.clientSecret,
      OUTREACH_GOOGLE_AUTHORIZE_URL: fake.authorizeUrl,
      OUTREACH_GOOGLE_TOKEN_URL: fake.tokenUrl,
      OUTREACH_GOOGLE_REVOKE_URL: fake.revokeUrl,
    }),
    ...(which.includes('microsoft') && {
      OUTREACH_MICROSOFT_CLIENT_ID: fake.clientId,
      OUTREACH_MICROSOFT_CLIENT_SECRET: fake.clientSecret,
      OUTREACH_MICROSOFT_AUTHORIZE_URL: fake.authorizeUrl,
      OUTREACH_MICROSOFT_TOKEN_URL: fake.tokenUrl,
    }),
  };
}

export interface OAuthWorld {
  fake: OAuthProviderFake;
  smtp: SmtpReceiver;
  /** Absent unless asked for (`dns: true`). */
  dns: DnsFake | null;
  /** Absent when no `users` were given (Dovecot missing on this machine, say). */
  dovecot: Dovecot | null;
  close(): Promise<void>;
}

/**
 * Starts the provider fake (`fake` options), the XOAUTH2 SMTP receiver, the DNS fake when `dns`, and Dovecot with
 * `users` checking tokens at the fake when `users` is given.
 */
export async function startOAuthWorld(o: { fake?: OAuthProviderFakeOptions; users?: DovecotUser[]; dns?: boolean } = {}): Promise<OAuthWorld> {
  const fake = await startOAuthProviderFake(o.fake);
  const smtp = await startSmtpReceiver({ xoauth2: fake.verify });
  const dns = o.dns ? await startDnsFake() : null;
  const dovecot = o.users ? await startDovecot(o.users, { oauth2: { introspectionUrl: fake.introspectUrl } }) : null;
  return {
    fake,
    smtp,
    dns,
    dovecot,
    async close() {
      await dovecot?.stop();
      await smtp?.close();
      await dns?.close();
      await fake?.close();
    },
  };
}

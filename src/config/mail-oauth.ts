import { Type } from 'typebox';

/**
 * The OAuth apps that connect Google and Microsoft 365 mailboxes (issue 29, docs/email.md "Connect Google or
 * Microsoft 365"). The endpoint URLs default to the providers' own and are overridable (tests point them at a fake).
 */
export const MAIL_OAUTH_ENV = {
  OUTREACH_GOOGLE_CLIENT_ID: Type.Optional(Type.String({ minLength: 1 })),
  OUTREACH_GOOGLE_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  OUTREACH_GOOGLE_AUTHORIZE_URL: Type.String({ pattern: '^https?://', default: 'https://accounts.google.com/o/oauth2/v2/auth' }),
  OUTREACH_GOOGLE_TOKEN_URL: Type.String({ pattern: '^https?://', default: 'https://oauth2.googleapis.com/token' }),
  OUTREACH_GOOGLE_REVOKE_URL: Type.String({ pattern: '^https?://', default: 'https://oauth2.googleapis.com/revoke' }),
  OUTREACH_MICROSOFT_CLIENT_ID: Type.Optional(Type.String({ minLength: 1 })),
  OUTREACH_MICROSOFT_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  OUTREACH_MICROSOFT_TENANT: Type.String({ pattern: '^[A-Za-z0-9.-]+$', default: 'common' }),
  OUTREACH_MICROSOFT_AUTHORIZE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  OUTREACH_MICROSOFT_TOKEN_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
} as const;

export type MailOauthProvider = 'google' | 'microsoft';
export const MAIL_OAUTH_PROVIDERS: readonly MailOauthProvider[] = ['google', 'microsoft'];

export interface MailOauthApp {
  readonly clientId: string | null;
  readonly clientSecret: string | null;
  readonly authorizeUrl: string;
  readonly tokenUrl: string;
  /** RFC 7009 revocation; null where the provider has none (Microsoft's identity platform). */
  readonly revokeUrl: string | null;
}

export type MailOauthConfig = Readonly<Record<MailOauthProvider, MailOauthApp>>;

type MailOauthEnv = { readonly [K in keyof typeof MAIL_OAUTH_ENV]?: string };

export function mailOauthConfigOf(e: MailOauthEnv): MailOauthConfig {
  const tenant = e.OUTREACH_MICROSOFT_TENANT ?? 'common';
  return Object.freeze({
    google: Object.freeze({
      clientId: e.OUTREACH_GOOGLE_CLIENT_ID ?? null,
      clientSecret: e.OUTREACH_GOOGLE_CLIENT_SECRET ?? null,
      authorizeUrl: e.OUTREACH_GOOGLE_AUTHORIZE_URL ?? 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: e.OUTREACH_GOOGLE_TOKEN_URL ?? 'https://oauth2.googleapis.com/token',
      revokeUrl: e.OUTREACH_GOOGLE_REVOKE_URL ?? 'https://oauth2.googleapis.com/revoke',
    }),
    microsoft: Object.freeze({
      clientId: e.OUTREACH_MICROSOFT_CLIENT_ID ?? null,
      clientSecret: e.OUTREACH_MICROSOFT_CLIENT_SECRET ?? null,
      authorizeUrl: e.OUTREACH_MICROSOFT_AUTHORIZE_URL ?? `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/authorize`,
      tokenUrl: e.OUTREACH_MICROSOFT_TOKEN_URL ?? `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/token`,
      revokeUrl: null,
    }),
  });
}

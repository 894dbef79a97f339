import type { MailOauthProvider } from '../../../config/mail-oauth.js';

/**
 * A mailbox's connection URLs carry credentials (`smtp://user:pass@host:port`). They are validated here, stored
 * encrypted (mailboxes.repository.ts), and shown anywhere only through `redactUrl`.
 */
export type MailboxHealth = 'unknown' | 'ok' | 'auth_failed' | 'unreachable';

export interface MailboxInput {
  address: string;
  displayName?: string | null;
  smtpUrl: string;
  imapUrl: string;
  sentFolder?: string | null;
  /**
   * The authserv-id whose Authentication-Results headers the inbox watcher believes for this mailbox, besides its
   * provider's own (Gmail `mx.google.com`, Microsoft 365's id-less form): a message they say failed DMARC is never
   * applied as an opt-out, a bounce or a snooze (docs/email.md).
   */
  trustedAuthservId?: string | null;
  /** The DKIM selector the domain check reads (`<selector>._domainkey`); absent: the provider's usual ones. */
  dkimSelector?: string | null;
  /** A mailbox connected with OAuth 2.0 (Google, Microsoft 365): its URLs carry only the user name; XOAUTH2 logs in. */
  oauth?: MailboxOauthInput | null;
}

export interface MailboxOauthInput {
  provider: MailOauthProvider;
  accessToken: string;
  refreshToken: string;
  /** ISO 8601 (world files) or a Date (a connect). */
  expiresAt: string | Date;
}

/** What may be shown: never a URL's password. */
export interface MailboxView {
  id: string;
  accountId: string;
  address: string;
  displayName: string | null;
  smtp: string;
  imap: string;
  sentFolder: string | null;
  trustedAuthservId: string | null;
  /** `password`, or the OAuth provider that connected it (never a token). */
  auth: 'password' | MailOauthProvider;
  health: MailboxHealth;
  healthDetail: string | null;
}

const ADDRESS_RE = /^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/;
const AUTHSERV_ID_RE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** The environment switch that lets a mailbox off loopback talk without TLS (`?tls=none`), for a lab relay only. */
export const ALLOW_PLAINTEXT_ENV = 'OUTREACH_MAILBOX_ALLOW_PLAINTEXT';

/** Whether OUTREACH_MAILBOX_ALLOW_PLAINTEXT=1 is set in this process (read when a mailbox is checked or connected). */
export function plaintextAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[ALLOW_PLAINTEXT_ENV] === '1';
}

/** localhost, 127.0.0.0/8 and ::1: a connection that never leaves the machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * How a mail URL protects its login (docs/email.md "Transport"): `smtps:`/`imaps:` implicit TLS; `smtp:`/`imap:`
 * STARTTLS, required off loopback (opportunistic on loopback, as a local test server has no certificate); `?tls=none`
 * no TLS at all, which off loopback only OUTREACH_MAILBOX_ALLOW_PLAINTEXT=1 permits.
 */
export function transportOf(url: URL, allowPlaintext = plaintextAllowed()): 'implicit' | 'starttls_required' | 'starttls_if_offered' | 'plaintext' {
  const implicit = url.protocol === 'smtps:' || url.protocol === 'imaps:';
  if (implicit) return 'implicit';
  const loopback = isLoopbackHost(url.hostname);
  if (url.searchParams.get('tls') === 'none' && (loopback || allowPlaintext)) return 'plaintext';
  return loopback ? 'starttls_if_offered' : 'starttls_required';
}

/** The first problem with a mailbox definition, naming its field, or null when it is usable. */
export function mailboxInputProblem(m: unknown, at = 'mailbox', opts: { allowPlaintext?: boolean } = {}): string | null {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return `${at} must be an object`;
  const o = m as Record<string, unknown>;
  if (typeof o.address !== 'string' || !ADDRESS_RE.test(o.address)) return `${at}.address must be an e-mail address`;
  if (o.displayName != null && typeof o.displayName !== 'string') return `${at}.displayName must be a string`;
  if (o.sentFolder != null && (typeof o.sentFolder !== 'string' || o.sentFolder.trim() === '')) return `${at}.sentFolder must be a folder name`;
  if (o.trustedAuthservId != null && (typeof o.trustedAuthservId !== 'string' || o.trustedAuthservId.length > 253 || !AUTHSERV_ID_RE.test(o.trustedAuthservId)))
    return `${at}.trustedAuthservId must be a host name such as mx.acme.example (the authserv-id of Authentication-Results)`;
  if (o.dkimSelector != null && (typeof o.dkimSelector !== 'string' || !DKIM_SELECTOR_RE.test(o.dkimSelector)))
    return `${at}.dkimSelector must be a DNS label such as google or selector1 (read at <selector>._domainkey.<domain>)`;
  const allowPlaintext = opts.allowPlaintext ?? plaintextAllowed();
  const smtp = urlProblem(o.smtpUrl, ['smtp:', 'smtps:'], allowPlaintext);
  if (smtp) return `${at}.smtpUrl ${smtp}`;
  const imap = urlProblem(o.imapUrl, ['imap:', 'imaps:'], allowPlaintext);
  if (imap) return `${at}.imapUrl ${imap}`;
  if (o.oauth != null) {
    const problem = oauthProblem(o.oauth, `${at}.oauth`);
    if (problem) return problem;
    for (const k of ['smtpUrl', 'imapUrl'] as const) {
      const u = new URL(o[k] as string);
      if (u.password) return `${at}.${k} must not carry a password when ${at}.oauth is given (XOAUTH2 logs in with the access token)`;
      if (!u.username) return `${at}.${k} must name the user (the mailbox address, percent-encoded) when ${at}.oauth is given`;
    }
  }
  for (const k of Object.keys(o)) {
    if (!MAILBOX_FIELDS.includes(k)) return `${at}.${k} is not a mailbox field (allowed: ${MAILBOX_FIELDS.join(', ')})`;
  }
  return null;
}

const MAILBOX_FIELDS = ['address', 'displayName', 'smtpUrl', 'imapUrl', 'sentFolder', 'trustedAuthservId', 'dkimSelector', 'oauth'];
const DKIM_SELECTOR_RE = /^[a-z0-9]([a-z0-9_-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9_-]{0,61}[a-z0-9])?)*$/i;

function oauthProblem(v: unknown, at: string): string | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return `${at} must be an object`;
  const o = v as Record<string, unknown>;
  if (o.provider !== 'google' && o.provider !== 'microsoft') return `${at}.provider must be one of: google, microsoft`;
  for (const k of ['accessToken', 'refreshToken'] as const)
    if (typeof o[k] !== 'string' || o[k] === '' || o[k].length > 8192) return `${at}.${k} is required (a non-empty string)`;
  const exp = o.expiresAt;
  if (!(exp instanceof Date) && (typeof exp !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(exp) || Number.isNaN(Date.parse(exp))))
    return `${at}.expiresAt is required (an ISO 8601 date-time such as 2026-12-01T00:00:00Z)`;
  for (const k of Object.keys(o))
    if (!['provider', 'accessToken', 'refreshToken', 'expiresAt'].includes(k))
      return `${at}.${k} is not an oauth field (allowed: provider, accessToken, refreshToken, expiresAt)`;
  return null;
}

function urlProblem(value: unknown, protocols: string[], allowPlaintext: boolean): string | null {
  if (typeof value !== 'string') return `must be a ${protocols.join(' or ')}// URL`;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return `must be a ${protocols.join(' or ')}// URL`;
  }
  if (!protocols.includes(u.protocol)) return `must use ${protocols.map((p) => p + '//').join(' or ')}`;
  if (!u.hostname) return 'must name a host';
  const tls = u.searchParams.get('tls');
  if (tls !== null && tls !== 'none') return 'takes tls=none or no tls setting (implicit TLS: smtps:// or imaps://; smtp:// and imap:// use STARTTLS)';
  if (tls === 'none' && (u.protocol === 'smtps:' || u.protocol === 'imaps:')) return `cannot combine ${u.protocol}// (implicit TLS) with tls=none`;
  if (tls === 'none' && !isLoopbackHost(u.hostname) && !allowPlaintext)
    return (
      `asks for no TLS (tls=none) to ${u.hostname}, which would send the password in cleartext: use ${protocols[1]}// (implicit TLS) ` +
      `or ${protocols[0]}// (STARTTLS, required off loopback), or set ${ALLOW_PLAINTEXT_ENV}=1 for a lab relay`
    );
  return null;
}

/** The URL with its password replaced by `***` (and never a query string), for lists, logs and errors. */
export function redactUrl(value: string): string {
  try {
    const u = new URL(value);
    if (u.password) u.password = '***';
    u.search = '';
    return u.toString();
  } catch {
    return '(invalid URL)';
  }
}

/** Removes any password of the given URLs from a message (an error text from a library may quote the URL). */
export function redactSecrets(message: string, urls: string[]): string {
  let out = message;
  for (const raw of urls) {
    try {
      const u = new URL(raw);
      const pass = decodeURIComponent(u.password);
      if (pass) out = out.split(pass).join('***');
      if (u.password && u.password !== pass) out = out.split(u.password).join('***');
    } catch {
      /* not a URL: nothing to hide */
    }
  }
  return out;
}

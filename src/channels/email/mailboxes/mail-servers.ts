import { isIP } from 'node:net';
import nodemailer from 'nodemailer';
import { ImapFlow } from 'imapflow';
import { isLoopbackHost, redactSecrets, transportOf, type MailboxHealth } from './mailboxes.schemas.js';

// A mailbox's two mail servers: the URL a person's form fields make and read back, the nodemailer and imapflow options
// a URL makes, and the login checks (SMTP verify, IMAP INBOX) run before a mailbox is saved or after it is edited.

export interface ConnectionCheck {
  ok: boolean;
  /** auth_failed when the server refused the login, unreachable for anything else. */
  health: MailboxHealth;
  /** Why, with every password removed. */
  detail: string | null;
}

const TIMEOUT_MS = 10_000;
/** nodemailer and imapflow name these three the same: connect, server greeting, and a quiet socket. */
const CONNECTION_TIMEOUTS = { connectionTimeout: TIMEOUT_MS, greetingTimeout: TIMEOUT_MS, socketTimeout: 30_000 } as const;

function isAuthError(e: unknown): boolean {
  const err = e as { code?: string; responseCode?: number; authenticationFailed?: boolean; serverResponseCode?: string; message?: string };
  return (
    err?.code === 'EAUTH' ||
    err?.responseCode === 535 ||
    err?.authenticationFailed === true ||
    err?.serverResponseCode === 'AUTHENTICATIONFAILED' ||
    /auth/i.test(err?.message ?? '')
  );
}

function describe(e: unknown, urls: string[], token?: string): string {
  const err = e as { message?: string; response?: string; responseText?: string };
  const text = redactSecrets(String(err?.responseText || err?.response || err?.message || String(e)), urls);
  return (token ? text.split(token).join('***') : text).slice(0, 300);
}

/** Where a mail URL points and how it logs in: `secureProtocol` (smtps:, imaps:) is implicit TLS on `tlsPort`. */
function mailServerOf(url: string, secureProtocol: string, tlsPort: number, plainPort: number) {
  const u = new URL(url);
  const secure = u.protocol === secureProtocol;
  const endpoint = { host: u.hostname, port: u.port ? Number(u.port) : secure ? tlsPort : plainPort, secure };
  return { u, endpoint, transport: transportOf(u), auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } };
}

/**
 * nodemailer options for a mailbox's SMTP URL: smtps:// is implicit TLS; smtp:// is STARTTLS, required off loopback
 * (`requireTLS`: a server that does not offer it, or a path that strips it, fails the connection before the login);
 * `?tls=none` is cleartext, on loopback or with OUTREACH_MAILBOX_ALLOW_PLAINTEXT=1 only (otherwise STARTTLS is
 * still required: a stored URL never weakens what this process allows).
 */
export function smtpTransportOptions(smtpUrl: string, pool: boolean, accessToken?: string, pin?: PinnedAddress) {
  const { u, endpoint, transport, auth } = mailServerOf(smtpUrl, 'smtps:', 465, 587);
  const servername = pin && isIP(endpoint.host.replace(/^\[|\]$/g, '')) === 0 ? endpoint.host : undefined;
  return {
    ...endpoint,
    // Pinned: connect to the address the guard checked; the name stays for SNI and the certificate check.
    ...(pin && { host: pin.address }),
    ...(servername && { servername }),
    requireTLS: transport === 'starttls_required',
    ignoreTLS: transport === 'plaintext',
    // An OAuth mailbox logs in with XOAUTH2: the URL's user name and the access token (no refresh here: oauth-tokens.ts).
    auth: accessToken ? { type: 'OAuth2' as const, user: auth.user, accessToken } : u.username ? auth : undefined,
    // Test and local servers use self-signed certificates; the credential check is the login itself.
    tls: {
      rejectUnauthorized: u.searchParams.get('tls_reject_unauthorized') !== 'false' && !isLocal(endpoint.host),
      ...(servername && { servername }),
    },
    pool,
    maxConnections: 2,
    ...CONNECTION_TIMEOUTS,
    logger: false,
  } as const;
}

/** imapflow options for a mailbox's IMAP URL: imaps:// implicit TLS; imap:// STARTTLS (`doSTARTTLS`) as for SMTP. */
export function imapClientOptions(imapUrl: string, accessToken?: string, pin?: PinnedAddress) {
  const { endpoint, transport, auth } = mailServerOf(imapUrl, 'imaps:', 993, 143);
  const servername = pin && isIP(endpoint.host.replace(/^\[|\]$/g, '')) === 0 ? endpoint.host : undefined;
  return {
    ...endpoint,
    ...(pin && { host: pin.address }),
    ...(servername && { servername }),
    // true: STARTTLS or no connection; false: cleartext; undefined (loopback): STARTTLS when the server offers it.
    doSTARTTLS: transport === 'starttls_required' ? true : transport === 'plaintext' ? false : undefined,
    // imapflow logs in with XOAUTH2 when given an access token instead of a password.
    auth: accessToken ? { user: auth.user, accessToken } : auth,
    tls: { rejectUnauthorized: !isLocal(endpoint.host), ...(servername && { servername }) },
    logger: false as const,
    ...CONNECTION_TIMEOUTS,
  };
}

function isLocal(host: string): boolean {
  return isLoopbackHost(host);
}

/** The address a server's name was resolved to and checked (public-address.ts): the connection goes there. */
export interface PinnedAddress {
  address: string;
}

/** SMTP: connects, says EHLO, (STARTTLS,) logs in and quits (nodemailer's verify). `pin`: connect to that address. */
export async function checkSmtp(smtpUrl: string, accessToken?: string, pin?: PinnedAddress): Promise<ConnectionCheck> {
  const transport = nodemailer.createTransport(smtpTransportOptions(smtpUrl, false, accessToken, pin));
  try {
    await transport.verify();
    return { ok: true, health: 'ok', detail: null };
  } catch (e) {
    return { ok: false, health: isAuthError(e) ? 'auth_failed' : 'unreachable', detail: describe(e, [smtpUrl], accessToken) };
  } finally {
    transport.close();
  }
}

/** IMAP: connects, logs in and opens INBOX read-only, then logs out. `pin`: connect to that address. */
export async function checkImap(imapUrl: string, accessToken?: string, pin?: PinnedAddress): Promise<ConnectionCheck> {
  const client = new ImapFlow(imapClientOptions(imapUrl, accessToken, pin));
  client.on('error', () => {
    /* reported through connect/select below */
  });
  try {
    await client.connect();
    await client.mailboxOpen('INBOX', { readOnly: true });
    return { ok: true, health: 'ok', detail: null };
  } catch (e) {
    return { ok: false, health: isAuthError(e) ? 'auth_failed' : 'unreachable', detail: describe(e, [imapUrl], accessToken) };
  } finally {
    await client.logout().catch(() => client.close());
  }
}

/** How a server's login is protected, as the console's form says it: implicit TLS or STARTTLS (required off loopback). */
export type ServerSecurity = 'tls' | 'starttls';

/** One server as the console's form has it: no credentials (they are the mailbox's user name and password). */
export interface ServerFields {
  host: string;
  port: number;
  security: ServerSecurity;
}

/** The Add mailbox form (console): a password mailbox's fields. `username` empty: the address. */
export interface PasswordMailboxFields {
  address: string;
  displayName?: string | null;
  smtp: ServerFields;
  imap: ServerFields;
  username?: string | null;
  password: string;
}

const HOST_RE = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/** The first problem with a server's fields, naming the form field (`smtpHost`, `imapPort`, …), or null. */
export function serverProblem(kind: 'smtp' | 'imap', f: ServerFields): { field: string; message: string } | null {
  const host = f.host.trim();
  if (!host || (!HOST_RE.test(host) && isIP(host.replace(/^\[|\]$/g, '')) === 0))
    return { field: `${kind}Host`, message: `${kind}Host must be a server name such as ${kind}.example.com` };
  if (!Number.isInteger(f.port) || f.port < 1 || f.port > 65535) return { field: `${kind}Port`, message: `${kind}Port must be a port number from 1 to 65535` };
  if (f.security !== 'tls' && f.security !== 'starttls') return { field: `${kind}Security`, message: `${kind}Security must be tls or starttls` };
  return null;
}

/** A mail URL from a server's fields and the login: smtps:/imaps: for TLS, smtp:/imap: for STARTTLS; credentials percent-encoded. */
export function mailUrlOf(kind: 'smtp' | 'imap', f: ServerFields, user: string, pass: string | null, keepQuery = ''): string {
  const host = f.host.trim();
  const bare = host.replace(/^\[|\]$/g, '');
  const u = new URL(`${kind}${f.security === 'tls' ? 's' : ''}://${isIP(bare) === 6 ? `[${bare}]` : host}:${f.port}`);
  u.username = encodeURIComponent(user);
  if (pass) u.password = encodeURIComponent(pass);
  u.search = keepQuery;
  return u.toString().replace(/\/(\?|$)/, '$1');
}

/** A stored mail URL as the form shows it (no password). */
export function serverFieldsOf(url: string | null): (ServerFields & { username: string }) | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    const secure = u.protocol === 'smtps:' || u.protocol === 'imaps:';
    const smtp = u.protocol.startsWith('smtp');
    const port = u.port ? Number(u.port) : smtp ? (secure ? 465 : 587) : secure ? 993 : 143;
    return { host: u.hostname.replace(/^\[|\]$/g, ''), port, security: secure ? 'tls' : 'starttls', username: decodeURIComponent(u.username) };
  } catch {
    return null;
  }
}

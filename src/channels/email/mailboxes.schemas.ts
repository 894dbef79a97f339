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
  health: MailboxHealth;
  healthDetail: string | null;
}

const ADDRESS_RE = /^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/;

/** The first problem with a mailbox definition, naming its field, or null when it is usable. */
export function mailboxInputProblem(m: unknown, at = 'mailbox'): string | null {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return `${at} must be an object`;
  const o = m as Record<string, unknown>;
  if (typeof o.address !== 'string' || !ADDRESS_RE.test(o.address)) return `${at}.address must be an e-mail address`;
  if (o.displayName != null && typeof o.displayName !== 'string') return `${at}.displayName must be a string`;
  if (o.sentFolder != null && (typeof o.sentFolder !== 'string' || o.sentFolder.trim() === '')) return `${at}.sentFolder must be a folder name`;
  const smtp = urlProblem(o.smtpUrl, ['smtp:', 'smtps:']);
  if (smtp) return `${at}.smtpUrl ${smtp}`;
  const imap = urlProblem(o.imapUrl, ['imap:', 'imaps:']);
  if (imap) return `${at}.imapUrl ${imap}`;
  for (const k of Object.keys(o)) {
    if (!['address', 'displayName', 'smtpUrl', 'imapUrl', 'sentFolder'].includes(k)) return `${at}.${k} is not a mailbox field`;
  }
  return null;
}

function urlProblem(value: unknown, protocols: string[]): string | null {
  if (typeof value !== 'string') return `must be a ${protocols.join(' or ')}// URL`;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return `must be a ${protocols.join(' or ')}// URL`;
  }
  if (!protocols.includes(u.protocol)) return `must use ${protocols.map((p) => p + '//').join(' or ')}`;
  if (!u.hostname) return 'must name a host';
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

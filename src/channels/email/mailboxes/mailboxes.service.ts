import nodemailer from 'nodemailer';
import { ImapFlow } from 'imapflow';
import type { Database } from '../../../db/database.js';
import type { TextCipher } from '../../../lib/crypto.js';
import { newId, newMessagingAccountId } from '../../../lib/ids.js';
import * as repo from './mailboxes.repository.js';
import { pausedMailboxes, resumeMailbox } from '../deliverability/reputation.js';
import { revokeMailboxGrant } from './oauth-tokens.js';
import type { Config } from '../../../config/config.js';
import {
  isLoopbackHost,
  mailboxInputProblem,
  redactSecrets,
  redactUrl,
  transportOf,
  type MailboxHealth,
  type MailboxInput,
  type MailboxView,
} from './mailboxes.schemas.js';

export interface MailboxDeps {
  db: Database;
  cipher: TextCipher;
  /** Needed to revoke an OAuth mailbox's grant when it is removed (its provider's revocation URL). */
  config?: Config;
}

export class MailboxError extends Error {
  constructor(
    readonly code: 'invalid_mailbox' | 'account_not_found' | 'mailbox_not_found' | 'smtp_failed' | 'imap_failed',
    message: string,
  ) {
    super(message);
  }
}

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
export function smtpTransportOptions(smtpUrl: string, pool: boolean, accessToken?: string) {
  const { u, endpoint, transport, auth } = mailServerOf(smtpUrl, 'smtps:', 465, 587);
  return {
    ...endpoint,
    requireTLS: transport === 'starttls_required',
    ignoreTLS: transport === 'plaintext',
    // An OAuth mailbox logs in with XOAUTH2: the URL's user name and the access token (no refresh here: oauth-tokens.ts).
    auth: accessToken ? { type: 'OAuth2' as const, user: auth.user, accessToken } : u.username ? auth : undefined,
    // Test and local servers use self-signed certificates; the credential check is the login itself.
    tls: { rejectUnauthorized: u.searchParams.get('tls_reject_unauthorized') !== 'false' && !isLocal(endpoint.host) },
    pool,
    maxConnections: 2,
    ...CONNECTION_TIMEOUTS,
    logger: false,
  } as const;
}

/** imapflow options for a mailbox's IMAP URL: imaps:// implicit TLS; imap:// STARTTLS (`doSTARTTLS`) as for SMTP. */
export function imapClientOptions(imapUrl: string, accessToken?: string) {
  const { endpoint, transport, auth } = mailServerOf(imapUrl, 'imaps:', 993, 143);
  return {
    ...endpoint,
    // true: STARTTLS or no connection; false: cleartext; undefined (loopback): STARTTLS when the server offers it.
    doSTARTTLS: transport === 'starttls_required' ? true : transport === 'plaintext' ? false : undefined,
    // imapflow logs in with XOAUTH2 when given an access token instead of a password.
    auth: accessToken ? { user: auth.user, accessToken } : auth,
    tls: { rejectUnauthorized: !isLocal(endpoint.host) },
    logger: false as const,
    ...CONNECTION_TIMEOUTS,
  };
}

function isLocal(host: string): boolean {
  return isLoopbackHost(host);
}

export async function checkSmtp(smtpUrl: string, accessToken?: string): Promise<ConnectionCheck> {
  const transport = nodemailer.createTransport(smtpTransportOptions(smtpUrl, false, accessToken));
  try {
    await transport.verify();
    return { ok: true, health: 'ok', detail: null };
  } catch (e) {
    return { ok: false, health: isAuthError(e) ? 'auth_failed' : 'unreachable', detail: describe(e, [smtpUrl], accessToken) };
  } finally {
    transport.close();
  }
}

export async function checkImap(imapUrl: string, accessToken?: string): Promise<ConnectionCheck> {
  const client = new ImapFlow(imapClientOptions(imapUrl, accessToken));
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

export function toView(m: repo.MailboxSecretRow): MailboxView {
  return {
    id: m.id,
    accountId: m.accountId,
    address: m.address,
    displayName: m.displayName,
    smtp: m.smtpUrl ? redactUrl(m.smtpUrl) : '(unreadable with the current key)',
    imap: m.imapUrl ? redactUrl(m.imapUrl) : '(unreadable with the current key)',
    sentFolder: m.sentFolder,
    trustedAuthservId: m.trustedAuthservId,
    auth: m.oauth?.provider ?? 'password',
    health: m.health,
    healthDetail: m.healthDetail,
  };
}

export interface AddMailboxRequest extends MailboxInput {
  workspaceId: string;
  /** The messaging account that carries it; when absent a new `mode: email` account is created. */
  accountId?: string;
  /** Skip the live SMTP/IMAP check (world files; never the CLI). */
  skipCheck?: boolean;
}

/**
 * Adds (or replaces) the mailbox of a messaging account after checking both connections: SMTP first, then IMAP.
 * A failure names the connection and the server's reason, never the password; nothing is saved.
 */
export async function addMailbox(deps: MailboxDeps, req: AddMailboxRequest): Promise<MailboxView> {
  const input: MailboxInput = {
    address: req.address,
    displayName: req.displayName ?? null,
    smtpUrl: req.smtpUrl,
    imapUrl: req.imapUrl,
    sentFolder: req.sentFolder ?? null,
    trustedAuthservId: req.trustedAuthservId ?? null,
    ...(req.dkimSelector !== undefined && { dkimSelector: req.dkimSelector }),
    oauth: req.oauth ?? null,
  };
  const problem = mailboxInputProblem(Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined)), 'mailbox');
  if (problem) throw new MailboxError('invalid_mailbox', problem);

  let accountId = req.accountId;
  if (accountId && !(await repo.accountInWorkspace(deps.db, req.workspaceId, accountId))) {
    throw new MailboxError('account_not_found', `messaging account ${accountId} not found in this workspace`);
  }

  let health: MailboxHealth = 'unknown';
  if (!req.skipCheck) {
    const smtp = await checkSmtp(input.smtpUrl, input.oauth?.accessToken);
    if (!smtp.ok) throw new MailboxError('smtp_failed', `SMTP connection failed (${redactUrl(input.smtpUrl)}): ${smtp.detail}`);
    const imap = await checkImap(input.imapUrl, input.oauth?.accessToken);
    if (!imap.ok) throw new MailboxError('imap_failed', `IMAP connection failed (${redactUrl(input.imapUrl)}): ${imap.detail}`);
    health = 'ok';
  }

  if (!accountId) accountId = await createEmailAccount(deps.db, req.workspaceId, input);
  const id = await repo.upsertMailbox(deps.db, deps.cipher, { id: `mbx_${newId()}`, workspaceId: req.workspaceId, accountId, ...input }, health);
  const saved = await repo.getMailbox(deps.db, deps.cipher, req.workspaceId, id);
  return toView(saved!);
}

async function createEmailAccount(db: Database, workspaceId: string, m: MailboxInput): Promise<string> {
  const id = newMessagingAccountId();
  await db
    .insertInto('messaging_accounts')
    .values({ id, workspace_id: workspaceId, name: m.displayName ? `${m.displayName} (e-mail)` : m.address, mode: 'email' })
    .execute();
  return id;
}

export async function listMailboxViews(deps: MailboxDeps, workspaceId: string): Promise<MailboxView[]> {
  return (await repo.listMailboxes(deps.db, deps.cipher, workspaceId)).map(toView);
}

/**
 * Removes a mailbox. An OAuth mailbox's grant is revoked first where its provider supports it (`revokedAtProvider`:
 * true when confirmed, false when not or not possible, null for a password mailbox); its tokens go with the row.
 */
export async function removeMailbox(deps: MailboxDeps, workspaceId: string, idOrAddress: string): Promise<{ revokedAtProvider: boolean | null }> {
  const revokedAtProvider = deps.config ? await revokeMailboxGrant({ ...deps, config: deps.config }, workspaceId, idOrAddress) : null;
  const n = await repo.deleteMailbox(deps.db, workspaceId, idOrAddress);
  if (n === 0) throw new MailboxError('mailbox_not_found', `mailbox ${idOrAddress} not found in this workspace`);
  return { revokedAtProvider };
}

/**
 * Which mailbox sends a lead's e-mail step (world-file contract): the mailbox of the lead's account; else the
 * lead's sticky mailbox; else one of the workspace's `mode: email` mailboxes, chosen by the lead id so leads spread
 * over them, and kept for the rest of the sequence. null: no mailbox, the sandbox or SMTP_URL carries it.
 */
export async function resolveSendingMailbox(
  deps: MailboxDeps,
  lead: { workspaceId: string; leadId: string; accountId: string | null },
): Promise<repo.MailboxSecretRow | null> {
  if (lead.accountId) {
    const own = await repo.getMailboxByAccount(deps.db, deps.cipher, lead.workspaceId, lead.accountId);
    if (own) return own;
  }
  const sticky = await repo.leadMailboxId(deps.db, lead.workspaceId, lead.leadId);
  if (sticky) {
    const m = await repo.getMailbox(deps.db, deps.cipher, lead.workspaceId, sticky);
    if (m) return m;
  }
  const pool = await repo.listSendingEmailMailboxes(deps.db, deps.cipher, lead.workspaceId);
  if (pool.length === 0) return null;
  const pick = pool[hashIndex(lead.leadId, pool.length)];
  const kept = await repo.stickLeadMailbox(deps.db, lead.workspaceId, lead.leadId, pick.id);
  return kept === pick.id ? pick : ((await repo.getMailbox(deps.db, deps.cipher, lead.workspaceId, kept)) ?? pick);
}

function hashIndex(s: string, n: number): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0;
  return h % n;
}

/** The mailbox operations as one service (services.ts): the CLI, admin routes and world loader go through it. */
export function createMailboxesService(deps: MailboxDeps) {
  return {
    add: (req: AddMailboxRequest) => addMailbox(deps, req),
    list: (workspaceId: string) => listMailboxViews(deps, workspaceId),
    remove: (workspaceId: string, idOrAddress: string) => removeMailbox(deps, workspaceId, idOrAddress),
    resolveSending: (lead: { workspaceId: string; leadId: string; accountId: string | null }) => resolveSendingMailbox(deps, lead),
    /** Lifts a reputation guard's pause (reputation.ts): `outreach mailbox resume`, the console's Resume button. */
    resume: async (workspaceId: string, idOrAddress: string, by: 'cli' | 'console') => {
      const done = await resumeMailbox(deps.db, { workspaceId, mailbox: idOrAddress, by, now: new Date() });
      if (!done) throw new MailboxError('mailbox_not_found', `mailbox ${idOrAddress} not found in this workspace`);
      return done;
    },
    paused: (workspaceId: string) => pausedMailboxes(deps.db, workspaceId),
  };
}
export type MailboxesService = ReturnType<typeof createMailboxesService>;

import { isIP } from 'node:net';
import nodemailer from 'nodemailer';
import { ImapFlow } from 'imapflow';
import type { Database } from '../../../db/database.js';
import type { TextCipher } from '../../../lib/crypto.js';
import { newId, newMessagingAccountId } from '../../../lib/ids.js';
import * as repo from './mailboxes.repository.js';
import { pausedMailboxes, resumeMailbox, type ResumeResult } from '../deliverability/reputation.js';
import { insertMailboxLedgerEntry } from '../deliverability/reputation.repository.js';
import { mailboxPacing } from '../send/sent-messages.repository.js';
import { createMailboxTokens, revokeMailboxGrant } from './oauth-tokens.js';
import type { Config } from '../../../config/config.js';
import { pinPublicHost, systemHostResolver, type HostResolver } from '../../../lib/public-address.js';
import { mailboxBudgetKey, mailboxCap, budgetKeyText, type PacingRules } from '../../../domain/budgets.js';
import { readBudgetUsage } from '../../../domain/budgets.repository.js';
import { localDay, safeZone } from '../../../domain/time.js';
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
  /**
   * Needed to revoke an OAuth mailbox's grant when it is removed (its provider's revocation URL), for today's caps
   * (pacing) and for OUTREACH_MAILBOX_ALLOW_PRIVATE (absent: servers entered in the console must be public).
   */
  config?: Config;
  /** How a server's host name is resolved for the public-address guard (tests map names to chosen addresses). */
  resolver?: HostResolver;
}

export type MailboxErrorCode =
  | 'invalid_mailbox'
  | 'account_not_found'
  | 'mailbox_not_found'
  | 'smtp_failed'
  | 'imap_failed'
  /** A server entered in the console resolves to a loopback, private or otherwise non-public address. */
  | 'server_not_allowed';

export class MailboxError extends Error {
  constructor(
    readonly code: MailboxErrorCode,
    message: string,
    readonly extra: {
      /** smtp_failed / imap_failed: auth_failed when the server refused the login, unreachable otherwise. */
      health?: MailboxHealth;
      /** The form field at fault (invalid_mailbox from the console's fields). */
      field?: string;
      /** For the log only: why a server was not allowed (its address and range). Never shown to the person. */
      logDetail?: string;
      /** The server's own words (passwords removed), for a person to read. */
      detail?: string | null;
    } = {},
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
  /**
   * Servers a person entered in the console (the Add mailbox form, an OAuth connect's server override): each host
   * must resolve to public addresses only, and the checks connect to the address checked (no second lookup), unless
   * OUTREACH_MAILBOX_ALLOW_PRIVATE=1. The CLI and world files leave it unset (operators are trusted).
   */
  publicServersOnly?: boolean;
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
    await checkBoth(deps, input.smtpUrl, input.imapUrl, input.oauth?.accessToken, req.publicServersOnly === true);
    health = 'ok';
  } else if (req.publicServersOnly) {
    await pinServers(deps, input.smtpUrl, input.imapUrl);
  }

  if (!accountId) accountId = await createEmailAccount(deps.db, req.workspaceId, input);
  const id = await repo.upsertMailbox(deps.db, deps.cipher, { id: `mbx_${newId()}`, workspaceId: req.workspaceId, accountId, ...input }, health);
  const saved = await repo.getMailbox(deps.db, deps.cipher, req.workspaceId, id);
  return toView(saved!);
}

/**
 * The public-address guard for a mailbox's two servers (src/lib/public-address.ts): each host is resolved once and
 * every address it answers must be public. Answers the address to connect to for each, or nothing to pin when
 * OUTREACH_MAILBOX_ALLOW_PRIVATE=1. Throws MailboxError `server_not_allowed` (generic message; `logDetail` names the
 * address), or `smtp_failed`/`imap_failed` (unreachable) when a name does not resolve.
 */
export async function pinServers(deps: MailboxDeps, smtpUrl: string, imapUrl: string): Promise<{ smtp?: PinnedAddress; imap?: PinnedAddress }> {
  if (deps.config?.mailboxAllowPrivate) return {};
  return { smtp: await pinServer(deps, 'smtp', smtpUrl), imap: await pinServer(deps, 'imap', imapUrl) };
}

/** One server of pinServers; `undefined` (nothing to pin) when OUTREACH_MAILBOX_ALLOW_PRIVATE=1. */
export async function pinServer(deps: MailboxDeps, kind: 'smtp' | 'imap', url: string): Promise<PinnedAddress | undefined> {
  if (deps.config?.mailboxAllowPrivate) return undefined;
  const host = new URL(url).hostname;
  const pinned = await pinPublicHost(host, deps.resolver ?? systemHostResolver);
  if (!pinned.ok && pinned.reason === 'unresolvable')
    throw new MailboxError(kind === 'smtp' ? 'smtp_failed' : 'imap_failed', `${kind.toUpperCase()} server ${host} was not found (DNS): ${pinned.detail}`, {
      health: 'unreachable',
      detail: `the name ${host} was not found`,
    });
  if (!pinned.ok) throw new MailboxError('server_not_allowed', SERVER_NOT_ALLOWED, { logDetail: `${kind.toUpperCase()} server ${pinned.detail}` });
  return { address: pinned.address };
}

/** What a person is told when a server's address is refused (the detail goes to the log). */
export const SERVER_NOT_ALLOWED = "That server's address is not allowed";

/** SMTP first, then IMAP (login and INBOX), with the guard when asked; throws MailboxError naming the one that failed. */
async function checkBoth(deps: MailboxDeps, smtpUrl: string, imapUrl: string, accessToken: string | undefined, guard: boolean): Promise<void> {
  const pins = guard ? await pinServers(deps, smtpUrl, imapUrl) : {};
  const smtp = await checkSmtp(smtpUrl, accessToken, pins.smtp);
  if (!smtp.ok)
    throw new MailboxError('smtp_failed', `SMTP connection failed (${redactUrl(smtpUrl)}): ${smtp.detail}`, { health: smtp.health, detail: smtp.detail });
  const imap = await checkImap(imapUrl, accessToken, pins.imap);
  if (!imap.ok)
    throw new MailboxError('imap_failed', `IMAP connection failed (${redactUrl(imapUrl)}): ${imap.detail}`, { health: imap.health, detail: imap.detail });
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
function serverProblem(kind: 'smtp' | 'imap', f: ServerFields): { field: string; message: string } | null {
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

/**
 * Adds a password mailbox from the console's fields: the same checks as `outreach mailbox add` (SMTP verify, IMAP
 * login and INBOX), behind the public-address guard (`publicServersOnly`). Throws MailboxError (`invalid_mailbox`
 * with `extra.field`, `server_not_allowed`, `smtp_failed`/`imap_failed` with `extra.health`); nothing is saved then.
 */
export async function addPasswordMailbox(deps: MailboxDeps, workspaceId: string, f: PasswordMailboxFields): Promise<MailboxView> {
  const address = f.address.trim();
  if (!/^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/.test(address))
    throw new MailboxError('invalid_mailbox', 'address must be an e-mail address such as dana@acme.example', { field: 'address' });
  for (const kind of ['smtp', 'imap'] as const) {
    const p = serverProblem(kind, f[kind]);
    if (p) throw new MailboxError('invalid_mailbox', p.message, { field: p.field });
  }
  if (!f.password)
    throw new MailboxError('invalid_mailbox', 'password is required (for Gmail, iCloud, Yahoo, Zoho and Fastmail: an app password)', { field: 'password' });
  const user = f.username?.trim() || address;
  return addMailbox(deps, {
    workspaceId,
    address,
    displayName: f.displayName?.trim() || null,
    smtpUrl: mailUrlOf('smtp', f.smtp, user, f.password),
    imapUrl: mailUrlOf('imap', f.imap, user, f.password),
    publicServersOnly: true,
  });
}

/** Today's e-mails of a mailbox against its cap (the `emails` budget, domain/budgets.ts), in its account's time zone. */
export interface MailboxDay {
  sentToday: number;
  capToday: number;
  /** The local day counted, YYYY-MM-DD. */
  day: string;
}

/**
 * A mailbox's `emails` budget for the local day holding `at` (domain/budgets.ts): the one place its cap is computed,
 * for the driver's reservation (send/driver.ts) and the console's *Today's cap* alike. `day` is YYYY-MM-DD in the
 * time zone (`tz`) of the mailbox's account; `cap` its account's message cap, ramped during warm-up (`mailboxCap`);
 * `key` the budget ledger row.
 */
export async function mailboxBudgetDay(db: Database, rules: PacingRules, m: { workspaceId: string; id: string; accountId: string }, at: Date) {
  const account = await mailboxPacing(db, m.workspaceId, m.accountId);
  const tz = safeZone(account?.time_zone);
  const day = localDay(at, tz);
  const cap = mailboxCap(rules, account?.warmup_started_at ? new Date(account.warmup_started_at) : null, at, tz);
  return { key: mailboxBudgetKey(m.workspaceId, m.id, day), day, cap, tz };
}

/**
 * Each mailbox's sends today and today's cap, as the driver reserves them (`mailboxBudgetDay`): the budget row of the
 * local day in the account's time zone, the cap ramped during warm-up. Keyed by mailbox id; empty without config
 * (pacing rules).
 */
export async function mailboxDays(deps: MailboxDeps, workspaceId: string, now: Date = new Date()): Promise<Map<string, MailboxDay>> {
  const out = new Map<string, MailboxDay>();
  if (!deps.config) return out;
  const rules = deps.config.engine.pacing;
  const rows = await repo.listMailboxes(deps.db, deps.cipher, workspaceId);
  const plans = await Promise.all(
    rows.map(async (m) => ({ id: m.id, ...(await mailboxBudgetDay(deps.db, rules, { workspaceId, id: m.id, accountId: m.accountId }, now)) })),
  );
  const used = await readBudgetUsage(
    deps.db,
    plans.map((p) => p.key),
  );
  for (const p of plans) out.set(p.id, { sentToday: used.get(budgetKeyText(p.key)) ?? 0, capToday: p.cap, day: p.day });
  return out;
}

/** A mailbox as its console page shows it: the view, its servers without the password, its pause and today. */
export interface MailboxDetail {
  view: MailboxView;
  smtp: (ServerFields & { username: string }) | null;
  imap: (ServerFields & { username: string }) | null;
  pause: { pausedAt: Date; reason: 'bounces' | 'complaints' | 'manual'; detail: string | null } | null;
  today: MailboxDay | null;
}

export async function mailboxDetail(deps: MailboxDeps, workspaceId: string, id: string): Promise<MailboxDetail> {
  const m = await repo.getMailbox(deps.db, deps.cipher, workspaceId, id);
  if (!m) throw new MailboxError('mailbox_not_found', `mailbox ${id} not found in this workspace`);
  const [pause, days] = await Promise.all([repo.readPause(deps.db, workspaceId, id), mailboxDays(deps, workspaceId)]);
  return { view: toView(m), smtp: serverFieldsOf(m.smtpUrl), imap: serverFieldsOf(m.imapUrl), pause, today: days.get(id) ?? null };
}

/** An edit from the console: absent fields are kept; `password` empty keeps the stored one. */
export interface MailboxEdit {
  displayName?: string | null;
  smtp?: ServerFields;
  imap?: ServerFields;
  username?: string | null;
  password?: string | null;
}

/**
 * Edits a mailbox from the console. Only the display name changed: saved as is. Any server, the user name or the
 * password changed (password mailboxes only): both checks run again behind the guard, as for an add, and the mailbox
 * is saved (health ok) only when both pass; its pause, DKIM selector and history stay.
 */
export async function editMailbox(deps: MailboxDeps, workspaceId: string, id: string, e: MailboxEdit): Promise<MailboxView> {
  const m = await repo.getMailbox(deps.db, deps.cipher, workspaceId, id);
  if (!m) throw new MailboxError('mailbox_not_found', `mailbox ${id} not found in this workspace`);
  const displayName = e.displayName === undefined ? m.displayName : e.displayName?.trim() || null;
  const curSmtp = serverFieldsOf(m.smtpUrl);
  const curImap = serverFieldsOf(m.imapUrl);
  const same = (a: ServerFields | null, b: ServerFields | undefined) =>
    !b || (a !== null && a.host.toLowerCase() === b.host.trim().toLowerCase() && a.port === b.port && a.security === b.security);
  const username = e.username?.trim() || null;
  const connectionChanged = !same(curSmtp, e.smtp) || !same(curImap, e.imap) || !!e.password || (username !== null && username !== curSmtp?.username);
  if (!connectionChanged) {
    await repo.setDisplayName(deps.db, workspaceId, id, displayName);
    return toView({ ...m, displayName });
  }
  if (m.oauth)
    throw new MailboxError('invalid_mailbox', 'an OAuth mailbox signs in with its token: only its display name can be edited here', { field: 'smtpHost' });
  if (!m.smtpUrl || !m.imapUrl || !curSmtp || !curImap)
    throw new MailboxError('invalid_mailbox', 'the stored servers cannot be read with the current key: enter the password again', { field: 'password' });
  const smtp = e.smtp ?? curSmtp;
  const imap = e.imap ?? curImap;
  for (const [kind, f] of [
    ['smtp', smtp],
    ['imap', imap],
  ] as const) {
    const p = serverProblem(kind, f);
    if (p) throw new MailboxError('invalid_mailbox', p.message, { field: p.field });
  }
  const oldSmtp = new URL(m.smtpUrl);
  const oldImap = new URL(m.imapUrl);
  const smtpPass = e.password || decodeURIComponent(oldSmtp.password);
  const imapPass = e.password || decodeURIComponent(oldImap.password);
  const smtpUser = username ?? curSmtp.username;
  const imapUser = username ?? curImap.username;
  // A lab setting an operator gave (?tls=none) stays only while the host is the same one.
  const smtpUrl = mailUrlOf('smtp', smtp, smtpUser, smtpPass, same(curSmtp, smtp) ? oldSmtp.search : '');
  const imapUrl = mailUrlOf('imap', imap, imapUser, imapPass, same(curImap, imap) ? oldImap.search : '');
  const input: MailboxInput = {
    address: m.address,
    displayName,
    smtpUrl,
    imapUrl,
    sentFolder: m.sentFolder,
    trustedAuthservId: m.trustedAuthservId,
  };
  const problem = mailboxInputProblem(Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined)), 'mailbox');
  if (problem) throw new MailboxError('invalid_mailbox', problem, { field: /imapUrl/.test(problem) ? 'imapHost' : 'smtpHost' });
  await checkBoth(deps, smtpUrl, imapUrl, undefined, true);
  await repo.upsertMailbox(deps.db, deps.cipher, { id: m.id, workspaceId, accountId: m.accountId, ...input }, 'ok');
  return toView((await repo.getMailbox(deps.db, deps.cipher, workspaceId, id))!);
}

/**
 * Test again (console): both checks on the stored servers, behind the guard, and the mailbox's health set to what
 * they found (ok, auth_failed or unreachable), so a fixed mailbox sends again. An OAuth mailbox logs in with its
 * token (refreshed when due). Answers the failed check, or null when both passed.
 */
export async function testMailbox(deps: MailboxDeps, workspaceId: string, id: string): Promise<{ view: MailboxView; failed: MailboxError | null }> {
  const m = await repo.getMailbox(deps.db, deps.cipher, workspaceId, id);
  if (!m) throw new MailboxError('mailbox_not_found', `mailbox ${id} not found in this workspace`);
  if (!m.smtpUrl || !m.imapUrl)
    throw new MailboxError('invalid_mailbox', 'the stored servers cannot be read with the current key: edit the mailbox and enter the password again', {
      field: 'password',
    });
  let failed: MailboxError | null = null;
  try {
    const token = m.oauth && deps.config ? await createMailboxTokens({ db: deps.db, cipher: deps.cipher, config: deps.config }).accessToken(m.id) : undefined;
    await checkBoth(deps, m.smtpUrl, m.imapUrl, token, true);
  } catch (e) {
    if (!(e instanceof MailboxError)) {
      failed = new MailboxError('smtp_failed', 'the sign-in token could not be refreshed', { health: 'auth_failed', detail: 'reconnect the mailbox' });
    } else failed = e;
  }
  if (failed?.code === 'server_not_allowed') return { view: toView(m), failed };
  const health: MailboxHealth = failed ? (failed.extra.health ?? 'unreachable') : 'ok';
  const detail = failed ? `${failed.code === 'imap_failed' ? 'IMAP' : 'SMTP'}: ${failed.extra.detail ?? failed.message}`.slice(0, 300) : null;
  await repo.setMailboxHealthIn(deps.db, workspaceId, id, health, detail);
  return { view: toView((await repo.getMailbox(deps.db, deps.cipher, workspaceId, id))!), failed };
}

/** What a person's pause stores as its detail (shown beside "Paused by a person"). */
export const MANUAL_PAUSE_DETAIL = 'paused by a person';

/**
 * A person pauses a mailbox (console): it sends nothing until resumed, as a guard's pause (the driver's pause check);
 * reading its INBOX goes on. Stored as `paused_at` with no reason (docs/email.md "Pause"); the ledger says so on its
 * account. No `mailbox.paused` event: that event is the guards' news. `paused: false` when it was already paused.
 */
export async function pauseMailboxByPerson(deps: MailboxDeps, workspaceId: string, id: string, by: 'cli' | 'console', now: Date = new Date()) {
  const m = await repo.getMailbox(deps.db, deps.cipher, workspaceId, id);
  if (!m) throw new MailboxError('mailbox_not_found', `mailbox ${id} not found in this workspace`);
  const paused = await deps.db.transaction().execute(async (trx) => {
    if (!(await repo.setManualPause(trx, workspaceId, m.id, now, MANUAL_PAUSE_DETAIL))) return false;
    await insertMailboxLedgerEntry(trx, {
      workspaceId,
      accountId: m.accountId,
      at: now,
      detail: { op: 'mailbox_paused', channel: 'email', mailboxId: m.id, address: m.address, reason: 'manual', by },
    });
    return true;
  });
  return { mailboxId: m.id, address: m.address, paused };
}

/** Resumes a person's pause (no guard's bounces are cleared); null when the mailbox is not paused by a person. */
async function resumeManualPause(deps: MailboxDeps, workspaceId: string, id: string, by: 'cli' | 'console', now: Date) {
  return deps.db.transaction().execute(async (trx) => {
    const m = await repo.getMailbox(trx, deps.cipher, workspaceId, id);
    if (!m || !(await repo.clearManualPause(trx, workspaceId, m.id))) return null;
    await insertMailboxLedgerEntry(trx, {
      workspaceId,
      accountId: m.accountId,
      at: now,
      detail: { op: 'mailbox_resumed', channel: 'email', mailboxId: m.id, address: m.address, pausedReason: 'manual', by },
    });
    // ResumeResult's reason names a guard's; a person's pause has none (null), as stored.
    const done: ResumeResult = { mailboxId: m.id, address: m.address, resumed: true, reason: null };
    return done;
  });
}

/** The mailbox operations as one service (services.ts): the CLI, admin routes and world loader go through it. */
export function createMailboxesService(deps: MailboxDeps) {
  return {
    add: (req: AddMailboxRequest) => addMailbox(deps, req),
    list: (workspaceId: string) => listMailboxViews(deps, workspaceId),
    remove: (workspaceId: string, idOrAddress: string) => removeMailbox(deps, workspaceId, idOrAddress),
    resolveSending: (lead: { workspaceId: string; leadId: string; accountId: string | null }) => resolveSendingMailbox(deps, lead),
    /**
     * Lifts a pause: a person's own (no bounces cleared, no event), else a reputation guard's (reputation.ts: the
     * counted bounces cleared, `mailbox.resumed`): `outreach mailbox resume`, the console's Resume button.
     */
    resume: async (workspaceId: string, idOrAddress: string, by: 'cli' | 'console') => {
      const now = new Date();
      const id = (await repo.listMailboxes(deps.db, deps.cipher, workspaceId)).find(
        (m) => m.id === idOrAddress || m.address.toLowerCase() === idOrAddress.trim().toLowerCase(),
      )?.id;
      const manual = id ? await resumeManualPause(deps, workspaceId, id, by, now) : null;
      if (manual) return manual;
      const done = await resumeMailbox(deps.db, { workspaceId, mailbox: idOrAddress, by, now });
      if (!done) throw new MailboxError('mailbox_not_found', `mailbox ${idOrAddress} not found in this workspace`);
      return done;
    },
    /** A person's pause (console **Pause**), distinct from the guards' (docs/email.md "Pause"). */
    pause: (workspaceId: string, id: string, by: 'cli' | 'console') => pauseMailboxByPerson(deps, workspaceId, id, by),
    /** Paused mailboxes, a guard's or a person's (`reason: 'manual'`). */
    paused: (workspaceId: string) => pausedMailboxes(deps.db, workspaceId),
    /** The console's Add mailbox (SMTP/IMAP) form: checks, guard, save. */
    addWithPassword: (workspaceId: string, fields: PasswordMailboxFields) => addPasswordMailbox(deps, workspaceId, fields),
    edit: (workspaceId: string, id: string, changes: MailboxEdit) => editMailbox(deps, workspaceId, id, changes),
    test: (workspaceId: string, id: string) => testMailbox(deps, workspaceId, id),
    detail: (workspaceId: string, id: string) => mailboxDetail(deps, workspaceId, id),
    /** Each mailbox's e-mails today and today's cap (the Accounts page). */
    days: (workspaceId: string) => mailboxDays(deps, workspaceId),
  };
}
export type MailboxesService = ReturnType<typeof createMailboxesService>;

import type { Database } from '../../../db/database.js';
import { newId, newMessagingAccountId } from '../../../lib/ids.js';
import * as repo from './mailboxes.repository.js';
import { owedCopiesOf } from '../send/sent-messages.repository.js';
import { pausedMailboxes, resumeMailbox } from '../deliverability/reputation.js';
import { createMailboxTokens, revokeMailboxGrant } from './oauth-tokens.js';
import { pinPublicHost, systemHostResolver } from '../../../lib/public-address.js';
import { mailboxInputProblem, redactUrl, type MailboxHealth, type MailboxInput, type MailboxView } from './mailboxes.schemas.js';
import {
  checkImap,
  checkSmtp,
  mailUrlOf,
  serverFieldsOf,
  serverProblem,
  type PasswordMailboxFields,
  type PinnedAddress,
  type ServerFields,
} from './mail-servers.js';
import { MailboxError, type MailboxDeps } from './mailbox-deps.js';
import { mailboxDays, type MailboxDay } from './mailbox-days.js';
import { resolveSendingMailbox } from './sending-mailbox.js';
export { resolveSendingMailbox, sendingMailboxesOf } from './sending-mailbox.js';
import { pauseMailboxByPerson, resumeManualPause } from './mailbox-pause.js';

export { MailboxError, type MailboxDeps, type MailboxErrorCode } from './mailbox-deps.js';
export { mailboxBudgetDay, mailboxDays, type MailboxDay } from './mailbox-days.js';
export { MANUAL_PAUSE_DETAIL, pauseMailboxByPerson } from './mailbox-pause.js';

export {
  checkImap,
  checkSmtp,
  imapClientOptions,
  mailUrlOf,
  serverFieldsOf,
  smtpTransportOptions,
  type ConnectionCheck,
  type PasswordMailboxFields,
  type PinnedAddress,
  type ServerFields,
  type ServerSecurity,
} from './mail-servers.js';

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

/** A mailbox as `outreach mailbox list` shows it: its view and the Sent-folder copies it still owes (docs/email.md). */
export type MailboxListItem = MailboxView & { sentCopies: { owed: number; failing: number } };

/** The workspace's mailboxes, each with the copies it still owes (two reads, whatever the number of mailboxes). */
export async function listMailboxesWithCopies(deps: MailboxDeps, workspaceId: string): Promise<MailboxListItem[]> {
  const views = await listMailboxViews(deps, workspaceId);
  const copies = await owedCopiesOf(
    deps.db,
    workspaceId,
    views.map((v) => v.id),
  );
  return views.map((v) => ({ ...v, sentCopies: copies.get(v.id) ?? { owed: 0, failing: 0 } }));
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

/** A mailbox as its console page shows it: the view, its servers without the password, its pause and today. */
export interface MailboxDetail {
  view: MailboxView;
  smtp: (ServerFields & { username: string }) | null;
  imap: (ServerFields & { username: string }) | null;
  pause: { pausedAt: Date; reason: 'bounces' | 'complaints' | 'manual'; detail: string | null } | null;
  today: MailboxDay | null;
  /** Sent-folder copies still owed (docs/email.md "Sent folder"), and how many of them failed at least once. */
  sentCopies: { owed: number; failing: number };
}

export async function mailboxDetail(deps: MailboxDeps, workspaceId: string, id: string): Promise<MailboxDetail> {
  const m = await repo.getMailbox(deps.db, deps.cipher, workspaceId, id);
  if (!m) throw new MailboxError('mailbox_not_found', `mailbox ${id} not found in this workspace`);
  const [pause, days, copies] = await Promise.all([
    repo.readPause(deps.db, workspaceId, id),
    mailboxDays(deps, workspaceId),
    owedCopiesOf(deps.db, workspaceId, [m.id]),
  ]);
  const sentCopies = copies.get(m.id) ?? { owed: 0, failing: 0 };
  return { view: toView(m), smtp: serverFieldsOf(m.smtpUrl), imap: serverFieldsOf(m.imapUrl), pause, today: days.get(id) ?? null, sentCopies };
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

/** The mailbox operations as one service (services.ts): the CLI, admin routes and world loader go through it. */
export function createMailboxesService(deps: MailboxDeps) {
  return {
    add: (req: AddMailboxRequest) => addMailbox(deps, req),
    list: (workspaceId: string) => listMailboxesWithCopies(deps, workspaceId),
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

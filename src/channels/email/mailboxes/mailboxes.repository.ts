import { sql } from 'kysely';
import type { Selectable } from 'kysely';
import { POOL_ACCOUNT_MODE, POOL_MAILBOX_HEALTH } from '../../../domain/claim-layout.js';
import type { Database } from '../../../db/database.js';
import type { MailboxesTable } from '../../../db/schema.js';
import type { TextCipher } from '../../../lib/crypto.js';
import type { MailOauthProvider } from '../../../config/mail-oauth.js';
import type { MailboxHealth, MailboxInput } from './mailboxes.schemas.js';

/** A mailbox with its URLs decrypted: only for the drivers that connect (channels/email.ts, the inbox watcher). */
export interface MailboxSecretRow {
  id: string;
  workspaceId: string;
  accountId: string;
  address: string;
  displayName: string | null;
  /** null when the stored value cannot be decrypted with the current key. */
  smtpUrl: string | null;
  imapUrl: string | null;
  sentFolder: string | null;
  /** The authserv-id believed besides the provider's (docs/email.md); null when none was given. */
  trustedAuthservId: string | null;
  health: MailboxHealth;
  healthDetail: string | null;
  /** A mailbox connected with OAuth (Google, Microsoft 365): its provider and when its access token lapses; null for passwords. */
  oauth: { provider: MailOauthProvider; expiresAt: Date } | null;
}

/** The tokens of an OAuth mailbox, decrypted: only for the token service (oauth-tokens.ts). */
export interface MailboxOauthTokens {
  accessToken: string;
  refreshToken: string;
  expiresAt: Date;
}

const COLUMNS = [
  'id',
  'workspace_id',
  'account_id',
  'address',
  'display_name',
  'smtp_url_enc',
  'imap_url_enc',
  'sent_folder',
  'trusted_authserv_id',
  'health',
  'health_detail',
  'oauth_provider',
  'oauth_expires_at',
] as const;

type Row = Pick<
  Selectable<MailboxesTable>,
  | 'id'
  | 'workspace_id'
  | 'account_id'
  | 'address'
  | 'display_name'
  | 'smtp_url_enc'
  | 'imap_url_enc'
  | 'sent_folder'
  | 'trusted_authserv_id'
  | 'health'
  | 'health_detail'
  | 'oauth_provider'
  | 'oauth_expires_at'
>;

function open(cipher: TextCipher, r: Row): MailboxSecretRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    accountId: r.account_id,
    address: r.address,
    displayName: r.display_name,
    smtpUrl: cipher.decrypt(r.smtp_url_enc),
    imapUrl: cipher.decrypt(r.imap_url_enc),
    sentFolder: r.sent_folder,
    trustedAuthservId: r.trusted_authserv_id,
    health: r.health,
    healthDetail: r.health_detail,
    oauth: r.oauth_provider && r.oauth_expires_at ? { provider: r.oauth_provider, expiresAt: new Date(r.oauth_expires_at) } : null,
  };
}

function sealTokens(cipher: TextCipher, t: MailboxOauthTokens): string {
  return cipher.encrypt(JSON.stringify({ accessToken: t.accessToken, refreshToken: t.refreshToken }))!;
}

/** The one place mailbox credentials are written: plain URLs in, encrypted at rest. One mailbox per account. */
export async function upsertMailbox(
  db: Database,
  cipher: TextCipher,
  row: { id: string; workspaceId: string; accountId: string } & MailboxInput,
  health: MailboxHealth = 'unknown',
): Promise<string> {
  const values = {
    address: row.address,
    display_name: row.displayName ?? null,
    smtp_url_enc: cipher.encrypt(row.smtpUrl)!,
    imap_url_enc: cipher.encrypt(row.imapUrl)!,
    sent_folder: row.sentFolder ?? null,
    trusted_authserv_id: row.trustedAuthservId?.trim().toLowerCase() || null,
    ...(row.dkimSelector !== undefined && { dkim_selector: row.dkimSelector?.trim().toLowerCase() || null }),
    // A password mailbox saved again over an OAuth one drops the tokens (and the other way round).
    oauth_provider: row.oauth?.provider ?? null,
    oauth_tokens_enc: row.oauth ? sealTokens(cipher, { ...row.oauth, expiresAt: new Date(row.oauth.expiresAt) }) : null,
    oauth_expires_at: row.oauth ? new Date(row.oauth.expiresAt) : null,
    health,
    health_detail: null,
    health_checked_at: health === 'unknown' ? null : new Date(),
    // Saved again (a fixed password, say): its INBOX is read on the next pass, not after a failure's back-off.
    next_poll_at: new Date() as never,
    // Its IDLE listener lets go on its next renewal, and a listener opens it again with what was saved (idle.ts).
    idle_owner: null,
    idle_until: null,
    imap_idle: null,
  };
  const saved = await db
    .insertInto('mailboxes')
    .values({ id: row.id, workspace_id: row.workspaceId, account_id: row.accountId, ...values })
    .onConflict((oc) => oc.column('account_id').doUpdateSet(values))
    .returning('id')
    .executeTakeFirstOrThrow();
  return saved.id;
}

export async function listMailboxes(db: Database, cipher: TextCipher, workspaceId: string): Promise<MailboxSecretRow[]> {
  const rows = await db.selectFrom('mailboxes').select(COLUMNS).where('workspace_id', '=', workspaceId).orderBy('address').orderBy('id').execute();
  return rows.map((r) => open(cipher, r));
}

export async function getMailbox(db: Database, cipher: TextCipher, workspaceId: string, id: string): Promise<MailboxSecretRow | null> {
  // An id with a NUL (a console path's `%00`) names no mailbox, and PostgreSQL refuses it as text: not found, never a 500.
  if (id.includes('\u0000')) return null;
  const r = await db.selectFrom('mailboxes').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r ? open(cipher, r) : null;
}

export async function deleteMailbox(db: Database, workspaceId: string, idOrAddress: string): Promise<number> {
  if (idOrAddress.includes('\u0000')) return 0; // names no mailbox (getMailbox)
  const res = await db
    .deleteFrom('mailboxes')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('id', '=', idOrAddress), eb('address', '=', idOrAddress)]))
    .executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}

export async function setMailboxHealth(db: Database, id: string, health: MailboxHealth, detail: string | null): Promise<void> {
  await db.updateTable('mailboxes').set({ health, health_detail: detail, health_checked_at: new Date() }).where('id', '=', id).execute();
}

/** A mailbox as the choice of a sender needs it: no secrets. */
export interface MailboxRef {
  id: string;
  workspaceId: string;
  accountId: string;
}

const refOf = (r: { id: string; workspace_id: string; account_id: string }): MailboxRef => ({ id: r.id, workspaceId: r.workspace_id, accountId: r.account_id });

/** The mailbox of each of these messaging accounts (at most one each), keyed by account id. */
export async function mailboxRefsByAccount(db: Database, accountIds: string[]): Promise<Map<string, MailboxRef>> {
  if (accountIds.length === 0) return new Map();
  const rows = await db.selectFrom('mailboxes').select(['id', 'workspace_id', 'account_id']).where('account_id', 'in', accountIds).execute();
  return new Map(rows.map((r) => [r.account_id, refOf(r)]));
}

/** The sticky mailbox of each of these leads that has one still in its workspace, keyed by lead id. */
export async function stickyMailboxRefs(db: Database, leadIds: string[]): Promise<Map<string, MailboxRef>> {
  if (leadIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('leads as l')
    .innerJoin('mailboxes as m', (j) => j.onRef('m.id', '=', 'l.mailbox_id').onRef('m.workspace_id', '=', 'l.workspace_id'))
    .select(['l.id as lead_id', 'm.id', 'm.workspace_id', 'm.account_id'])
    .where('l.id', 'in', leadIds)
    .execute();
  return new Map(rows.map((r) => [r.lead_id, refOf(r)]));
}

/** The pool of each of these workspaces: mailboxes of its `mode: email` accounts that may send (not failed), by id, keyed by workspace id. */
export async function poolMailboxRefs(db: Database, workspaceIds: string[]): Promise<Map<string, MailboxRef[]>> {
  const out = new Map<string, MailboxRef[]>();
  if (workspaceIds.length === 0) return out;
  const rows = await db
    .selectFrom('mailboxes')
    .innerJoin('messaging_accounts', 'messaging_accounts.id', 'mailboxes.account_id')
    .select(['mailboxes.id', 'mailboxes.workspace_id', 'mailboxes.account_id'])
    .where('mailboxes.workspace_id', 'in', workspaceIds)
    .where('messaging_accounts.mode', '=', POOL_ACCOUNT_MODE)
    .where('mailboxes.health', 'in', POOL_MAILBOX_HEALTH)
    .orderBy('mailboxes.id')
    .execute();
  for (const r of rows) out.set(r.workspace_id, [...(out.get(r.workspace_id) ?? []), refOf(r)]);
  return out;
}

/**
 * Makes each pick the lead's sticky mailbox where it has none yet, in one statement; answers the mailbox id each lead
 * keeps (its earlier one when another writer stuck one first).
 */
export async function stickLeadMailboxes(db: Database, picks: { leadId: string; mailboxId: string }[]): Promise<Map<string, string>> {
  if (picks.length === 0) return new Map();
  const values = sql.join(picks.map((p) => sql`(${p.leadId}::uuid, ${p.mailboxId}::text)`));
  await sql`UPDATE leads SET mailbox_id = v.mailbox_id FROM (VALUES ${values}) AS v(lead_id, mailbox_id)
    WHERE leads.id = v.lead_id AND leads.mailbox_id IS NULL`.execute(db);
  const rows = await db
    .selectFrom('leads')
    .select(['id', 'mailbox_id'])
    .where(
      'id',
      'in',
      picks.map((p) => p.leadId),
    )
    .execute();
  return new Map(rows.flatMap((r) => (r.mailbox_id ? [[r.id, r.mailbox_id] as const] : [])));
}

/** Which of these workspaces have a mailbox at all (one query for a claim's batch; most sandbox workspaces have none). */
export async function workspacesWithMailboxes(db: Database, workspaceIds: string[]): Promise<Set<string>> {
  if (workspaceIds.length === 0) return new Set();
  const rows = await db.selectFrom('mailboxes').select('workspace_id').distinct().where('workspace_id', 'in', workspaceIds).execute();
  return new Set(rows.map((r) => r.workspace_id));
}

/**
 * An OAuth mailbox's tokens under the row's lock (SELECT … FOR UPDATE), for a refresh: a second worker waits, then
 * reads the tokens the first one saved. `q` must be a transaction. null when the mailbox is gone or has no tokens;
 * `tokens` null when they no longer decrypt with the current key.
 */
export async function lockMailboxTokens(
  q: Database,
  cipher: TextCipher,
  mailboxId: string,
): Promise<{ provider: MailOauthProvider; tokens: MailboxOauthTokens | null; health: MailboxHealth } | null> {
  const r = await q
    .selectFrom('mailboxes')
    .select(['oauth_provider', 'oauth_tokens_enc', 'oauth_expires_at', 'health'])
    .where('id', '=', mailboxId)
    .forUpdate()
    .executeTakeFirst();
  if (!r?.oauth_provider || !r.oauth_tokens_enc || !r.oauth_expires_at) return null;
  return { provider: r.oauth_provider, tokens: openTokens(cipher, r.oauth_tokens_enc, r.oauth_expires_at), health: r.health };
}

/** The stored tokens without a lock (the common case: the access token is still fresh). */
export async function readMailboxTokens(q: Database, cipher: TextCipher, mailboxId: string): Promise<MailboxOauthTokens | null> {
  const r = await q.selectFrom('mailboxes').select(['oauth_tokens_enc', 'oauth_expires_at']).where('id', '=', mailboxId).executeTakeFirst();
  return r?.oauth_tokens_enc && r.oauth_expires_at ? openTokens(cipher, r.oauth_tokens_enc, r.oauth_expires_at) : null;
}

function openTokens(cipher: TextCipher, enc: string, expiresAt: Date | string): MailboxOauthTokens | null {
  const plain = cipher.decrypt(enc);
  if (!plain) return null;
  try {
    const t = JSON.parse(plain) as { accessToken?: unknown; refreshToken?: unknown };
    if (typeof t.accessToken !== 'string' || typeof t.refreshToken !== 'string') return null;
    return { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: new Date(expiresAt) };
  } catch {
    return null;
  }
}

/** Fresh tokens from a refresh; the mailbox's health is left to the caller. */
export async function saveMailboxTokens(q: Database, cipher: TextCipher, mailboxId: string, t: MailboxOauthTokens): Promise<void> {
  await q
    .updateTable('mailboxes')
    .set({ oauth_tokens_enc: sealTokens(cipher, t), oauth_expires_at: t.expiresAt })
    .where('id', '=', mailboxId)
    .execute();
}

/** Disconnect: the tokens are overwritten (the mailbox row itself is deleted by the caller). Returns what was stored. */
export async function takeMailboxTokens(
  q: Database,
  cipher: TextCipher,
  workspaceId: string,
  idOrAddress: string,
): Promise<{ provider: MailOauthProvider; tokens: MailboxOauthTokens | null } | null> {
  const r = await q
    .selectFrom('mailboxes')
    .select(['id', 'oauth_provider', 'oauth_tokens_enc', 'oauth_expires_at'])
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('id', '=', idOrAddress), eb('address', '=', idOrAddress)]))
    .executeTakeFirst();
  if (!r?.oauth_provider || !r.oauth_tokens_enc || !r.oauth_expires_at) return null;
  return { provider: r.oauth_provider, tokens: openTokens(cipher, r.oauth_tokens_enc, r.oauth_expires_at) };
}

/** Whether the workspace exists (a connect names it before anything else is read). */
export async function workspaceExists(db: Database, workspaceId: string): Promise<boolean> {
  return (await db.selectFrom('workspaces').select('id').where('id', '=', workspaceId).executeTakeFirst()) !== undefined;
}

/** Whether the messaging account belongs to the workspace (a mailbox may only be put on one of its own). */
export async function accountInWorkspace(db: Database, workspaceId: string, accountId: string): Promise<boolean> {
  const r = await db.selectFrom('messaging_accounts').select('id').where('workspace_id', '=', workspaceId).where('id', '=', accountId).executeTakeFirst();
  return r !== undefined;
}

/** A mailbox's pause as stored (reputation guards write `bounces`/`complaints`; a person's pause leaves the reason NULL). */
export async function readPause(
  db: Database,
  workspaceId: string,
  id: string,
): Promise<{ pausedAt: Date; reason: 'bounces' | 'complaints' | 'manual'; detail: string | null } | null> {
  const r = await db
    .selectFrom('mailboxes')
    .select(['paused_at', 'paused_reason', 'paused_detail'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!r?.paused_at) return null;
  return { pausedAt: new Date(r.paused_at), reason: r.paused_reason ?? 'manual', detail: r.paused_detail };
}

/**
 * A person's pause (docs/email.md "Pause"): `paused_at` set with no reason (the reason column's CHECK allows only the
 * guards' reasons; NULL is a person's). False when the mailbox was already paused, for any reason, or is not here.
 */
export async function setManualPause(db: Database, workspaceId: string, id: string, at: Date, detail: string): Promise<boolean> {
  const r = await db
    .updateTable('mailboxes')
    .set({ paused_at: at, paused_reason: null, paused_detail: detail })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('paused_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows ?? 0) > 0;
}

/** Lifts a person's pause only (a guard's pause is lifted by reputation.ts, which also clears the counted bounces). */
export async function clearManualPause(db: Database, workspaceId: string, id: string): Promise<boolean> {
  const r = await db
    .updateTable('mailboxes')
    .set({ paused_at: null, paused_detail: null })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('paused_at', 'is not', null)
    .where('paused_reason', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows ?? 0) > 0;
}

/** The display name alone (an edit that changes no server, user name or password needs no login check). */
export async function setDisplayName(db: Database, workspaceId: string, id: string, displayName: string | null): Promise<void> {
  await db.updateTable('mailboxes').set({ display_name: displayName }).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

/** A mailbox's dkim selector and health check time are kept by an edit; this is the health a Test again found. */
export async function setMailboxHealthIn(db: Database, workspaceId: string, id: string, health: MailboxHealth, detail: string | null): Promise<void> {
  await db
    .updateTable('mailboxes')
    .set({ health, health_detail: detail, health_checked_at: new Date() })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}

import { sql } from 'kysely';
import type { Database } from '../../../db/database.js';
import { appendLedger, manualOverrideEntry, type MailboxOpDetail } from '../../../domain/ledger.js';

// The reputation guards' SQL (reputation.ts holds the rule): which of our messages bounced or drew a complaint, a
// mailbox's last sends, and its pause. Every read names the workspace.

/**
 * Why a mailbox is paused: a reputation guard's `bounces` / `complaints` (stored in `paused_reason`), or `manual`, a
 * person's pause (console **Pause**), stored as `paused_at` with a NULL reason (docs/email.md "Pause (a person's)").
 */
export type PauseReason = GuardPauseReason | 'manual';

/** The reasons a reputation guard stores (migration 0029's CHECK admits these and NULL). */
export type GuardPauseReason = 'bounces' | 'complaints';

export interface MailboxPause {
  id: string;
  accountId: string;
  address: string;
  reason: PauseReason;
  pausedAt: Date;
  detail: string | null;
}

/**
 * One of our sent messages by its Message-ID (compared without brackets, case-insensitively): the mailbox that sent
 * it, the lead, and the address it went to (the lead's address for rows written before migration 0024).
 */
export async function sentMessage(
  db: Database,
  workspaceId: string,
  messageId: string,
): Promise<{ messageId: string; mailboxId: string | null; leadId: string; recipient: string | null; complainedAt: Date | null } | null> {
  const r = await db
    .selectFrom('email_messages')
    .leftJoin('leads', (join) => join.onRef('leads.id', '=', 'email_messages.lead_id').onRef('leads.workspace_id', '=', 'email_messages.workspace_id'))
    .select([
      'email_messages.message_id',
      'email_messages.mailbox_id',
      'email_messages.lead_id',
      'email_messages.recipient',
      'email_messages.complained_at',
      'leads.email',
    ])
    .where('email_messages.workspace_id', '=', workspaceId)
    .where('email_messages.direction', '=', 'out')
    .where(sql<boolean>`lower(btrim(email_messages.message_id, '<> ')) = ${messageId}`)
    .limit(1)
    .executeTakeFirst();
  if (!r) return null;
  return {
    messageId: r.message_id,
    mailboxId: r.mailbox_id,
    leadId: r.lead_id,
    recipient: (r.recipient ?? r.email)?.trim().toLowerCase() ?? null,
    complainedAt: r.complained_at ? new Date(r.complained_at) : null,
  };
}

/** Marks one of our sent messages as hard-bounced, once; answers the mailbox that sent it, or null when it was already. */
export async function markBounced(trx: Database, workspaceId: string, messageId: string, at: Date): Promise<string | null> {
  const r = await markOutgoingOnce(trx, workspaceId, messageId, 'bounced_at', at);
  return r?.mailbox_id ?? null;
}

/** Marks a message of ours as complained about; false when it had been already (the complaint counts once). */
export async function markComplained(trx: Database, workspaceId: string, messageId: string, at: Date): Promise<boolean> {
  return (await markOutgoingOnce(trx, workspaceId, messageId, 'complained_at', at)) !== undefined;
}

/** Sets `column` of one of our sent messages to `at` when it was null: the message's mailbox, or undefined when not. */
function markOutgoingOnce(trx: Database, workspaceId: string, messageId: string, column: 'bounced_at' | 'complained_at', at: Date) {
  return trx
    .updateTable('email_messages')
    .set(column === 'bounced_at' ? { bounced_at: at } : { complained_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('message_id', '=', messageId)
    .where('direction', '=', 'out')
    .where(column, 'is', null)
    .returning('mailbox_id')
    .executeTakeFirst();
}

/** Whether each of the mailbox's last `limit` sends bounced (a bounce cleared by a resume counts no more), newest first. */
export async function recentSendBounces(db: Database, workspaceId: string, mailboxId: string, limit: number): Promise<boolean[]> {
  const rows = await db
    .selectFrom('email_messages')
    .select(sql<boolean>`(bounced_at IS NOT NULL AND NOT bounce_cleared)`.as('bounced'))
    .where('workspace_id', '=', workspaceId)
    .where('mailbox_id', '=', mailboxId)
    .where('direction', '=', 'out')
    .orderBy('sent_at', 'desc')
    .orderBy('message_id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.bounced === true);
}

/** The mailbox row, locked, with its pause (null when the mailbox is not in this workspace, or a NUL makes it no reference). */
export async function lockMailbox(trx: Database, workspaceId: string, idOrAddress: string) {
  if (idOrAddress.includes('\u0000')) return null; // PostgreSQL refuses a NUL in text: it names no mailbox
  const r = await trx
    .selectFrom('mailboxes')
    .select(['id', 'account_id', 'address', 'paused_at', 'paused_reason', 'paused_detail'])
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('id', '=', idOrAddress), eb(sql<string>`lower(address)`, '=', idOrAddress.trim().toLowerCase())]))
    .orderBy('id')
    .limit(1)
    .forUpdate()
    .executeTakeFirst();
  return r ?? null;
}

/** A guard pauses a mailbox that is not paused; false when it already was. */
export async function setPaused(
  trx: Database,
  p: { workspaceId: string; mailboxId: string; reason: GuardPauseReason; detail: string; at: Date },
): Promise<boolean> {
  const r = await trx
    .updateTable('mailboxes')
    .set({ paused_at: p.at, paused_reason: p.reason, paused_detail: p.detail })
    .where('workspace_id', '=', p.workspaceId)
    .where('id', '=', p.mailboxId)
    .where('paused_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows ?? 0) > 0;
}

/** Lifts the pause; the bounces counted so far count no more (the mailbox starts afresh). */
export async function clearPause(trx: Database, workspaceId: string, mailboxId: string): Promise<void> {
  await trx
    .updateTable('mailboxes')
    .set({ paused_at: null, paused_reason: null, paused_detail: null })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', mailboxId)
    .execute();
  await trx
    .updateTable('email_messages')
    .set({ bounce_cleared: true })
    .where('workspace_id', '=', workspaceId)
    .where('mailbox_id', '=', mailboxId)
    .where('bounced_at', 'is not', null)
    .where('bounce_cleared', '=', false)
    .execute();
}

/** The pause of one mailbox (the driver asks before each send; a NULL stored reason is a person's: `manual`); null when it sends. */
export async function pauseOf(db: Database, workspaceId: string, mailboxId: string): Promise<PauseReason | null> {
  const r = await db
    .selectFrom('mailboxes')
    .select(['paused_at', 'paused_reason'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', mailboxId)
    .executeTakeFirst();
  return r?.paused_at ? (r.paused_reason ?? 'manual') : null;
}

/** The workspace's paused mailboxes, a guard's or a person's (`manual`: NULL stored reason), by address (readiness, the console, the CLI). */
export async function pausedMailboxes(db: Database, workspaceId: string): Promise<MailboxPause[]> {
  const rows = await db
    .selectFrom('mailboxes')
    .select(['id', 'account_id', 'address', 'paused_at', 'paused_reason', 'paused_detail'])
    .where('workspace_id', '=', workspaceId)
    .where('paused_at', 'is not', null)
    .orderBy('address')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    accountId: r.account_id,
    address: r.address,
    reason: r.paused_reason ?? 'manual',
    pausedAt: new Date(r.paused_at!),
    detail: r.paused_detail,
  }));
}

/** A ledger entry about the mailbox itself (no lead): on its account, `manual_override` with the op in the detail. */
export async function insertMailboxLedgerEntry(trx: Database, p: { workspaceId: string; accountId: string; at: Date; detail: MailboxOpDetail }) {
  await appendLedger(trx, [manualOverrideEntry({ ...p, leadId: null })]);
}

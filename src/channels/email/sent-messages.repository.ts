import type { Database } from '../../db/database.js';

// The e-mail thread of a lead (table email_messages, migration 0013): the Message-IDs we sent and those we received,
// so a follow-up continues the thread and a crash-interrupted send can be confirmed from the sent folder.

/**
 * Notes an outgoing message before it is handed to SMTP; a retry of the same step finds the row already there.
 * `recipient`: the address it goes to, so a bounce that names this Message-ID affects that address (docs/email.md).
 */
export async function recordOutgoing(
  db: Database,
  row: {
    workspaceId: string;
    messageId: string;
    leadId: string;
    mailboxId: string;
    idempotencyKey: string;
    subject: string | null;
    at: Date;
    recipient?: string | null;
  },
): Promise<void> {
  await db
    .insertInto('email_messages')
    .values({
      workspace_id: row.workspaceId,
      message_id: row.messageId,
      lead_id: row.leadId,
      mailbox_id: row.mailboxId,
      idempotency_key: row.idempotencyKey,
      subject: row.subject,
      direction: 'out',
      sent_at: row.at,
      recipient: row.recipient?.trim().toLowerCase() ?? null,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** A send that SMTP refused for good never happened: it leaves the thread. */
export async function forgetOutgoing(db: Database, workspaceId: string, idempotencyKey: string): Promise<void> {
  await db.deleteFrom('email_messages').where('workspace_id', '=', workspaceId).where('idempotency_key', '=', idempotencyKey).execute();
}

/** Whether a send of this step was ever started (its row exists). */
export async function findOutgoing(db: Database, workspaceId: string, idempotencyKey: string) {
  return db
    .selectFrom('email_messages')
    .select(['message_id', 'mailbox_id'])
    .where('workspace_id', '=', workspaceId)
    .where('idempotency_key', '=', idempotencyKey)
    .executeTakeFirst();
}

/** Which of these leads a mailbox wrote to (they have an outgoing message on record; index email_messages_lead). */
export async function leadsMailedFromMailboxes(db: Database, workspaceId: string, leadIds: string[]): Promise<Set<string>> {
  if (leadIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('email_messages')
    .select('lead_id')
    .distinct()
    .where('workspace_id', '=', workspaceId)
    .where('lead_id', 'in', leadIds)
    .where('direction', '=', 'out')
    .execute();
  return new Set(rows.map((r) => r.lead_id).filter((id): id is string => id !== null));
}

/** The lead's thread, oldest first (both directions). */
export async function threadOf(db: Database, workspaceId: string, leadId: string) {
  return db
    .selectFrom('email_messages')
    .select(['message_id', 'subject', 'direction', 'idempotency_key'])
    .where('workspace_id', '=', workspaceId)
    .where('lead_id', '=', leadId)
    .orderBy('sent_at')
    .orderBy('message_id')
    .execute();
}

/** The mailbox's account's pacing facts: its time zone and warm-up start (the mailbox's daily budget follows them). */
export async function mailboxPacing(db: Database, workspaceId: string, accountId: string) {
  return db
    .selectFrom('messaging_accounts')
    .select(['time_zone', 'warmup_started_at'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', accountId)
    .executeTakeFirst();
}

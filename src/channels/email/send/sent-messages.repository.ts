import { sql } from 'kysely';
import type { Database } from '../../../db/database.js';

// The e-mail thread of a lead (table email_messages, migration 0013): the Message-IDs we sent and those we received,
// so a follow-up continues the thread, and how far each message of ours went (migration 0033), so a send a crash
// interrupted is confirmed from that record.

/**
 * Notes that an SMTP transaction took the message (the server accepted RCPT TO and DATA; the text not yet sent):
 * `delivery = 'started'`. A retry of the same step finds the row already there and leaves it as it is.
 * `recipient`: the address it goes to, so a bounce that names this Message-ID affects that address (docs/email.md).
 *
 * `claim` (an engine send: the time the lead was marked in flight with this idempotency key, src/engine/claim.ts):
 * the row is written only while the lead still holds that claim and no row of this step exists, in one statement that
 * locks the lead's row (FOR SHARE), so it is ordered against a take-over by another worker's claim. Answers false
 * when it was not written: the caller must not send (another worker has the step, or started it already). Without
 * `claim` (a person's send) it answers true.
 */
export async function recordTransactionStarted(
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
    /** The exact bytes sent, encrypted, when the mailbox keeps a sent folder: the copy owed once it is accepted. */
    sentCopyRaw?: string | null;
  },
  claim?: { at: Date },
): Promise<boolean> {
  const values = {
    workspace_id: row.workspaceId,
    message_id: row.messageId,
    lead_id: row.leadId,
    mailbox_id: row.mailboxId,
    idempotency_key: row.idempotencyKey,
    subject: row.subject,
    direction: 'out' as const,
    sent_at: row.at,
    recipient: row.recipient?.trim().toLowerCase() ?? null,
    delivery: 'started' as const,
    sent_copy_raw: row.sentCopyRaw ?? null,
  };
  if (!claim) {
    await db
      .insertInto('email_messages')
      .values(values)
      .onConflict((oc) => oc.doNothing())
      .execute();
    return true;
  }
  const { rows } = await sql<{ written: number }>`
    INSERT INTO email_messages (workspace_id, message_id, lead_id, mailbox_id, idempotency_key, subject, direction, sent_at, recipient, delivery, sent_copy_raw)
    SELECT ${values.workspace_id}::uuid, ${values.message_id}::text, ${values.lead_id}::uuid, ${values.mailbox_id}::text, ${values.idempotency_key}::text,
      ${values.subject}::text, 'out', ${values.sent_at.toISOString()}::timestamptz, ${values.recipient}::text, 'started', ${values.sent_copy_raw}::text
    WHERE EXISTS (
      SELECT 1 FROM leads l WHERE l.id = ${values.lead_id}::uuid AND l.workspace_id = ${values.workspace_id}::uuid
        AND l.inflight_key = ${values.idempotency_key} AND l.inflight_at = ${claim.at.toISOString()}::timestamptz
      FOR SHARE)
    ON CONFLICT DO NOTHING
    RETURNING 1 AS written`.execute(db);
  return rows.length > 0;
}

/** A copy is owed to the sent folder when the start record kept the bytes (the mailbox names a sent folder); due at once (no next try yet). */
const OWES_COPY = sql<'owed' | null>`CASE WHEN sent_copy_raw IS NOT NULL AND sent_copy IS NULL THEN 'owed' ELSE sent_copy END`;

/**
 * The server answered the message with 250 (its queue id when it named one): the message is ours no more. In the same
 * UPDATE its sent-folder copy becomes owed (sent-copies.ts files it), so no crash can lose the debt.
 */
export async function recordAccepted(db: Database, workspaceId: string, idempotencyKey: string, at: Date, queueId: string | null): Promise<void> {
  await db
    .updateTable('email_messages')
    .set({ delivery: 'accepted', accepted_at: at, smtp_queue_id: queueId, sent_copy: OWES_COPY })
    .where('workspace_id', '=', workspaceId)
    .where('idempotency_key', '=', idempotencyKey)
    .where('direction', '=', 'out')
    .execute();
}

/** A person said the interrupted message arrived ("Mark as sent"): later steps thread on it, and its copy is owed. */
export async function recordMarkedSent(db: Database, workspaceId: string, idempotencyKey: string): Promise<void> {
  await db
    .updateTable('email_messages')
    .set({ delivery: 'marked_sent', sent_copy: OWES_COPY })
    .where('workspace_id', '=', workspaceId)
    .where('idempotency_key', '=', idempotencyKey)
    .where('direction', '=', 'out')
    .where('delivery', '=', 'started')
    .execute();
}

/** A send that SMTP refused for good never happened: it leaves the thread. */
export async function forgetOutgoing(db: Database, workspaceId: string, idempotencyKey: string): Promise<void> {
  await db.deleteFrom('email_messages').where('workspace_id', '=', workspaceId).where('idempotency_key', '=', idempotencyKey).execute();
}

/** A start record whose transaction failed before the message text left (the connection lost at that moment). */
export async function forgetStartedOutgoing(db: Database, workspaceId: string, idempotencyKey: string): Promise<void> {
  await db
    .deleteFrom('email_messages')
    .where('workspace_id', '=', workspaceId)
    .where('idempotency_key', '=', idempotencyKey)
    .where('direction', '=', 'out')
    .where('delivery', '=', 'started')
    .execute();
}

/** How far this step's message went: no row, an SMTP transaction started, accepted, or marked sent by a person. */
export async function findOutgoing(db: Database, workspaceId: string, idempotencyKey: string) {
  return db
    .selectFrom('email_messages')
    .select(['message_id', 'mailbox_id', 'delivery'])
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

/** The lead's thread, oldest first (both directions), with how far each message of ours went. */
export async function threadOf(db: Database, workspaceId: string, leadId: string) {
  return db
    .selectFrom('email_messages')
    .select(['message_id', 'subject', 'direction', 'idempotency_key', 'delivery'])
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

/** A sent-folder copy owed and claimed for filing (sent-copies.ts). */
export interface OwedCopy {
  workspaceId: string;
  messageId: string;
  mailboxId: string;
  /** The encrypted bytes (null: lost, e.g. the key changed; the copy cannot be filed). */
  rawEnc: string | null;
  attempts: number;
}

/**
 * Claims up to `limit` owed copies that are due, oldest first, pushing their next try `leaseSeconds` ahead so another
 * worker skips them while this one files them (SKIP LOCKED; a crashed filing is retried when the lease ends).
 */
export async function claimOwedCopies(db: Database, p: { now: Date; limit: number; leaseSeconds: number }): Promise<OwedCopy[]> {
  const now = p.now.toISOString();
  const { rows } = await sql<{ workspace_id: string; message_id: string; mailbox_id: string; sent_copy_raw: string | null; sent_copy_attempts: number }>`
    WITH due AS (
      SELECT workspace_id, message_id FROM email_messages
      WHERE sent_copy = 'owed' AND (sent_copy_next_at IS NULL OR sent_copy_next_at <= ${now}::timestamptz)
      ORDER BY sent_copy_next_at NULLS FIRST LIMIT ${p.limit} FOR UPDATE SKIP LOCKED
    )
    UPDATE email_messages m SET sent_copy_next_at = ${now}::timestamptz + make_interval(secs => ${p.leaseSeconds})
    FROM due WHERE m.workspace_id = due.workspace_id AND m.message_id = due.message_id AND m.direction = 'out'
    RETURNING m.workspace_id, m.message_id, m.mailbox_id, m.sent_copy_raw, m.sent_copy_attempts`.execute(db);
  return rows
    .filter((r) => r.mailbox_id !== null)
    .map((r) => ({ workspaceId: r.workspace_id, messageId: r.message_id, mailboxId: r.mailbox_id, rawEnc: r.sent_copy_raw, attempts: r.sent_copy_attempts }));
}

/** The copy is in the sent folder: the debt is paid and the bytes are dropped. */
export async function markCopyFiled(db: Database, workspaceId: string, messageId: string): Promise<void> {
  await sentMessage(db, workspaceId, messageId).set({ sent_copy: 'filed', sent_copy_raw: null, sent_copy_error: null, sent_copy_next_at: null }).execute();
}

/** An UPDATE of one message we sent, by its Message-ID (the sent-folder copy's state). */
const sentMessage = (db: Database, workspaceId: string, messageId: string) =>
  db.updateTable('email_messages').where('workspace_id', '=', workspaceId).where('message_id', '=', messageId).where('direction', '=', 'out');

/** The mailbox keeps no sent folder any more (its owner unset it, e.g. Gmail files its own): nothing is owed. */
export async function waiveCopy(db: Database, workspaceId: string, messageId: string): Promise<void> {
  await sentMessage(db, workspaceId, messageId).set({ sent_copy: null, sent_copy_raw: null, sent_copy_next_at: null, sent_copy_error: null }).execute();
}

/** Filing failed: tried again at `nextAt`, the reason kept as a code. */
export async function markCopyFailed(db: Database, p: { workspaceId: string; messageId: string; nextAt: Date; error: string }): Promise<void> {
  await sentMessage(db, p.workspaceId, p.messageId)
    .set((eb) => ({ sent_copy_attempts: eb('sent_copy_attempts', '+', 1), sent_copy_next_at: p.nextAt, sent_copy_error: p.error }))
    .execute();
}

/**
 * How many copies each of a workspace's mailboxes still owes, and how many of them failed at least once (the mailbox
 * page, `outreach mailbox list`): one grouped read for all of them.
 */
export async function owedCopiesOf(db: Database, workspaceId: string, mailboxIds: string[]): Promise<Map<string, { owed: number; failing: number }>> {
  if (mailboxIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('email_messages')
    .where('workspace_id', '=', workspaceId)
    .select(['mailbox_id', sql<number>`count(*)::int`.as('owed'), sql<number>`count(*) FILTER (WHERE sent_copy_attempts > 0)::int`.as('failing')])
    .where('sent_copy', '=', 'owed')
    .where('mailbox_id', 'in', mailboxIds)
    .groupBy('mailbox_id')
    .execute();
  return new Map(rows.map((r) => [r.mailbox_id!, { owed: r.owed, failing: r.failing }]));
}

import { sql, type Selectable } from 'kysely';
import type { Database } from '../../../db/database.js';
import type { EmailInboundSeenTable } from '../../../db/schema.js';
import { isSamePerson } from '../../../domain/identity.js';
import type { TextCipher } from '../../../lib/crypto.js';
import type { MailboxHealth } from '../mailboxes/mailboxes.schemas.js';

// The inbox watcher's SQL: which mailbox to poll next (a lease on the mailbox row), its INBOX position, the
// once-only claim of each message, matching a message to a lead, and the effects of a bounce or a mailto
// unsubscribe. Every tenant read names the workspace.

export interface PollMailbox {
  id: string;
  workspaceId: string;
  accountId: string;
  address: string;
  /** null when it cannot be decrypted with the current key. */
  imapUrl: string | null;
  health: MailboxHealth;
  healthDetail: string | null;
  uidValidity: bigint | null;
  lastUid: number;
  createdAt: Date;
  /** The authserv-id whose Authentication-Results are believed for this mailbox besides its provider's (world-file contract). */
  trustedAuthservId: string | null;
  /** Connected with OAuth: IMAP logs in with XOAUTH2 and a token from oauth-tokens.ts. */
  oauth: boolean;
  /** A listener holds it in IDLE (idle.ts): polls are only the slow reconciliation then. */
  idleHeld: boolean;
}

/**
 * Takes up to `limit` mailboxes whose poll is due by `dueBy` (default `now`) and pushes their next poll `leaseSeconds` ahead of `now`, so another
 * worker skips them while this one reads (SKIP LOCKED; a crashed poll is retried once the lease ends).
 */
export async function claimDueMailboxes(
  db: Database,
  cipher: TextCipher,
  p: { now: Date; dueBy?: Date; limit: number; leaseSeconds: number },
): Promise<PollMailbox[]> {
  const now = p.now.toISOString();
  const dueBy = (p.dueBy ?? p.now).toISOString();
  const { rows } = await sql<PollMailboxRow>`
    WITH due AS (
      SELECT id FROM mailboxes WHERE next_poll_at <= ${dueBy}::timestamptz
      ORDER BY next_poll_at, id LIMIT ${p.limit} FOR UPDATE SKIP LOCKED
    )
    UPDATE mailboxes m SET next_poll_at = ${now}::timestamptz + make_interval(secs => ${p.leaseSeconds})
    FROM due WHERE m.id = due.id
    RETURNING ${POLL_COLUMNS}, m.idle_until > ${now}::timestamptz AS idle_held`.execute(db);
  return rows.map((r) => toPollMailbox(cipher, r));
}

/**
 * One mailbox as a poll reads it, whatever its schedule: an IDLE listener's read after the server announced new mail
 * (idle.ts). No lease is taken: the once-only claim of each message and the forward-only position (saveLastUid) keep
 * a read that overlaps a poll of another worker harmless. Null when the mailbox is gone.
 */
export async function loadPollMailbox(db: Database, cipher: TextCipher, mailboxId: string, now: Date): Promise<PollMailbox | null> {
  const { rows } = await sql<PollMailboxRow>`
    SELECT ${POLL_COLUMNS}, m.idle_until > ${now.toISOString()}::timestamptz AS idle_held
    FROM mailboxes m WHERE m.id = ${mailboxId}`.execute(db);
  return rows[0] ? toPollMailbox(cipher, rows[0]) : null;
}

interface PollMailboxRow {
  id: string;
  workspace_id: string;
  account_id: string;
  address: string;
  imap_url_enc: string;
  health: MailboxHealth;
  health_detail: string | null;
  imap_uidvalidity: string | null;
  imap_last_uid: string;
  created_at: Date;
  trusted_authserv_id: string | null;
  oauth_provider: string | null;
  idle_held: boolean | null;
}

const POLL_COLUMNS = sql.raw(`m.id, m.workspace_id, m.account_id, m.address, m.imap_url_enc, m.health, m.health_detail,
      m.imap_uidvalidity::text AS imap_uidvalidity, m.imap_last_uid::text AS imap_last_uid, m.created_at,
      m.trusted_authserv_id, m.oauth_provider`);

function toPollMailbox(cipher: TextCipher, r: PollMailboxRow): PollMailbox {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    accountId: r.account_id,
    address: r.address,
    imapUrl: cipher.decrypt(r.imap_url_enc),
    health: r.health,
    healthDetail: r.health_detail,
    uidValidity: r.imap_uidvalidity === null ? null : BigInt(r.imap_uidvalidity),
    lastUid: Number(r.imap_last_uid),
    createdAt: new Date(r.created_at),
    trustedAuthservId: r.trusted_authserv_id,
    oauth: r.oauth_provider !== null,
    idleHeld: r.idle_held === true,
  };
}

/**
 * Where the next poll starts, and when it is due. The position only moves forward within one UIDVALIDITY (a poll and
 * an IDLE listener's read may overlap); a new UIDVALIDITY replaces it.
 */
export async function savePollPosition(db: Database, p: { mailboxId: string; uidValidity: bigint; lastUid: number; nextPollAt: Date }): Promise<void> {
  await sql`UPDATE mailboxes SET ${positionSet(p)}, next_poll_at = ${p.nextPollAt.toISOString()}::timestamptz WHERE id = ${p.mailboxId}`.execute(db);
}

/**
 * The last UID handled, saved after each message (the poll's schedule is left alone: the lease still holds), so a
 * poll that stops half-way resumes after the last message it finished, never before it.
 */
export async function saveLastUid(db: Database, p: { mailboxId: string; uidValidity: bigint; lastUid: number }): Promise<void> {
  await sql`UPDATE mailboxes SET ${positionSet(p)} WHERE id = ${p.mailboxId}`.execute(db);
}

function positionSet(p: { uidValidity: bigint; lastUid: number }) {
  const v = p.uidValidity.toString();
  return sql`imap_last_uid = CASE WHEN imap_uidvalidity = ${v}::bigint THEN GREATEST(imap_last_uid, ${p.lastUid}::bigint) ELSE ${p.lastUid}::bigint END,
    imap_uidvalidity = ${v}::bigint`;
}

export async function setNextPoll(db: Database, mailboxId: string, nextPollAt: Date): Promise<void> {
  await db
    .updateTable('mailboxes')
    .set({ next_poll_at: nextPollAt as never })
    .where('id', '=', mailboxId)
    .execute();
}

/** The watcher's view of a mailbox's health: a failed IMAP login marks it; a good login clears only what IMAP marked. */
export async function setImapHealth(db: Database, mailboxId: string, health: MailboxHealth, detail: string | null, now: Date): Promise<void> {
  await db.updateTable('mailboxes').set({ health, health_detail: detail, health_checked_at: now }).where('id', '=', mailboxId).execute();
}

/**
 * Claims one INBOX message for handling: true for the one transaction that inserts it (the key is the
 * mailbox, UIDVALIDITY and UID), false when it was handled before. Runs inside the transaction that applies the
 * message's effects, so a failed transaction leaves the message for the next poll.
 */
export async function claimInboundMessage(
  trx: Database,
  p: { mailboxId: string; uidValidity: bigint; uid: number; outcome: string; now: Date; record?: InboundRecordFields },
): Promise<boolean> {
  const r = p.record;
  const row = await trx
    .insertInto('email_inbound_seen')
    .values({
      mailbox_id: p.mailboxId,
      uidvalidity: p.uidValidity.toString() as never,
      uid: p.uid as never,
      outcome: p.outcome,
      seen_at: p.now as never,
      ...(r && {
        workspace_id: r.workspaceId,
        received_at: r.receivedAt,
        message_id: r.messageId,
        tied_message_id: r.tiedMessageId,
        lead_id: r.leadId,
        verdict: r.verdict,
        reason: r.reason.slice(0, 200),
        label: r.label,
        confidence: r.confidence,
        needs_review: r.needsReview,
        excerpt: r.excerpt,
        detail: JSON.stringify(r.detail),
      }),
    })
    .onConflict((oc) => oc.columns(['mailbox_id', 'uidvalidity', 'uid']).doNothing())
    .returning('uid')
    .executeTakeFirst();
  return row !== undefined;
}

/** An inbound record's fields besides its claim (docs/email.md "The inbound record"); `excerpt` encrypted. */
export interface InboundRecordFields {
  workspaceId: string;
  receivedAt: Date | null;
  messageId: string | null;
  tiedMessageId: string | null;
  leadId: string | null;
  verdict: string;
  reason: string;
  label: string | null;
  confidence: number | null;
  needsReview: boolean;
  excerpt: string | null;
  detail: Record<string, unknown>;
}

/** What applying a claimed message did (its verdict as applied, and its effect), in the claim's transaction. */
export async function setInboundEffect(
  trx: Database,
  p: { mailboxId: string; uidValidity: bigint; uid: number; verdict: string; effect: string },
): Promise<void> {
  await trx
    .updateTable('email_inbound_seen')
    .set({ verdict: p.verdict, outcome: p.verdict, effect: p.effect.slice(0, 200) })
    .where('mailbox_id', '=', p.mailboxId)
    .where('uidvalidity', '=', p.uidValidity.toString() as never)
    .where('uid', '=', p.uid as never)
    .execute();
}

/**
 * Records an inbound message's Message-ID against its lead (threading for a `send` decision, and a second guard:
 * the same message seen again under a new UIDVALIDITY is not applied twice). False when it was already there.
 */
export async function recordInboundMessageId(
  trx: Database,
  p: { workspaceId: string; messageId: string; leadId: string; mailboxId: string; subject: string | null; at: Date },
): Promise<boolean> {
  const row = await trx
    .insertInto('email_messages')
    .values({
      workspace_id: p.workspaceId,
      message_id: `<${p.messageId}>`,
      lead_id: p.leadId,
      mailbox_id: p.mailboxId,
      idempotency_key: `in:${p.messageId}`,
      subject: p.subject,
      direction: 'in',
      sent_at: p.at as never,
    })
    .onConflict((oc) => oc.doNothing())
    .returning('message_id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * One of our sent messages (direction out) by its Message-ID (any of `ids`, first match in order wins): the lead it
 * went to, that lead's address now, and the address it went to as the driver recorded it (null on rows from before
 * migration 0024).
 */
export async function sentMessageByIds(
  db: Database,
  workspaceId: string,
  ids: string[],
): Promise<{ leadId: string; email: string | null; recipient: string | null; messageId: string; mailboxId: string | null } | null> {
  if (ids.length === 0) return null;
  const rows = await db
    .selectFrom('email_messages')
    .innerJoin('leads', (join) => join.onRef('leads.id', '=', 'email_messages.lead_id').onRef('leads.workspace_id', '=', 'email_messages.workspace_id'))
    .select([
      'email_messages.lead_id',
      'email_messages.message_id',
      'email_messages.mailbox_id',
      'leads.email',
      'email_messages.recipient',
      sql<string>`lower(btrim(email_messages.message_id, '<> '))`.as('mid'),
    ])
    .where('email_messages.workspace_id', '=', workspaceId)
    .where('email_messages.direction', '=', 'out')
    .where(sql<boolean>`lower(btrim(email_messages.message_id, '<> ')) IN (${sql.join(ids)})`)
    .execute();
  for (const id of ids) {
    const hit = rows.find((r) => r.mid === id);
    if (hit) return { leadId: hit.lead_id, email: hit.email, recipient: hit.recipient, messageId: hit.message_id, mailboxId: hit.mailbox_id };
  }
  return null;
}

/** A lead of the workspace (the one an unsubscribe token names), with its address; null when it is not there. */
export async function leadOfWorkspace(db: Database, workspaceId: string, leadId: string): Promise<{ id: string; email: string | null } | null> {
  const r = await db.selectFrom('leads').select(['id', 'email']).where('workspace_id', '=', workspaceId).where('id', '=', leadId).executeTakeFirst();
  return r ?? null;
}

/**
 * A contacted lead of the workspace with this address, however either is spelled (its e-mail identity key,
 * domain/identity.ts): the one this mailbox wrote to first, then the one last e-mailed, then the one last messaged on
 * any channel.
 */
export async function contactedLeadByAddress(db: Database, workspaceId: string, address: string, mailboxId: string): Promise<string | null> {
  const r = await db
    .selectFrom('leads')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => isSamePerson(eb, workspaceId, [{ email: address, linkedinUrl: null, xUserId: null }]))
    .where((eb) => eb.or([eb('messaged_at', 'is not', null), eb('invited_at', 'is not', null)]))
    .orderBy(sql`(mailbox_id IS NOT DISTINCT FROM ${mailboxId}) DESC`)
    .orderBy(sql`(last_message_channel = 'email') DESC`)
    .orderBy(sql`messaged_at DESC NULLS LAST`)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return r?.id ?? null;
}

export interface InboxLead {
  id: string;
  workspace_id: string;
  account_id: string | null;
  email: string | null;
  stage: string;
  x_user_id: string | null;
  username: string | null;
  x_account_user_id: string | null;
}

export async function lockLead(trx: Database, workspaceId: string, leadId: string): Promise<InboxLead | null> {
  const r = await trx
    .selectFrom('leads')
    .select(['id', 'workspace_id', 'account_id', 'email', 'stage', 'x_user_id', 'username', 'account_user_id as x_account_user_id'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', leadId)
    .forUpdate()
    .executeTakeFirst();
  return (r as InboxLead | undefined) ?? null;
}

/** Mailboxes of a workspace whose last check failed (readiness). */
export async function failedMailboxes(
  db: Database,
  workspaceId: string,
): Promise<{ id: string; address: string; health: MailboxHealth; checkedAt: Date | null; oauthProvider: 'google' | 'microsoft' | null }[]> {
  const rows = await db
    .selectFrom('mailboxes')
    .select(['id', 'address', 'health', 'health_checked_at', 'oauth_provider'])
    .where('workspace_id', '=', workspaceId)
    .where('health', 'in', ['auth_failed', 'unreachable'])
    .orderBy('address')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    address: r.address,
    health: r.health,
    checkedAt: r.health_checked_at ? new Date(r.health_checked_at) : null,
    oauthProvider: r.oauth_provider,
  }));
}

/** A mailbox of the workspace by its id or its address (case-insensitive); null when it is not there. */
export async function findMailboxRef(db: Database, workspaceId: string, ref: string): Promise<{ id: string; address: string } | null> {
  const r = await db
    .selectFrom('mailboxes')
    .select(['id', 'address'])
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('id', '=', ref), eb(eb.fn('lower', ['address']), '=', ref.trim().toLowerCase())]))
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return r ?? null;
}

/** An inbound record as read back: the email_inbound_seen row without the watcher's outcome code and workspace. */
export type InboundRecordRow = Omit<Selectable<EmailInboundSeenTable>, 'outcome' | 'workspace_id'>;

/**
 * One page of a mailbox's inbound records, newest first (keyset on seen_at, uidvalidity, uid; indexes
 * email_inbound_seen_list and email_inbound_seen_verdict). `after`: the last row of the previous page.
 */
export async function listInboundRecords(
  db: Database,
  p: { workspaceId: string; mailboxId: string; verdict?: string; after?: { seenAt: Date; uidValidity: number; uid: number }; limit: number },
): Promise<InboundRecordRow[]> {
  let q = db
    .selectFrom('email_inbound_seen')
    .select([
      'mailbox_id',
      'uidvalidity',
      'uid',
      'seen_at',
      'received_at',
      'message_id',
      'tied_message_id',
      'lead_id',
      'verdict',
      'reason',
      'effect',
      'label',
      'confidence',
      'needs_review',
      'excerpt',
      'detail',
    ])
    .where('mailbox_id', '=', p.mailboxId)
    // Rows from before migration 0035 carry the workspace through their mailbox only.
    .where((eb) => eb.or([eb('workspace_id', '=', p.workspaceId), eb('workspace_id', 'is', null)]));
  if (p.verdict) q = q.where('verdict', '=', p.verdict);
  const a = p.after;
  if (a) q = q.where(sql<boolean>`(seen_at, uidvalidity, uid) < (${a.seenAt}::timestamptz, ${String(a.uidValidity)}::bigint, ${String(a.uid)}::bigint)`);
  const rows = await q.orderBy('seen_at', 'desc').orderBy('uidvalidity', 'desc').orderBy('uid', 'desc').limit(p.limit).execute();
  return rows.map((r) => ({
    ...r,
    uidvalidity: Number(r.uidvalidity),
    uid: Number(r.uid),
    seen_at: new Date(r.seen_at),
    received_at: r.received_at ? new Date(r.received_at) : null,
    needs_review: !!r.needs_review,
    detail: (typeof r.detail === 'string' ? (JSON.parse(r.detail) as Record<string, unknown>) : r.detail) ?? null,
  }));
}

/** Removes inbound records read before `before` (the retention window), at most `limit` per call; how many went. */
export async function pruneInboundRecords(db: Database, before: Date, limit: number): Promise<number> {
  const res = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM email_inbound_seen WHERE ctid IN (SELECT ctid FROM email_inbound_seen WHERE seen_at < ${before} LIMIT ${limit})
      RETURNING 1
    ) SELECT count(*)::int AS n FROM gone`.execute(db);
  return Number(res.rows[0]?.n ?? 0);
}

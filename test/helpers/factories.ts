import { sql } from 'kysely';
import type { Insertable } from 'kysely';
import { writeLeadIdentities } from '../../src/domain/identity.repository.js';
import type { Database } from '../../src/db/database.js';
import type { CandidatesTable, DB, LeadsTable } from '../../src/db/schema.js';
import type { TextCipher } from '../../src/lib/crypto.js';
import { newId, newMessagingAccountId } from '../../src/lib/ids.js';

// The one home of direct inserts for rows the public API cannot create (connected accounts, sequences, Plays,
// discovered candidates, leads, ledger entries, encrypted replies), independent of the world-file loader.
// One function per entity; every column a test does not name takes a default here or in the database.

let serial = 0;
/** A user id no other fixture of the process uses, so tests never collide by accident. */
export const nextXUserId = () => String(7_000_000_000 + ++serial);

export interface WorkspaceState {
  xChannelEnabled?: boolean;
  billingStatus?: 'active' | 'trialing' | 'past_due' | 'canceled';
  energyBalance?: number;
  energyDailyRefill?: number;
  energyRefilledAt?: Date;
  bookingLink?: string | null;
  followUpSequenceId?: string | null;
}

export async function setWorkspaceState(db: Database, workspaceId: string, state: WorkspaceState) {
  await db
    .updateTable('workspaces')
    .set({
      ...(state.xChannelEnabled !== undefined && { x_channel_enabled: state.xChannelEnabled }),
      ...(state.billingStatus !== undefined && { billing_status: state.billingStatus }),
      ...(state.energyBalance !== undefined && { energy_balance: state.energyBalance }),
      ...(state.energyDailyRefill !== undefined && { energy_daily_refill: state.energyDailyRefill }),
      ...(state.energyRefilledAt !== undefined && { energy_refilled_at: state.energyRefilledAt }),
      ...(state.bookingLink !== undefined && { booking_link: state.bookingLink }),
      ...(state.followUpSequenceId !== undefined && { follow_up_sequence_id: state.followUpSequenceId }),
    })
    .where('id', '=', workspaceId)
    .execute();
}

export async function insertXAccount(db: Database, workspaceId: string, f: { userId?: string; handle?: string; createdAt?: Date } = {}) {
  const userId = f.userId ?? nextXUserId();
  const handle = f.handle ?? `acct_${userId}`;
  await db
    .insertInto('x_accounts')
    .values({ workspace_id: workspaceId, user_id: userId, handle, ...(f.createdAt && { created_at: f.createdAt }) })
    .execute();
  return { userId, handle };
}

export type MessagingAccountFixture = Partial<Omit<Insertable<DB['messaging_accounts']>, 'workspace_id'>>;

export async function insertMessagingAccount(db: Database, workspaceId: string, f: MessagingAccountFixture = {}) {
  const id = f.id ?? newMessagingAccountId();
  await db
    .insertInto('messaging_accounts')
    .values({
      name: `Account ${id.slice(4, 12)}`,
      mode: 'linkedin',
      stored_status: 'connected',
      connected_at: new Date('2026-10-01T00:00:00.000Z'),
      warmup_started_at: null,
      account_score: null,
      relations_count: null,
      ...f,
      id,
      workspace_id: workspaceId,
    })
    .execute();
  return id;
}

export interface SequenceFixture {
  id?: string;
  name?: string;
  status?: 'draft' | 'active' | 'paused' | 'archived';
  revision?: number;
  /** Defaults to `revision` (approved); pass null for never approved. */
  approvedRevision?: number | null;
  approvedAt?: Date | null;
  channels?: string[];
  // Loose on purpose: tests store steps that omit optional fields, as world files and older rows may.
  steps?: object[];
  createdAt?: Date;
}

/** The one-step X sequence a Play sends with (spread into a SequenceFixture). */
/** A stored step with every field the API answers: null or [] where `f` says nothing. */
export function stepRow(f: { index: number; kind: string } & Record<string, unknown>) {
  return { delayDays: 0, subject: null, message: null, actions: [], variants: null, tool: null, ...f };
}

export const X_SEQUENCE = {
  channels: ['x'],
  steps: [{ index: 0, kind: 'x_dm', delayDays: 0, subject: null, message: 'Hi', actions: [], variants: null, tool: null }],
} satisfies SequenceFixture;

export async function insertSequence(db: Database, workspaceId: string, f: SequenceFixture = {}) {
  const id = f.id ?? newId();
  const revision = f.revision ?? 1;
  const approvedRevision = f.approvedRevision === undefined ? revision : f.approvedRevision;
  await db
    .insertInto('sequences')
    .values({
      id,
      workspace_id: workspaceId,
      name: f.name ?? `Sequence ${id.slice(0, 8)}`,
      status: f.status ?? 'active',
      revision,
      approved_revision: approvedRevision,
      approved_at: f.approvedAt !== undefined ? f.approvedAt : approvedRevision === null ? null : new Date('2026-11-01T09:00:00.000Z'),
      channels: f.channels ?? ['linkedin'],
      steps: JSON.stringify(f.steps ?? [{ index: 0, kind: 'connect', delayDays: 0, subject: null, message: 'Hi', actions: [], variants: null, tool: null }]),
      ...(f.createdAt && { created_at: f.createdAt }),
    })
    .execute();
  return id;
}

export interface PlayFixture {
  id?: string;
  name?: string;
  status?: 'active' | 'paused' | 'archived';
  revision?: number;
  sequenceId?: string | null;
  accountUserId?: string | null;
  reviewApiEnabled?: boolean;
  autopilot?: boolean;
  createdAt?: Date;
}

export async function insertPlay(db: Database, workspaceId: string, f: PlayFixture = {}) {
  const id = f.id ?? newId();
  const play = {
    id,
    name: f.name ?? `Play ${id.slice(0, 8)}`,
    status: f.status ?? 'active',
    revision: f.revision ?? 1,
    sequenceId: f.sequenceId ?? null,
    accountUserId: f.accountUserId ?? null,
    reviewApiEnabled: f.reviewApiEnabled ?? true,
    autopilot: f.autopilot ?? false,
  };
  await db
    .insertInto('plays')
    .values({
      id,
      workspace_id: workspaceId,
      name: play.name,
      status: play.status,
      revision: play.revision,
      sequence_id: play.sequenceId,
      account_user_id: play.accountUserId,
      review_api_enabled: play.reviewApiEnabled,
      autopilot: play.autopilot,
      ...(f.createdAt && { created_at: f.createdAt }),
    })
    .execute();
  return play;
}

/**
 * A Play ready for import and enrollment: a connected sender, an approved active X sequence, the review API on.
 * Overrides go to the Play and the sequence.
 */
export async function insertReviewPlay(db: Database, workspaceId: string, f: { play?: PlayFixture; sequence?: SequenceFixture } = {}) {
  const account = await insertXAccount(db, workspaceId);
  const sequenceFixture = { ...X_SEQUENCE, ...f.sequence };
  const sequence = {
    id: await insertSequence(db, workspaceId, sequenceFixture),
    status: sequenceFixture.status ?? 'active',
    revision: sequenceFixture.revision ?? 1,
  };
  const play = await insertPlay(db, workspaceId, { sequenceId: sequence.id, accountUserId: account.userId, ...f.play });
  return { account, sequence, play };
}

export interface CandidateFixture {
  id?: string;
  xUserId?: string;
  username?: string | null;
  name?: string | null;
  status?: 'proposed' | 'approved' | 'imported' | 'rejected';
  /** Sets a matching status unless `status` is given: good_fit → approved, not_a_good_fit → rejected. */
  review?: { decision: 'good_fit' | 'not_a_good_fit'; reviewedAt?: Date; by?: string } | null;
  batchId?: string | null;
}

/** One multi-row insert; candidates come back in the order given. */
export async function insertCandidates(db: Database, workspaceId: string, playId: string, list: CandidateFixture[]) {
  const rows: Insertable<CandidatesTable>[] = list.map((c) => {
    const xUserId = c.xUserId ?? nextXUserId();
    const review = c.review ?? null;
    return {
      id: c.id ?? newId(),
      workspace_id: workspaceId,
      play_id: playId,
      batch_id: c.batchId ?? null,
      x_user_id: xUserId,
      username: c.username === undefined ? `user_${xUserId}` : c.username,
      name: c.name === undefined ? `Person ${xUserId}` : c.name,
      status: c.status ?? (review ? (review.decision === 'good_fit' ? 'approved' : 'rejected') : 'proposed'),
      review_decision: review?.decision ?? null,
      reviewed_at: review ? (review.reviewedAt ?? new Date('2026-11-10T10:00:00.000Z')) : null,
      reviewed_by: review ? (review.by ?? 'reviewer@example.com') : null,
    };
  });
  if (rows.length > 0) await db.insertInto('candidates').values(rows).execute();
  return rows.map((r) => ({ id: r.id, xUserId: r.x_user_id, username: r.username ?? null, name: r.name ?? null, status: r.status }));
}

/** A discovery batch, so candidates can be spread over several batches of one Play. */
export async function insertBatch(db: Database, workspaceId: string, playId: string, source: 'discovery' | 'import' | 'seed' = 'discovery') {
  const id = newId();
  await db.insertInto('candidate_batches').values({ id, workspace_id: workspaceId, play_id: playId, source, request_id: null }).execute();
  return id;
}

const identityTables = new WeakMap<object, Promise<boolean>>();
/** Whether this database has migration 0036's lead_identities (asked once per database handle). */
function hasLeadIdentities(db: Database): Promise<boolean> {
  let known = identityTables.get(db);
  if (!known) {
    known = sql<{ t: string | null }>`SELECT to_regclass('lead_identities')::text AS t`.execute(db).then((r) => r.rows[0]?.t != null);
    identityTables.set(db, known);
  }
  return known;
}

export type LeadFixture = Partial<Omit<Insertable<LeadsTable>, 'workspace_id'>>;

/** Every column the fixture does not name takes its database default (null for the nullable ones). */
export async function insertLead(db: Database, workspaceId: string, f: LeadFixture = {}) {
  const id = f.id ?? newId();
  await db
    .insertInto('leads')
    .values({ ...f, id, workspace_id: workspaceId })
    .execute();
  // As the service's writers do (domain/identity.repository.ts); a database migrated only up to an older migration
  // (a migration's test) has no lead_identities yet.
  if (await hasLeadIdentities(db))
    await writeLeadIdentities(db, [
      { id, workspace_id: workspaceId, email: f.email, linkedin_url: f.linkedin_url, x_user_id: f.x_user_id, username: f.username },
    ]);
  return id;
}

export async function insertActivity(
  db: Database,
  workspaceId: string,
  f: {
    action: string;
    outcome?: 'ok' | 'skipped' | 'failed';
    createdAt: Date | string;
    accountId?: string | null;
    leadId?: string | null;
    detail?: string;
    units?: number;
    id?: string;
  },
) {
  const id = f.id ?? newId();
  await db
    .insertInto('activity')
    .values({
      id,
      workspace_id: workspaceId,
      created_at: f.createdAt,
      action: f.action,
      outcome: f.outcome ?? 'ok',
      units: f.units ?? 0,
      detail: f.detail ?? '',
      account_id: f.accountId ?? null,
      lead_id: f.leadId ?? null,
    })
    .execute();
  return id;
}

/** Message text goes in encrypted, exactly as the engine stores it; `raw` stores a value as is (to simulate unreadable text). */
export async function insertReply(
  db: Database,
  cipher: TextCipher,
  workspaceId: string,
  f: {
    leadId: string;
    id?: string;
    channel?: string;
    classification?: string;
    theirMessage?: string | null;
    draft?: string | null;
    rawTheirMessage?: string | null;
    rawDraft?: string | null;
    repliedAt?: Date | string;
    state?: 'pending' | 'snoozed' | 'decided';
    snoozedUntil?: Date | null;
  },
) {
  const id = f.id ?? newId();
  await db
    .insertInto('replies')
    .values({
      id,
      workspace_id: workspaceId,
      lead_id: f.leadId,
      channel: f.channel ?? 'linkedin',
      classification: f.classification ?? 'meeting_intent',
      their_message:
        f.rawTheirMessage !== undefined ? f.rawTheirMessage : cipher.encrypt(f.theirMessage === undefined ? 'Sounds good, can we talk?' : f.theirMessage),
      draft: f.rawDraft !== undefined ? f.rawDraft : cipher.encrypt(f.draft === undefined ? 'Great, here is a time.' : f.draft),
      replied_at: f.repliedAt ?? new Date('2026-11-20T10:00:00.000Z'),
      state: f.state ?? 'pending',
      decision: null,
      decided_at: null,
      decided_by: null,
      snoozed_until: f.snoozedUntil ?? null,
    })
    .execute();
  return id;
}

/** One inbound message as the inbox watcher records it (email_inbound_seen; docs/email.md "The inbound record"). */
export interface InboundSeenFixture {
  mailboxId: string;
  workspaceId: string;
  uidvalidity?: number;
  uid: number;
  seenAt: Date;
  receivedAt?: Date | null;
  messageId?: string | null;
  /** The Message-ID of ours it answers, when it was tied to one. */
  tiedMessageId?: string | null;
  leadId?: string | null;
  /** The watcher's verdict (the row's outcome too). */
  verdict: string;
  reason?: string | null;
  effect?: string | null;
  label?: string | null;
  confidence?: number | null;
  needsReview?: boolean;
  /** Stored encrypted with `cipher`. */
  excerpt?: string | null;
}

export async function insertInboundSeen(db: Database, cipher: TextCipher, f: InboundSeenFixture) {
  await db
    .insertInto('email_inbound_seen')
    .values({
      mailbox_id: f.mailboxId,
      uidvalidity: String(f.uidvalidity ?? 1) as never,
      uid: f.uid as never,
      outcome: f.verdict,
      seen_at: f.seenAt as never,
      workspace_id: f.workspaceId,
      received_at: f.receivedAt ?? null,
      message_id: f.messageId ?? null,
      tied_message_id: f.tiedMessageId ?? null,
      lead_id: f.leadId ?? null,
      verdict: f.verdict,
      reason: f.reason ?? null,
      effect: f.effect ?? null,
      label: f.label ?? null,
      confidence: f.confidence ?? null,
      needs_review: f.needsReview ?? false,
      excerpt: cipher.encrypt(f.excerpt ?? null),
      detail: JSON.stringify({}),
    })
    .execute();
}

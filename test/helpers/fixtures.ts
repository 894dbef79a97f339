import type { Insertable } from 'kysely';
import type { Database } from '../../src/db/database.js';
import type { CandidatesTable } from '../../src/db/schema.js';
import { newId } from '../../src/lib/ids.js';
import { insertLead, type LeadFixture } from './seq-fixtures.js';

// Direct inserts for rows the public API cannot create (connected accounts, sequences, Plays, discovered
// candidates, leads), independent of the world-file loader. Every builder returns what it made.

let serial = 0;
/** A user id no other fixture of the process uses, so tests never collide by accident. */
export const nextXUserId = () => String(7_000_000_000 + ++serial);

export async function setXChannel(db: Database, workspaceId: string, enabled: boolean) {
  await db.updateTable('workspaces').set({ x_channel_enabled: enabled }).where('id', '=', workspaceId).execute();
}

export async function addXAccount(db: Database, workspaceId: string, f: { userId?: string; handle?: string; createdAt?: Date } = {}) {
  const userId = f.userId ?? nextXUserId();
  const handle = f.handle ?? `acct_${userId}`;
  await db
    .insertInto('x_accounts')
    .values({ workspace_id: workspaceId, user_id: userId, handle, ...(f.createdAt && { created_at: f.createdAt }) })
    .execute();
  return { userId, handle };
}

export interface SequenceFixture {
  id?: string;
  name?: string;
  status?: 'draft' | 'active' | 'paused' | 'archived';
  revision?: number;
  /** Defaults to `revision` (approved); null means never approved. */
  approvedRevision?: number | null;
}

export async function addSequence(db: Database, workspaceId: string, f: SequenceFixture = {}) {
  const id = f.id ?? newId();
  const revision = f.revision ?? 1;
  const approvedRevision = f.approvedRevision === undefined ? revision : f.approvedRevision;
  const row = {
    id,
    status: f.status ?? ('active' as const),
    workspace_id: workspaceId,
    name: f.name ?? `Sequence ${id.slice(0, 8)}`,
    revision,
    approved_revision: approvedRevision,
    approved_at: approvedRevision === null ? null : new Date('2026-11-01T09:00:00.000Z'),
    steps: JSON.stringify([{ index: 0, kind: 'x_dm', delayDays: 0, subject: null, message: 'Hi', actions: [], variants: null, tool: null }]),
    channels: ['x'],
  };
  await db.insertInto('sequences').values(row).execute();
  return { id, name: row.name, status: row.status, revision, approvedRevision };
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

export async function addPlay(db: Database, workspaceId: string, f: PlayFixture = {}) {
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
 * A Play ready for import and enrollment: a connected sender, an approved active sequence, the review API on.
 * Overrides go to the Play and the sequence.
 */
export async function addReviewPlay(db: Database, workspaceId: string, f: { play?: PlayFixture; sequence?: SequenceFixture } = {}) {
  const account = await addXAccount(db, workspaceId);
  const sequence = await addSequence(db, workspaceId, f.sequence);
  const play = await addPlay(db, workspaceId, { sequenceId: sequence.id, accountUserId: account.userId, ...f.play });
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
export async function addCandidates(db: Database, workspaceId: string, playId: string, list: CandidateFixture[]) {
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
export async function addBatch(db: Database, workspaceId: string, playId: string, source: 'discovery' | 'import' | 'seed' = 'discovery') {
  const id = newId();
  await db.insertInto('candidate_batches').values({ id, workspace_id: workspaceId, play_id: playId, source, request_id: null }).execute();
  return id;
}

export type { LeadFixture } from './seq-fixtures.js';

export async function addLead(db: Database, workspaceId: string, f: LeadFixture = {}) {
  return { id: await insertLead(db, workspaceId, f) };
}

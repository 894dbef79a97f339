import { sql } from 'kysely';
import { writeLeadIdentities } from '../../domain/identity.repository.js';
import { enteringLane } from '../../domain/lanes.js';
import type { Database } from '../../db/database.js';
import type { CandidateFilter, LeadStage } from '../../domain/vocabulary.js';

export type { CandidateFilter };

const candidateColumns = ['id', 'x_user_id', 'username', 'name', 'status', 'review_decision', 'reviewed_at', 'reviewed_by'] as const;
/** The Play row every read and lock answers; authoring's insert and update return it too. */
export const playColumns = ['id', 'name', 'kind', 'status', 'revision', 'sequence_id', 'account_user_id', 'review_api_enabled', 'autopilot'] as const;
const existingLeadColumns = ['id', 'x_user_id', 'username', 'sequence_id', 'play_id', 'candidate_id', 'stage', 'created_at'] as const;

// Lists of up to 200 values travel as one array parameter, not one parameter each: the statement then binds and
// plans in constant time, which measurably matters at 200 values (and more so for multi-row inserts below).
const anyUuid = (values: readonly string[]) => sql<string>`any(${[...values]}::uuid[])`;
const anyText = (values: readonly string[]) => sql<string>`any(${[...values]}::text[])`;

export type CandidateRow = Awaited<ReturnType<typeof findCandidatesByIds>>[number];
export type PlayRow = NonNullable<Awaited<ReturnType<typeof findPlay>>>;
export type ExistingLeadRow = Awaited<ReturnType<typeof findLeadsByXUserIds>>[number];

export async function xAccountExists(db: Database, workspaceId: string, userId: string) {
  const row = await db.selectFrom('x_accounts').select('user_id').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst();
  return row !== undefined;
}

export async function listPlays(db: Database, workspaceId: string) {
  return db.selectFrom('plays').select(playColumns).where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('id').execute();
}

const selectPlay = (db: Database, workspaceId: string, playId: string) =>
  db.selectFrom('plays').select(playColumns).where('workspace_id', '=', workspaceId).where('id', '=', playId);

export async function findPlay(db: Database, workspaceId: string, playId: string) {
  return selectPlay(db, workspaceId, playId).executeTakeFirst();
}

/**
 * Serializes the candidate writes of one Play (import, review, enrollment, discovery) and pins the revision checked
 * for the rest of the transaction.
 * NO KEY UPDATE rather than UPDATE: it still excludes a concurrent revision change, but not the key-share locks
 * that every insert referencing the Play (candidates, leads, batches) takes, so other writers are not stalled.
 */
export async function lockPlayForCandidates(db: Database, workspaceId: string, playId: string) {
  return selectPlay(db, workspaceId, playId).forNoKeyUpdate().executeTakeFirst();
}

/**
 * An edit of the Play's setup (authoring). It conflicts with lockPlayForCandidates, so an edit and an enrollment
 * never interleave; a full UPDATE lock, unlike that one, also holds back inserts referencing the Play meanwhile.
 */
export async function lockPlayForEdit(db: Database, workspaceId: string, playId: string) {
  return selectPlay(db, workspaceId, playId).forUpdate().executeTakeFirst();
}

const sequenceColumns = ['id', 'name', 'status', 'revision', 'approved_revision'] as const;

export async function findSequence(db: Database, workspaceId: string, sequenceId: string) {
  return db.selectFrom('sequences').select(sequenceColumns).where('workspace_id', '=', workspaceId).where('id', '=', sequenceId).executeTakeFirst();
}

export async function candidateCounts(db: Database, workspaceId: string, playId: string) {
  const row = await db
    .selectFrom('play_candidate_counts')
    .select(['total', 'good_fit', 'not_a_good_fit'])
    .where('workspace_id', '=', workspaceId)
    .where('play_id', '=', playId)
    .executeTakeFirst();
  return { total: Number(row?.total ?? 0), goodFit: Number(row?.good_fit ?? 0), notAGoodFit: Number(row?.not_a_good_fit ?? 0) };
}

/** A candidate's public profile (migration 0025) rides along in the same query: one primary-key join per row. */
const profileColumns = [
  'x_profiles.bio as profile_bio',
  'x_profiles.location as profile_location',
  'x_profiles.followers_count as profile_followers_count',
  'x_profiles.profile_image_url as profile_image_url',
  'x_profiles.last_post_text as profile_last_post_text',
  'x_profiles.last_post_at as profile_last_post_at',
] as const;
const qualifiedCandidateColumns = candidateColumns.map((c) => `candidates.${c}` as const);

export type CandidateProfileRow = Awaited<ReturnType<typeof listCandidatesPage>>[number];

/** Keyset page in id order; fetches one extra row so the caller knows whether another page exists. */
export async function listCandidatesPage(db: Database, workspaceId: string, playId: string, page: { filter: CandidateFilter; after?: string; limit: number }) {
  let q = db
    .selectFrom('candidates')
    .leftJoin('x_profiles', 'x_profiles.x_user_id', 'candidates.x_user_id')
    .select(qualifiedCandidateColumns)
    .select(profileColumns)
    .where('candidates.workspace_id', '=', workspaceId)
    .where('candidates.play_id', '=', playId);
  if (page.filter === 'unreviewed') q = q.where('candidates.review_decision', 'is', null);
  // A literal, not a parameter: the partial index for the filter is only chosen when the planner sees the value.
  else if (page.filter !== 'all') q = q.where('candidates.review_decision', '=', sql.lit(page.filter));
  if (page.after) q = q.where('candidates.id', '>', page.after);
  return q
    .orderBy('candidates.id')
    .limit(page.limit + 1)
    .execute();
}

/** One candidate with its profile, for redrawing a reviewed row; undefined when it is not this Play's. */
export async function findCandidateWithProfile(db: Database, workspaceId: string, playId: string, candidateId: string) {
  return db
    .selectFrom('candidates')
    .leftJoin('x_profiles', 'x_profiles.x_user_id', 'candidates.x_user_id')
    .select(qualifiedCandidateColumns)
    .select(profileColumns)
    .where('candidates.workspace_id', '=', workspaceId)
    .where('candidates.play_id', '=', playId)
    .where('candidates.id', '=', candidateId)
    .executeTakeFirst();
}

export async function findCandidatesByIds(db: Database, workspaceId: string, playId: string, ids: readonly string[]) {
  return db
    .selectFrom('candidates')
    .select(candidateColumns)
    .where('workspace_id', '=', workspaceId)
    .where('play_id', '=', playId)
    .where('id', '=', anyUuid(ids))
    .execute();
}

export async function findCandidatesByXUserIds(db: Database, workspaceId: string, playId: string, xUserIds: readonly string[]) {
  if (xUserIds.length === 0) return [];
  return db
    .selectFrom('candidates')
    .select(candidateColumns)
    .where('workspace_id', '=', workspaceId)
    .where('play_id', '=', playId)
    .where('x_user_id', '=', anyText(xUserIds))
    .execute();
}

/** `lowerUsernames` must already be lower-case and without `@`; the expression matches the candidates_username index. */
export async function findCandidatesByUsernames(db: Database, workspaceId: string, playId: string, lowerUsernames: readonly string[]) {
  if (lowerUsernames.length === 0) return [];
  return db
    .selectFrom('candidates')
    .select(candidateColumns)
    .where('workspace_id', '=', workspaceId)
    .where('play_id', '=', playId)
    .where(sql<string>`lower(username)`, '=', anyText(lowerUsernames))
    .execute();
}

export async function findLeadsByXUserIds(db: Database, workspaceId: string, xUserIds: readonly string[]) {
  if (xUserIds.length === 0) return [];
  return db
    .selectFrom('leads')
    .select(existingLeadColumns)
    .where('workspace_id', '=', workspaceId)
    .where('x_user_id', '=', anyText(xUserIds))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function findLeadsByUsernames(db: Database, workspaceId: string, lowerUsernames: readonly string[]) {
  if (lowerUsernames.length === 0) return [];
  return db
    .selectFrom('leads')
    .select(existingLeadColumns)
    .where('workspace_id', '=', workspaceId)
    .where(sql<string>`lower(username)`, '=', anyText(lowerUsernames))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function listPlayLeadsPage(db: Database, workspaceId: string, playId: string, page: { after?: string; limit: number }) {
  let q = db
    .selectFrom('leads')
    .select(['id', 'person', 'x_user_id', 'username', 'sequence_id', 'stage', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .where('play_id', '=', playId);
  if (page.after) q = q.where('id', '>', page.after);
  return q
    .orderBy('id')
    .limit(page.limit + 1)
    .execute();
}

export async function findImportRequest(db: Database, workspaceId: string, playId: string, requestId: string) {
  return db
    .selectFrom('import_requests')
    .select(['payload_hash', 'response'])
    .where('workspace_id', '=', workspaceId)
    .where('play_id', '=', playId)
    .where('request_id', '=', requestId)
    .executeTakeFirst();
}

/** The batch, its new candidates (status imported, no review) and the request record, in the caller's transaction. */
export async function insertImport(
  db: Database,
  rows: {
    batch: { id: string; workspace_id: string; play_id: string; request_id: string; created_at: Date };
    candidates: { id: string; x_user_id: string; name: string | null }[];
    request: { payload_hash: string; response: unknown };
  },
) {
  const { batch, candidates } = rows;
  await db
    .insertInto('candidate_batches')
    .values({ ...batch, source: 'import' })
    .execute();
  if (candidates.length > 0) {
    await db
      .insertInto('candidates')
      .columns(['id', 'workspace_id', 'play_id', 'batch_id', 'x_user_id', 'name', 'status', 'created_at'])
      .expression(
        sql`select r.id, ${batch.workspace_id}::uuid, ${batch.play_id}::uuid, ${batch.id}::uuid, r.x_user_id, r.name, 'imported', ${batch.created_at}::timestamptz
            from unnest(${candidates.map((c) => c.id)}::uuid[], ${candidates.map((c) => c.x_user_id)}::text[], ${candidates.map((c) => c.name)}::text[])
              as r(id, x_user_id, name)`,
      )
      .execute();
  }
  await db
    .insertInto('import_requests')
    .values({
      workspace_id: batch.workspace_id,
      play_id: batch.play_id,
      request_id: batch.request_id,
      payload_hash: rows.request.payload_hash,
      batch_id: batch.id,
      response: JSON.stringify(rows.request.response),
      created_at: batch.created_at,
    })
    .execute();
}

/**
 * Two enrollments through different Plays (or autopilot discovery) may race to create the first lead of one
 * identity; a transaction advisory lock on the identity's bucket makes the second wait and then see the first
 * one's lead. Buckets (256 per workspace, a power of two: the low bits of the hash), taken in a fixed order so two callers cannot deadlock, bound the
 * locks one transaction holds: a discovery run enrolling 5,000 followers must not exhaust the server's lock
 * table (max_locks_per_transaction). Identities sharing a bucket only wait for each other.
 */
export const IDENTITY_LOCK_BUCKETS = 256;

export async function lockIdentities(db: Database, workspaceId: string, xUserIds: readonly string[]) {
  if (xUserIds.length === 0) return;
  await sql`select pg_advisory_xact_lock(hashtextextended(k, 0))
    from (select distinct ${`lead-identity:${workspaceId}:`} || (hashtext(id) & ${IDENTITY_LOCK_BUCKETS - 1}) as k
          from unnest(${[...new Set(xUserIds)]}::text[]) as id order by k) s`.execute(db);
}

/** The candidate status that goes with each review decision. */
const REVIEWED_STATUS = { good_fit: 'approved', not_a_good_fit: 'rejected' } as const;

/**
 * Only candidates still without a decision are changed; the count tells the caller whether a review saved
 * elsewhere got in between its read and this write (cheaper than locking every row it reads).
 */
export async function markCandidatesReviewed(
  db: Database,
  workspaceId: string,
  playId: string,
  ids: readonly string[],
  review: { decision: keyof typeof REVIEWED_STATUS; at: Date; by: string },
) {
  if (ids.length === 0) return 0;
  const result = await db
    .updateTable('candidates')
    .set({ status: REVIEWED_STATUS[review.decision], review_decision: review.decision, reviewed_at: review.at, reviewed_by: review.by })
    .where('workspace_id', '=', workspaceId)
    .where('play_id', '=', playId)
    .where('id', '=', anyUuid(ids))
    .where('review_decision', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** New leads of one Play, queued entering its sequence (domain/lanes.ts `enteringLane`) due at `at`; the per-identity fields vary by row. */
export async function insertQueuedLeads(
  db: Database,
  shared: { workspaceId: string; playId: string; sequenceId: string; accountUserId: string; at: Date },
  rows: { id: string; candidate_id: string; x_user_id: string; username: string | null; person: string | null }[],
) {
  if (rows.length === 0) return;
  const stage: LeadStage = 'queued';
  const lane = enteringLane(shared.sequenceId, shared.at);
  await db
    .insertInto('leads')
    .columns([
      'id',
      'workspace_id',
      'person',
      'x_user_id',
      'username',
      'account_user_id',
      'sequence_id',
      'play_id',
      'candidate_id',
      'stage',
      'current_step',
      'next_action_at',
      'automation_stopped',
      'created_at',
      'updated_at',
    ])
    .expression(
      sql`select r.id, ${shared.workspaceId}::uuid, r.person, r.x_user_id, r.username, ${shared.accountUserId}, ${lane.sequence_id}::uuid,
                 ${shared.playId}::uuid, r.candidate_id, ${stage}, ${lane.current_step}::int, ${lane.next_action_at}::timestamptz, ${lane.automation_stopped}::boolean,
                 ${shared.at}::timestamptz, ${shared.at}::timestamptz
          from unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.person)}::text[], ${rows.map((r) => r.x_user_id)}::text[],
                      ${rows.map((r) => r.username)}::text[], ${rows.map((r) => r.candidate_id)}::uuid[])
            as r(id, person, x_user_id, username, candidate_id)`,
    )
    .execute();
  await writeLeadIdentities(
    db,
    rows.map((r) => ({ id: r.id, workspace_id: shared.workspaceId, x_user_id: r.x_user_id, username: r.username })),
  );
}

/** A unique-key race (another writer committed the same identity or requestId first); worth one fresh retry. */
export function uniqueViolationConstraint(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const e = error as { code?: unknown; constraint?: unknown; cause?: unknown };
  if (e.code === '23505') return typeof e.constraint === 'string' ? e.constraint : '';
  return e.cause ? uniqueViolationConstraint(e.cause) : null;
}

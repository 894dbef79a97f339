import { conflict, notFound } from '../../lib/errors.js';
import { iso } from '../../domain/iso.js';
import type { CandidateProfileRow, CandidateRow, ExistingLeadRow, PlayRow } from './plays.repository.js';

// The Play gates and views that reads and writes of Plays share.

export function toCandidate(row: CandidateRow) {
  return {
    id: row.id,
    xUserId: row.x_user_id,
    username: row.username,
    name: row.name,
    status: row.status,
    review: row.review_decision ? { decision: row.review_decision, reviewedAt: iso(row.reviewed_at), by: row.reviewed_by } : null,
  };
}

/** The public profile shown where a person reviews candidates (console only; the API's candidate view is unchanged). */
export function toCandidateWithProfile(row: CandidateProfileRow) {
  const profile = {
    bio: row.profile_bio,
    location: row.profile_location,
    followersCount: row.profile_followers_count === null ? null : Number(row.profile_followers_count),
    hasPicture: row.profile_image_url !== null,
    lastPost: row.profile_last_post_text === null ? null : { text: row.profile_last_post_text, createdAt: iso(row.profile_last_post_at) },
  };
  return { ...toCandidate(row), profile };
}

export const toCounts = (c: { total: number; goodFit: number; notAGoodFit: number }) => ({
  total: c.total,
  unreviewed: c.total - c.goodFit - c.notAGoodFit,
  goodFit: c.goodFit,
  notAGoodFit: c.notAGoodFit,
});

export const toExistingLead = (l: ExistingLeadRow) => ({ id: l.id, sequenceId: l.sequence_id, playId: l.play_id, stage: l.stage });

/** Handles match case-insensitively with the `@` optional, the way the candidates_username index stores them. */
export const normalizeHandle = (handle: string) => handle.replace(/^@/, '').toLowerCase();

/** One page of a keyset walk: the extra row fetched past `limit` only says whether another page exists. */
export function page<T extends { id: string }>(rows: T[], limit: number) {
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  return { items, hasMore, nextCursor: hasMore ? items[items.length - 1].id : null };
}

/** The lead an identity's candidate is reported with: the one made from this candidate, else this Play's, else the oldest. */
export function pickLead(leads: ExistingLeadRow[] | undefined, candidateId: string, playId: string) {
  if (!leads || leads.length === 0) return null;
  return leads.find((l) => l.candidate_id === candidateId) ?? leads.find((l) => l.play_id === playId) ?? leads[0];
}

export function groupBy<T>(rows: T[], key: (row: T) => string | null) {
  const map = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    if (k === null) continue;
    const list = map.get(k);
    if (list) list.push(row);
    else map.set(k, [row]);
  }
  return map;
}

export function duplicatesOf(values: string[]) {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const v of values) (seen.has(v) ? dup : seen).add(v);
  return [...dup];
}

/** Unknown, another workspace's and review-API-disabled Plays are indistinguishable to the caller. */
export function assertReviewable(play: PlayRow | undefined): asserts play is PlayRow {
  if (!play || !play.review_api_enabled) throw notFound('play');
}

export function assertManualPlay(play: PlayRow) {
  if (play.status === 'archived') throw conflict('play_archived', 'the Play is archived', { playId: play.id });
  if (play.autopilot) throw conflict('play_autopilot', 'autopilot Plays cannot use manual import or enrollment', { playId: play.id });
}

export function assertPlayRevision(play: PlayRow, expected: number) {
  if (play.revision !== expected) {
    throw conflict('stale_play_revision', `the Play is at revision ${play.revision}, not ${expected}`, { currentRevision: play.revision });
  }
}

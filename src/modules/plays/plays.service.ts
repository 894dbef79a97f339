import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { badRequest, conflict } from '../../lib/errors.js';
import * as repo from './plays.repository.js';
import type { CandidateFilter } from './plays.repository.js';
import { assertReviewable, groupBy, normalizeHandle, page, toCandidate, toCandidateWithProfile, toCounts, toExistingLead } from './plays.rules.js';
import { toPlayView } from '../../domain/play-view.js';
import { createPlayWrites } from './plays.writes.js';
import { listXAccounts } from '../workspaces/index.js';

export { API_REVIEWER, AUTOPILOT_REVIEWER } from './plays.writes.js';
export type { EnrollInput, EnrollOptions, Enroller, ImportInput, ReviewDecision, ReviewInput, ReviewOptions, WriteOptions } from './plays.writes.js';

export type LookupIdentity = { xUserId: string; username?: undefined } | { username: string; xUserId?: undefined };

export function createPlaysService(deps: { db: Database; config: Pick<Config, 'publicBase'>; clock: Clock }) {
  const { db, clock } = deps;
  const reviewUrl = (playId: string) => `${deps.config.publicBase.url()}/review/plays/${playId}`;

  async function requirePlay(workspaceId: string, playId: string) {
    const play = await repo.findPlay(db, workspaceId, playId);
    assertReviewable(play);
    return play;
  }

  async function listAccounts(workspaceId: string) {
    const rows = await listXAccounts(db, workspaceId);
    return { accounts: rows.map((r) => ({ userId: r.user_id, handle: r.handle })) };
  }

  async function listPlays(workspaceId: string) {
    return { plays: (await repo.listPlays(db, workspaceId)).map(toPlayView) };
  }

  // Each operation lower-cases the Play id first: ids are compared as strings with rows, and responses echo the stored form.
  /** `profiles`: each candidate also carries its public profile (the console's review page; read in the same query). */
  async function listCandidates(workspaceId: string, playId: string, query: { limit: number; after?: string; filter: CandidateFilter; profiles?: boolean }) {
    playId = playId.toLowerCase();
    const play = await requirePlay(workspaceId, playId);
    const [counts, rows, sequence] = await Promise.all([
      repo.candidateCounts(db, workspaceId, playId),
      repo.listCandidatesPage(db, workspaceId, playId, query),
      play.sequence_id ? repo.findSequence(db, workspaceId, play.sequence_id) : undefined,
    ]);
    const { items, nextCursor } = page(rows, query.limit);
    return {
      counts: toCounts(counts),
      candidates: items.map(query.profiles ? toCandidateWithProfile : toCandidate),
      nextCursor,
      play: { id: play.id, name: play.name, revision: play.revision, status: play.status },
      sequence: sequence
        ? {
            id: sequence.id,
            name: sequence.name,
            revision: sequence.revision,
            status: sequence.status,
            approved: sequence.approved_revision === sequence.revision,
          }
        : null,
      reviewUrl: reviewUrl(play.id),
    };
  }

  /** One candidate of the Play with its public profile (a review row redrawn after a decision); null when not found; 404 for the Play as the other reads. */
  async function findCandidateForReview(workspaceId: string, playId: string, candidateId: string) {
    const play = await requirePlay(workspaceId, playId.toLowerCase());
    const row = await repo.findCandidateWithProfile(db, workspaceId, play.id, candidateId.toLowerCase());
    return row ? toCandidateWithProfile(row) : null;
  }

  async function lookupCandidates(workspaceId: string, playId: string, identities: LookupIdentity[]) {
    playId = playId.toLowerCase();
    identities.forEach((i, index) => {
      if ((i.xUserId === undefined) === (i.username === undefined)) {
        throw badRequest('invalid_request', `identities[${index}] must have exactly one of xUserId or username`);
      }
    });
    const play = await requirePlay(workspaceId, playId);
    const xUserIds = [...new Set(identities.flatMap((i) => (i.xUserId !== undefined ? [i.xUserId] : [])))];
    const handles = [...new Set(identities.flatMap((i) => (i.username !== undefined ? [normalizeHandle(i.username)] : [])))];
    const [byId, byHandle] = await Promise.all([
      repo.findCandidatesByXUserIds(db, workspaceId, playId, xUserIds),
      repo.findCandidatesByUsernames(db, workspaceId, playId, handles),
    ]);
    const candidatesByHandle = groupBy(byHandle, (c) => (c.username === null ? null : normalizeHandle(c.username)));
    const ambiguous = [...candidatesByHandle].filter(([, list]) => list.length > 1).map(([handle]) => handle);
    if (ambiguous.length > 0) {
      throw conflict('ambiguous_identity', `more than one candidate of this Play has the handle ${ambiguous.join(', ')}; look up by xUserId`, {
        usernames: ambiguous,
        candidates: ambiguous.flatMap((h) => candidatesByHandle.get(h)!.map((c) => ({ username: c.username, xUserId: c.x_user_id }))),
      });
    }
    const candidateById = new Map(byId.map((c) => [c.x_user_id, c]));
    const resolve = (i: LookupIdentity) => (i.xUserId !== undefined ? candidateById.get(i.xUserId) : candidatesByHandle.get(normalizeHandle(i.username))?.[0]);

    // An identity's leads are found by user id once it is known; a handle no candidate resolved falls back to the leads' saved handle.
    const knownIds = new Set(xUserIds);
    const unresolvedHandles = new Set<string>();
    for (const i of identities) {
      const c = resolve(i);
      if (c) knownIds.add(c.x_user_id);
      else if (i.username !== undefined) unresolvedHandles.add(normalizeHandle(i.username));
    }
    const [leadsById, leadsByHandle] = await Promise.all([
      repo.findLeadsByXUserIds(db, workspaceId, [...knownIds]),
      repo.findLeadsByUsernames(db, workspaceId, [...unresolvedHandles]),
    ]);
    const leadsOfId = groupBy(leadsById, (l) => l.x_user_id);
    const leadsOfHandle = groupBy(leadsByHandle, (l) => (l.username === null ? null : normalizeHandle(l.username)));

    return {
      playId: play.id,
      results: identities.map((i) => {
        const candidate = resolve(i);
        const xUserId = candidate?.x_user_id ?? i.xUserId;
        const leads = (xUserId !== undefined ? leadsOfId.get(xUserId) : leadsOfHandle.get(normalizeHandle(i.username!))) ?? [];
        return {
          exists: candidate !== undefined,
          candidate: candidate ? toCandidate(candidate) : null,
          enrolledInPlay: leads.some((l) => l.play_id === playId),
          currentFollowerStatus: 'unknown' as const,
          existingLeads: leads.map(toExistingLead),
        };
      }),
    };
  }

  async function listPlayLeads(workspaceId: string, playId: string, query: { limit: number; after?: string }) {
    playId = playId.toLowerCase();
    const play = await requirePlay(workspaceId, playId);
    const { items, hasMore, nextCursor } = page(await repo.listPlayLeadsPage(db, workspaceId, play.id, query), query.limit);
    return {
      playId: play.id,
      leads: items.map((l) => ({
        id: l.id,
        name: l.person,
        xUserId: l.x_user_id,
        username: l.username,
        sequenceId: l.sequence_id,
        stage: l.stage,
        createdAt: l.created_at.toISOString(),
      })),
      nextCursor,
      hasMore,
    };
  }

  return { listAccounts, listPlays, listCandidates, findCandidateForReview, lookupCandidates, ...createPlayWrites({ db, clock, reviewUrl }), listPlayLeads };
}

export type PlaysService = ReturnType<typeof createPlaysService>;

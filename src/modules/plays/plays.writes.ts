import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { rollbackIfDryRun } from '../../lib/dry-run.js';
import { newTimeOrderedId, sha256Hex } from '../../lib/ids.js';
import { AppError, badRequest, conflict, notFound } from '../../lib/errors.js';
import type { ReviewDecision, Role } from '../../domain/vocabulary.js';
import { assertRoleAllows } from '../../domain/roles.js';
import { isXStepKind } from '../../domain/admission.js';
import { storedSteps } from '../../domain/stored-steps.js';
// A share lock keeps the checked sequence revision and status from changing until the enrollment commits.
import { lockSequenceForShare } from '../sequences/index.js';
import * as repo from './plays.repository.js';
import type { PlayRow } from './plays.repository.js';
import { assertManualPlay, assertPlayRevision, assertReviewable, duplicatesOf, groupBy, pickLead, toCandidate, toCounts } from './plays.rules.js';

/** The audit label of reviews made by enrollment through this API. */
export const API_REVIEWER = 'api';

/** The audit label (`reviewed_by`) of the good-fit reviews autopilot discovery makes. */
export const AUTOPILOT_REVIEWER = 'autopilot';

/**
 * How a write runs: in its own transaction (rolled back after every check and write under `dryRun`), or inside
 * the caller's `tx`, which then owns commit and rollback (so a dry run needs a transaction of its own).
 */
export type WriteOptions = { tx: Database; dryRun?: false } | { tx?: undefined; dryRun?: boolean };

/**
 * Who enrolls. The API enrolls into manual Plays that have the review API on, at the service clock's time.
 * Autopilot discovery enrolls what it just saved into active autopilot Plays, at its pass time, inside its own
 * transaction (after `lockDiscoveryTarget`).
 */
export type Enroller = { kind: 'api' } | { kind: 'autopilot'; at: Date };

/** `role`: the caller's, when a person or key asks; enrolling into a sequence that is not a draft needs `leads.enroll_live`. */
export type EnrollOptions = WriteOptions & { by?: Enroller; role?: Role };

export type { ReviewDecision };

export interface ReviewInput {
  expectedRevision: number;
  decisions: { candidateId: string; decision: ReviewDecision }[];
}

/** `by` is the audit label of the deciding party: the API key id, or `console:<session>`. */
export type ReviewOptions = WriteOptions & { by: string };

export interface ImportInput {
  requestId: string;
  expectedRevision: number;
  leads: { xUserId: string; name?: string; reference?: string }[];
}

export interface EnrollInput {
  expectedRevision: number;
  sequenceId: string;
  sequenceRevision: number;
  candidateIds: string[];
}

type ImportResponse = {
  playId: string;
  batchId: string;
  requestId: string;
  replayed: boolean;
  results: { xUserId: string; reference: string | null; candidateId: string; result: 'imported' | 'existing_candidate' }[];
  enrolled: false;
  sendsMessages: false;
};

/** Import, enrollment and review: the only code that applies their rules (HTTP, MCP and discovery call it). */
export function createPlayWrites(deps: { db: Database; clock: Clock; reviewUrl: (playId: string) => string }) {
  const { db, clock, reviewUrl } = deps;

  /**
   * Runs a write in the caller's transaction, or in its own read-committed one: after waiting for the Play lock,
   * each statement must see what the previous holder committed (its request record, its candidates, its reviews).
   */
  function transact<T>(options: WriteOptions, work: (trx: Database) => Promise<T>): Promise<T> {
    if (options.tx) return work(options.tx);
    return rollbackIfDryRun(options.dryRun, (fn) => db.transaction().setIsolationLevel('read committed').execute(fn), work);
  }

  async function importCandidates(workspaceId: string, playId: string, input: ImportInput, options: WriteOptions = {}): Promise<ImportResponse> {
    playId = playId.toLowerCase();
    const duplicates = duplicatesOf(input.leads.map((l) => l.xUserId));
    if (duplicates.length > 0) {
      throw badRequest('invalid_request', `each xUserId may appear once per import; repeated: ${duplicates.join(', ')}`, { duplicates });
    }
    // Key order and formatting are not part of the input, so a retry serialized differently still replays.
    const normalized = {
      expectedRevision: input.expectedRevision,
      leads: input.leads.map((l) => [l.xUserId, l.name ?? null, l.reference ?? null]),
    };
    const payloadHash = sha256Hex(JSON.stringify(normalized));

    const attempt = () =>
      transact(options, async (trx) => {
        const play = await repo.lockPlayForCandidates(trx, workspaceId, playId);
        assertReviewable(play);
        const stored = await repo.findImportRequest(trx, workspaceId, playId, input.requestId);
        if (stored) {
          if (stored.payload_hash !== payloadHash) {
            throw conflict('request_id_reused', 'this requestId was used with a different payload; a changed import needs a new requestId', {
              requestId: input.requestId,
            });
          }
          return { ...(stored.response as ImportResponse), replayed: true };
        }
        assertManualPlay(play);
        assertPlayRevision(play, input.expectedRevision);

        const xUserIds = input.leads.map((l) => l.xUserId);
        const existing = await repo.findCandidatesByXUserIds(trx, workspaceId, playId, xUserIds);
        const existingByXUserId = new Map(existing.map((c) => [c.x_user_id, c.id]));
        const now = clock.now();
        const batchId = newTimeOrderedId();
        const inserts: { id: string; x_user_id: string; name: string | null }[] = [];
        const results = input.leads.map((l) => {
          const found = existingByXUserId.get(l.xUserId);
          if (found) return { xUserId: l.xUserId, reference: l.reference ?? null, candidateId: found, result: 'existing_candidate' as const };
          const id = newTimeOrderedId();
          inserts.push({ id, x_user_id: l.xUserId, name: l.name ?? null });
          return { xUserId: l.xUserId, reference: l.reference ?? null, candidateId: id, result: 'imported' as const };
        });
        const response: ImportResponse = {
          playId: play.id,
          batchId,
          requestId: input.requestId,
          replayed: false,
          results,
          enrolled: false,
          sendsMessages: false,
        };
        await repo.insertImport(trx, {
          batch: { id: batchId, workspace_id: workspaceId, play_id: playId, request_id: input.requestId, created_at: now },
          candidates: inserts,
          request: { payload_hash: payloadHash, response },
        });
        return response;
      });

    // A caller's transaction is aborted by a failed statement, so only an import that owns its transaction retries.
    if (options.tx) return attempt();
    try {
      return await attempt();
    } catch (error) {
      // The Play lock makes this unreachable between two imports; it covers writers that do not take it. A fresh
      // transaction sees what they committed: the same requestId replays, the same identity becomes existing_candidate.
      if (repo.uniqueViolationConstraint(error) === null) throw error;
    }
    try {
      return await attempt();
    } catch (error) {
      if (repo.uniqueViolationConstraint(error) === 'candidates_identity') {
        throw conflict('duplicate_candidate', 'another writer saved one of these identities as a candidate at the same time; retry the import', {
          requestId: input.requestId,
        });
      }
      throw error;
    }
  }

  /** The Play gate of each enroller: manual Plays with the review API for the API, active autopilot Plays for discovery. */
  function assertEnrollablePlay(play: PlayRow | undefined, by: Enroller): asserts play is PlayRow {
    if (by.kind === 'api') {
      assertReviewable(play);
      assertManualPlay(play);
      return;
    }
    if (!play) throw notFound('play');
    if (!play.autopilot || play.status !== 'active') {
      throw conflict('play_not_autopilot', 'only an active autopilot Play enrolls what discovery finds', { playId: play.id });
    }
  }

  /**
   * One enrollment for every caller (HTTP, MCP, autopilot discovery): marks the candidates good fit and queues a
   * lead for each identity the workspace has no lead for, atomically.
   */
  async function enroll(workspaceId: string, playId: string, input: EnrollInput, options: EnrollOptions = {}) {
    const by = options.by ?? { kind: 'api' };
    playId = playId.toLowerCase();
    const candidateIds = input.candidateIds.map((id) => id.toLowerCase());
    const duplicates = duplicatesOf(candidateIds);
    if (duplicates.length > 0) {
      throw badRequest('invalid_request', `candidateIds must be unique; repeated: ${duplicates.join(', ')}`, { duplicates });
    }
    return transact(options, async (trx) => {
      const play = await repo.lockPlayForCandidates(trx, workspaceId, playId);
      assertEnrollablePlay(play, by);
      assertPlayRevision(play, input.expectedRevision);
      if (play.sequence_id === null || play.sequence_id !== input.sequenceId.toLowerCase()) {
        throw conflict('sequence_mismatch', play.sequence_id ? 'sequenceId is not the Play’s sequence' : 'the Play has no sequence', {
          playSequenceId: play.sequence_id,
        });
      }
      const sequence = await lockSequenceForShare(trx, workspaceId, play.sequence_id);
      if (!sequence) throw conflict('sequence_mismatch', 'the Play’s sequence is not in this workspace', { playSequenceId: play.sequence_id });
      if (sequence.status === 'archived') {
        throw conflict('archived_sequence_is_read_only', 'the Play’s sequence is archived; no lead can be enrolled into it', { sequenceId: sequence.id });
      }
      if (options.role && sequence.status !== 'draft') assertRoleAllows(options.role, 'leads.enroll_live');
      // A Play's candidates are X accounts, and the lead each becomes has only its X user: a sequence without an X step
      // could never send to them (it would hold every one of them forever).
      if (!storedSteps(sequence.steps).some((st) => isXStepKind(String(st.kind)))) {
        throw conflict(
          'sequence_has_no_step_for_lead',
          'the Play’s sequence has no X step (x_dm or x_engage): a lead enrolled from a Play is an X account and could take none of its steps',
          { sequenceId: sequence.id },
        );
      }
      if (sequence.revision !== input.sequenceRevision) {
        throw conflict('stale_sequence_revision', `the sequence is at revision ${sequence.revision}, not ${input.sequenceRevision}`, {
          currentSequenceRevision: sequence.revision,
        });
      }
      if (play.account_user_id === null || !(await repo.xAccountExists(trx, workspaceId, play.account_user_id))) {
        throw conflict('no_connected_sender', 'the Play’s sending account is not connected to this workspace', { accountUserId: play.account_user_id });
      }

      const rows = await repo.findCandidatesByIds(trx, workspaceId, playId, candidateIds);
      const byId = new Map(rows.map((c) => [c.id, c]));
      const missing = candidateIds.filter((id) => !byId.has(id));
      if (missing.length > 0) {
        throw new AppError(404, 'candidate not found', `${missing.length} of the candidateIds are not candidates of this Play; nothing was enrolled`, {
          candidateIds: missing,
        });
      }
      const candidates = candidateIds.map((id) => byId.get(id)!);
      const toReview = candidates.filter((c) => c.review_decision === null);
      await repo.lockIdentities(
        trx,
        workspaceId,
        toReview.map((c) => c.x_user_id),
      );
      const leadsOf = groupBy(
        await repo.findLeadsByXUserIds(
          trx,
          workspaceId,
          candidates.map((c) => c.x_user_id),
        ),
        (l) => l.x_user_id,
      );

      const now = by.kind === 'autopilot' ? by.at : clock.now();
      const newLeads: { id: string; candidate_id: string; x_user_id: string; username: string | null; person: string | null }[] = [];
      const results = candidates.map((c) => {
        const lead = pickLead(leadsOf.get(c.x_user_id), c.id, playId);
        if (c.review_decision === 'not_a_good_fit') return { candidateId: c.id, result: 'rejected' as const, leadId: lead?.id ?? null };
        if (c.review_decision === 'good_fit') return { candidateId: c.id, result: 'already_reviewed' as const, leadId: lead?.id ?? null };
        if (lead) return { candidateId: c.id, result: 'existing_lead' as const, leadId: lead.id };
        const id = newTimeOrderedId();
        newLeads.push({ id, candidate_id: c.id, x_user_id: c.x_user_id, username: c.username, person: c.name });
        return { candidateId: c.id, result: 'enrolled' as const, leadId: id };
      });
      const reviewer = by.kind === 'autopilot' ? AUTOPILOT_REVIEWER : API_REVIEWER;
      const marked = await repo.markCandidatesReviewed(
        trx,
        workspaceId,
        playId,
        toReview.map((c) => c.id),
        { decision: 'good_fit', at: now, by: reviewer },
      );
      if (marked !== toReview.length) {
        throw conflict('review_conflict', 'another review of these candidates was saved at the same time; nothing was enrolled, read them again', {
          playId,
        });
      }
      await repo.insertQueuedLeads(trx, { workspaceId, playId, sequenceId: sequence.id, accountUserId: play.account_user_id, at: now }, newLeads);
      return { results, sequenceStatus: sequence.status, sequenceStatusChanged: false as const, reviewUrl: reviewUrl(play.id) };
    });
  }

  /**
   * Records review decisions under enrollment's rules (review API, manual Play, exact revision). Repeating a
   * saved decision is a no-op (`already_reviewed`); a candidate that has the other decision makes the whole
   * call answer 409 `review_conflict` and nothing is saved. The counts come from the same transaction, so a dry
   * run answers the counts the real call would leave.
   */
  async function review(workspaceId: string, playId: string, input: ReviewInput, options: ReviewOptions) {
    playId = playId.toLowerCase();
    const decisions = input.decisions.map((d) => ({ candidateId: d.candidateId.toLowerCase(), decision: d.decision }));
    const duplicates = duplicatesOf(decisions.map((d) => d.candidateId));
    if (duplicates.length > 0) {
      throw badRequest('invalid_request', `each candidateId may appear once per review; repeated: ${duplicates.join(', ')}`, { duplicates });
    }
    return transact(options, async (trx) => {
      const play = await repo.lockPlayForCandidates(trx, workspaceId, playId);
      assertReviewable(play);
      assertManualPlay(play);
      assertPlayRevision(play, input.expectedRevision);

      const candidateIds = decisions.map((d) => d.candidateId);
      const rows = await repo.findCandidatesByIds(trx, workspaceId, playId, candidateIds);
      const byId = new Map(rows.map((c) => [c.id, c]));
      const missing = decisions.filter((d) => !byId.has(d.candidateId)).map((d) => d.candidateId);
      if (missing.length > 0) {
        throw new AppError(404, 'candidate not found', `${missing.length} of the candidateIds are not candidates of this Play; nothing was reviewed`, {
          candidateIds: missing,
        });
      }
      const conflicting = decisions.filter((d) => {
        const saved = byId.get(d.candidateId)!.review_decision;
        return saved !== null && saved !== d.decision;
      });
      if (conflicting.length > 0) {
        throw conflict('review_conflict', 'a different decision is already saved for some of these candidates; nothing was reviewed', {
          candidateIds: conflicting.map((d) => d.candidateId),
        });
      }

      const now = clock.now();
      const fresh = decisions.filter((d) => byId.get(d.candidateId)!.review_decision === null);
      for (const decision of ['good_fit', 'not_a_good_fit'] as const) {
        const ids = fresh.filter((d) => d.decision === decision).map((d) => d.candidateId);
        const marked = await repo.markCandidatesReviewed(trx, workspaceId, playId, ids, { decision, at: now, by: options.by });
        // Writers that do not take the Play lock (the world loader, fixtures) may decide in between.
        if (marked !== ids.length) {
          throw conflict('review_conflict', 'another review of these candidates was saved at the same time; nothing was reviewed, read them again', {
            playId,
          });
        }
      }
      const saved = new Map(
        (
          await repo.findCandidatesByIds(
            trx,
            workspaceId,
            playId,
            decisions.map((d) => d.candidateId),
          )
        ).map((c) => [c.id, c]),
      );
      const counts = await repo.candidateCounts(trx, workspaceId, playId);
      return {
        playId: play.id,
        results: decisions.map((d) => {
          const c = saved.get(d.candidateId)!;
          const reviewed = fresh.some((f) => f.candidateId === d.candidateId);
          return { candidateId: c.id, result: reviewed ? ('reviewed' as const) : ('already_reviewed' as const), candidate: toCandidate(c) };
        }),
        counts: toCounts(counts),
        reviewUrl: reviewUrl(play.id),
      };
    });
  }

  /**
   * Autopilot discovery's first step, in its transaction: locks the Play and, when the Play enrolls what it
   * discovers, its sequence (shared), in enrollment's lock order. Returns undefined when the Play no longer exists,
   * null when its new followers are saved for review only (not an active autopilot Play, no sequence, an archived
   * or missing sequence, a changed or disconnected account), else what `enroll` needs.
   */
  async function lockDiscoveryTarget(trx: Database, workspaceId: string, playId: string, accountUserId: string) {
    const play = await repo.lockPlayForCandidates(trx, workspaceId, playId);
    if (!play) return undefined;
    if (!play.autopilot || play.status !== 'active' || play.sequence_id === null || play.account_user_id !== accountUserId) return null;
    const sequence = await lockSequenceForShare(trx, workspaceId, play.sequence_id);
    if (!sequence || sequence.status === 'archived') return null;
    if (!(await repo.xAccountExists(trx, workspaceId, accountUserId))) return null;
    return { expectedRevision: play.revision, sequenceId: sequence.id, sequenceRevision: sequence.revision };
  }

  return { importCandidates, enroll, review, lockDiscoveryTarget };
}

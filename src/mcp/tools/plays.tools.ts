import { Type } from 'typebox';
import type { PlaysService } from '../../modules/plays/plays.service.js';
import {
  EnrollBody,
  EnrollResponse,
  ImportBody,
  ImportResponse,
  ListCandidatesQuery,
  ListCandidatesResponse,
  ListPlayLeadsQuery,
  ListPlayLeadsResponse,
  LookupBody,
  LookupResponse,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
  PlayIdParams,
} from '../../modules/plays/plays.schemas.js';
import type { SequencesService } from '../../modules/sequences/sequences.service.js';
import { DryRunFlag, READ_ONLY_SAFETY, defineTool } from './types.js';

const PlayId = PlayIdParams.properties.id;
const PLAY_404 = 'A Play that is unknown, of another workspace or without the review API answers 404 play not found.';

const ListCandidatesInput = Type.Object({ playId: PlayId, ...ListCandidatesQuery.properties }, { additionalProperties: false });
const LookupInput = Type.Object({ playId: PlayId, ...LookupBody.properties }, { additionalProperties: false });
const ImportInput = Type.Object({ playId: PlayId, ...ImportBody.properties, dryRun: DryRunFlag }, { additionalProperties: false });
const EnrollInput = Type.Object({ playId: PlayId, ...EnrollBody.properties, dryRun: DryRunFlag }, { additionalProperties: false });
const ListPlayLeadsInput = Type.Object({ playId: PlayId, ...ListPlayLeadsQuery.properties }, { additionalProperties: false });

type Blocker = { error: string; message: string };

/** The Play as the review operations see it; listCandidates carries the service's own 404 rule and the sequence summary. */
async function reviewablePlay(plays: PlaysService, workspaceId: string, playId: string) {
  const page = await plays.listCandidates(workspaceId, playId, { limit: 1, filter: 'all' });
  const play = (await plays.listPlays(workspaceId)).plays.find((p) => p.id === page.play.id)!;
  return { play, sequence: page.sequence };
}

function manualPlayBlockers(play: { status: string; autopilot: boolean; revision: number }, expectedRevision: number): Blocker[] {
  const out: Blocker[] = [];
  if (play.status === 'archived') out.push({ error: 'play_archived', message: 'the Play is archived' });
  if (play.autopilot) out.push({ error: 'play_autopilot', message: 'autopilot Plays cannot use manual import or enrollment' });
  if (play.revision !== expectedRevision) {
    out.push({ error: 'stale_play_revision', message: `the Play is at revision ${play.revision}, not ${expectedRevision}` });
  }
  return out;
}

/** Candidates are found by walking the Play's pages; a preview stops once every id is found or the walk gets too long. */
async function findCandidates(plays: PlaysService, workspaceId: string, playId: string, ids: string[]) {
  const wanted = new Set(ids.map((id) => id.toLowerCase()));
  const found = new Map<string, Awaited<ReturnType<PlaysService['listCandidates']>>['candidates'][number]>();
  let after: string | undefined;
  for (let pages = 0; pages < 50 && found.size < wanted.size; pages++) {
    const page = await plays.listCandidates(workspaceId, playId, { limit: PAGE_LIMIT_MAX, after, filter: 'all' });
    for (const c of page.candidates) if (wanted.has(c.id)) found.set(c.id, c);
    if (!page.nextCursor) return { found, complete: true };
    after = page.nextCursor;
  }
  return { found, complete: found.size === wanted.size };
}

export const playsTools = [
  defineTool<{ plays: PlaysService }, typeof ListCandidatesInput>({
    name: 'list_candidates',
    title: 'Page through a Play’s review candidates',
    description:
      'Saved candidates with counts, plus the Play and sequence revisions that enrollment needs. Pass nextCursor as after until it ' +
      `is null. Saved candidates are not evidence of a current follow. ${PLAY_404} ${READ_ONLY_SAFETY}`,
    input: ListCandidatesInput,
    output: ListCandidatesResponse,
    needs: ['plays'],
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/plays/:id/candidates', params: { id: 'playId' } },
    run: ({ services, auth }, { playId, limit, after, filter }) =>
      services.plays.listCandidates(auth.workspaceId, playId, { limit: limit ?? PAGE_LIMIT_DEFAULT, after, filter: filter ?? 'all' }),
  }),
  defineTool<{ plays: PlaysService }, typeof LookupInput>({
    name: 'lookup_candidates',
    title: 'Look up candidates of a Play',
    description:
      'Exact lookup of 1 to 200 identities (xUserId or handle) across every saved batch of the Play, with existing leads. Does ' +
      `not check live follower status. A handle shared by several candidates answers 409 ambiguous_identity. ${PLAY_404} ${READ_ONLY_SAFETY}`,
    input: LookupInput,
    output: LookupResponse,
    needs: ['plays'],
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'POST', url: '/api/v1/plays/:id/candidates/lookup', params: { id: 'playId' } },
    run: ({ services, auth }, { playId, identities }) => services.plays.lookupCandidates(auth.workspaceId, playId, identities as never),
  }),
  defineTool<{ plays: PlaysService }, typeof ImportInput>({
    name: 'import_candidates',
    title: 'Import external leads as review candidates',
    description:
      'Stages 1 to 100 leads (unique xUserIds) as review candidates, atomically. requestId is an idempotency key per Play: the same ' +
      'payload replays the stored answer, a changed one answers 409 request_id_reused. Existing candidates keep their review state. ' +
      '409 play_archived, play_autopilot, stale_play_revision. ' +
      PLAY_404 +
      ' Safety: contacts a prospect: no. Never enrolls, verifies followers, changes a sequence or sends; dryRun: true shows which ' +
      'leads would be new and changes nothing.',
    input: ImportInput,
    output: ImportResponse,
    needs: ['plays'],
    dryRun: 'preview',
    contactsProspects: false,
    readOnly: false,
    additive: true,
    idempotent: true,
    mirrors: { method: 'POST', url: '/api/v1/plays/:id/import', params: { id: 'playId' } },
    run: ({ services, auth }, { playId, dryRun: _dryRun, ...body }) => services.plays.importCandidates(auth.workspaceId, playId, body),
    preview: async ({ services, auth }, { playId, expectedRevision, leads, requestId }) => {
      const { play } = await reviewablePlay(services.plays, auth.workspaceId, playId);
      const lookup = await services.plays.lookupCandidates(
        auth.workspaceId,
        playId,
        leads.map((l) => ({ xUserId: l.xUserId })),
      );
      const results = leads.map((l, i) => {
        const candidate = lookup.results[i].candidate;
        return {
          xUserId: l.xUserId,
          reference: l.reference ?? null,
          candidateId: candidate?.id ?? null,
          result: candidate ? ('existing_candidate' as const) : ('imported' as const),
        };
      });
      const fresh = results.filter((r) => r.result === 'imported').length;
      return {
        dryRun: true,
        operation: 'import_candidates',
        wouldDo:
          `stage ${fresh} new review candidate(s) in Play "${play.name}"; ${results.length - fresh} already exist and keep their review ` +
          'state. Nothing would be enrolled or sent.',
        contactsProspect: false,
        blockers: manualPlayBlockers(play, expectedRevision),
        play,
        requestId,
        results,
        note: 'A requestId already used by this Play is checked only by the real call (same payload: replayed; changed: 409 request_id_reused).',
      };
    },
  }),
  defineTool<{ plays: PlaysService; sequences: SequencesService }, typeof EnrollInput>({
    name: 'enroll_candidates',
    title: 'Enroll reviewed candidates into the Play’s sequence',
    description:
      'Marks 1 to 200 candidates good fit and queues a lead for each identity without a lead, atomically. Needs the exact Play and ' +
      'sequence revisions and the Play’s own sequence (from list_candidates). Existing leads keep their state and sequence; ' +
      'not-a-good-fit candidates stay rejected. 409 play_archived, play_autopilot, stale_play_revision, sequence_mismatch, ' +
      'archived_sequence_is_read_only, stale_sequence_revision, no_connected_sender. ' +
      PLAY_404 +
      ' Safety: contacts a prospect: no, not by itself; but a lead enrolled into an active, approved sequence can be messaged by ' +
      'the engine on its next run. Never activates, approves or changes the sequence. dryRun: true predicts each result and ' +
      'changes nothing.',
    input: EnrollInput,
    output: EnrollResponse,
    needs: ['plays', 'sequences'],
    dryRun: 'preview',
    contactsProspects: false,
    readOnly: false,
    mirrors: { method: 'POST', url: '/api/v1/plays/:id/enroll', params: { id: 'playId' } },
    run: ({ services, auth }, { playId, dryRun: _dryRun, ...body }) => services.plays.enroll(auth.workspaceId, playId, body),
    preview: async ({ services, auth }, { playId, expectedRevision, sequenceId, sequenceRevision, candidateIds }) => {
      const { play, sequence: summary } = await reviewablePlay(services.plays, auth.workspaceId, playId);
      const blockers = manualPlayBlockers(play, expectedRevision);
      const sequence = (await services.sequences.listSequences(auth.workspaceId)).find((s) => s.id === play.sequenceId) ?? null;
      if (!sequence || sequence.id !== sequenceId.toLowerCase()) {
        blockers.push({ error: 'sequence_mismatch', message: play.sequenceId ? 'sequenceId is not the Play’s sequence' : 'the Play has no sequence' });
      } else {
        if (sequence.status === 'archived') blockers.push({ error: 'archived_sequence_is_read_only', message: 'the Play’s sequence is archived' });
        if (sequence.revision !== sequenceRevision) {
          blockers.push({ error: 'stale_sequence_revision', message: `the sequence is at revision ${sequence.revision}, not ${sequenceRevision}` });
        }
      }
      const accounts = await services.plays.listAccounts(auth.workspaceId);
      if (!accounts.accounts.some((a) => a.userId === play.accountUserId)) {
        blockers.push({ error: 'no_connected_sender', message: 'the Play’s sending account is not connected to this workspace' });
      }
      const { found, complete } = await findCandidates(services.plays, auth.workspaceId, playId, candidateIds);
      const missing = candidateIds.filter((id) => !found.has(id.toLowerCase()));
      if (missing.length > 0 && complete) {
        blockers.push({ error: 'candidate not found', message: `${missing.length} of the candidateIds are not candidates of this Play` });
      }
      const candidates = candidateIds.flatMap((id) => (found.has(id.toLowerCase()) ? [found.get(id.toLowerCase())!] : []));
      const lookup =
        candidates.length > 0
          ? await services.plays.lookupCandidates(auth.workspaceId, playId, candidates.map((c) => ({ xUserId: c.xUserId })))
          : { results: [] };
      const results = candidates.map((c, i) => {
        const leads = lookup.results[i].existingLeads;
        const result =
          c.review?.decision === 'not_a_good_fit'
            ? 'rejected'
            : c.review?.decision === 'good_fit'
              ? 'already_reviewed'
              : leads.length > 0
                ? 'existing_lead'
                : 'enrolled';
        return { candidateId: c.id, predictedResult: result, existingLeads: leads };
      });
      const enrolled = results.filter((r) => r.predictedResult === 'enrolled').length;
      const canRun = sequence !== null && sequence.executionBlockReason === null;
      return {
        dryRun: true,
        operation: 'enroll_candidates',
        wouldDo:
          `mark ${results.filter((r) => r.predictedResult !== 'rejected' && r.predictedResult !== 'already_reviewed').length} candidate(s) ` +
          `good fit and queue ${enrolled} new lead(s) into sequence "${sequence?.name ?? summary?.name ?? 'none'}" ` +
          `(status ${sequence?.status ?? 'unknown'}, which would not change). ` +
          (canRun
            ? 'The sequence can run, so the engine may message the new leads on its next run.'
            : `The sequence cannot run now (${sequence?.executionBlockReason ?? 'no sequence'}), so nothing would be sent until that is cleared.`),
        contactsProspect: false,
        blockers,
        play,
        sequence,
        results,
        unknownCandidateIds: complete ? missing : [],
        uncheckedCandidateIds: complete ? [] : missing,
      };
    },
  }),
  defineTool<{ plays: PlaysService }, typeof ListPlayLeadsInput>({
    name: 'list_play_leads',
    title: 'List the leads enrolled through a Play',
    description: `Leads of the Play ordered by id; pass nextCursor as after while hasMore is true. ${PLAY_404} ${READ_ONLY_SAFETY}`,
    input: ListPlayLeadsInput,
    output: ListPlayLeadsResponse,
    needs: ['plays'],
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/plays/:id/leads', params: { id: 'playId' } },
    run: ({ services, auth }, { playId, limit, after }) =>
      services.plays.listPlayLeads(auth.workspaceId, playId, { limit: limit ?? PAGE_LIMIT_DEFAULT, after }),
  }),
];

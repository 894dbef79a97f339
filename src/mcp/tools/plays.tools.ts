import { Type } from 'typebox';
import { PAGE_LIMIT_DEFAULT, PlayIdParams, PlayOperations as Op, type PlaysService } from '../../modules/plays/index.js';
import { DryRunFlag, READ_ONLY_SAFETY, defineTool } from './types.js';

const PlayId = PlayIdParams.properties.id;
const PLAY_404 = '404 play not found also for a Play without the review API.';

const ListCandidatesInput = Type.Object({ playId: PlayId, ...Op.listCandidates.query.properties }, { additionalProperties: false });
const LookupInput = Type.Object({ playId: PlayId, ...Op.lookup.body.properties }, { additionalProperties: false });
const ImportInput = Type.Object({ playId: PlayId, ...Op.import.body.properties, dryRun: DryRunFlag }, { additionalProperties: false });
const EnrollInput = Type.Object({ playId: PlayId, ...Op.enroll.body.properties, dryRun: DryRunFlag }, { additionalProperties: false });
const ReviewInput = Type.Object({ playId: PlayId, ...Op.review.body.properties, dryRun: DryRunFlag }, { additionalProperties: false });
const ListPlayLeadsInput = Type.Object({ playId: PlayId, ...Op.listPlayLeads.query.properties }, { additionalProperties: false });

export const playsTools = [
  defineTool<{ plays: PlaysService }, typeof ListCandidatesInput>({
    name: 'list_candidates',
    action: 'read',
    title: 'Page through a Play’s review candidates',
    description:
      'Saved candidates with counts, plus the Play and sequence revisions that enrollment needs. Pass nextCursor as after until it ' +
      `is null. Saved candidates are not evidence of a current follow. ${PLAY_404} ${READ_ONLY_SAFETY}`,
    input: ListCandidatesInput,
    output: Op.listCandidates.response,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/plays/:id/candidates', params: { id: 'playId' } },
    run: ({ services, auth }, { playId, limit, after, filter }) =>
      services.plays.listCandidates(auth.workspaceId, playId, { limit: limit ?? PAGE_LIMIT_DEFAULT, after, filter: filter ?? 'all' }),
  }),
  defineTool<{ plays: PlaysService }, typeof LookupInput>({
    name: 'lookup_candidates',
    action: 'read',
    title: 'Look up candidates of a Play',
    description:
      'Exact lookup of 1 to 200 identities (xUserId or handle) across every saved batch of the Play, with existing leads. Does ' +
      `not check live follower status. A handle shared by several candidates answers 409 ambiguous_identity. ${PLAY_404} ${READ_ONLY_SAFETY}`,
    input: LookupInput,
    output: Op.lookup.response,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'POST', url: '/api/v1/plays/:id/candidates/lookup', params: { id: 'playId' } },
    run: ({ services, auth }, { playId, identities }) => services.plays.lookupCandidates(auth.workspaceId, playId, identities as never),
  }),
  defineTool<{ plays: PlaysService }, typeof ImportInput>({
    name: 'import_candidates',
    action: 'candidates.review',
    title: 'Import external leads as review candidates',
    description:
      'Stages 1 to 100 leads (unique xUserIds) as review candidates, atomically. requestId is an idempotency key per Play (a ' +
      'changed payload: 409 request_id_reused). Candidates keep their review state. 409 play_archived, play_autopilot, ' +
      'stale_play_revision. ' +
      PLAY_404 +
      ' Safety: contacts a prospect: no. Never enrolls or sends; dryRun: true saves nothing.',
    input: ImportInput,
    output: Op.import.response,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    additive: true,
    idempotent: true,
    mirrors: { method: 'POST', url: '/api/v1/plays/:id/import', params: { id: 'playId' } },
    run: ({ services, auth }, { playId, dryRun, ...body }) => services.plays.importCandidates(auth.workspaceId, playId, body, { dryRun }),
  }),
  defineTool<{ plays: PlaysService }, typeof EnrollInput>({
    name: 'enroll_candidates',
    action: 'leads.enroll_draft',
    title: 'Enroll reviewed candidates into the Play’s sequence',
    description:
      'Marks 1 to 200 candidates good fit and queues a lead per identity without one, atomically (exact Play and sequence ' +
      'revisions: list_candidates). 409 play_archived, play_autopilot, ' +
      'stale_play_revision, sequence_mismatch, archived_sequence_is_read_only, stale_sequence_revision, no_connected_sender. ' +
      PLAY_404 +
      ' Safety: contacts a prospect: no, not by itself; an active, approved sequence may message its new leads on the next run. ' +
      'dryRun: true runs the real enrollment and saves nothing.',
    input: EnrollInput,
    output: Op.enroll.response,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    mirrors: { method: 'POST', url: '/api/v1/plays/:id/enroll', params: { id: 'playId' } },
    run: ({ services, auth }, { playId, dryRun, ...body }) => services.plays.enroll(auth.workspaceId, playId, body, { dryRun, role: auth.role }),
  }),
  defineTool<{ plays: PlaysService }, typeof ReviewInput>({
    name: 'review_candidates',
    action: 'candidates.review',
    title: 'Record review decisions for candidates of a Play',
    description:
      'Saves good_fit or not_a_good_fit for 1 to 200 candidates, atomically, as decided by this key. A repeat changes nothing ' +
      '(already_reviewed); the other decision already saved: 409 review_conflict, nothing saved. 409 play_archived, ' +
      'play_autopilot, stale_play_revision; 404 candidate not found. ' +
      PLAY_404 +
      ' Safety: contacts a prospect: no. Never enrolls or sends (enroll_candidates enrolls). dryRun: true saves nothing.',
    input: ReviewInput,
    output: Op.review.response,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    idempotent: true,
    mirrors: { method: 'POST', url: '/api/v1/plays/:id/candidates/review', params: { id: 'playId' } },
    run: ({ services, auth }, { playId, dryRun, ...body }) => services.plays.review(auth.workspaceId, playId, body, { by: auth.keyId, dryRun }),
  }),
  defineTool<{ plays: PlaysService }, typeof ListPlayLeadsInput>({
    name: 'list_play_leads',
    action: 'read',
    title: 'List the leads enrolled through a Play',
    description: `Leads of the Play ordered by id; pass nextCursor as after while hasMore is true. ${PLAY_404} ${READ_ONLY_SAFETY}`,
    input: ListPlayLeadsInput,
    output: Op.listPlayLeads.response,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/plays/:id/leads', params: { id: 'playId' } },
    run: ({ services, auth }, { playId, limit, after }) =>
      services.plays.listPlayLeads(auth.workspaceId, playId, { limit: limit ?? PAGE_LIMIT_DEFAULT, after }),
  }),
];

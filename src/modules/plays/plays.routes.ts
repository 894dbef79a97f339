import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { LookupIdentity, PlaysService } from './plays.service.js';
import { ListPlaysResponse, ListXAccountsResponse, PAGE_LIMIT_DEFAULT, PlayIdParams, PlayOperations as Op } from './plays.schemas.js';

const PLAY_404 = 'A 404 `play not found` means the id is unknown, belongs to another workspace, or the Play has not enabled the review API.';

// The /plays/{id}/* operations are not gated on the social-network channel: the spec scopes channel_disabled to /x/*
// paths, and reading or reviewing saved candidates does not touch the network (see docs/plays-and-candidates.md).
export async function playsRoutes(app: AppInstance, opts: { plays: PlaysService }) {
  registerDiscoveryRoutes(app, opts.plays);
  registerCandidateRoutes(app, opts.plays);
  registerEnrollmentRoutes(app, opts.plays);
}

/** Discovery on /x/*: the saved connected identities and the Plays (gated on the social-network channel). */
function registerDiscoveryRoutes(app: AppInstance, plays: PlaysService) {
  app.get(
    '/x/accounts',
    {
      config: { xChannel: true },
      schema: {
        summary: 'List saved connected social-network identities',
        description: 'Saved identities only: no provider health check and no token refresh.',
        tags: ['x'],
        headers: WorkspaceClientHeader,
        response: { 200: ListXAccountsResponse, ...errorResponses() },
      },
    },
    async (req) => plays.listAccounts(req.auth.workspaceId),
  );

  app.get(
    '/x/plays',
    {
      config: { xChannel: true },
      schema: {
        summary: 'Discover Plays',
        description: 'Every Play of the workspace, oldest first, including archived ones and those without the review API.',
        tags: ['x'],
        headers: WorkspaceClientHeader,
        response: { 200: ListPlaysResponse, ...errorResponses() },
      },
    },
    async (req) => plays.listPlays(req.auth.workspaceId),
  );
}

/** A Play's review candidates: the pages of them, a lookup by identity, and an import of external leads. */
function registerCandidateRoutes(app: AppInstance, plays: PlaysService) {
  app.get(
    '/plays/:id/candidates',
    {
      schema: {
        summary: 'Page through the review candidates of a Play',
        description:
          'Saved candidates, not evidence of a current follow. Ordered by id; pass `nextCursor` as `after` until it is null. ' +
          '`unreviewed` means no review decision yet. The response carries the Play and sequence revisions enrollment needs. ' +
          PLAY_404,
        tags: ['plays'],
        headers: WorkspaceClientHeader,
        params: PlayIdParams,
        querystring: Op.listCandidates.query,
        response: { 200: Op.listCandidates.response, ...errorResponses(404) },
      },
    },
    async (req) =>
      plays.listCandidates(req.auth.workspaceId, req.params.id, {
        limit: req.query.limit ?? PAGE_LIMIT_DEFAULT,
        after: req.query.after,
        filter: req.query.filter ?? 'all',
      }),
  );

  app.post(
    '/plays/:id/candidates/lookup',
    {
      config: { action: 'read' },
      schema: {
        summary: 'Look up existing candidates of a Play by user id or handle',
        description:
          'Exact match across all saved batches of the Play (handles case-insensitive, `@` optional); one result per identity in ' +
          'request order. Does not check live follower status (`currentFollowerStatus` is always `unknown`). A handle shared by ' +
          'candidates with different user ids answers 409 `ambiguous_identity`: use numeric ids. ' +
          PLAY_404,
        tags: ['plays'],
        headers: WorkspaceClientHeader,
        params: PlayIdParams,
        body: Op.lookup.body,
        response: { 200: Op.lookup.response, ...errorResponses(404, 409) },
      },
    },
    async (req) => plays.lookupCandidates(req.auth.workspaceId, req.params.id, req.body.identities as LookupIdentity[]),
  );

  app.post(
    '/plays/:id/import',
    {
      config: { action: 'candidates.review' },
      schema: {
        summary: 'Import external leads as review candidates',
        description:
          'Atomic: all leads are staged or none. Never enrolls, verifies followers, changes a sequence or sends. `requestId` is ' +
          'scoped to the workspace and Play: the same normalized payload replays the stored answer (`replayed: true`); any change ' +
          '(leads, order, names, references, revision) answers 409 `request_id_reused`. Existing candidates keep their review ' +
          'state (`existing_candidate`). 409 `play_archived`, `play_autopilot`, `stale_play_revision` (with `currentRevision`). ' +
          PLAY_404,
        tags: ['plays'],
        headers: WorkspaceClientHeader,
        params: PlayIdParams,
        body: Op.import.body,
        response: { 200: Op.import.response, ...errorResponses(404, 409) },
      },
    },
    async (req) => plays.importCandidates(req.auth.workspaceId, req.params.id, req.body),
  );
}

/** Enrollment (and its alias), review decisions, and the leads a Play enrolled. */
function registerEnrollmentRoutes(app: AppInstance, plays: PlaysService) {
  const enrollSchema = (summary: string) => ({
    summary,
    description:
      'Marks the selected candidates good fit and queues a lead per newly enrolled identity, atomically. An identity that already ' +
      'has a lead in the workspace keeps it untouched (`existing_lead`); a repeated good-fit review is `already_reviewed`; a ' +
      'not-a-good-fit candidate stays as it is (`rejected`). The sequence status never changes; an active, eligible sequence may ' +
      'send on the engine’s next run. 409 `play_archived`, `play_autopilot`, `stale_play_revision`, `sequence_mismatch`, ' +
      '`archived_sequence_is_read_only`, `stale_sequence_revision`, `no_connected_sender`. 404 `candidate not found` lists ids ' +
      'that are not candidates of this Play (nothing is enrolled). ' +
      PLAY_404,
    tags: ['plays'],
    headers: WorkspaceClientHeader,
    params: PlayIdParams,
    body: Op.enroll.body,
    response: { 200: Op.enroll.response, ...errorResponses(404, 409) },
  });
  for (const [path, summary] of [
    ['/plays/:id/enroll', 'Enroll reviewed candidates'],
    ['/plays/:id/leads', 'Enroll reviewed candidates (alias of POST /plays/{id}/enroll)'],
  ] as const) {
    app.post(path, { config: { action: 'leads.enroll_draft' }, schema: enrollSchema(summary) }, async (req) =>
      plays.enroll(req.auth.workspaceId, req.params.id, req.body, { role: req.auth.role }),
    );
  }

  app.post(
    '/plays/:id/candidates/review',
    {
      config: { action: 'candidates.review' },
      schema: {
        'x-extension': true,
        summary: 'Record review decisions (extension: not in the spec)',
        description:
          'Saves `good_fit` or `not_a_good_fit` for up to 200 candidates of the Play, atomically, with `reviewedAt` and the deciding ' +
          'key id as `by`. Never enrolls or sends: a good-fit decision queues no lead. Repeating a saved decision changes nothing ' +
          '(`already_reviewed`); a candidate that already has the other decision answers 409 `review_conflict` (with ' +
          '`candidateIds`) and nothing is saved. 409 `play_archived`, `play_autopilot`, `stale_play_revision` (with ' +
          '`currentRevision`). 404 `candidate not found` lists ids that are not candidates of this Play. ' +
          PLAY_404,
        tags: ['plays'],
        headers: WorkspaceClientHeader,
        params: PlayIdParams,
        body: Op.review.body,
        response: { 200: Op.review.response, ...errorResponses(404, 409) },
      },
    },
    async (req) => plays.review(req.auth.workspaceId, req.params.id, req.body, { by: req.auth.keyId }),
  );

  app.get(
    '/plays/:id/leads',
    {
      schema: {
        summary: 'List the leads enrolled through a Play',
        description: 'Leads whose Play is this one, ordered by id; pass `nextCursor` as `after` while `hasMore` is true. ' + PLAY_404,
        tags: ['plays'],
        headers: WorkspaceClientHeader,
        params: PlayIdParams,
        querystring: Op.listPlayLeads.query,
        response: { 200: Op.listPlayLeads.response, ...errorResponses(404) },
      },
    },
    async (req) => plays.listPlayLeads(req.auth.workspaceId, req.params.id, { limit: req.query.limit ?? PAGE_LIMIT_DEFAULT, after: req.query.after }),
  );
}

import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { SequencesService } from './sequences.service.js';
import { EXECUTION_BLOCK_REASONS, ListSequencesResponse, SequenceIdParams, SetSequenceStatusBody, SetSequenceStatusResponse } from './sequences.schemas.js';

// Sequences are cross-channel, so neither route is gated on the social-network channel.
export async function sequencesRoutes(app: AppInstance, opts: { sequences: SequencesService }) {
  app.get(
    '/sequences',
    {
      schema: {
        summary: 'List sequences with their steps, approval state, exact lead count and why each cannot run',
        description: `Ordered by creation time, then id. \`executionBlockReason\` is null when the sequence can run, otherwise the first obstacle of: ${EXECUTION_BLOCK_REASONS.join(', ')}.`,
        tags: ['sequences'],
        headers: WorkspaceClientHeader,
        response: { 200: ListSequencesResponse, ...errorResponses() },
      },
    },
    async (req) => ({ sequences: await opts.sequences.listSequences(req.auth.workspaceId) }),
  );

  app.patch(
    '/sequences/:id/status',
    {
      config: { action: 'sequences.set_status' },
      schema: {
        summary: 'Activate, pause or return a sequence to draft',
        description:
          'Follows the status table exactly: draft, active or paused → active needs the current revision approved (409 ' +
          'sequence_approval_required); active → paused; active or paused → draft; an archived sequence answers 409 ' +
          'archived_sequence_is_read_only; any other change answers 409 invalid_transition. active → active on an approved ' +
          'revision is a no-op. Never edits or approves content.',
        tags: ['sequences'],
        headers: WorkspaceClientHeader,
        params: SequenceIdParams,
        body: SetSequenceStatusBody,
        response: { 200: SetSequenceStatusResponse, ...errorResponses(404, 409) },
      },
    },
    async (req) => opts.sequences.setStatus(req.auth.workspaceId, req.params.id, req.body.status),
  );
}

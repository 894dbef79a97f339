import { Type } from 'typebox';
import {
  ListSequencesResponse,
  SequenceIdParams,
  SetSequenceStatusBody,
  SetSequenceStatusResponse,
  type SequencesService,
} from '../../modules/sequences/index.js';
import { ForecastBody, ForecastResponse, type ForecastService } from '../../modules/forecast/index.js';
import { DryRunFlag, READ_ONLY_SAFETY, defineTool } from './types.js';

const Empty = Type.Object({}, { additionalProperties: false });
const ForecastInput = Type.Object({ sequenceId: SequenceIdParams.properties.id, ...ForecastBody.properties }, { additionalProperties: false });
const SetStatusInput = Type.Object(
  { sequenceId: SequenceIdParams.properties.id, ...SetSequenceStatusBody.properties, dryRun: DryRunFlag },
  { additionalProperties: false },
);

export const sequencesTools = [
  defineTool<{ sequences: SequencesService }, typeof Empty>({
    name: 'list_sequences',
    action: 'read',
    title: 'List sequences',
    description:
      'Every sequence with its steps, revision, approval (approvedRevision, approvedAt), exact lead count and executionBlockReason ' +
      `(null when it can run, otherwise the first obstacle). ${READ_ONLY_SAFETY}`,
    input: Empty,
    output: ListSequencesResponse,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/sequences' },
    run: async ({ services, auth }) => ({ sequences: await services.sequences.listSequences(auth.workspaceId) }),
  }),
  defineTool<{ sequences: SequencesService }, typeof SetStatusInput>({
    name: 'set_sequence_status',
    action: 'sequences.set_status',
    title: 'Activate, pause or return a sequence to draft',
    description:
      'active needs the current revision approved (409 sequence_approval_required); active → paused; active or paused → draft ' +
      '(editable); 409 archived_sequence_is_read_only, invalid_transition. Never edits or approves content. Safety: contacts a ' +
      'prospect: no, not by itself; activating lets the engine message its leads on the next run. Pausing recalls nothing sent. ' +
      'dryRun: true changes nothing.',
    input: SetStatusInput,
    output: SetSequenceStatusResponse,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    idempotent: true,
    mirrors: { method: 'PATCH', url: '/api/v1/sequences/:id/status', params: { id: 'sequenceId' } },
    run: ({ services, auth }, { sequenceId, status, dryRun }) => services.sequences.setStatus(auth.workspaceId, sequenceId, status, { dryRun }),
  }),
  defineTool<{ forecast: ForecastService }, typeof ForecastInput>({
    name: 'forecast_sequence',
    action: 'read',
    title: 'Preview a sequence launch',
    description:
      'The engine run on a copy of the leads in the sandbox world: per step and day, arrivals, sends, waits, fall-throughs, ' +
      `goals, exits, tasks (estimate: true with real senders). ${READ_ONLY_SAFETY}`,
    input: ForecastInput,
    output: ForecastResponse,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'POST', url: '/api/v1/sequences/:id/forecast', params: { id: 'sequenceId' } },
    run: ({ services, auth }, { sequenceId, ...body }) => services.forecast.forecast(auth.workspaceId, sequenceId, body),
  }),
];

import { Type } from 'typebox';
import { Uuid } from '../../app/schemas.js';
import { RecordMeetingBody, RecordMeetingResponse, type MeetingsService } from '../../modules/meetings/index.js';
import { DryRunFlag, defineTool } from './types.js';

const RecordInput = Type.Object(
  {
    leadId: Uuid({ description: 'the lead id' }),
    ...RecordMeetingBody.properties,
    dryRun: DryRunFlag,
  },
  { additionalProperties: false },
);

export const meetingsTools = [
  defineTool<{ meetings: MeetingsService }, typeof RecordInput>({
    name: 'set_lead_meeting',
    action: 'meetings.record',
    title: 'Record a lead’s meeting',
    description:
      'outcome sets meetingOutcome; bookedAt records a meeting booked elsewhere (stops the person’s sequences). 409 no_meeting. ' +
      'Safety: contacts a prospect: no.',
    input: RecordInput,
    output: RecordMeetingResponse,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    mirrors: { method: 'POST', url: '/api/v1/leads/:id/meeting', params: { id: 'leadId' } },
    run: ({ services, auth }, { leadId, ...body }) => services.meetings.recordMeeting(auth.workspaceId, leadId, { ...body, by: body.by ?? 'api' }),
  }),
];

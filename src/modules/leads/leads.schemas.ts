import { Type } from 'typebox';
import { MessagingAccountId, Nullable, Timestamp, Uuid } from '../../app/schemas.js';
import { LEAD_STAGES, PROGRESS_STAGES } from '../../domain/vocabulary.js';

const Stage = Type.Enum([...LEAD_STAGES]);
const Flag = (description: string) => Type.Union([Type.Literal('1'), Type.Literal('0')], { description: `${description}; 0 or absent: no filter` });

export const LeadsQuery = Type.Object(
  {
    stage: Type.Optional(
      Type.Enum([...LEAD_STAGES], {
        description:
          `cumulative: the lead reached this stage or a later one in the order ${PROGRESS_STAGES.join(', ')} ` +
          '(a saved milestone counts even when the stage moved on to failed or skipped); failed and skipped match exactly',
      }),
    ),
    q: Type.Optional(
      Type.String({
        maxLength: 200,
        pattern: '^[^\\x00-\\x1f\\x7f]*$',
        description: 'case-insensitive substring of person, company or title; % and _ are literal; no control characters; empty: no filter',
      }),
    ),
    engaged: Type.Optional(Flag('1: only leads with any outreach activity (a contact milestone or a recorded activity time)')),
    booked: Type.Optional(Flag('1: only leads with a booked meeting')),
    sinceDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, description: 'engaged within the last N days (1 to 365); implies engaged=1' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 200, description: 'page size, 1 to 500 (default 200)' })),
  },
  { additionalProperties: true },
);

export const CrossChannelLead = Type.Object({
  id: Uuid(),
  person: Nullable(Type.String()),
  company: Nullable(Type.String()),
  title: Nullable(Type.String()),
  email: Nullable(Type.String()),
  linkedinUrl: Nullable(Type.String()),
  account: Nullable(MessagingAccountId()),
  sequenceId: Nullable(Uuid()),
  strategyId: Nullable(Uuid()),
  strategyRunId: Nullable(Uuid()),
  invitePriority: Type.Integer(),
  stage: Stage,
  currentStep: Type.Integer(),
  nextActionAt: Nullable(Timestamp()),
  sequenceDone: Type.Boolean({ description: 'the sequence is done or was stopped for this lead' }),
  invitedAt: Nullable(Timestamp()),
  connectedAt: Nullable(Timestamp()),
  messagedAt: Nullable(Timestamp()),
  repliedAt: Nullable(Timestamp()),
  meetingBookedAt: Nullable(Timestamp()),
  meetingOutcome: Nullable(Type.String()),
  snoozedUntil: Nullable(Timestamp()),
  optedOutAt: Nullable(Timestamp()),
  replySentiment: Nullable(Type.String()),
  lastError: Nullable(Type.String()),
});

export const LeadsResponse = Type.Object({
  count: Type.Integer({ minimum: 0, description: 'exact number of leads matching the filters' }),
  returned: Type.Integer({ minimum: 0, description: 'number of leads in this answer (at most limit)' }),
  leads: Type.Array(CrossChannelLead, { description: 'newest first (creation time, then id)' }),
});

import { Type } from 'typebox';
import { Nullable, OneOf, Timestamp, Uuid } from '../../app/schemas.js';
import { SEQUENCE_STATUSES, STEP_KINDS } from '../../domain/vocabulary.js';
import { StepBranchProperties } from './branch.schemas.js';

export const SETTABLE_STATUSES = ['active', 'paused', 'draft'] as const;

const SequenceStatus = OneOf(SEQUENCE_STATUSES);
const SettableStatus = Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('draft')]);
export const StepKind = OneOf(STEP_KINDS);
export const EXECUTION_BLOCK_REASONS = [
  'sequence_archived',
  'sequence_approval_required',
  'sequence_draft',
  'sequence_paused',
  'billing_inactive',
  'x_channel_disabled',
  'no_sending_account',
  'energy_exhausted',
] as const;

export const SequenceStep = Type.Object({
  index: Type.Integer(),
  kind: StepKind,
  delayDays: Type.Integer({ description: 'counted from the previous step' }),
  subject: Nullable(Type.String()),
  message: Nullable(Type.String({ description: 'a message step carries either message or variants' })),
  actions: Type.Array(Type.Object({ type: Type.String(), count: Nullable(Type.Integer()), reaction: Nullable(Type.String()) }), {
    description: 'for example a like-last-post action',
  }),
  variants: Nullable(Type.Array(Type.Object({ key: Type.String(), weight: Type.Number(), messageTmpl: Type.String() }))),
  tool: Nullable(Type.String()),
  ...StepBranchProperties,
});

export const Sequence = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    status: SequenceStatus,
    revision: Type.Integer({ minimum: 1 }),
    approvedAt: Nullable(Timestamp()),
    approvedRevision: Nullable(Type.Integer()),
    executionBlockReason: Nullable(
      Type.String({
        description: `null when the sequence can run; otherwise the first obstacle, in this order: ${EXECUTION_BLOCK_REASONS.join(', ')}`,
      }),
    ),
    leadCount: Type.Integer({ minimum: 0, description: 'exact number of leads enrolled in the sequence' }),
    channels: Type.Array(Type.String()),
    steps: Type.Array(SequenceStep),
    sendInLeadHours: Type.Optional(
      Type.Boolean({
        'x-extension': true,
        description: "true: steps go in the sending hours of the lead's own time zone (without one: the account's); answered only when true",
      }),
    ),
  },
  { additionalProperties: true },
);

export const ListSequencesResponse = Type.Object({ sequences: Type.Array(Sequence) });

export const SequenceIdParams = Type.Object({ id: Uuid({ description: 'Sequence uuid' }) });

export const SetSequenceStatusBody = Type.Object({ status: SettableStatus }, { additionalProperties: false });

export const SetSequenceStatusResponse = Type.Object({
  ok: Type.Literal(true),
  sequenceId: Uuid(),
  previousStatus: SettableStatus,
  status: SettableStatus,
});

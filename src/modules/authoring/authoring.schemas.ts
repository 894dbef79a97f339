import { Type, type Static } from 'typebox';
import { Nullable, OneOf, Timestamp, UserId, Uuid } from '../../app/schemas.js';
import { PLAY_STATUSES, SEQUENCE_STATUSES } from '../../domain/vocabulary.js';
import { Play } from '../plays/index.js';
import { StepBranchProperties, StepKind } from '../sequences/index.js';

// Authoring inputs are the spec's step object exactly, with every field present: what an author writes is
// what GET /sequences later answers, so no field is left for the server to guess.

export const PLAY_KINDS = ['followers'] as const;

export const MAX_STEPS = 50;
export const MAX_DELAY_DAYS = 365;
const MAX_TEXT = 10_000;

const PlayKind = Type.Literal('followers', { description: 'followers (default): people who follow the connected account', default: 'followers' });

const Revision = (description: string) => Type.Integer({ minimum: 1, description });
const DryRun = Type.Optional(Type.Boolean({ description: 'true: check everything and answer what would be saved, then save nothing', default: false }));

export const StepAction = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 100, description: 'for example `like_last_post`' }),
    count: Nullable(Type.Integer({ minimum: 1, maximum: 100 })),
    reaction: Nullable(Type.String({ minLength: 1, maxLength: 50 })),
  },
  { additionalProperties: false },
);

export const StepVariant = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 50 }),
    weight: Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000 }),
    messageTmpl: Type.String({ minLength: 1, maxLength: MAX_TEXT }),
  },
  { additionalProperties: false },
);

export const AuthoringStep = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: 'position in the sequence: 0, 1, 2, … in order' }),
    kind: StepKind,
    delayDays: Type.Integer({ minimum: 0, maximum: MAX_DELAY_DAYS, description: 'counted from the previous step' }),
    subject: Nullable(Type.String({ minLength: 1, maxLength: 998, description: 'email subject' })),
    message: Nullable(
      Type.String({
        minLength: 1,
        maxLength: MAX_TEXT,
        description:
          'template: {{firstName}}, {{lastName}}, {{fullName}}, {{name}}, {{company}}, {{title}}, {{email}}, {{username}}, {{linkedinUrl}}, ' +
          'or {{field|fallback}}; aliases ({{first_name}}, {{ contact.firstname }}) work, other syntax ({FirstName}, *|FNAME|*) is refused',
      }),
    ),
    actions: Type.Array(StepAction, { maxItems: 10, description: 'for example a like-last-post action' }),
    variants: Nullable(Type.Array(StepVariant, { minItems: 1, maxItems: 10, description: 'weighted message variants (A/B arms)' })),
    tool: Nullable(Type.String({ minLength: 1, maxLength: 100 })),
    ...StepBranchProperties,
  },
  {
    additionalProperties: false,
    description:
      'Every field is required (null where nullable). message, email, x_dm and instagram_dm steps carry exactly one of message or variants; ' +
      'other kinds at most one; engage and x_engage need at least one action. id, next and else (x-extensions) make the sequence branch.',
  },
);
export type AuthoringStepInput = Static<typeof AuthoringStep>;

const Steps = Type.Array(AuthoringStep, { minItems: 1, maxItems: MAX_STEPS });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const SEND_IN_LEAD_HOURS = "true: steps go in the sending hours of the lead's own time zone; false, or a lead without one: the account's";
const SendInLeadHours = (description: string) => Type.Optional(Type.Boolean({ 'x-extension': true, description }));

export const CreateSequenceInput = Type.Object(
  {
    name: Name,
    steps: Type.Optional(Type.Array(AuthoringStep, { maxItems: MAX_STEPS, description: 'optional; an empty draft can be filled later' })),
    sendInLeadHours: SendInLeadHours("true: send in the lead's own time zone's sending hours (docs/engine.md)"),
    dryRun: DryRun,
  },
  { additionalProperties: false },
);

export const ReplaceStepsInput = Type.Object(
  {
    sequenceId: Uuid(),
    expectedRevision: Revision('the current sequence revision, from list_sequences'),
    steps: Steps,
    sendInLeadHours: SendInLeadHours('as in create_sequence; absent: unchanged'),
    dryRun: DryRun,
  },
  { additionalProperties: false },
);

export const ApproveSequenceInput = Type.Object(
  {
    sequenceId: Uuid(),
    expectedRevision: Revision('the exact revision being approved; must be the current one'),
    dryRun: DryRun,
  },
  { additionalProperties: false },
);

export const CreatePlayInput = Type.Object(
  {
    name: Name,
    kind: Type.Optional(PlayKind),
    sequenceId: Uuid({ description: 'a sequence of this workspace; enrollment queues leads into it' }),
    accountUserId: UserId({ description: 'a connected X account of this workspace (list_x_accounts): the sender and, for followers, the account followed' }),
    autopilot: Type.Optional(Type.Boolean({ default: false, description: 'true: no manual import or enrollment' })),
    reviewApiEnabled: Type.Optional(
      Type.Boolean({ default: true, description: 'true: candidates can be reviewed, imported, looked up and enrolled through the API' }),
    ),
    dryRun: DryRun,
  },
  { additionalProperties: false },
);

export const EditPlayInput = Type.Object(
  {
    playId: Uuid(),
    expectedRevision: Revision('the current Play revision'),
    name: Type.Optional(Name),
    sequenceId: Type.Optional(Uuid()),
    accountUserId: Type.Optional(UserId()),
    autopilot: Type.Optional(Type.Boolean()),
    dryRun: DryRun,
  },
  { additionalProperties: false, description: 'give at least one of name, sequenceId, accountUserId, autopilot' },
);

export const SetPlayStatusInput = Type.Object(
  {
    playId: Uuid(),
    expectedRevision: Revision('the current Play revision'),
    status: OneOf(PLAY_STATUSES, { description: 'archived is final' }),
    dryRun: DryRun,
  },
  { additionalProperties: false },
);

export const SetPlayReviewApiInput = Type.Object(
  {
    playId: Uuid(),
    expectedRevision: Revision('the current Play revision'),
    enabled: Type.Boolean(),
    dryRun: DryRun,
  },
  { additionalProperties: false },
);

// ---- outputs

const StoredStep = Type.Object(
  {
    index: Type.Integer(),
    kind: StepKind,
    delayDays: Type.Integer(),
    subject: Nullable(Type.String()),
    message: Nullable(Type.String()),
    actions: Type.Array(Type.Object({ type: Type.String(), count: Nullable(Type.Integer()), reaction: Nullable(Type.String()) })),
    variants: Nullable(Type.Array(Type.Object({ key: Type.String(), weight: Type.Number(), messageTmpl: Type.String() }))),
    tool: Nullable(Type.String()),
    ...StepBranchProperties,
  },
  { additionalProperties: false },
);

export const AuthoredSequence = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    status: OneOf(SEQUENCE_STATUSES),
    revision: Type.Integer({ minimum: 1 }),
    approvedRevision: Nullable(Type.Integer()),
    approvedAt: Nullable(Timestamp()),
    approved: Type.Boolean({ description: 'true when the current revision is the approved one' }),
    channels: Type.Array(Type.String()),
    steps: Type.Array(StoredStep),
    sendInLeadHours: Type.Boolean({ 'x-extension': true, description: SEND_IN_LEAD_HOURS }),
  },
  { additionalProperties: false },
);

export const AuthoredPlay = Type.Object({ ...Play.properties, kind: Type.String() }, { additionalProperties: false });

const DryRunFlag = Type.Boolean({ description: 'true: nothing was saved; the answer shows what would have been' });
const Changed = Type.Boolean({ description: 'false when the request matched what was already saved (revision unchanged)' });

export const SequenceResult = Type.Object({ sequence: AuthoredSequence, changed: Changed, dryRun: DryRunFlag }, { additionalProperties: false });
export const PlayResult = Type.Object({ play: AuthoredPlay, changed: Changed, dryRun: DryRunFlag }, { additionalProperties: false });

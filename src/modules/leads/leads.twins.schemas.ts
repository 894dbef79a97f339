import { Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../../app/schemas.js';
import { LEAD_STAGES } from '../../domain/vocabulary.js';
import { TWINS_LIMIT_DEFAULT, TWINS_LIMIT_MAX } from './leads.twins.js';

// "Two leads, one person" (GET /leads/twins, POST /leads/twins/merge, POST /leads/twins/distinct): extensions of the
// spec, every route and body marked `x-extension`.

export const TwinsQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ maxLength: 80, description: "the previous page's nextCursor" })),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: TWINS_LIMIT_MAX,
        default: TWINS_LIMIT_DEFAULT,
        description: `page size, 1 to ${TWINS_LIMIT_MAX} (default ${TWINS_LIMIT_DEFAULT})`,
      }),
    ),
  },
  { additionalProperties: true },
);

const TwinLead = Type.Object({
  id: Uuid(),
  person: Nullable(Type.String()),
  company: Nullable(Type.String()),
  email: Nullable(Type.String()),
  linkedinUrl: Nullable(Type.String({ description: 'as typed' })),
  xUserId: Nullable(Type.String()),
  xUsername: Nullable(Type.String()),
  stage: Type.Enum([...LEAD_STAGES]),
  sequenceId: Nullable(Uuid()),
  sequenceName: Nullable(Type.String()),
  sequenceDone: Type.Boolean({ description: 'the sequence is done or was stopped for this lead' }),
  optedOut: Type.Boolean({ description: 'this lead itself carries an opt-out (optedOutAt)' }),
  optedOutAt: Nullable(Timestamp()),
  createdAt: Timestamp(),
});

const SharedChannels = Type.Array(Type.Enum(['email', 'linkedin', 'x', 'handle']), {
  description: 'the channels of the identity keys the two leads share (the keys are not shown)',
});

export const TwinsResponse = Type.Object(
  {
    returned: Type.Integer({ minimum: 0 }),
    pairs: Type.Array(
      Type.Object({
        leadIds: Type.Array(Uuid(), { minItems: 2, maxItems: 2, description: 'the two leads, in id order' }),
        sharedChannels: SharedChannels,
        leads: Type.Array(TwinLead, { minItems: 2, maxItems: 2, description: 'the two leads, in the order of leadIds' }),
      }),
    ),
    nextCursor: Nullable(Type.String({ description: 'pass as `after` for the next page; null: this was the last' })),
  },
  { 'x-extension': true },
);

const LeadIds = Type.Array(Uuid(), {
  minItems: 2,
  maxItems: 2,
  description: 'the two leads of the pair, in any order (ids of this workspace; another workspace’s id is 404)',
});

export const MergeTwinsBody = Type.Object(
  {
    leadIds: LeadIds,
    keep: Type.Optional(Uuid({ description: 'the lead that survives (one of leadIds); absent: the older lead' })),
  },
  { additionalProperties: false, 'x-extension': true },
);

export const DistinctTwinsBody = Type.Object({ leadIds: LeadIds }, { additionalProperties: false, 'x-extension': true });

const Decided = {
  ok: Type.Literal(true),
  leadIds: Type.Array(Uuid(), { minItems: 2, maxItems: 2 }),
  decidedBy: Type.String({ description: 'who decided: `api:<key id>` or `console:<key id>`' }),
  decidedAt: Timestamp(),
};

export const MergeTwinsResponse = Type.Object(
  {
    ...Decided,
    decision: Type.Literal('merged'),
    survivorId: Uuid(),
    mergedLeadId: Uuid(),
    tookFields: Type.Array(Type.Enum(['email', 'linkedinUrl', 'xUserId', 'xUsername']), {
      description: 'the contact fields the survivor took from the merged lead (only those it lacked)',
    }),
    optedOut: Type.Boolean({ description: "true: either lead's person had opted out, so the survivor is opted out" }),
    optedOutLeadIds: Type.Array(Uuid(), { description: 'the leads this merge opted out (empty when none was opted out or all already were)' }),
    survivor: TwinLead,
    merged: TwinLead,
  },
  { 'x-extension': true },
);

export const DistinctTwinsResponse = Type.Object({ ...Decided, decision: Type.Literal('distinct') }, { 'x-extension': true });

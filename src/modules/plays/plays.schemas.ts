import { Type } from 'typebox';
import { Handle, Nullable, OneOf, Timestamp, UserId, Uuid } from '../../app/schemas.js';
import { CANDIDATE_FILTERS, CANDIDATE_STATUSES, PLAY_STATUSES, REVIEW_DECISIONS } from '../../domain/vocabulary.js';

export const PAGE_LIMIT_DEFAULT = 100;
export const PAGE_LIMIT_MAX = 200;

const PlayStatus = OneOf(PLAY_STATUSES);
const ReviewDecision = OneOf(REVIEW_DECISIONS);
const Revision = (description: string) => Type.Integer({ minimum: 1, description });

export const XAccount = Type.Object({ userId: UserId(), handle: Type.String() }, { additionalProperties: false });
export const ListXAccountsResponse = Type.Object({ accounts: Type.Array(XAccount) });

export const Play = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    status: PlayStatus,
    revision: Revision('current saved revision'),
    sequenceId: Nullable(Uuid()),
    accountUserId: Nullable(UserId()),
    reviewApiEnabled: Type.Boolean({ description: 'true when the Play supports candidate review, import, lookup and enrollment' }),
    autopilot: Type.Boolean({ description: 'autopilot Plays cannot use manual import or enrollment' }),
  },
  { additionalProperties: false },
);
export const ListPlaysResponse = Type.Object({ plays: Type.Array(Play) });

export const CandidateReview = Type.Object(
  {
    decision: ReviewDecision,
    reviewedAt: Nullable(Timestamp()),
    by: Nullable(
      Type.String({ description: 'who decided: `api` for enrollment through this API, the API key id for a review decision, `autopilot` for discovery' }),
    ),
  },
  { additionalProperties: false },
);

export const Candidate = Type.Object(
  {
    id: Uuid(),
    xUserId: UserId(),
    username: Nullable(Type.String()),
    name: Nullable(Type.String({ description: 'caller-provided display label, not verified identity' })),
    status: OneOf(CANDIDATE_STATUSES, {
      description: 'proposed: found by the Play; imported: staged by import; approved: reviewed good fit; rejected: reviewed not a good fit',
    }),
    review: Nullable(CandidateReview),
  },
  { additionalProperties: false },
);

export const CandidateCounts = Type.Object(
  {
    total: Type.Integer({ minimum: 0 }),
    unreviewed: Type.Integer({ minimum: 0, description: 'candidates without a review decision' }),
    goodFit: Type.Integer({ minimum: 0 }),
    notAGoodFit: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

export const PlaySummary = Type.Object(
  { id: Uuid(), name: Type.String(), revision: Revision('pass as expectedRevision'), status: PlayStatus },
  { additionalProperties: false },
);

export const SequenceSummary = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    revision: Revision('pass as sequenceRevision'),
    status: Type.String(),
    approved: Type.Boolean({ description: 'true when the current revision is the approved revision' }),
  },
  { additionalProperties: false },
);

export const PlayIdParams = Type.Object({ id: Uuid({ description: 'Play uuid' }) });

const Limit = Type.Integer({ minimum: 1, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT });
const After = Uuid({ description: 'the previous page’s nextCursor; omit for the first page' });

export const CandidateFilter = OneOf(CANDIDATE_FILTERS, { default: 'all' });

export const ListCandidatesQuery = Type.Object({
  limit: Type.Optional(Limit),
  after: Type.Optional(After),
  filter: Type.Optional(CandidateFilter),
});

export const ListCandidatesResponse = Type.Object({
  counts: CandidateCounts,
  candidates: Type.Array(Candidate),
  nextCursor: Nullable(Uuid({ description: 'null on the last page' })),
  play: PlaySummary,
  sequence: Nullable(SequenceSummary),
  reviewUrl: Type.String(),
});

// "Exactly one of" is checked by the service: a schema-level rule would answer with Ajv's generic wording.
export const LookupIdentity = Type.Object(
  { xUserId: Type.Optional(UserId()), username: Type.Optional(Handle({ description: 'leading @ optional, case-insensitive' })) },
  { additionalProperties: false, description: 'exactly one of xUserId or username' },
);

export const LookupBody = Type.Object({ identities: Type.Array(LookupIdentity, { minItems: 1, maxItems: 200 }) }, { additionalProperties: false });

export const ExistingLead = Type.Object(
  { id: Uuid(), sequenceId: Nullable(Uuid()), playId: Nullable(Uuid()), stage: Type.String() },
  { additionalProperties: false },
);

export const LookupResponse = Type.Object({
  playId: Uuid(),
  results: Type.Array(
    Type.Object(
      {
        exists: Type.Boolean(),
        candidate: Nullable(Candidate),
        enrolledInPlay: Type.Boolean({ description: 'a lead of this Play exists for the identity' }),
        currentFollowerStatus: Type.Literal('unknown'),
        existingLeads: Type.Array(ExistingLead),
      },
      { additionalProperties: false, description: 'one result per identity, in request order' },
    ),
  ),
});

export const IMPORT_REQUEST_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{7,119}$';

export const ImportLead = Type.Object(
  {
    xUserId: UserId(),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'caller-provided label' })),
    reference: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const ImportBody = Type.Object(
  {
    requestId: Type.String({ pattern: IMPORT_REQUEST_ID_PATTERN, description: 'idempotency key, scoped to workspace and Play' }),
    expectedRevision: Revision('the Play revision'),
    leads: Type.Array(ImportLead, { minItems: 1, maxItems: 100, description: 'unique xUserIds' }),
  },
  { additionalProperties: false },
);

export const ImportResult = Type.Object(
  {
    xUserId: UserId(),
    reference: Nullable(Type.String()),
    candidateId: Uuid(),
    result: Type.Union([Type.Literal('imported'), Type.Literal('existing_candidate')]),
  },
  { additionalProperties: false },
);

export const ImportResponse = Type.Object({
  playId: Uuid(),
  batchId: Uuid(),
  requestId: Type.String(),
  replayed: Type.Boolean(),
  results: Type.Array(ImportResult),
  enrolled: Type.Literal(false),
  sendsMessages: Type.Literal(false),
});

export const EnrollBody = Type.Object(
  {
    expectedRevision: Revision('the Play revision'),
    sequenceId: Uuid({ description: 'the Play’s own sequence' }),
    sequenceRevision: Revision('the sequence revision'),
    candidateIds: Type.Array(Uuid(), { minItems: 1, maxItems: 200, uniqueItems: true }),
  },
  { additionalProperties: false },
);

export const EnrollResponse = Type.Object({
  results: Type.Array(
    Type.Object(
      {
        candidateId: Uuid(),
        result: Type.Union([Type.Literal('enrolled'), Type.Literal('existing_lead'), Type.Literal('already_reviewed'), Type.Literal('rejected')]),
        leadId: Nullable(Uuid()),
      },
      { additionalProperties: false },
    ),
  ),
  sequenceStatus: Nullable(Type.String()),
  sequenceStatusChanged: Type.Literal(false),
  reviewUrl: Type.String(),
});

/** Not in the spec (an extension): records review decisions without enrolling. */
export const ReviewBody = Type.Object(
  {
    expectedRevision: Revision('the Play revision'),
    decisions: Type.Array(Type.Object({ candidateId: Uuid(), decision: ReviewDecision }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: 200,
      description: 'one decision per candidate; each candidateId at most once',
    }),
  },
  { additionalProperties: false },
);

export const ReviewResponse = Type.Object({
  playId: Uuid(),
  results: Type.Array(
    Type.Object(
      {
        candidateId: Uuid(),
        result: Type.Union([Type.Literal('reviewed'), Type.Literal('already_reviewed')], {
          description: 'reviewed: the decision was saved now; already_reviewed: the same decision was already saved, nothing changed',
        }),
        candidate: Candidate,
      },
      { additionalProperties: false },
    ),
    { description: 'one result per decision, in request order' },
  ),
  counts: CandidateCounts,
  reviewUrl: Type.String(),
});

export const ListPlayLeadsQuery = Type.Object({ limit: Type.Optional(Limit), after: Type.Optional(After) });

export const EnrolledLead = Type.Object(
  {
    id: Uuid(),
    name: Nullable(Type.String()),
    xUserId: Nullable(UserId()),
    username: Nullable(Type.String()),
    sequenceId: Nullable(Uuid()),
    stage: Type.String(),
    createdAt: Timestamp(),
  },
  { additionalProperties: false },
);

export const ListPlayLeadsResponse = Type.Object({
  playId: Uuid(),
  leads: Type.Array(EnrolledLead),
  nextCursor: Nullable(Uuid()),
  hasMore: Type.Boolean(),
});

/**
 * Each Play operation's input and 200 answer, in one place: its HTTP route and its MCP tool are built from the
 * same pair, so the two cannot drift apart.
 */
export const PlayOperations = {
  listCandidates: { query: ListCandidatesQuery, response: ListCandidatesResponse },
  lookup: { body: LookupBody, response: LookupResponse },
  import: { body: ImportBody, response: ImportResponse },
  enroll: { body: EnrollBody, response: EnrollResponse },
  review: { body: ReviewBody, response: ReviewResponse },
  listPlayLeads: { query: ListPlayLeadsQuery, response: ListPlayLeadsResponse },
} as const;

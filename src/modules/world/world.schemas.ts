import { Type, type Static, type TSchema } from 'typebox';
import { Handle, Timestamp, UserId, Uuid } from '../../app/schemas.js';
import { UUID_PATTERN } from '../../lib/ids.js';
import {
  ACTIVITY_ACTIONS,
  ACTIVITY_OUTCOMES,
  BILLING_STATUSES,
  CANDIDATE_STATUSES,
  CHANNELS,
  LEAD_STAGES,
  LINKEDIN_DELIVERIES,
  PLAY_STATUSES,
  REVIEW_DECISIONS,
  ROLES,
  SEQUENCE_STATUSES,
  STEP_KINDS,
} from '../../domain/vocabulary.js';

// The world file of shared/contracts/world-file.md. Every object is closed (additionalProperties: false)
// so that a misspelt field is a 400 naming its path instead of data silently left out. Defaults are
// written here for readers and schema consumers; the loader applies the same values from WORLD_DEFAULTS.

export const WORLD_DEFAULTS = {
  role: 'member',
  xChannelEnabled: true,
  billingPlan: 'growth',
  billingStatus: 'active',
  energyBalance: 1000,
  energyDailyRefill: 1000,
  messagingMode: 'linkedin',
  timeZone: 'UTC',
  sequenceName: 'Untitled sequence',
  sequenceStatus: 'draft',
  playName: 'Untitled Play',
  playStatus: 'active',
  revision: 1,
  variantWeight: 1,
  replyChannel: 'linkedin',
  classification: 'other',
  leadStage: 'queued',
  activityOutcome: 'ok',
} as const;

const Opt = <T extends TSchema>(schema: T) => Type.Optional(schema);
const OptNull = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()], { default: null }));
const closed = { additionalProperties: false } as const;
const Text = (max = 2000) => Type.String({ minLength: 1, maxLength: max });
const Count = () => Type.Integer({ minimum: 0 });
// In a sandbox script an absent field means "use the configured odds" and null means "never", so these
// fields get no default.
const OrNull = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

const AccountId = () => Type.String({ pattern: `^onb_${UUID_PATTERN.slice(1)}` });
// Keys go on the wire as `Bearer <key>`, which authentication reads as printable ASCII without spaces.
const ApiKeySecret = () => Type.String({ pattern: '^[\\x21-\\x7e]{32,512}$' });

/**
 * What the sandbox channel drivers will observe for this person once the engine contacts them; the fields
 * are those src/engine/channels/sandbox.ts reads.
 */
export const SandboxScript = Type.Object(
  {
    acceptsInviteAfterHours: OrNull(Type.Number({ minimum: 0 })),
    followsBackAfterHours: OrNull(Type.Number({ minimum: 0 })),
    replyAfterHours: OrNull(Type.Number({ minimum: 0 })),
    replyText: OrNull(Type.String({ maxLength: 5000 })),
    laterReplies: Opt(
      Type.Array(Type.Object({ afterHours: Type.Number({ minimum: 0 }), text: Type.String({ minLength: 1, maxLength: 5000 }) }, closed), { maxItems: 20 }),
    ),
    failWith: Opt(
      Type.Union([
        Text(200),
        Type.Object(
          {
            error: Opt(Text(200)),
            kinds: Opt(Type.Array(Type.Enum([...STEP_KINDS, 'reply']), { uniqueItems: true })),
            retryable: Opt(Type.Boolean()),
          },
          closed,
        ),
      ]),
    ),
    rateLimited: Opt(Count()),
    retryAfterSeconds: Opt(Type.Number({ minimum: 0 })),
  },
  closed,
);

/** A post shown beside a profile: the pinned one or the most recent, as the provider gives it. */
export const PublicUserPost = Type.Object({ text: Text(5000), createdAt: OptNull(Timestamp()) }, closed);
/**
 * A user of the simulated provider, with the optional public profile shown where a person reviews candidates
 * (docs/world-file.md, "Profiles"): bounded strings, an https picture URL (fetched by the server, never by the
 * browser), a whole non-negative follower count.
 */
export const PublicUser = Type.Object(
  {
    xUserId: UserId(),
    username: Handle(),
    name: OptNull(Text(200)),
    bio: OptNull(Type.String({ maxLength: 1000 })),
    location: OptNull(Type.String({ maxLength: 200 })),
    followersCount: OptNull(Type.Integer({ minimum: 0, maximum: 1e12 })),
    // https, a host name (no credentials), then a path without whitespace.
    profileImageUrl: OptNull(Type.String({ format: 'uri', pattern: '^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^\\s]*)?$', maxLength: 2000 })),
    lastPost: OptNull(PublicUserPost),
  },
  closed,
);
export const PublicFollow = Type.Object({ follower: UserId(), followed: UserId() }, closed);
export const PublicData = Type.Object(
  {
    users: Opt(Type.Array(PublicUser, { default: [] })),
    follows: Opt(Type.Array(PublicFollow, { default: [] })),
    unavailable: Opt(Type.Array(Handle(), { default: [] })),
  },
  closed,
);

export const ApiKeyEntry = Type.Object(
  {
    key: Opt(ApiKeySecret()),
    expiresAt: OptNull(Timestamp()),
    revoked: Opt(Type.Boolean({ default: false })),
  },
  closed,
);

export const ClientEntry = Type.Object({ workspaceId: Uuid(), role: Opt(Type.Enum([...ROLES], { default: WORLD_DEFAULTS.role })) }, closed);

export const Settings = Type.Object(
  {
    xChannelEnabled: Opt(Type.Boolean({ default: WORLD_DEFAULTS.xChannelEnabled })),
    bookingLink: OptNull(Type.String({ format: 'uri', maxLength: 2000 })),
    followUpSequenceId: OptNull(Uuid()),
  },
  closed,
);

export const Billing = Type.Object(
  {
    plan: Opt(Type.String({ minLength: 1, maxLength: 100, default: WORLD_DEFAULTS.billingPlan })),
    status: Opt(Type.Enum([...BILLING_STATUSES], { default: WORLD_DEFAULTS.billingStatus })),
  },
  closed,
);

export const Energy = Type.Object(
  {
    balance: Opt(Type.Integer({ minimum: 0, default: WORLD_DEFAULTS.energyBalance })),
    dailyRefill: Opt(Type.Integer({ minimum: 0, default: WORLD_DEFAULTS.energyDailyRefill })),
  },
  closed,
);

/**
 * The OAuth 2.0 user tokens a person would have granted by connecting the account (world-file contract, "Connected X
 * accounts"): with them the real X driver serves the account against OUTREACH_X_API_URL; stored encrypted, never shown.
 */
export const XAccountOauth = Type.Object(
  {
    accessToken: Type.String({ minLength: 1, maxLength: 4096 }),
    refreshToken: Type.String({ minLength: 1, maxLength: 4096 }),
    expiresAt: Timestamp(),
    scopes: Opt(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 })),
  },
  closed,
);

export const XAccount = Type.Object({ userId: UserId(), handle: Handle(), oauth: Opt(XAccountOauth) }, closed);

/**
 * A LinkedIn account's delivery (world-file contract, "LinkedIn delivery"): `sandbox`, `tasks` (a person performs
 * each action) or `gateway` with the account's id at the LinkedIn gateway (required with gateway, checked by the
 * planner so the 400 names the field).
 */
export const LinkedinDeliverySetting = Type.Object(
  { delivery: Type.Enum([...LINKEDIN_DELIVERIES]), gatewayAccountId: Opt(Type.String({ minLength: 1, maxLength: 200 })) },
  closed,
);

export const MessagingAccount = Type.Object(
  {
    id: Opt(AccountId()),
    name: Opt(Text(200)),
    mode: Opt(Type.String({ minLength: 1, maxLength: 50, default: WORLD_DEFAULTS.messagingMode })),
    timeZone: Opt(Type.String({ minLength: 1, maxLength: 64, default: WORLD_DEFAULTS.timeZone })),
    connectedAt: OptNull(Timestamp()),
    warmupStartedAt: OptNull(Timestamp()),
    accountScore: OptNull(Count()),
    relationsCount: OptNull(Count()),
    /** The sender's e-mail identity ("Mailboxes"); checked field by field in planners/accounts.ts. */
    mailbox: Opt(Type.Unknown()),
    /** How its LinkedIn steps are carried out ("LinkedIn delivery"); without it, the sandbox. */
    linkedin: Opt(LinkedinDeliverySetting),
  },
  closed,
);

export const StepAction = Type.Object({ type: Text(50), count: OptNull(Count()), reaction: OptNull(Text(50)) }, closed);

export const StepVariant = Type.Object(
  {
    key: Text(50),
    weight: Opt(Type.Number({ minimum: 0, default: WORLD_DEFAULTS.variantWeight })),
    messageTmpl: Text(10_000),
  },
  closed,
);

export const SequenceStep = Type.Object(
  {
    index: Opt(Count()),
    kind: Type.Enum([...STEP_KINDS]),
    delayDays: Opt(Type.Integer({ minimum: 0, default: 0 })),
    subject: OptNull(Type.String({ maxLength: 1000 })),
    message: OptNull(Type.String({ maxLength: 10_000 })),
    actions: Opt(Type.Array(StepAction, { default: [] })),
    variants: OptNull(Type.Array(StepVariant, { minItems: 1 })),
    tool: OptNull(Text(100)),
  },
  closed,
);

export const Sequence = Type.Object(
  {
    id: Opt(Uuid()),
    name: Opt(Text(200)),
    status: Opt(Type.Enum([...SEQUENCE_STATUSES], { default: WORLD_DEFAULTS.sequenceStatus })),
    revision: Opt(Type.Integer({ minimum: 1, default: WORLD_DEFAULTS.revision })),
    approvedRevision: OptNull(Type.Integer({ minimum: 1 })),
    approvedAt: OptNull(Timestamp()),
    channels: Opt(Type.Array(Type.Enum([...CHANNELS]), { uniqueItems: true })),
    steps: Opt(Type.Array(SequenceStep, { default: [] })),
    /**
     * The steps of the approved revision when it is older than `revision` (a sequence changed since its approval), so
     * the console can show what changed. Left out when the approved revision is the current one: its steps are `steps`.
     */
    approvedSteps: Opt(Type.Array(SequenceStep)),
  },
  closed,
);

export const Review = Type.Object(
  {
    decision: Type.Enum([...REVIEW_DECISIONS]),
    reviewedAt: Opt(Timestamp()),
    by: OptNull(Text(200)),
  },
  closed,
);

export const Candidate = Type.Object(
  {
    id: Opt(Uuid()),
    xUserId: UserId(),
    username: OptNull(Handle()),
    name: OptNull(Text(200)),
    status: Opt(Type.Enum([...CANDIDATE_STATUSES])),
    review: OptNull(Review),
    sandbox: Opt(SandboxScript),
  },
  closed,
);

export const Play = Type.Object(
  {
    id: Opt(Uuid()),
    name: Opt(Text(200)),
    status: Opt(Type.Enum([...PLAY_STATUSES], { default: WORLD_DEFAULTS.playStatus })),
    revision: Opt(Type.Integer({ minimum: 1, default: WORLD_DEFAULTS.revision })),
    sequenceId: OptNull(Uuid()),
    accountUserId: OptNull(UserId()),
    reviewApiEnabled: Opt(Type.Boolean({ default: true })),
    autopilot: Opt(Type.Boolean({ default: false })),
    candidates: Opt(Type.Array(Candidate, { default: [] })),
  },
  closed,
);

/** The union of the spec's social-network and cross-channel lead views, plus `createdAt` and `sandbox`. */
export const Lead = Type.Object(
  {
    id: Opt(Uuid()),
    person: OptNull(Text(200)),
    name: OptNull(Text(200)),
    company: OptNull(Text(200)),
    title: OptNull(Text(200)),
    email: OptNull(Type.String({ format: 'email', maxLength: 320 })),
    linkedinUrl: OptNull(Type.String({ format: 'uri', maxLength: 2000 })),
    xUserId: OptNull(UserId()),
    username: OptNull(Handle()),
    account: OptNull(AccountId()),
    accountUserId: OptNull(UserId()),
    sequenceId: OptNull(Uuid()),
    playId: OptNull(Uuid()),
    strategyId: OptNull(Uuid()),
    strategyRunId: OptNull(Uuid()),
    invitePriority: Opt(Type.Integer({ default: 0 })),
    stage: Opt(Type.Enum([...LEAD_STAGES], { default: WORLD_DEFAULTS.leadStage })),
    currentStep: Opt(Type.Integer({ minimum: 0, default: 0 })),
    // No default: absent means "due at once while the lead is in a running lane", null means "not scheduled".
    nextActionAt: OrNull(Timestamp()),
    automationStopped: Opt(Type.Boolean()),
    sequenceDone: Opt(Type.Boolean()),
    createdAt: Opt(Timestamp()),
    invitedAt: OptNull(Timestamp()),
    connectedAt: OptNull(Timestamp()),
    messagedAt: OptNull(Timestamp()),
    repliedAt: OptNull(Timestamp()),
    followedAt: OptNull(Timestamp()),
    followedBackAt: OptNull(Timestamp()),
    meetingBookedAt: OptNull(Timestamp()),
    meetingOutcome: OptNull(Text(100)),
    snoozedUntil: OptNull(Timestamp()),
    optedOutAt: OptNull(Timestamp()),
    replySentiment: OptNull(Text(50)),
    lastError: OptNull(Text(2000)),
    deliveryGuaranteed: Opt(Type.Literal(false)),
    sandbox: Opt(SandboxScript),
  },
  closed,
);

export const Reply = Type.Object(
  {
    id: Opt(Uuid()),
    leadId: Uuid(),
    channel: Opt(Type.Enum([...CHANNELS], { default: WORLD_DEFAULTS.replyChannel })),
    classification: Opt(Type.String({ minLength: 1, maxLength: 100, default: WORLD_DEFAULTS.classification })),
    theirMessage: OptNull(Type.String({ maxLength: 20_000 })),
    draft: OptNull(Type.String({ maxLength: 20_000 })),
    repliedAt: Opt(Timestamp()),
  },
  closed,
);

export const ActivityEntry = Type.Object(
  {
    id: Opt(Uuid()),
    createdAt: Opt(Timestamp()),
    action: Type.Enum([...ACTIVITY_ACTIONS]),
    outcome: Opt(Type.Enum([...ACTIVITY_OUTCOMES], { default: WORLD_DEFAULTS.activityOutcome })),
    units: Opt(Count()),
    detail: Opt(Type.String({ maxLength: 10_000, default: '' })),
    account: OptNull(AccountId()),
    leadId: OptNull(Uuid()),
  },
  closed,
);

export const WorldWorkspace = Type.Object(
  {
    id: Opt(Uuid()),
    name: Text(200),
    apiKeys: Opt(Type.Array(ApiKeyEntry, { default: [] })),
    clients: Opt(Type.Array(ClientEntry, { default: [] })),
    settings: Opt(Settings),
    billing: Opt(Billing),
    energy: Opt(Energy),
    xAccounts: Opt(Type.Array(XAccount, { default: [] })),
    messagingAccounts: Opt(Type.Array(MessagingAccount, { default: [] })),
    sequences: Opt(Type.Array(Sequence, { default: [] })),
    plays: Opt(Type.Array(Play, { default: [] })),
    leads: Opt(Type.Array(Lead, { default: [] })),
    replies: Opt(Type.Array(Reply, { default: [] })),
    activity: Opt(Type.Array(ActivityEntry, { default: [] })),
  },
  closed,
);

export const WorldFile = Type.Object(
  {
    publicData: Opt(PublicData),
    workspaces: Opt(Type.Array(WorldWorkspace, { default: [] })),
  },
  closed,
);

export type WorldFile = Static<typeof WorldFile>;
export type WorldWorkspace = Static<typeof WorldWorkspace>;
export type WorldSequenceStep = Static<typeof SequenceStep>;
export type WorldCandidate = Static<typeof Candidate>;
export type WorldLead = Static<typeof Lead>;
export type { ActivityAction } from '../../domain/vocabulary.js';

export interface SeedResult {
  workspaces: { id: string; name: string; status: 'created' | 'existing'; apiKeys: string[] }[];
  counts: { sequences: number; plays: number; candidates: number; leads: number; replies: number; activity: number };
}

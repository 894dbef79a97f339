import { Type, type Static, type TSchema } from 'typebox';
import { Handle, Nullable, Timestamp, UserId, Uuid } from '../../app/schemas.js';

const Provider = Type.Literal('publicdata', { description: 'The public-data provider that answered; there is no fallback source.' });
const SendsMessages = Type.Literal(false);

// ---- POST /x/users/resolve

export const ResolveBody = Type.Object({ username: Handle({ description: 'Exact handle, `@` optional, case-insensitive.' }) }, { additionalProperties: false });

export const ResolvedUser = Type.Object({
  xUserId: UserId(),
  username: Type.String(),
  name: Nullable(Type.String()),
  checkedAt: Timestamp({ description: 'When the provider observed the profile (a cached answer keeps its original time).' }),
  evidence: Type.Literal('public_profile'),
});

export const ResolveResponse = Type.Object({
  status: Type.Literal('resolved'),
  user: ResolvedUser,
  provider: Provider,
  sendsMessages: SendsMessages,
});

export const ResolveUnknownResponse = Type.Object(
  {
    status: Type.Literal('unknown'),
    user: Type.Null(),
    provider: Provider,
    sendsMessages: SendsMessages,
    error: Type.String({ description: '`identity_unknown` or `provider_unavailable`' }),
    reason: Type.String({ description: '`user_not_found`, `provider_unavailable` or `provider_timeout`' }),
    message: Type.Optional(Type.String()),
    retryAfterSeconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "when the provider's rate window is spent: seconds until it opens again (also the Retry-After header)",
        'x-extension': true,
      }),
    ),
  },
  { additionalProperties: true, description: 'The profile could not be verified or the provider is unavailable; identity is unknown.' },
);

// ---- POST /x/eligibility

const Reference = Type.String({ maxLength: 200 });

// Two closed shapes make "exactly one of xUsername / xUserId" a schema rule: an item with both or
// neither matches no branch, so validation answers 400 before any energy is spent.
export const EligibilityLead = Type.Union([
  Type.Object({ reference: Type.Optional(Reference), xUsername: Handle() }, { additionalProperties: false }),
  Type.Object({ reference: Type.Optional(Reference), xUserId: UserId() }, { additionalProperties: false }),
]);

export const EligibilityBody = Type.Object(
  {
    account: Handle({ description: 'A connected X handle of the workspace, `@` optional, case-insensitive.' }),
    leads: Type.Array(EligibilityLead, { minItems: 1, maxItems: 100 }),
  },
  { additionalProperties: false },
);
export type EligibilityInput = Static<typeof EligibilityBody>;

export const EligibilityResult = Type.Object({
  xUserId: Nullable(UserId()),
  followsAccount: Nullable(Type.Boolean({ description: 'null means unknown: neither eligible nor ineligible' })),
  checkedAt: Nullable(Timestamp({ description: 'When the evidence was observed, not when it was served.' })),
  reason: Nullable(Type.String()),
  evidence: Nullable(Type.String()),
  reference: Type.Optional(Type.String()),
  xUsername: Type.Optional(Type.String()),
  retryAfterSeconds: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: "with reason provider_unavailable, when the provider's rate window is spent: seconds until it reopens (ask again after that, not sooner)",
      'x-extension': true,
    }),
  ),
});
export type EligibilityResultRow = Static<typeof EligibilityResult>;

export const EligibilityResponse = Type.Object({
  account: Type.String({ description: 'The connected account handle as saved.' }),
  results: Type.Array(EligibilityResult),
  provider: Provider,
  sendsMessages: SendsMessages,
});
export type EligibilityOutput = Static<typeof EligibilityResponse>;

// ---- GET /x/readiness

export const ReadinessIssue = Type.Object({
  code: Type.String(),
  message: Type.String(),
  retryable: Type.Boolean({ description: 'true when calling again later can clear the issue without anyone acting' }),
});
export type ReadinessIssueRow = Static<typeof ReadinessIssue>;

const SectionState = Type.Union([Type.Literal('complete'), Type.Literal('partial'), Type.Literal('unavailable')]);

const section = <T extends TSchema>(data: T) =>
  Type.Object({
    state: SectionState,
    observedAt: Nullable(Timestamp()),
    data: Nullable(data),
    issues: Type.Array(ReadinessIssue),
  });

// Extensions of the spec's entries (docs/tasks.md, docs/linkedin.md): open tasks per account, and a LinkedIn account's
// delivery with the gateway's last refusal. Absent when the task queue could not be read.
const OpenTasks = (description: string) => Type.Optional(Type.Integer({ minimum: 0, 'x-extension': true, description }));
const ReadinessLinkedinGateway = Type.Object(
  {
    delivery: Type.Union([Type.Literal('sandbox'), Type.Literal('tasks'), Type.Literal('gateway')]),
    error: Nullable(Type.String({ description: '`linkedin_gateway_auth_failed` when the gateway refused the account (401/403); else null' })),
  },
  { 'x-extension': true, description: "how the account's steps reach LinkedIn: sandbox (simulated), tasks (a person) or gateway" },
);

export const AccountsData = Type.Object(
  {
    xAccounts: Nullable(
      Type.Array(
        Type.Object({ userId: UserId(), handle: Type.String(), openTasks: OpenTasks("the account's open tasks (X DMs, follows and likes a person must do)") }),
      ),
    ),
    messagingAccounts: Nullable(
      Type.Array(
        Type.Object({
          id: Type.String(),
          name: Type.String(),
          mode: Type.String(),
          storedStatus: Type.String(),
          openTasks: OpenTasks("the account's open tasks"),
          linkedinGateway: Type.Optional(ReadinessLinkedinGateway),
        }),
      ),
    ),
    openTasks: OpenTasks('every open task of the workspace (GET /api/v1/tasks), those of paused sequences left out'),
  },
  { additionalProperties: true },
);
export const BillingData = Type.Object({ plan: Type.String(), status: Type.String() }, { additionalProperties: true });
export const EnergyData = Type.Object(
  { balance: Type.Integer(), dailyRefill: Type.Integer(), nextRefillAt: Nullable(Timestamp()) },
  { additionalProperties: true },
);

export const ReadinessResponse = Type.Object({
  workspaceId: Uuid(),
  asOf: Timestamp(),
  accounts: section(AccountsData),
  billing: section(BillingData),
  energy: section(EnergyData),
  providerHealthChecked: Type.Literal(false),
  deliveryGuaranteed: Type.Literal(false),
  note: Type.String(),
});
export type ReadinessOutput = Static<typeof ReadinessResponse>;
export type SectionOutput = ReadinessOutput['accounts'] | ReadinessOutput['billing'] | ReadinessOutput['energy'];

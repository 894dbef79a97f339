import { Type } from 'typebox';
import { MessagingAccountId, Nullable, OneOf, Timestamp } from '../../app/schemas.js';
import { LINKEDIN_DELIVERIES } from '../../domain/vocabulary.js';
import { ProgressFunnel } from '../reports/index.js';

export const ProgressQuery = Type.Object(
  {
    sinceDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 7, description: 'period length in days, 1 to 90 (default 7)' })),
  },
  { additionalProperties: true },
);

/** One row of the send budget ledger (an extension of the spec's pacing entry). */
export const PacingBudget = Type.Object({
  scope: Type.String({
    description:
      "`account` (this messaging account), `mailbox` (one of its mailboxes), `linkedin_gateway` (the account at the LinkedIn gateway), `x_account` (an X account, in `platformAccounts`) or `channel` (a channel's own, its scope id `<channel>:<owner>`)",
  }),
  scopeId: Type.String({ description: 'the messaging account id, the mailbox id, the X user id, or `<channel>:<owner>`' }),
  budget: Type.String({
    description:
      "`invites` (connection requests), `messages` (messages and e-mails of the account; at the gateway, LinkedIn messages), `notes` (at the gateway, invitations sent with a note), `actions` (every paced step), `emails` (one mailbox), `dms` and `follows` (an X account), or a channel's own name",
  }),
  window: Type.String({
    description:
      '`local_day`: the calendar day in the pacing time zone; `utc_day`: the UTC day; `rolling_week`: the local day and the six before it; `rolling_month`: the local day and the 29 before it',
  }),
  windowStart: Type.String({ format: 'date', description: 'the day counted, YYYY-MM-DD (of a rolling window, its last day: today)' }),
  used: Type.Integer({ minimum: 0, description: 'units reserved in the window (every day it counts): sent, or going out now' }),
  cap: Nullable(Type.Integer({ minimum: 0, description: "the window's cap today; null when uncapped (`actions` only carry the spacing)" })),
});

/** How a LinkedIn account's steps reach LinkedIn, and whether the gateway refused it (docs/linkedin.md). */
export const LinkedinGatewayStatus = Type.Object(
  {
    delivery: OneOf(LINKEDIN_DELIVERIES, {
      description: '`sandbox` (simulated, nothing leaves), `tasks` (a person does each action) or `gateway` (sent through the LinkedIn gateway)',
    }),
    error: Nullable(
      Type.String({
        description: '`linkedin_gateway_auth_failed` when the gateway refused the account (401/403): nothing is sent until it is linked again; else null',
      }),
    ),
  },
  { 'x-extension': true, description: "the account's LinkedIn delivery and the gateway's last refusal" },
);

/** A sender that is no messaging account (an X account): its budgets today as the engine counts and caps them. */
export const PlatformAccountEntry = Type.Object(
  {
    channel: Type.String({ description: 'the channel it sends on, e.g. `x`' }),
    accountUserId: Type.String({ description: "the platform's id of the account (X user id)" }),
    handle: Type.String({ description: 'its handle, without @' }),
    delivery: Type.String({ description: '`x_connected` (through the X API) or `sandbox` (simulated, nothing leaves)' }),
    budgets: Type.Array(PacingBudget),
  },
  { 'x-extension': true },
);

export const PacingEntry = Type.Object({
  id: MessagingAccountId(),
  name: Type.String(),
  mode: Type.String(),
  storedStatus: Type.String(),
  connectedAt: Nullable(Timestamp()),
  warmupStartedAt: Nullable(Timestamp()),
  pacingTimeZone: Type.String({ description: 'the IANA zone whose calendar day the budget follows' }),
  invitesSentToday: Type.Integer({ minimum: 0, description: 'invites sent since local midnight in the pacing time zone' }),
  inviteCapToday: Type.Integer({ minimum: 0, description: "today's connection-request budget in the account's own time zone" }),
  rampPhase: Type.Integer({
    minimum: 1,
    description: 'warm-up stage: week 1…N of the ramp schedule, N+1 once the ramp is over or when no warm-up was started',
  }),
  accountScore: Nullable(Type.Integer()),
  relationsCount: Nullable(Type.Integer()),
  budgets: Type.Array(PacingBudget, {
    'x-extension': true,
    description:
      "every send budget of the account today as the engine enforces it: its invites, messages and actions, then each of its mailboxes' e-mails, then a gateway account's LinkedIn invitations (rolling week) and messages (UTC day). X accounts belong to no messaging account: see `platformAccounts`",
  }),
  openTasks: Type.Integer({
    minimum: 0,
    'x-extension': true,
    description:
      "the account's open tasks (GET /api/v1/tasks?account=): actions a person must do; those of paused sequences are hidden. Shown whatever the X channel setting",
  }),
  linkedinGateway: LinkedinGatewayStatus,
});

export const ProgressResponse = Type.Object({
  asOf: Timestamp(),
  period: Type.Object({ since: Timestamp(), days: Type.Integer({ minimum: 1, maximum: 90 }) }),
  funnel: ProgressFunnel,
  queued: Type.Integer({ minimum: 0, description: 'leads waiting to start (stage queued or resolving), not stopped and not opted out' }),
  recentActions: Type.Integer({ minimum: 0, description: 'ledger entries with outcome ok in the period' }),
  recentFailures: Type.Integer({ minimum: 0, description: 'ledger entries with outcome failed in the period' }),
  accounts: Type.Array(PacingEntry, { description: 'one entry per messaging account, in creation order' }),
  platformAccounts: Type.Array(PlatformAccountEntry, {
    'x-extension': true,
    description:
      'the senders that are no messaging account, in creation order: every X account of the workspace, with its DMs and follows today (UTC day) when it is connected (a sandbox X account draws no budget)',
  }),
});

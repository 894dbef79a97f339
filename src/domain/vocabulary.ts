// The service's shared vocabulary: each list is written here once, and the HTTP schemas, the world file, the
// database types, the engine and the CLI all take it from here. Order matters where a list is published
// (OpenAPI enums, error messages) or ranked (lead stages), so keep it.

/** What a Team link grants a key over a client workspace; a key's home workspace is always `owner`. */
export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];
export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

export const STEP_KINDS = ['connect', 'message', 'engage', 'email', 'x_dm', 'x_engage', 'instagram_dm'] as const;
export type StepKind = (typeof STEP_KINDS)[number];
export const isStepKind = (value: string): value is StepKind => (STEP_KINDS as readonly string[]).includes(value);

/** Kinds that deliver text to the prospect; each carries either `message` or `variants`. */
/** Which channel carries each step kind. */
export const CHANNEL_OF_STEP: Record<StepKind, Channel> = {
  connect: 'linkedin',
  message: 'linkedin',
  engage: 'linkedin',
  email: 'email',
  x_dm: 'x',
  x_engage: 'x',
  instagram_dm: 'instagram',
};

export const MESSAGE_KINDS = ['message', 'email', 'x_dm', 'instagram_dm'] as const satisfies readonly StepKind[];
export const isMessageKind = (kind: string) => (MESSAGE_KINDS as readonly string[]).includes(kind);
/** Kinds whose whole point is their actions (likes, views), so an empty action list is refused. */
export const ENGAGE_KINDS = ['engage', 'x_engage'] as const satisfies readonly StepKind[];

export const CHANNELS = ['linkedin', 'email', 'x', 'instagram'] as const;
export type Channel = (typeof CHANNELS)[number];
export const isChannel = (value: string): value is Channel => (CHANNELS as readonly string[]).includes(value);
/** A channel as people read it in a sentence ("no sender for e-mail"); an unknown name reads as itself. */
export const CHANNEL_NAMES: Record<Channel, string> = { linkedin: 'LinkedIn', email: 'e-mail', x: 'X', instagram: 'Instagram' };
export const channelName = (channel: string) => (isChannel(channel) ? CHANNEL_NAMES[channel] : channel);

/**
 * The spec's stage order. A lead only ever moves forward along it; `failed` and `skipped` end a lead's
 * automation and sit outside the progress order (see PROGRESS_STAGES).
 */
export const LEAD_STAGES = ['queued', 'resolving', 'invited', 'accepted', 'messaged', 'followed_up', 'replied', 'failed', 'skipped'] as const;
export type LeadStage = (typeof LEAD_STAGES)[number];
/** The stages a lead passes through in order, up to `replied`; "reached stage X" means any of these from X on. */
export const PROGRESS_STAGES = LEAD_STAGES.slice(0, LEAD_STAGES.indexOf('replied') + 1) as readonly LeadStage[];

export const SEQUENCE_STATUSES = ['draft', 'active', 'paused', 'archived'] as const;
export type SequenceStatus = (typeof SEQUENCE_STATUSES)[number];
export const PLAY_STATUSES = ['active', 'paused', 'archived'] as const;
export type PlayStatus = (typeof PLAY_STATUSES)[number];
export const CANDIDATE_STATUSES = ['proposed', 'approved', 'imported', 'rejected'] as const;
export type CandidateStatus = (typeof CANDIDATE_STATUSES)[number];
export const REVIEW_DECISIONS = ['good_fit', 'not_a_good_fit'] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];
/** Which candidates a listing of a Play's candidates answers: every one, those without a decision, or one decision. */
export const CANDIDATE_FILTERS = ['all', 'unreviewed', ...REVIEW_DECISIONS] as const;
export type CandidateFilter = (typeof CANDIDATE_FILTERS)[number];
export const BILLING_STATUSES = ['active', 'trialing', 'past_due', 'canceled'] as const;
export type BillingStatus = (typeof BILLING_STATUSES)[number];

/** The spec's activity enum: every ledger entry is written under one of these. */
export const ACTIVITY_ACTIONS = [
  'resolve',
  'invite',
  'accepted',
  'like',
  'message',
  'followup',
  'reply_detected',
  'view_profile',
  'endorse',
  'comment',
  'enrich',
  'meeting_invited',
  'reply_drafted',
  'reply_sent',
  'reply_dismissed',
  'reply_snoozed',
  'sequence_started',
  'meeting_booked',
  'meeting_no_show',
  'meeting_synced',
  'manual_override',
  'email_sent',
  'x_dm',
  'x_follow',
  'x_like',
  'x_follow_back',
  'error',
] as const;
export type ActivityAction = (typeof ACTIVITY_ACTIONS)[number];
export const ACTIVITY_OUTCOMES = ['ok', 'skipped', 'failed'] as const;
export type ActivityOutcome = (typeof ACTIVITY_OUTCOMES)[number];

/** A list as messages and descriptions write it: `owner, admin or member`. */
export function inWords(values: readonly string[]): string {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
}

/** How a LinkedIn account's steps reach LinkedIn (world file "LinkedIn delivery"; docs/linkedin.md). */
export const LINKEDIN_DELIVERIES = ['sandbox', 'tasks', 'gateway'] as const;
export type LinkedinDeliveryMode = (typeof LINKEDIN_DELIVERIES)[number];
export const isLinkedinDelivery = (value: string): value is LinkedinDeliveryMode => (LINKEDIN_DELIVERIES as readonly string[]).includes(value);

/** A task's life (docs/tasks.md): open until a person does it (done) or skips it, or it no longer applies (cancelled). */
export const TASK_STATUSES = ['open', 'done', 'skipped', 'cancelled'] as const;
export type TaskStatusName = (typeof TASK_STATUSES)[number];

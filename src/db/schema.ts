import type { ColumnType, Generated, GeneratedAlways } from 'kysely';
import type {
  ActivityOutcome,
  BillingStatus,
  CandidateStatus,
  LeadStage,
  PlayStatus,
  ReviewDecision,
  Role,
  SequenceStatus,
  StepKind,
} from '../domain/vocabulary.js';

import type { CreatedAt, Int8, Json, Timestamp } from './schema-columns.js';
import type * as delivery from './schema-delivery.js';
import type * as meetings from './schema-meetings.js';

// The channels' and delivery tables live in schema-delivery.ts; everything imports them from here.
export type * from './schema-delivery.js';
export type * from './schema-paths.js';
import type { LeadPathsTable } from './schema-paths.js';
export type * from './schema-people.js';
import type { PeopleTable, WorkspaceMembersTable, PersonLinksTable, PasskeysTable, WebauthnChallengesTable, AuditEventsTable } from './schema-people.js';

export interface WorkspacesTable {
  id: string;
  name: string;
  x_channel_enabled: Generated<boolean>;
  booking_link: string | null;
  follow_up_sequence_id: string | null;
  billing_plan: Generated<string>;
  billing_status: Generated<BillingStatus>;
  energy_balance: Generated<number>;
  energy_daily_refill: Generated<number>;
  energy_refilled_at: CreatedAt;
  created_at: CreatedAt;
}

export interface TeamLinksTable {
  owner_workspace_id: string;
  client_workspace_id: string;
  role: Role;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  key_hash: string;
  prefix: string;
  /** What the key may do (docs/roles.md); keys made before roles are owners. */
  role: Generated<Role>;
  created_at: CreatedAt;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface XAccountsTable {
  workspace_id: string;
  user_id: string;
  handle: string;
  created_at: CreatedAt;
}

export interface MessagingAccountsTable {
  id: string;
  workspace_id: string;
  name: string;
  mode: Generated<string>;
  stored_status: Generated<string>;
  time_zone: Generated<string>;
  connected_at: Timestamp | null;
  warmup_started_at: Timestamp | null;
  account_score: number | null;
  relations_count: number | null;
  created_at: CreatedAt;
  /** How its LinkedIn steps are carried out (migration 0027; docs/linkedin.md). */
  linkedin_delivery: Generated<LinkedinDelivery>;
  /** The account's id at the LinkedIn gateway (required with `gateway`). */
  linkedin_gateway_account_id: string | null;
  /** Set when the gateway refused the account (401/403): `linkedin_gateway_auth_failed`; nothing is sent meanwhile. */
  linkedin_gateway_error: string | null;
  linkedin_gateway_error_at: Timestamp | null;
  /** The gateway watcher's schedule, lease and position (chats, relations) for this account. */
  linkedin_next_poll_at: Timestamp | null;
  linkedin_poll_lease_until: Timestamp | null;
  linkedin_watch_state: Json | null;
  /** The account's own booking link, used before the workspace's (migration 0043). */
  booking_link: string | null;
}

export type LinkedinDelivery = 'sandbox' | 'tasks' | 'gateway';

export interface SequenceStepRow {
  index: number;
  kind: StepKind;
  delayDays: number;
  subject: string | null;
  message: string | null;
  actions: { type: string; count: number | null; reaction: string | null }[];
  variants: { key: string; weight: number; messageTmpl: string }[] | null;
  tool: string | null;
  /** Branches (x-extensions; domain/branches.ts): the step's id, its ordered edges, its `else`. */
  id?: string;
  next?: { if: Record<string, unknown>; withinDays?: number; goto: string }[];
  else?: string;
}

export interface SequencesTable {
  id: string;
  workspace_id: string;
  name: string;
  status: SequenceStatus;
  revision: Generated<number>;
  approved_revision: number | null;
  approved_at: Timestamp | null;
  channels: ColumnType<string[], string[] | undefined, string[]>;
  /** JSON text on insert, like Json; may be left out (DEFAULT '[]'). */
  steps: ColumnType<SequenceStepRow[], string | undefined, string>;
  /** The approved revision's steps (migration 0017); NULL when never approved or approved before 0017. */
  approved_steps: Json<SequenceStepRow[]> | null;
  /** Each step's `kind`, in order, kept by the database from `steps` (migration 0054); a step without one reads NULL. */
  step_kinds: GeneratedAlways<string[]>;
  /** Send each step in the lead's own sending hours when the lead has a valid time zone (migration 0037). */
  send_in_lead_hours: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface PlaysTable {
  id: string;
  workspace_id: string;
  name: string;
  kind: Generated<string>;
  status: PlayStatus;
  revision: Generated<number>;
  sequence_id: string | null;
  account_user_id: string | null;
  review_api_enabled: Generated<boolean>;
  autopilot: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface CandidateBatchesTable {
  id: string;
  workspace_id: string;
  play_id: string;
  source: 'discovery' | 'import' | 'seed';
  request_id: string | null;
  created_at: CreatedAt;
}

export interface ImportRequestsTable {
  workspace_id: string;
  play_id: string;
  request_id: string;
  payload_hash: string;
  batch_id: string;
  response: Json;
  created_at: CreatedAt;
}

export interface CandidatesTable {
  id: string;
  workspace_id: string;
  play_id: string;
  batch_id: string | null;
  x_user_id: string;
  username: string | null;
  name: string | null;
  status: CandidateStatus;
  review_decision: ReviewDecision | null;
  reviewed_at: Timestamp | null;
  reviewed_by: string | null;
  sandbox: Json | null;
  created_at: CreatedAt;
}

/** Kept exact by statement triggers on candidates (migration 0003); `unreviewed` is total minus the two decisions. */
export interface PlayCandidateCountsTable {
  workspace_id: string;
  play_id: string;
  total: Generated<number>;
  good_fit: Generated<number>;
  not_a_good_fit: Generated<number>;
}

export type { LeadStage };

export interface LeadsTable {
  id: string;
  workspace_id: string;
  /** The mailbox this lead's e-mail goes out from, kept for the rest of its sequence (migration 0013). */
  mailbox_id: string | null;
  person: string | null;
  company: string | null;
  title: string | null;
  email: string | null;
  linkedin_url: string | null;
  x_user_id: string | null;
  username: string | null;
  account_id: string | null;
  account_user_id: string | null;
  sequence_id: string | null;
  play_id: string | null;
  candidate_id: string | null;
  strategy_id: string | null;
  strategy_run_id: string | null;
  invite_priority: Generated<number>;
  stage: Generated<LeadStage>;
  current_step: Generated<number>;
  next_action_at: Timestamp | null;
  automation_stopped: Generated<boolean>;
  variant_key: string | null;
  invited_at: Timestamp | null;
  connected_at: Timestamp | null;
  messaged_at: Timestamp | null;
  replied_at: Timestamp | null;
  followed_at: Timestamp | null;
  followed_back_at: Timestamp | null;
  meeting_booked_at: Timestamp | null;
  meeting_outcome: string | null;
  /** The answer to our iCalendar invitation: accepted, declined or tentative (migration 0043). */
  meeting_response: string | null;
  snoozed_until: Timestamp | null;
  opted_out_at: Timestamp | null;
  reply_sentiment: string | null;
  last_error: string | null;
  last_activity_at: Timestamp | null;
  sandbox: Json | null;
  /** Engine bookkeeping (0007_engine): when the drivers are next asked about this person, until when, on which channel. */
  observe_next_at: Timestamp | null;
  observe_until: Timestamp | null;
  last_message_channel: string | null;
  /** The step in flight (0007_engine, 0009_inflight_release): its key, step, claim time and pacing reservation. */
  inflight_key: string | null;
  inflight_step: number | null;
  inflight_at: Timestamp | null;
  inflight_release: Json | null;
  step_attempts: Generated<number>;
  /** Tries of the current step that only waited on the sending side (migration 0020). */
  step_waits: Generated<number>;
  /** `accept`: waits for an acceptance; `task`: for a person's task; `branch`: for its edges (domain/branches.ts). */
  waiting_for: 'accept' | 'task' | 'branch' | null;
  /** When it left the branching step it waits at, and whether the engine could do that step (0049; lanes/branch.ts). */
  branch_at: Timestamp | null;
  branch_allowed: boolean | null;
  /** LinkedIn's id of the person (the gateway's `provider_id`) and the gateway chat with them (migration 0027). */
  linkedin_provider_id: string | null;
  linkedin_chat_id: string | null;
  /** The person's IANA time zone, or null when unknown (migration 0037). */
  time_zone: string | null;
  /** A file's unmapped columns, header (as written) -> text, or null for none (migration 0039; domain/custom-fields.ts). */
  custom: Json<Record<string, string>> | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

/** The ledger, partitioned by UTC month with a DEFAULT partition; primary key (id, created_at) (0032, docs/ledger.md). */
export interface ActivityTable {
  id: string;
  workspace_id: string;
  created_at: CreatedAt;
  action: string;
  outcome: ActivityOutcome;
  units: Generated<number>;
  detail: Generated<string>;
  account_id: string | null;
  lead_id: string | null;
}

export interface RepliesTable {
  id: string;
  workspace_id: string;
  lead_id: string;
  channel: Generated<string>;
  classification: Generated<string>;
  their_message: string | null;
  draft: string | null;
  replied_at: Timestamp;
  state: Generated<'pending' | 'snoozed' | 'decided'>;
  decision: string | null;
  decided_at: Timestamp | null;
  decided_by: string | null;
  snoozed_until: Timestamp | null;
  created_at: CreatedAt;
  /** The stored text was cut (migration 0024), as reply.received's `theirMessageTruncated`. */
  their_message_truncated: Generated<boolean>;
  /** The classifier's confidence, 0..1 (migration 0035; null before it and for a person's own record). */
  confidence: number | null;
  /** Below the confidence floor: it waits for a person, nothing automatic happened (docs/email.md). */
  needs_review: Generated<boolean>;
  /**
   * The step whose message the reply answers (migration 0052): its sequence, its index, and how it was found (by the
   * e-mail thread, the channel's conversation, or the latest step sent). Null: it answers no step.
   */
  answers_sequence_id: string | null;
  answers_step: number | null;
  answer_match: 'thread' | 'conversation' | 'latest_step' | null;
}

export interface PublicdataUsersTable {
  x_user_id: string;
  username: string;
  name: string | null;
}
/** An X user's public profile as the public-data provider last gave it (migration 0025); public, not per workspace. */
export interface XProfilesTable {
  x_user_id: string;
  bio: string | null;
  location: string | null;
  followers_count: Int8 | null;
  profile_image_url: string | null;
  last_post_text: string | null;
  last_post_at: Timestamp | null;
  updated_at: CreatedAt;
}
export interface PublicdataFollowsTable {
  follower: string;
  followed: string;
}
export interface PublicdataUnavailableTable {
  handle: string;
}

/** When the engine next runs a Play's discovery (migration 0007). */
export interface EngineDiscoveryTable {
  workspace_id: string;
  play_id: string;
  next_run_at: Timestamp;
  last_run_at: Timestamp | null;
  runs: Generated<number>;
}

/** A lead's identity key per channel (migration 0036; domain/identity.ts), written only by domain/identity.repository.ts. */
export interface LeadIdentitiesTable {
  workspace_id: string;
  lead_id: string;
  channel: 'email' | 'linkedin' | 'x' | 'handle';
  key: string;
}

/**
 * A decision on two leads the identity keys show to be one person (migration 0038; modules/leads/leads.twins.ts): the
 * pair ordered (lead_a < lead_b), `merged` with the lead kept, or `distinct`; who decided and when.
 */
export interface LeadTwinDecisionsTable {
  workspace_id: string;
  lead_a: string;
  lead_b: string;
  decision: 'merged' | 'distinct';
  survivor_id: string | null;
  decided_by: string;
  decided_at: Timestamp;
}

export interface DB {
  instance_settings: delivery.InstanceSettingsTable;
  workspaces: WorkspacesTable;
  team_links: TeamLinksTable;
  api_keys: ApiKeysTable;
  people: PeopleTable;
  workspace_members: WorkspaceMembersTable;
  person_links: PersonLinksTable;
  audit_events: AuditEventsTable;
  passkeys: PasskeysTable;
  lead_paths: LeadPathsTable;
  webauthn_challenges: WebauthnChallengesTable;
  x_accounts: XAccountsTable;
  x_account_oauth: delivery.XAccountOauthTable;
  oauth_states: delivery.OauthStatesTable;
  x_dm_events_seen: delivery.XDmEventsSeenTable;
  x_dm_senders: delivery.XDmSendersTable;
  tasks: delivery.TasksTable;
  send_budgets: delivery.SendBudgetsTable;
  messaging_accounts: MessagingAccountsTable;
  sequences: SequencesTable;
  plays: PlaysTable;
  candidate_batches: CandidateBatchesTable;
  import_requests: ImportRequestsTable;
  candidates: CandidatesTable;
  play_candidate_counts: PlayCandidateCountsTable;
  leads: LeadsTable;
  lead_identities: LeadIdentitiesTable;
  lead_twin_decisions: LeadTwinDecisionsTable;
  activity: ActivityTable;
  replies: RepliesTable;
  webhooks: delivery.WebhooksTable;
  outbox_events: delivery.OutboxEventsTable;
  webhook_deliveries: delivery.WebhookDeliveriesTable;
  webhook_attempts: delivery.WebhookAttemptsTable;
  idempotency_records: delivery.IdempotencyRecordsTable;
  publicdata_users: PublicdataUsersTable;
  publicdata_follows: PublicdataFollowsTable;
  publicdata_unavailable: PublicdataUnavailableTable;
  x_profiles: XProfilesTable;
  engine_discovery: EngineDiscoveryTable;
  mailboxes: delivery.MailboxesTable;
  inbox_listeners: delivery.InboxListenersTable;
  mailbox_domain_checks: delivery.MailboxDomainChecksTable;
  email_messages: delivery.EmailMessagesTable;
  x_dm_sends: delivery.XDmSendsTable;
  email_inbound_seen: delivery.EmailInboundSeenTable;
  suppressed_addresses: delivery.SuppressedAddressesTable;
  suppression_removals: delivery.SuppressionRemovalsTable;
  email_soft_bounces: delivery.EmailSoftBouncesTable;
  console_sessions: delivery.ConsoleSessionsTable;
  console_login_links: delivery.ConsoleLoginLinksTable;
  meeting_endpoints: meetings.MeetingEndpointsTable;
  meeting_events: meetings.MeetingEventsTable;
  meeting_bookings: meetings.MeetingBookingsTable;
}

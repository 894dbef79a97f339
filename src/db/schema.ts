import type { ColumnType, Generated } from 'kysely';
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

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T = unknown> = ColumnType<T, string, string>;
/** bigint: read as a number (database.ts parses int8 with Number on both engines), written as a number or a decimal string. */
type Int8 = ColumnType<number, number | string, number | string>;
/**
 * date: written as 'YYYY-MM-DD'. Both drivers read it into a Date (node-postgres at local midnight, PGlite at UTC
 * midnight), so a query that needs the day back selects `column::text`.
 */
type CalendarDay = ColumnType<Date, string, string>;

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

export interface XAccountOauthTable {
  workspace_id: string;
  user_id: string;
  access_token: string;
  refresh_token: string;
  expires_at: Timestamp;
  scopes: Generated<string>;
  disconnected_at: Timestamp | null;
  updated_at: CreatedAt;
  /** After X answered 429: nothing is sent from the account before this instant (migration 0018). */
  rate_limited_until: Timestamp | null;
  /** The newest DM event id the watcher has handled (X ids grow with time). */
  dm_newest_event_id: string | null;
  next_poll_at: CreatedAt;
  followers_next_at: CreatedAt;
  poll_lease_until: Timestamp | null;
  connected_at: CreatedAt;
  /** Why it is disconnected: X refused its refresh token, or a person disconnected it (migration 0022). */
  disconnect_reason: XDisconnectReason | null;
}

export type XDisconnectReason = 'token_refused' | 'by_person';

export interface XOauthStatesTable {
  state: string;
  workspace_id: string;
  /** Encrypted PKCE code verifier. */
  code_verifier: string;
  redirect_uri: string;
  created_at: CreatedAt;
  expires_at: Timestamp;
  /** The console session that started it (SHA-256 of its id); null for `outreach x connect` (migration 0020). */
  session_id_hash: string | null;
}

/**
 * The send budget ledger (migration 0023; src/domain/budgets.ts holds the rule, budgets.repository.ts the SQL): one
 * budget of one sender in one window. scope/budget/window_kind are open text so new ones need no migration.
 */
export interface SendBudgetsTable {
  workspace_id: string;
  /** `account` (messaging account), `mailbox`, `x_account`; later `mailbox_domain`. */
  scope: string;
  scope_id: string;
  /** `invites`, `messages`, `actions`, `emails`, `dms`, `follows`. */
  budget: string;
  /** `local_day`, `utc_day` or `rolling_week`. */
  window_kind: string;
  /** The day the units count under, YYYY-MM-DD. */
  window_start: CalendarDay;
  used: Generated<number>;
  /** The cap the latest reservation was held to; null when uncapped or never reserved. */
  cap: number | null;
  /** The latest reservation's instant (an account's `actions` row: the spacing between two actions). */
  last_used_at: Timestamp | null;
}

export interface XDmEventsSeenTable {
  workspace_id: string;
  account_user_id: string;
  event_id: string;
  lead_id: string | null;
  seen_at: CreatedAt;
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
}

export interface SequenceStepRow {
  index: number;
  kind: StepKind;
  delayDays: number;
  subject: string | null;
  message: string | null;
  actions: { type: string; count: number | null; reaction: string | null }[];
  variants: { key: string; weight: number; messageTmpl: string }[] | null;
  tool: string | null;
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
  waiting_for: 'accept' | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

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
}

export interface WebhooksTable {
  id: string;
  workspace_id: string;
  url: string;
  events: ColumnType<string[], string[], string[]>;
  secret: string;
  enabled: Generated<boolean>;
  created_at: CreatedAt;
  disabled_at: Timestamp | null;
}

export interface OutboxEventsTable {
  id: string;
  workspace_id: string;
  event: string;
  data: Json;
  webhook_id: string | null;
  created_at: CreatedAt;
  dispatched_at: Timestamp | null;
}

export interface WebhookDeliveriesTable {
  id: string;
  workspace_id: string;
  webhook_id: string;
  event_id: string;
  event: string;
  state: Generated<'pending' | 'delivered' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: CreatedAt;
  lease_expires_at: Timestamp | null;
  created_at: CreatedAt;
  lease_token: string | null;
  lost_attempts: Generated<number>;
  last_status: number | null;
  last_error: string | null;
  completed_at: Timestamp | null;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt: number;
  started_at: Timestamp;
  duration_ms: number | null;
  status: number | null;
  error: string | null;
  finished_at: Timestamp | null;
  outcome: 'success' | 'retry' | 'fail' | 'lost' | null;
}

export interface IdempotencyRecordsTable {
  workspace_id: string;
  scope: string;
  key: string;
  request_hash: string;
  status_code: number;
  response: Json;
  created_at: CreatedAt;
}

export interface PublicdataUsersTable {
  x_user_id: string;
  username: string;
  name: string | null;
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

/** Facts about the installation, not any workspace (migration 0011). */
export interface InstanceSettingsTable {
  name: string;
  value: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface DB {
  instance_settings: InstanceSettingsTable;
  workspaces: WorkspacesTable;
  team_links: TeamLinksTable;
  api_keys: ApiKeysTable;
  x_accounts: XAccountsTable;
  x_account_oauth: XAccountOauthTable;
  x_oauth_states: XOauthStatesTable;
  x_dm_events_seen: XDmEventsSeenTable;
  send_budgets: SendBudgetsTable;
  messaging_accounts: MessagingAccountsTable;
  sequences: SequencesTable;
  plays: PlaysTable;
  candidate_batches: CandidateBatchesTable;
  import_requests: ImportRequestsTable;
  candidates: CandidatesTable;
  play_candidate_counts: PlayCandidateCountsTable;
  leads: LeadsTable;
  activity: ActivityTable;
  replies: RepliesTable;
  webhooks: WebhooksTable;
  outbox_events: OutboxEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  idempotency_records: IdempotencyRecordsTable;
  publicdata_users: PublicdataUsersTable;
  publicdata_follows: PublicdataFollowsTable;
  publicdata_unavailable: PublicdataUnavailableTable;
  engine_discovery: EngineDiscoveryTable;
  mailboxes: MailboxesTable;
  email_messages: EmailMessagesTable;
  email_inbound_seen: EmailInboundSeenTable;
  suppressed_addresses: SuppressedAddressesTable;
  console_sessions: ConsoleSessionsTable;
  console_login_links: ConsoleLoginLinksTable;
}

/** A messaging account's e-mail identity (migration 0013). The URLs carry credentials and are stored encrypted. */
export interface MailboxesTable {
  id: string;
  workspace_id: string;
  account_id: string;
  address: string;
  display_name: string | null;
  smtp_url_enc: string;
  imap_url_enc: string;
  sent_folder: string | null;
  health: Generated<'unknown' | 'ok' | 'auth_failed' | 'unreachable'>;
  health_detail: string | null;
  health_checked_at: Timestamp | null;
  imap_uidvalidity: Int8 | null;
  imap_last_uid: ColumnType<number, number | string | undefined, number | string>;
  next_poll_at: CreatedAt;
  created_at: CreatedAt;
  /** The authserv-id whose Authentication-Results the inbox watcher believes, besides the provider's (migration 0024). */
  trusted_authserv_id: string | null;
}

/** Every Message-ID we sent (direction out), keyed for threading, reply matching and sent-folder recovery. */
export interface EmailMessagesTable {
  workspace_id: string;
  message_id: string;
  lead_id: string;
  mailbox_id: string | null;
  idempotency_key: string;
  subject: string | null;
  direction: Generated<'out' | 'in'>;
  sent_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Where an outgoing message went (migration 0024); null on inbound rows and on rows written before. */
  recipient: string | null;
}

/** An INBOX message already handled, so each is processed once across restarts and workers. */
export interface EmailInboundSeenTable {
  mailbox_id: string;
  uidvalidity: Int8;
  uid: Int8;
  outcome: string;
  seen_at: CreatedAt;
}

/** Addresses the workspace never e-mails again: bounced or unsubscribed. `address` is lower-case. */
export interface SuppressedAddressesTable {
  workspace_id: string;
  address: string;
  reason: 'bounced' | 'unsubscribed';
  lead_id: string | null;
  created_at: CreatedAt;
}

/** A web console session (migration 0015): the SHA-256 of the browser's opaque id, bound to the key it signed in with. */
export interface ConsoleSessionsTable {
  id_hash: string;
  workspace_id: string;
  /** NULL for a session started from an operator's login link. */
  key_id: string | null;
  /** The client workspace a Team owner switched to; NULL means the home workspace. */
  selected_workspace_id: string | null;
  created_at: CreatedAt;
  expires_at: Timestamp;
}

/** A one-time console sign-in link made by `outreach login-link` (migration 0015). */
export interface ConsoleLoginLinksTable {
  token_hash: string;
  workspace_id: string;
  created_at: CreatedAt;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

import type { ColumnType, Generated } from 'kysely';
import type { CalendarDay, CreatedAt, Int8, Json, Timestamp } from './schema-columns.js';

// The tables of the channels' accounts and mail, the send budget ledger, console sessions, webhook delivery,
// idempotency and instance settings (the DB interface in schema.ts lists every table). Written by hand;
// test/db/schema-drift.test.ts checks them against the migrated database.

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

/**
 * A pending OAuth connect of any channel (migration 0041; src/channels/oauth/): single use, ten minutes. `flow`: whose
 * it is (`x`, `mailbox`); `details`: what only that flow keeps (a mailbox's provider, account and server overrides).
 */
export interface OauthStatesTable {
  state: string;
  workspace_id: string;
  flow: string;
  /** Encrypted PKCE code verifier. */
  code_verifier: string;
  redirect_uri: string;
  /** The console session that started it (SHA-256 of its id); null when started by the CLI. */
  session_id_hash: string | null;
  details: Json<Record<string, unknown>>;
  created_at: CreatedAt;
  expires_at: Timestamp;
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

/** People who wrote to a connected X account (migration 0027): X allows automated DMs only to them. Ids only, no text. */
export interface XDmSendersTable {
  workspace_id: string;
  account_user_id: string;
  sender_id: string;
  first_at: Timestamp;
}

export type TaskStatus = 'open' | 'done' | 'skipped' | 'cancelled';

/**
 * A due action for a person (migration 0027; docs/tasks.md): a sequence step the platform's rules keep from the engine
 * (domain/policy.ts), or a reply decision's answer on a `tasks` LinkedIn account. Triggers cancel it when it no
 * longer applies.
 */
export interface TasksTable {
  id: string;
  workspace_id: string;
  lead_id: string;
  /** `uncertain` (migration 0034): a send a crash left in flight that no driver could confirm. */
  /** `leaver` (migration 0035): a leaver notice named someone to contact instead; a person decides. */
  source: 'step' | 'reply' | 'uncertain' | 'leaver';
  sequence_id: string | null;
  step_index: number | null;
  variant_key: string | null;
  reply_id: string | null;
  decision: string | null;
  /** The step kind (`connect`, `x_dm`, …) or `reply`. */
  kind: string;
  channel: string;
  /** The ledger action completing it writes (`invite`, `message`, `x_dm`, `x_follow`, `reply_sent`, …). */
  action: string;
  account_id: string | null;
  x_account_user_id: string | null;
  subject: string | null;
  /** The rendered message, encrypted at rest (the console and the task API show it to the person who sends it). */
  text: string | null;
  actions: ColumnType<{ type: string; count: number | null; reaction: string | null }[], string | undefined, string>;
  profile_url: string | null;
  /** Why a person must act: the policy's reason code (docs/policy.md). */
  reason: string;
  idempotency_key: string;
  status: Generated<TaskStatus>;
  due_at: Timestamp;
  created_at: CreatedAt;
  closed_at: Timestamp | null;
  closed_by: string | null;
  closed_reason: string | null;
  /** What the platform answered when the console performed it (an X DM event id, …). */
  external_id: string | null;
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
  /** The outbox's own order: taken from an identity sequence at insert, never written (migration 0040). */
  seq: ColumnType<number, never, never>;
  /** The inserting transaction's id (pg_current_xact_id() as bigint; 0 for rows older than migration 0040). */
  txid: ColumnType<number, number | string | undefined, number | string>;
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

/** Facts about the installation, not any workspace (migration 0011). */
export interface InstanceSettingsTable {
  name: string;
  value: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
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
  /** The DKIM selector it signs with; NULL: the providers' usual ones are tried (migration 0028). */
  dkim_selector: string | null;
  /** Reputation guards (migration 0029): when and why the mailbox stopped sending until a person resumes it. */
  paused_at: Timestamp | null;
  paused_reason: 'bounces' | 'complaints' | null;
  paused_detail: string | null;
  /** OAuth 2.0 (migration 0030): the provider, the encrypted access and refresh tokens, and the access token's expiry. */
  oauth_provider: 'google' | 'microsoft' | null;
  oauth_tokens_enc: string | null;
  oauth_expires_at: Timestamp | null;
  /** IMAP IDLE (migration 0051): the listener holding the mailbox in IDLE, until when, and false once the server lacks IDLE. */
  idle_owner: string | null;
  idle_until: Timestamp | null;
  imap_idle: boolean | null;
}

/** A worker listening to IMAP IDLE (migration 0051), alive while `seen_at` is within the lease. */
export interface InboxListenersTable {
  id: string;
  seen_at: Timestamp;
}

/** A mailbox's latest sending-domain check (migration 0028; src/channels/email/deliverability/domain-checks.ts). */
export interface MailboxDomainChecksTable {
  mailbox_id: string;
  workspace_id: string;
  domain: string;
  checked_at: Timestamp;
  result: Json;
  duration_ms: number;
  queries: number;
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
  /** A hard bounce / an abuse complaint tied to this message (migration 0029); cleared: no longer counted (resumed). */
  bounced_at: Timestamp | null;
  complained_at: Timestamp | null;
  bounce_cleared: Generated<boolean>;
  /** How far an outgoing message went (migration 0033): SMTP transaction started, 250 accepted, or a person's word. */
  delivery: 'started' | 'accepted' | 'marked_sent' | null;
  accepted_at: Timestamp | null;
  smtp_queue_id: string | null;
  /** The mailbox's sent folder copy (migration 0050): null none owed, `owed` until filed over IMAP, then `filed`. */
  sent_copy: 'owed' | 'filed' | null;
  /** The exact bytes sent (base64), encrypted; kept from the start record until the copy is filed. */
  sent_copy_raw: string | null;
  sent_copy_attempts: Generated<number>;
  sent_copy_next_at: Timestamp | null;
  /** Why the last filing failed (`imap_unreachable`, `append_failed`, …); never a message or a server's words. */
  sent_copy_error: string | null;
}

/** An INBOX message already handled, so each is processed once across restarts and workers. */
/**
 * Each INBOX message the watcher read, claimed once (mailbox, UIDVALIDITY, UID), and since migration 0035 its inbound
 * record (docs/email.md "The inbound record"): what it was tied to, the verdict, why, and what it changed. No body:
 * `excerpt` is at most 280 characters of a reply's own words, encrypted, shown in the console only.
 */
export interface EmailInboundSeenTable {
  mailbox_id: string;
  uidvalidity: Int8;
  uid: Int8;
  /** The watcher's outcome code (inbox-rules.ts Outcome), kept for the pass counts. */
  outcome: string;
  /** When the message was read. */
  seen_at: CreatedAt;
  workspace_id: string | null;
  /** The IMAP INTERNALDATE: when the message arrived in the INBOX. */
  received_at: Timestamp | null;
  /** The sender's Message-ID, bracket-free, lower case. */
  message_id: string | null;
  /** Our Message-ID it was tied to (a reply's thread, a report's returned message), with brackets as stored. */
  tied_message_id: string | null;
  lead_id: string | null;
  /** inbound-verdicts.ts InboundVerdict. */
  verdict: string | null;
  reason: string | null;
  effect: string | null;
  /** A reply's classification (domain/classify.ts), its confidence (0..1) and whether it waits for a person. */
  label: string | null;
  confidence: number | null;
  needs_review: ColumnType<boolean, boolean | undefined, boolean>;
  excerpt: string | null;
  detail: Json<Record<string, unknown>> | null;
}

/** Addresses the workspace never e-mails again (docs/deliverability.md "The suppression list"). `address` is its identity key. */
export interface SuppressedAddressesTable {
  workspace_id: string;
  address: string;
  /** domain/suppression.ts SuppressionReason (migration 0035; `bounced` before it). */
  reason: 'bounced_hard' | 'bounced_soft' | 'complaint' | 'unsubscribed' | 'opted_out' | 'left_company';
  lead_id: string | null;
  created_at: CreatedAt;
  /** The message that caused it (our Message-ID a report or reply was tied to), when there was one. */
  source_message_id: string | null;
}

/** A suppression a person removed (migration 0035): what it was, who removed it, and when. */
export interface SuppressionRemovalsTable {
  id: string;
  workspace_id: string;
  address: string;
  reason: string;
  lead_id: string | null;
  source_message_id: string | null;
  suppressed_at: Timestamp;
  removed_at: Timestamp;
  removed_by: string;
}

/** Final soft bounces per address (migration 0035), until they reach the suppression threshold. */
export interface EmailSoftBouncesTable {
  workspace_id: string;
  address: string;
  count: number;
  first_at: Timestamp;
  last_at: Timestamp;
}

/** A web console session (migration 0015): the SHA-256 of the browser's opaque id, bound to the key it signed in with. */
export interface ConsoleSessionsTable {
  id_hash: string;
  workspace_id: string;
  /** NULL for a session started from an operator's login link. */
  key_id: string | null;
  /** The client workspace a Team owner switched to; NULL means the home workspace. */
  selected_workspace_id: string | null;
  /** The person signed in (an invitation or a person's sign-in link); NULL for key and operator sessions. */
  person_id: string | null;
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

/** An X DM's request about to leave (migration 0033): a step key with no row never reached X (crash-honest confirm). */
export interface XDmSendsTable {
  workspace_id: string;
  idempotency_key: string;
  account_user_id: string;
  started_at: ColumnType<Date, Date | string, Date | string>;
  answered_at: Timestamp | null;
  dm_event_id: string | null;
}

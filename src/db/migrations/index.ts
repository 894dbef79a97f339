import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_initial.js';
import * as m0003 from './0003_plays.js';
import * as m0006 from './0006_webhooks.js';
import * as m0007 from './0007_engine.js';
import * as m0008 from './0008_crm.js';
import * as m0009 from './0009_inflight_release.js';
import * as m0010 from './0010_webhook_fair_claims.js';
import * as m0011 from './0011_instance_settings.js';
import * as m0012 from './0012_event_stream.js';
import * as m0013 from './0013_mailboxes.js';
import * as m0015 from './0015_console_sessions.js';
import * as m0016 from './0016_x_oauth.js';
import * as m0017 from './0017_sequence_approved_steps.js';
import * as m0018 from './0018_x_channel.js';
import * as m0019 from './0019_mailbox_days.js';
import * as m0020 from './0020_step_waits.js';
import * as m0021 from './0021_x_account_days.js';
import * as m0022 from './0022_x_disconnect.js';
import * as m0023 from './0023_send_budgets.js';
import * as m0024 from './0024_reply_truncated.js';
import * as m0025 from './0025_x_profiles.js';
import * as m0026 from './0026_activity_by_lead.js';
import * as m0027 from './0027_tasks.js';
import * as m0028 from './0028_mailbox_domain_checks.js';
import * as m0029 from './0029_mailbox_guards.js';
import * as m0030 from './0030_mailbox_oauth.js';
import * as m0032 from './0032_activity_partitions.js';
import * as m0033 from './0033_email_delivery_state.js';
import * as m0034 from './0034_uncertain_tasks.js';
import * as m0035 from './0035_inbound_records.js';
import * as m0036 from './0036_lead_identities.js';
import * as m0037 from './0037_lead_time_zone.js';
import * as m0038 from './0038_lead_twin_decisions.js';
import * as m0039 from './0039_lead_custom_fields.js';
import * as m0040 from './0040_event_stream_order.js';
import * as m0041 from './0041_oauth_states.js';
import * as m0042 from './0042_gateway_budget_scope.js';
import * as m0043 from './0043_meetings.js';
import * as m0044 from './0044_meeting_subscriptions.js';
import * as m0045 from './0045_gateway_account_unique.js';
import * as m0046 from './0046_key_roles.js';
import * as m0047 from './0047_people_and_audit.js';
import * as m0048 from './0048_passkeys.js';
import * as m0049 from './0049_branches.js';
import * as m0050 from './0050_sent_copies.js';
import * as m0051 from './0051_inbox_idle.js';
import * as m0052 from './0052_reply_answers.js';
import * as m0053 from './0053_due_order.js';
import * as m0054 from './0054_sequence_step_kinds.js';

/**
 * Every migration, in the order they apply. Kysely's Migrator runs them in name order (and refuses a
 * new one named below the last applied), so the number is the order. Shipped names never change.
 *
 * | #    | Name                  | What it adds                                                              |
 * |------|-----------------------|---------------------------------------------------------------------------|
 * | 0001 | 0001_initial          | every table: workspaces, keys, Team links, accounts, sequences, Plays,    |
 * |      |                       | candidates, leads, activity, replies, webhooks and outbox, idempotency    |
 * |      |                       | records, public data                                                      |
 * | 0003 | 0003_plays            | exact per-Play candidate counts kept by triggers; candidate page indexes  |
 * | 0006 | 0006_webhooks         | delivery leases, lost-attempt count, delivery and attempt outcomes        |
 * | 0007 | 0007_engine           | engine bookkeeping on leads: in-flight mark, waits, observation schedule  |
 * | 0008 | 0008_crm              | covering activity indexes, identity and reply indexes, append-only ledger |
 * | 0009 | 0009_inflight_release | the pacing reservation kept with a send's in-flight mark                  |
 * | 0010 | 0010_webhook_fair_claims | partial indexes on pending deliveries for the per-subscription claim    |
 * | 0011 | 0011_instance_settings | installation facts: the encryption key's fingerprint                    |
 * | 0012 | 0012_event_stream     | the event stream's index: a workspace's recent events in order          |
 * | 0013 | 0013_mailboxes        | e-mail: mailboxes, sent Message-IDs, INBOX position and handled mail,   |
 * |      |                       | suppressed addresses; a lead's sticky mailbox                           |
 * | 0015 | 0015_console_sessions | web console sessions (hashed ids, bound to a key) and one-time login links |
 * | 0016 | 0016_x_oauth          | a connected X account's OAuth tokens (encrypted), expiry, disconnection   |
 * | 0017 | 0017_sequence_approved_steps | the approved revision's steps, to show what changed since approval |
 * | 0018 | 0018_x_channel        | X: pending connects (state + PKCE verifier), the account's 429 pause, the |
 * |      |                       | DM watcher's position and the DM events already handled                 |
 * | 0019 | 0019_mailbox_days     | e-mails sent per mailbox per local day (the per-mailbox daily cap)        |
 * | 0020 | 0020_step_waits       | a step's tries that only waited on the sender (not the lead's attempts);  |
 * |      |                       | a console-started X connect bound to its console session                  |
 * | 0021 | 0021_x_account_days   | DMs and follows per connected X account per UTC day (the daily caps)     |
 * | 0022 | 0022_x_disconnect     | why an X account stopped: X refused its tokens, or a person disconnected it |
 * | 0023 | 0023_send_budgets     | one send budget ledger (account, mailbox and X account budgets per window) |
 * |      |                       | in place of engine_account_days, mailbox_days and x_account_days          |
 * | 0024 | 0024_reply_truncated  | a reply's text cut at 20,000 characters (flag), the recipient of each sent |
 * |      |                       | e-mail (bounces), a mailbox's trusted Authentication-Results authserv-id  |
 * | 0025 | 0025_x_profiles       | X users' public profiles (picture URL, bio, location, followers, last     |
 * |      |                       | post) for the review page                                                 |
 * | 0026 | 0026_activity_by_lead | one lead's ledger entries in order (the console's lead page, name search)  |
 * | 0027 | 0027_tasks            | tasks (a due action for a person) cancelled by triggers when they no      |
 * |      |                       | longer apply; a LinkedIn account's delivery and gateway state; LinkedIn    |
 * |      |                       | ids on leads; the people who wrote to a connected X account first          |
 * | 0028 | 0028_mailbox_domain_checks | a mailbox's DKIM selector; each mailbox's latest sending-domain check (MX, |
 * |      |                       | SPF, DKIM, DMARC), when it ran and what it cost                           |
 * | 0029 | 0029_mailbox_guards   | reputation guards: a sent e-mail's hard bounce or complaint, a mailbox's |
 * |      |                       | pause (bounces or complaints) until a person resumes it                   |
 * | 0030 | 0030_mailbox_oauth    | a mailbox's OAuth provider and encrypted tokens (Google, Microsoft 365);  |
 * |      |                       | pending mailbox connects (state, PKCE verifier, account, hosts)           |
 * | 0032 | 0032_activity_partitions | the activity ledger partitioned by UTC month (schema activity_partitions, |
 * |      |                       | a DEFAULT partition); primary key (id, created_at)                        |
 * | 0033 | 0033_email_delivery_state | how far an outgoing e-mail went: SMTP transaction started, accepted   |
 * |      |                       | (250 and its queue id), or marked sent by a person                        |
 * | 0034 | 0034_uncertain_tasks  | tasks of source `uncertain`: a send whose delivery a crash left unknown,  |
 * |      |                       | for a person to decide (the 0027 triggers leave them to the person)       |
 * | 0035 | 0035_inbound_records  | each INBOX message's record (verdict, reason, effect, what it was tied to, |
 * |      |                       | an encrypted excerpt); suppression reasons and their source message,     |
 * |      |                       | removals (who, when), soft bounces counted per address                   |
 * | 0036 | 0036_lead_identities  | each lead's identity keys per channel (e-mail, LinkedIn, X user, handle)  |
 * | 0037 | 0037_lead_time_zone   | a lead's own IANA time zone; a sequence's option to send in the lead's    |
 * |      |                       | sending hours (`send_in_lead_hours`)                                      |
 * | 0038 | 0038_lead_twin_decisions | Merge / Not the same person decisions on two leads of one person (who, |
 * |      |                       | when, the lead kept)                                                      |
 * | 0039 | 0039_lead_custom_fields | a file's unmapped columns as the lead's custom fields ({{custom.<name>}}) |
 * | 0040 | 0040_event_stream_order | the outbox's own order for the event stream: a sequence number and the     |
 * |      |                       | inserting transaction's id per event; the stream index on (txid, seq)     |
 *
 * Gaps: no migration 0002, 0004, 0005 or 0031 ever existed in this repository, so nothing is missing. Do
 * not fill them: a new name below the last applied one is refused. 0003 landed in the repository after
 * 0006 to 0008; a database built from this code applies it second. The next migration is 0041.
 */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0003_plays': m0003,
  '0006_webhooks': m0006,
  '0007_engine': m0007,
  '0008_crm': m0008,
  '0009_inflight_release': m0009,
  '0010_webhook_fair_claims': m0010,
  '0011_instance_settings': m0011,
  '0012_event_stream': m0012,
  '0013_mailboxes': m0013,
  '0015_console_sessions': m0015,
  '0016_x_oauth': m0016,
  '0017_sequence_approved_steps': m0017,
  '0018_x_channel': m0018,
  '0019_mailbox_days': m0019,
  '0020_step_waits': m0020,
  '0021_x_account_days': m0021,
  '0022_x_disconnect': m0022,
  '0023_send_budgets': m0023,
  '0024_reply_truncated': m0024,
  '0025_x_profiles': m0025,
  '0026_activity_by_lead': m0026,
  '0027_tasks': m0027,
  '0028_mailbox_domain_checks': m0028,
  '0029_mailbox_guards': m0029,
  '0030_mailbox_oauth': m0030,
  '0032_activity_partitions': m0032,
  '0033_email_delivery_state': m0033,
  '0034_uncertain_tasks': m0034,
  '0035_inbound_records': m0035,
  '0036_lead_identities': m0036,
  '0037_lead_time_zone': m0037,
  '0038_lead_twin_decisions': m0038,
  '0039_lead_custom_fields': m0039,
  '0040_event_stream_order': m0040,
  '0041_oauth_states': m0041,
  '0042_gateway_budget_scope': m0042,
  '0043_meetings': m0043,
  '0044_meeting_subscriptions': m0044,
  '0045_gateway_account_unique': m0045,
  '0046_key_roles': m0046,
  '0047_people_and_audit': m0047,
  '0048_passkeys': m0048,
  '0049_branches': m0049,
  '0050_sent_copies': m0050,
  '0051_inbox_idle': m0051,
  '0052_reply_answers': m0052,
  '0053_due_order': m0053,
  '0054_sequence_step_kinds': m0054,
};

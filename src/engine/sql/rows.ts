import type { Selectable } from 'kysely';
import type { ActivityTable, LeadsTable, MessagingAccountsTable, PlaysTable, SequencesTable, WorkspacesTable, XAccountsTable } from '../../db/schema.js';
import type { PacingRelease } from '../pacing.js';

// The shapes the engine's statements read and write, derived from src/db/schema.ts so a column's type has one home.

type Lead = Selectable<LeadsTable>;

/** A lead as both the step claim and the watch read it: who the person is and what the engine has done so far. */
export type LeadContactRow = Pick<
  Lead,
  | 'id'
  | 'workspace_id'
  | 'person'
  | 'company'
  | 'title'
  | 'email'
  | 'linkedin_url'
  | 'x_user_id'
  | 'username'
  | 'account_id'
  | 'invited_at'
  | 'connected_at'
  | 'messaged_at'
  | 'followed_at'
  | 'followed_back_at'
  | 'replied_at'
  | 'last_message_channel'
> & {
  /** The lead's own X account, or its Play's. */
  x_account_user_id: Lead['account_user_id'];
  /** The world file's script for the sandbox drivers: the lead's own, or its candidate's. */
  sandbox: Record<string, unknown> | null;
};

export type ClaimedRow = LeadContactRow &
  Pick<Lead, 'stage' | 'current_step' | 'variant_key' | 'inflight_key' | 'inflight_step' | 'inflight_at' | 'step_attempts' | 'step_waits'> & {
    /** Only leads in a sequence are claimed. */
    sequence_id: NonNullable<Lead['sequence_id']>;
    /** The lead had no account and the claim gave it the workspace's only one for this step (domain/claim-layout.ts). */
    account_assigned?: boolean;
    /** The lead and its Play had no X account and the claim gave it the workspace's only one. */
    x_account_assigned?: boolean;
    inflight_release: PacingRelease | null;
    steps: Selectable<SequencesTable>['steps'];
    /** The lead's messaging account's zone (null without one): its pacing day, and its sending hours by default. */
    time_zone: Selectable<MessagingAccountsTable>['time_zone'] | null;
    /** The lead's own zone and its sequence's choice to send in it (domain/admission.ts `sendingZone`). */
    lead_time_zone: Lead['time_zone'];
    send_in_lead_hours: Selectable<SequencesTable>['send_in_lead_hours'];
    /** The lead's custom fields (leads.custom), for {{custom.<name>}}. */
    custom: Selectable<Lead>['custom'];
    warmup_started_at: Selectable<MessagingAccountsTable>['warmup_started_at'];
    /** The admission list's `stop` rules (src/domain/admission.ts), as the claim's SQL answered them. */
    identity_opted_out: boolean;
    address_suppressed: boolean;
    /** How the platform is reached (domain/policy.ts): the LinkedIn account's delivery, and whether the X account is connected. */
    linkedin_delivery: Selectable<MessagingAccountsTable>['linkedin_delivery'] | null;
    x_connected: boolean;
  };

export type WatchedRow = LeadContactRow &
  Pick<Lead, 'sequence_id'> & {
    watchable: boolean;
    /** Newest reply on record (out-of-office ones included); drivers re-report it on every poll. */
    last_reply_at: Date | null;
    /** The lead's LinkedIn account's delivery: only a sandbox account's leads are heard by the simulation. */
    linkedin_delivery: Selectable<MessagingAccountsTable>['linkedin_delivery'] | null;
  };

export type WorkspaceEnergyRow = Pick<Selectable<WorkspacesTable>, 'id' | 'billing_status' | 'energy_balance' | 'energy_daily_refill' | 'energy_refilled_at'>;

/** A lead row's columns as they travel in a jsonb batch: timestamps as ISO strings. */
type OnTheWire<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };

/** New values for a lead after one step attempt; milestones only fill when still empty. */
export type LeadRecord = OnTheWire<
  Pick<
    Lead,
    | 'id'
    | 'stage'
    | 'current_step'
    | 'next_action_at'
    | 'automation_stopped'
    | 'invited_at'
    | 'messaged_at'
    | 'followed_at'
    | 'last_error'
    | 'step_attempts'
    | 'step_waits'
    | 'observe_next_at'
    | 'observe_until'
    | 'last_message_channel'
    | 'last_activity_at'
  >
> & {
  /** The in-flight mark this record belongs to: its key and claim time. A worker whose claim was superseded
   * (lease expired, lead re-claimed under the same key) matches nothing, so its late result changes nothing. */
  expect_key: string | null;
  expect_at: string | null;
};

/** What a lead's event object is built from (the lead after a recorded step or observation). */
export type RecordedLead = Pick<Lead, 'id' | 'person' | 'company' | 'title' | 'email' | 'linkedin_url' | 'account_id' | 'sequence_id' | 'stage'>;

export type ActivityInsert = Pick<
  Selectable<ActivityTable>,
  'id' | 'workspace_id' | 'created_at' | 'action' | 'outcome' | 'units' | 'detail' | 'account_id' | 'lead_id'
>;

/** A followers Play whose discovery is due, with the X account it reads. */
export type DuePlay = Pick<Selectable<PlaysTable>, 'workspace_id'> & {
  play_id: Selectable<PlaysTable>['id'];
  account_user_id: NonNullable<Selectable<PlaysTable>['account_user_id']>;
  handle: Selectable<XAccountsTable>['handle'] | null;
};

/** A messaging account as pacing reads it. */
export type PacingAccountRow = Pick<Selectable<MessagingAccountsTable>, 'id' | 'workspace_id' | 'time_zone' | 'warmup_started_at'>;

import type { Selectable } from 'kysely';
import type { LeadsTable, MessagingAccountsTable, PlaysTable, SequencesTable, WorkspacesTable, XAccountsTable } from '../../db/schema.js';
import type { AccountBudget, BudgetKey } from '../../domain/budgets.js';
import type { RecipientIdentityRow } from '../../channels/recipients.js';
import type { EventLeadRow } from '../../domain/lead-views.js';

// The shapes the engine's statements read and write, derived from src/db/schema.ts so a column's type has one home.

type Lead = Selectable<LeadsTable>;

/**
 * What the claim reserved for one send, kept with the in-flight mark (leads.inflight_release, jsonb) and given back
 * whole when the send is not performed: the messaging account's pacing (`accountId`, `localDay`, `bucket`; absent
 * for an unpaced step) and the channel's own budgets (`channelKeys`, domain/budgets.ts BudgetKey; absent: none).
 */
export interface PacingRelease {
  workspaceId: string;
  accountId?: string;
  localDay?: string;
  bucket?: AccountBudget;
  channelKeys?: BudgetKey[];
}

/**
 * The person's handles on the channels, as the leads table holds them: the text fields of a recipient
 * (channels/recipients.ts RecipientIdentityRow) beyond its id and name.
 */
type LeadHandle = Exclude<
  { [K in keyof RecipientIdentityRow]-?: RecipientIdentityRow[K] extends string | null ? K : never }[keyof RecipientIdentityRow],
  'id' | 'person'
>;

/** A lead as both the step claim and the watch read it: who the person is and what the engine has done so far. */
export type LeadContactRow = Pick<
  Lead,
  | 'id'
  | 'workspace_id'
  | 'person'
  | 'company'
  | 'title'
  | LeadHandle
  | 'account_id'
  | 'invited_at'
  | 'connected_at'
  | 'messaged_at'
  | 'followed_at'
  | 'followed_back_at'
  | 'replied_at'
  | 'last_message_channel'
> & {
  /** The lead's own platform account user (X), or its Play's. */
  x_account_user_id: Lead['account_user_id'];
  /** The world file's script for the sandbox drivers: the lead's own, or its candidate's. */
  sandbox: Record<string, unknown> | null;
};

export type ClaimedRow = LeadContactRow &
  Pick<
    Lead,
    | 'stage'
    | 'current_step'
    | 'variant_key'
    | 'inflight_key'
    | 'inflight_step'
    | 'inflight_at'
    | 'step_attempts'
    | 'step_waits'
    | 'waiting_for'
    | 'branch_at'
    | 'branch_allowed'
    | 'meeting_booked_at'
    | 'last_error'
  > & {
    /** Only leads in a sequence are claimed. */
    sequence_id: NonNullable<Lead['sequence_id']>;
    /** The lead had no account and the claim gave it the workspace's only one for this step (domain/claim-layout.ts). */
    account_assigned?: boolean;
    /** The lead and its Play had no platform account (X) and the claim gave it the workspace's only one. */
    account_user_assigned?: boolean;
    inflight_release: PacingRelease | null;
    steps: Selectable<SequencesTable>['steps'];
    /** The revision of the sequence whose `steps` these are (a record decides a branch only on that revision). */
    sequence_revision: Selectable<SequencesTable>['revision'];
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
    /** How the step's sender reaches its platform (domain/policy.ts AccountDelivery, from its channel: sql/senders.ts). */
    delivery: string;
  };

export type WatchedRow = LeadContactRow &
  Pick<Lead, 'sequence_id'> & {
    watchable: boolean;
    /** Newest reply on record (out-of-office ones included); drivers re-report it on every poll. */
    last_reply_at: Date | null;
    /** The lead's messaging account's delivery (domain/claim-layout.ts accountDeliverySql): its channel says whether the simulation hears its leads. */
    account_delivery: string | null;
  };

export type WorkspaceEnergyRow = Pick<Selectable<WorkspacesTable>, 'id' | 'billing_status' | 'energy_balance' | 'energy_daily_refill' | 'energy_refilled_at'>;

/** New values for a lead after one step attempt: the lanes' own record (src/domain/lanes/send.ts `advance`). */
export type { StepRecord as LeadRecord } from '../../domain/lanes.js';

/** What a lead's event object is built from (the lead after a recorded step or observation). */
export type RecordedLead = Pick<Lead, keyof EventLeadRow>;

/** A followers Play whose discovery is due, with the X account it reads. */
export type DuePlay = Pick<Selectable<PlaysTable>, 'workspace_id'> & {
  play_id: Selectable<PlaysTable>['id'];
  account_user_id: NonNullable<Selectable<PlaysTable>['account_user_id']>;
  handle: Selectable<XAccountsTable>['handle'] | null;
};

/** A messaging account as pacing reads it. */
export type PacingAccountRow = Pick<Selectable<MessagingAccountsTable>, 'id' | 'workspace_id' | 'time_zone' | 'warmup_started_at'> & {
  /** The account's delivery on each channel that lists budgets of its own (sql/readPacingAccounts.ts). */
  deliveries: Record<string, string>;
};

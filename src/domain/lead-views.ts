import type { Selectable } from 'kysely';
import type { LeadsTable } from '../db/schema.js';
import { iso } from './iso.js';

// The public objects a lead row becomes, each built in one place. The field lists and their order are the
// spec's (Resources: the two lead views; Events: the `lead` object); the response schemas in
// modules/leads and modules/crm-leads describe the same objects for the OpenAPI document.

type Lead = Selectable<LeadsTable>;

export type EventLeadRow = Pick<Lead, 'id' | 'person' | 'company' | 'title' | 'email' | 'linkedin_url' | 'account_id' | 'sequence_id'> & {
  stage: string;
};

/** Who the lead is and where it runs: the fields the event `lead` and the cross-channel view open with, in that order. */
function leadIdentity(row: Omit<EventLeadRow, 'stage'>) {
  return {
    id: row.id,
    person: row.person,
    company: row.company,
    title: row.title,
    email: row.email,
    linkedinUrl: row.linkedin_url,
    account: row.account_id,
    sequenceId: row.sequence_id,
  };
}

/** The spec's event `lead` object (Events: `lead`), for every event that carries one. */
export function toEventLead(row: EventLeadRow) {
  return { ...leadIdentity(row), stage: row.stage };
}

export type XLeadRow = Pick<
  Lead,
  | 'id'
  | 'x_user_id'
  | 'username'
  | 'account_user_id'
  | 'play_id'
  | 'sequence_id'
  | 'stage'
  | 'automation_stopped'
  | 'current_step'
  | 'next_action_at'
  | 'followed_at'
  | 'followed_back_at'
  | 'messaged_at'
  | 'replied_at'
  | 'opted_out_at'
>;

/** The spec's social-network lead (GET /x/leads/{id}, the stop response): saved observations, never a live probe. */
export function toXLeadView(row: XLeadRow) {
  return {
    id: row.id,
    xUserId: row.x_user_id,
    username: row.username,
    accountUserId: row.account_user_id,
    playId: row.play_id,
    sequenceId: row.sequence_id,
    stage: row.stage,
    automationStopped: row.automation_stopped,
    currentStep: row.current_step,
    nextActionAt: iso(row.next_action_at),
    followedAt: iso(row.followed_at),
    followedBackAt: iso(row.followed_back_at),
    messagedAt: iso(row.messaged_at),
    repliedAt: iso(row.replied_at),
    optedOutAt: iso(row.opted_out_at),
    deliveryGuaranteed: false as const,
  };
}

export type XLeadView = ReturnType<typeof toXLeadView>;

export type CrossChannelLeadRow = Omit<EventLeadRow, 'stage'> &
  Pick<
    Lead,
    | 'stage'
    | 'strategy_id'
    | 'strategy_run_id'
    | 'invite_priority'
    | 'current_step'
    | 'next_action_at'
    | 'automation_stopped'
    | 'invited_at'
    | 'connected_at'
    | 'messaged_at'
    | 'replied_at'
    | 'meeting_booked_at'
    | 'meeting_outcome'
  > &
  Partial<Pick<Lead, 'meeting_response'>> &
  Pick<Lead, 'snoozed_until' | 'opted_out_at' | 'reply_sentiment' | 'last_error'>;

/** The spec's cross-channel lead (GET /leads entries). */
export function toCrossChannelLeadView(row: CrossChannelLeadRow) {
  return {
    ...leadIdentity(row),
    strategyId: row.strategy_id,
    strategyRunId: row.strategy_run_id,
    invitePriority: row.invite_priority,
    stage: row.stage,
    currentStep: row.current_step,
    nextActionAt: iso(row.next_action_at),
    sequenceDone: row.automation_stopped,
    invitedAt: iso(row.invited_at),
    connectedAt: iso(row.connected_at),
    messagedAt: iso(row.messaged_at),
    repliedAt: iso(row.replied_at),
    meetingBookedAt: iso(row.meeting_booked_at),
    meetingOutcome: row.meeting_outcome,
    ...(row.meeting_response !== undefined && { meetingResponse: row.meeting_response }),
    snoozedUntil: iso(row.snoozed_until),
    optedOutAt: iso(row.opted_out_at),
    replySentiment: row.reply_sentiment,
    lastError: row.last_error,
  };
}

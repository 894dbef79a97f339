import type { CreatedAt, Timestamp } from './schema-columns.js';

/** A workspace's inbound URL for one booking tool (migration 0043; docs/meetings.md). `secret` is encrypted. */
export interface MeetingEndpointsTable {
  id: string;
  workspace_id: string;
  tool: 'calendly' | 'cal';
  secret: string;
  label: string | null;
  created_at: CreatedAt;
  rotated_at: Timestamp | null;
  /** The Calendly webhook subscription made from here (migration 0044); `subscription_token` is encrypted. */
  subscription_uri: string | null;
  subscription_scope: 'user' | 'organization' | null;
  subscription_token: string | null;
  subscribed_at: Timestamp | null;
}

/** One verified event a booking tool pushed, kept once by its idempotency key; `status` applied, unmatched or ignored. */
export interface MeetingEventsTable {
  id: string;
  workspace_id: string;
  endpoint_id: string | null;
  tool: string;
  idempotency_key: string;
  booking_uid: string;
  kind: string;
  trigger: string;
  invitee_email: string | null;
  starts_at: Timestamp | null;
  lead_id: string | null;
  matched_by: string | null;
  status: string;
  received_at: CreatedAt;
}

/** A booking a lead has (a tool's, or our iCalendar invitation: tool `ical`), and where it stands. */
export interface MeetingBookingsTable {
  workspace_id: string;
  tool: string;
  booking_uid: string;
  lead_id: string;
  starts_at: Timestamp | null;
  status: string;
  rescheduled_from: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

import type { Kysely } from 'kysely';
import { executeStatements } from '../sql-script.js';

// Issue 42, meetings from booking tools (docs/meetings.md):
// - `meeting_endpoints`: a workspace's inbound URL per booking tool (Calendly, Cal.com), with its signing secret
//   (encrypted with the installation's key, as mailbox passwords are).
// - `meeting_events`: every verified event a tool pushed, once: its idempotency key (tool, booking id, trigger, signed
//   time) is unique per workspace, so a replay changes nothing. Unmatched events stay here, visible.
// - `meeting_bookings`: one row per booking a lead has (a tool's booking, or an iCalendar invitation we sent, tool
//   `ical`), tying later changes (a reschedule, a cancellation, a no-show, an answer) to the lead it was first given.
// - `leads.meeting_response`: the answer to our iCalendar invitation (accepted, declined, tentative).
// - `messaging_accounts.booking_link`: an account's own booking link, before the workspace's.
export async function up(db: Kysely<any>): Promise<void> {
  await executeStatements(
    db,
    `
    CREATE TABLE meeting_endpoints (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      tool text NOT NULL CHECK (tool IN ('calendly', 'cal')),
      secret text NOT NULL,
      label text,
      created_at timestamptz NOT NULL DEFAULT now(),
      rotated_at timestamptz
    );
    CREATE INDEX meeting_endpoints_workspace ON meeting_endpoints (workspace_id, created_at, id);

    CREATE TABLE meeting_events (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      endpoint_id uuid REFERENCES meeting_endpoints(id) ON DELETE SET NULL,
      tool text NOT NULL,
      idempotency_key text NOT NULL,
      booking_uid text NOT NULL,
      kind text NOT NULL,
      trigger text NOT NULL,
      invitee_email text,
      starts_at timestamptz,
      lead_id uuid REFERENCES leads(id) ON DELETE SET NULL,
      matched_by text,
      status text NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, idempotency_key)
    );
    CREATE INDEX meeting_events_recent ON meeting_events (workspace_id, received_at DESC, id DESC);
    CREATE INDEX meeting_events_status ON meeting_events (workspace_id, status, received_at DESC, id DESC);

    CREATE TABLE meeting_bookings (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      tool text NOT NULL,
      booking_uid text NOT NULL,
      lead_id uuid NOT NULL REFERENCES leads(id) ON DELETE CASCADE,
      starts_at timestamptz,
      status text NOT NULL,
      rescheduled_from text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, tool, booking_uid)
    );
    CREATE INDEX meeting_bookings_lead ON meeting_bookings (workspace_id, lead_id);

    ALTER TABLE leads ADD COLUMN meeting_response text;
    ALTER TABLE messaging_accounts ADD COLUMN booking_link text;
  `,
  );
}

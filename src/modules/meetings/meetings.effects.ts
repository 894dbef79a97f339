import type { Database } from '../../db/database.js';
import { newId } from '../../lib/ids.js';
import { appendLedger, type LedgerEntry, type MeetingDetail, type MeetingSyncDetail } from '../../domain/ledger.js';
import { recordBookingGoal, stop } from '../../domain/lanes.js';
import { lockPersonLanes } from '../../domain/opt-out.js';
import { toEventLead } from '../../domain/lead-views.js';
import { enqueueEvent } from '../../webhooks/outbox.js';
import { closeRepliesByBooking } from '../replies/index.js';
import * as repo from './meetings.repository.js';

// What a meeting change does, in one place (docs/meetings.md "Effects"), whoever reports it: a booking tool's
// webhook, the answer to our iCalendar invitation, or a person.

/** The outcomes a person records (POST /leads/{id}/meeting); `qualified` and `not_qualified` imply it was held. */
export const MEETING_OUTCOMES = ['held', 'no_show', 'cancelled', 'qualified', 'not_qualified'] as const;
export type MeetingOutcome = (typeof MEETING_OUTCOMES)[number];

/** The answers to an iCalendar invitation (RFC 5545 PARTSTAT of a METHOD:REPLY). */
export const MEETING_RESPONSES = ['accepted', 'declined', 'tentative'] as const;
export type MeetingResponse = (typeof MEETING_RESPONSES)[number];

export type MeetingChange =
  | { kind: 'booked'; startsAt: Date | null; matchedBy?: 'ref' | 'email' | 'uid' | 'lead' }
  | { kind: 'rescheduled'; startsAt: Date | null; previousBookingUid: string }
  | { kind: 'cancelled' | 'no_show' | 'no_show_cleared' | 'ended' }
  | { kind: 'outcome'; outcome: MeetingOutcome; note?: string }
  | { kind: 'response'; response: MeetingResponse };

export interface MeetingChangeRequest {
  workspaceId: string;
  leadId: string;
  /** Where it came from, and the booking (absent for a person's record of a meeting made elsewhere). */
  source: MeetingDetail['source'];
  bookingUid?: string;
  by: string;
  change: MeetingChange;
  /** When it happened (a booking's signed time, a person's click). */
  at: Date;
  now: Date;
}

/** What a change did: `applied` false when it was already so (a tool's repeat of a booking). */
export interface MeetingChangeResult {
  applied: boolean;
  leadId: string;
  stoppedLeadIds: string[];
  closedReplyIds: string[];
}

const entryBase = (r: MeetingChangeRequest, accountId: string | null) => ({
  id: newId(),
  workspaceId: r.workspaceId,
  leadId: r.leadId,
  accountId,
  at: r.at,
  outcome: 'ok' as const,
});

const detailBase = (r: MeetingChangeRequest): MeetingDetail => ({ source: r.source, ...(r.bookingUid && { bookingUid: r.bookingUid }), by: r.by });

/**
 * Applies one meeting change to a lead, inside the caller's transaction (docs/meetings.md "Effects"):
 * - `booked`: the lead's `meeting_booked_at` (its outcome and response cleared: a new meeting), every sequence lane of
 *   the person stopped (the goal is reached; domain/lanes.ts `stop`), the person's pending replies closed as decided
 *   `meeting_booked`, one `meeting_booked` entry and one `lead.meeting_booked` event. A booking already on record
 *   changes nothing.
 * - `rescheduled`: the booking moves (`meeting_synced`, no event); a cancelled or no-show outcome is cleared.
 * - `cancelled`, `no_show`: `meeting_outcome` set (`meeting_synced`; `meeting_no_show` for a no-show). A sequence
 *   never resumes (docs/cross-channel.md).
 * - `no_show_cleared`: a no-show taken back (outcome cleared when it was `no_show`). `ended`: recorded only.
 * - `outcome`: a person's; `response`: the invitee's answer to our invitation (`accepted` also books the meeting).
 */
export async function applyMeetingChange(trx: Database, r: MeetingChangeRequest): Promise<MeetingChangeResult> {
  const lead = await repo.lockLead(trx, r.workspaceId, r.leadId);
  if (!lead) throw new Error(`lead ${r.leadId} is not in the workspace`);
  const none: MeetingChangeResult = { applied: false, leadId: lead.id, stoppedLeadIds: [], closedReplyIds: [] };
  const c = r.change;
  const sync = (detail: Omit<MeetingSyncDetail, keyof MeetingDetail>, action: 'meeting_synced' | 'meeting_no_show' = 'meeting_synced'): LedgerEntry => ({
    ...entryBase(r, lead.account_id),
    action,
    detail: { ...detailBase(r), ...detail },
  });

  if (c.kind === 'booked') return book(trx, r, lead, c.startsAt, c.matchedBy);

  if (c.kind === 'response') {
    const updated = await repo.setMeetingFields(trx, r.workspaceId, lead.id, { meeting_response: c.response, now: r.now });
    await appendLedger(trx, [sync({ change: 'response', response: c.response })]);
    if (c.response === 'accepted' && !lead.meeting_booked_at) return { ...(await book(trx, r, updated, null, 'uid')), applied: true };
    return { ...none, applied: true };
  }

  if (c.kind === 'rescheduled') {
    const cleared = lead.meeting_outcome === 'cancelled' || lead.meeting_outcome === 'no_show';
    await repo.setMeetingFields(trx, r.workspaceId, lead.id, { ...(cleared && { meeting_outcome: null }), now: r.now });
    await appendLedger(trx, [
      sync({ change: 'rescheduled', startsAt: c.startsAt?.toISOString() ?? null, previousBookingUid: c.previousBookingUid, ...(cleared && { outcome: null }) }),
    ]);
    return { ...none, applied: true };
  }

  if (c.kind === 'ended') {
    await appendLedger(trx, [sync({ change: 'ended' })]);
    return { ...none, applied: true };
  }

  if (c.kind === 'no_show_cleared') {
    if (lead.meeting_outcome !== 'no_show') return none;
    await repo.setMeetingFields(trx, r.workspaceId, lead.id, { meeting_outcome: null, now: r.now });
    await appendLedger(trx, [sync({ change: 'no_show_cleared', outcome: null })]);
    return { ...none, applied: true };
  }

  const outcome = c.kind === 'outcome' ? c.outcome : c.kind;
  const note = c.kind === 'outcome' ? c.note : undefined;
  if (c.kind !== 'outcome' && lead.meeting_outcome === outcome) return none;
  await repo.setMeetingFields(trx, r.workspaceId, lead.id, { meeting_outcome: outcome, now: r.now });
  await appendLedger(trx, [
    sync({ change: c.kind === 'outcome' ? 'outcome' : c.kind, outcome, ...(note && { note }) }, outcome === 'no_show' ? 'meeting_no_show' : 'meeting_synced'),
  ]);
  return { ...none, applied: true };
}

async function book(
  trx: Database,
  r: MeetingChangeRequest,
  lead: { id: string; email: string | null; account_id: string | null },
  startsAt: Date | null,
  matchedBy: 'ref' | 'email' | 'uid' | 'lead' | undefined,
): Promise<MeetingChangeResult> {
  // Every lane of the person, locked in id order as an opt-out takes them (no deadlock between the two).
  const lanes = await lockPersonLanes(trx, { workspaceId: r.workspaceId, leadId: lead.id, email: lead.email });
  const ids = lanes.map((l) => l.id);
  const stopped = (await stop(trx, r.workspaceId, ids, r.now)).map((l) => l.id).sort();
  // In a branching sequence the booking is the goal: each lane's path records it (docs/sequences-and-leads.md).
  await recordBookingGoal(trx, { workspaceId: r.workspaceId, leadIds: ids, now: r.now });
  const closed = await closeRepliesByBooking(trx, r.workspaceId, ids, r.by, r.now);
  const updated = await repo.setMeetingFields(trx, r.workspaceId, lead.id, {
    meeting_booked_at: r.at,
    meeting_outcome: null,
    ...(r.change.kind !== 'response' && { meeting_response: null }),
    now: r.now,
  });
  await appendLedger(trx, [
    {
      ...entryBase(r, lead.account_id),
      action: 'meeting_booked',
      detail: {
        ...detailBase(r),
        startsAt: startsAt?.toISOString() ?? null,
        ...(matchedBy && { matchedBy }),
        stoppedLeadIds: stopped,
        closedReplyIds: closed,
      },
    },
  ]);
  await enqueueEvent(trx, { workspaceId: r.workspaceId, event: 'lead.meeting_booked', data: { lead: toEventLead(updated) }, createdAt: r.now });
  return { applied: true, leadId: lead.id, stoppedLeadIds: stopped, closedReplyIds: closed };
}

import type { ApplyInvitationAnswer } from '../channels/types.js';
import { applyMeetingChange, bookingOf, upsertBooking } from '../modules/meetings/index.js';

/**
 * An answer to one of our calendar invitations, as the inbox watcher read it (an iTIP `METHOD:REPLY`; docs/meetings.md
 * "Invitations"), lent to the engine's watchers. It is tied to us by the iCalendar UID alone: the booking an `invite`
 * decision recorded under that UID (tool `ical`) in the mailbox's workspace names the lead; anything else is `unknown`
 * and changes nothing. The answer is the PARTSTAT of the REPLY's attendee (RFC 5546 §3.2.3: a REPLY carries the
 * attendee who answers); attendees that disagree are no answer. A repeat of the answer on record is `unchanged`.
 */
export const answerInvitation: ApplyInvitationAnswer = async (trx, answer, now) => {
  const booking = await bookingOf(trx, answer.workspaceId, 'ical', answer.uid);
  if (!booking) return 'unknown';
  const responses = [...new Set(answer.attendees.map((a) => a.response))];
  if (responses.length !== 1) return 'unknown';
  const response = responses[0];
  if (booking.status === response) return 'unchanged';
  await upsertBooking(trx, {
    workspaceId: answer.workspaceId,
    tool: 'ical',
    bookingUid: answer.uid,
    leadId: booking.lead_id,
    startsAt: null,
    status: response,
    rescheduledFrom: null,
    now,
  });
  await applyMeetingChange(trx, {
    workspaceId: answer.workspaceId,
    leadId: booking.lead_id,
    source: 'ical',
    bookingUid: answer.uid,
    by: 'ical',
    change: { kind: 'response', response },
    at: answer.at,
    now,
  });
  return 'applied';
};

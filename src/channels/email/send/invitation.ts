import ICAL from 'ical.js';
import type { CalendarInvitation } from '../../types.js';

// The iCalendar invitation an `invite` reply decision sends (docs/meetings.md "Invitations"): one VEVENT in a
// VCALENDAR of `METHOD:REQUEST` (RFC 5545; iTIP, RFC 5546 §3.2.2), built with ical.js and carried by the message as a
// `text/calendar; method=REQUEST` alternative and an `invite.ics` attachment (iMIP, RFC 6047). Pure.

/** The invitation's UID: its id at the sending mailbox's domain (RFC 5545 §3.8.4.7 recommends a domain on the right). */
export const invitationUidOf = (invitationId: string, mailboxAddress: string) => `${invitationId}@${mailboxAddress.split('@')[1] || 'outreach.invalid'}`;

const utc = (d: Date) => ICAL.Time.fromJSDate(d, true);

/**
 * The VCALENDAR text (CRLF lines, folded at 75 octets): UID, DTSTAMP (`now`), DTSTART and DTEND in UTC, SUMMARY,
 * DESCRIPTION (the message's text), ORGANIZER (the mailbox, with its display name as CN), one ATTENDEE (the recipient,
 * RSVP=TRUE, PARTSTAT=NEEDS-ACTION), SEQUENCE:0 and STATUS:CONFIRMED.
 */
export function invitationCalendar(p: {
  uid: string;
  invitation: CalendarInvitation;
  description: string;
  organizer: { address: string; name: string | null };
  attendee: string;
  now: Date;
}): string {
  const cal = new ICAL.Component(['vcalendar', [], []]);
  cal.addPropertyWithValue('prodid', '-//Outreach//Invitation//EN');
  cal.addPropertyWithValue('version', '2.0');
  cal.addPropertyWithValue('calscale', 'GREGORIAN');
  cal.addPropertyWithValue('method', 'REQUEST');
  const ev = new ICAL.Component('vevent');
  ev.addPropertyWithValue('uid', p.uid);
  ev.addPropertyWithValue('dtstamp', utc(p.now));
  ev.addPropertyWithValue('dtstart', utc(p.invitation.startsAt));
  ev.addPropertyWithValue('dtend', utc(p.invitation.endsAt));
  ev.addPropertyWithValue('summary', p.invitation.summary);
  ev.addPropertyWithValue('description', p.description);
  const organizer = ev.addPropertyWithValue('organizer', `mailto:${p.organizer.address}`);
  if (p.organizer.name) organizer.setParameter('cn', p.organizer.name);
  const attendee = ev.addPropertyWithValue('attendee', `mailto:${p.attendee}`);
  attendee.setParameter('role', 'REQ-PARTICIPANT');
  attendee.setParameter('partstat', 'NEEDS-ACTION');
  attendee.setParameter('rsvp', 'TRUE');
  ev.addPropertyWithValue('sequence', 0);
  ev.addPropertyWithValue('status', 'CONFIRMED');
  cal.addSubcomponent(ev);
  return cal.toString();
}

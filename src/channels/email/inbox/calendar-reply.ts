import ICAL from 'ical.js';
import type { ParsedMail } from 'mailparser';
import type { InvitationAnswer } from '../../types.js';

// An answer to our calendar invitation (docs/meetings.md "Invitations"): an iTIP `METHOD:REPLY` (RFC 5546 §3.2.3)
// carried as a `text/calendar` part or an `.ics` attachment (iMIP, RFC 6047), read with ical.js. Bounded: a few parts
// of at most 64 KiB each, a few events and attendees of each; whatever is malformed is passed over, never thrown. Pure.

/** A calendar part larger than this is not read (an answer to one invitation is a few hundred bytes). */
export const MAX_CALENDAR_BYTES = 65_536;
const MAX_PARTS = 4;
const MAX_EVENTS = 4;
const MAX_ATTENDEES = 20;
/** A UID longer than this is not one we wrote (`<uuid>@<domain>`). */
const MAX_UID = 320;

const PARTSTATS: Record<string, InvitationAnswer['attendees'][number]['response']> = {
  ACCEPTED: 'accepted',
  DECLINED: 'declined',
  TENTATIVE: 'tentative',
};

/** A part of the message that may carry a VCALENDAR: by its type (text/calendar, application/ics) or an `.ics` name. */
const isCalendarPart = (a: { contentType?: string; filename?: string }) =>
  /^(text\/calendar|application\/ics|text\/x-vcalendar)$/i.test(a.contentType ?? '') || /\.ics$/i.test(a.filename ?? '');

/** Whether the message's structure shows a calendar part (IMAP BODYSTRUCTURE's types, lower case), before any body. */
export const mayCarryCalendar = (partTypes: string[], contentType: string) =>
  [...partTypes, contentType].some((t) => t === 'text/calendar' || t === 'application/ics' || t === 'text/x-vcalendar');

/** One REPLY's answer: its VEVENT's UID and each attendee with an answering PARTSTAT; null for anything else. */
function replyOf(text: string): { uid: string; attendees: InvitationAnswer['attendees'] } | null {
  let root: ICAL.Component;
  try {
    root = new ICAL.Component(ICAL.parse(text) as unknown[]);
  } catch {
    return null;
  }
  // ICAL.parse answers one component, or several when the text holds more than one VCALENDAR: the first is read.
  if (root.name !== 'vcalendar') return null;
  const method = root.getFirstPropertyValue('method');
  if (typeof method !== 'string' || method.trim().toUpperCase() !== 'REPLY') return null;
  for (const ev of root.getAllSubcomponents('vevent').slice(0, MAX_EVENTS)) {
    const uid = ev.getFirstPropertyValue('uid');
    if (typeof uid !== 'string' || uid.trim() === '' || uid.length > MAX_UID) continue;
    const attendees: InvitationAnswer['attendees'] = [];
    for (const p of ev.getAllProperties('attendee').slice(0, MAX_ATTENDEES)) {
      const partstat = p.getParameter('partstat');
      const response = typeof partstat === 'string' ? PARTSTATS[partstat.trim().toUpperCase()] : undefined;
      const value = p.getFirstValue();
      if (!response || typeof value !== 'string') continue;
      const address = value
        .replace(/^mailto:/i, '')
        .trim()
        .toLowerCase();
      if (address.includes('@') && address.length <= 320) attendees.push({ address, response });
    }
    if (attendees.length > 0) return { uid: uid.trim(), attendees };
  }
  return null;
}

/**
 * The answer a message carries to a calendar invitation: the first calendar part (of at most four, each at most
 * MAX_CALENDAR_BYTES) that is a `METHOD:REPLY` with a UID and an attendee whose PARTSTAT is ACCEPTED, DECLINED or
 * TENTATIVE. Null when there is none; a malformed part is passed over.
 */
export function calendarReplyOf(mail: ParsedMail): { uid: string; attendees: InvitationAnswer['attendees'] } | null {
  const parts = (mail.attachments ?? []).filter(isCalendarPart).slice(0, MAX_PARTS);
  for (const part of parts) {
    const content: unknown = part.content;
    if (!Buffer.isBuffer(content) || content.length > MAX_CALENDAR_BYTES) continue;
    const reply = replyOf(content.toString('utf8'));
    if (reply) return reply;
  }
  return null;
}

import { describe, expect, it } from 'vitest';
import ICAL from 'ical.js';
import { simpleParser, type ParsedMail } from 'mailparser';
import { dovecotAvailable, DOVECOT_MISSING } from '../helpers/dovecot.js';
import { MAILBOX, messagesTo, raw, useInboxWorld } from '../helpers/worlds/mailbox.js';
import { newId } from '../../src/lib/ids.js';
import { bookingRef, senderBookingLink, trackedBookingLink } from '../../src/domain/booking-link.js';

// Issue 42 part 6, "A real invitation" (docs/meetings.md "Invitations"): the reply decision `invite` with a time sends
// an iCalendar invitation (RFC 5546 METHOD:REQUEST) from the sender's mailbox; without one, the sender's tracked
// booking link. The invitee's METHOD:REPLY comes back to the mailbox's INBOX (real Dovecot), unthreaded, and is tied
// to the lead by the invitation's UID alone.
if (!dovecotAvailable()) console.warn(`test/email/meeting-invitation.test.ts skipped: ${DOVECOT_MISSING}`);

const ACCOUNT_LINK = 'https://cal.com/dana/intro';
const WORKSPACE_LINK = 'https://calendly.com/acme/intro';
const HOUR = 3_600_000;
const MINUTE = 60_000;

type Cal = InstanceType<typeof ICAL.Component>;
const calendarOf = (text: string): Cal => new ICAL.Component(ICAL.parse(text) as unknown[]);

/** An iTIP REPLY (RFC 5546 §3.2.3) for `uid` from `attendee` with `partstat`, as a calendar client sends it: no threading. */
function itipReply(p: { from: string; uid: string; attendee: string; partstat: string; at: number }) {
  const ics = [
    'BEGIN:VCALENDAR',
    'PRODID:-//Example Calendar//EN',
    'VERSION:2.0',
    'METHOD:REPLY',
    'BEGIN:VEVENT',
    `UID:${p.uid}`,
    'DTSTAMP:20261201T090000Z',
    'SEQUENCE:0',
    `ORGANIZER:mailto:${MAILBOX}`,
    `ATTENDEE;PARTSTAT=${p.partstat}:mailto:${p.attendee}`,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
  return [
    `From: ${p.from}`,
    `To: ${MAILBOX}`,
    `Subject: ${p.partstat === 'ACCEPTED' ? 'Accepted' : 'Declined'}: Meeting`,
    `Message-ID: <itip-${newId()}@calendar.initech.example>`,
    `Date: ${new Date(p.at).toUTCString()}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="MIX"',
    '',
    '--MIX',
    'Content-Type: multipart/alternative; boundary="ALT"',
    '',
    '--ALT',
    'Content-Type: text/plain; charset=utf-8',
    '',
    `${p.attendee} has answered your invitation.`,
    '--ALT',
    'Content-Type: text/calendar; charset=utf-8; method=REPLY',
    '',
    ics,
    '--ALT--',
    '--MIX',
    'Content-Type: application/ics; name="invite.ics"',
    'Content-Disposition: attachment; filename="invite.ics"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(ics).toString('base64'),
    '--MIX--',
    '',
  ].join('\r\n');
}

describe.skipIf(!dovecotAvailable())('an invite decision sends a real invitation, and its answer comes back (real Dovecot)', () => {
  const w = useInboxWorld();

  const auth = () => w.ws.auth;
  const ws = () => w.ws.workspaceId;

  /** A lead the mailbox e-mailed who answered in the thread: its pending reply's id. */
  async function leadWithPendingReply() {
    const { leadId, email, messageId } = await w.emailedLead();
    await w.deliver(
      raw(
        {
          From: `Bob <${email}>`,
          To: MAILBOX,
          Subject: 'Re: Quick question',
          'Message-ID': `<answer-${leadId}@initech.example>`,
          'In-Reply-To': messageId,
          Date: new Date(w.now()).toUTCString(),
        },
        'Sounds good, can we meet next week?',
      ),
    );
    await w.tick();
    const [reply] = await w.repliesOf(leadId);
    expect(reply, 'the answer is a pending reply').toBeDefined();
    // The services' clock (decide's "now") is the world's.
    w.t.clock.set(new Date(w.now()));
    return { leadId, email, replyId: reply.id as string };
  }

  /** Three days from the world's clock, on a whole minute (iCalendar times are whole seconds). */
  const inThreeDays = () => new Date(Math.ceil((w.now() + 3 * 24 * HOUR) / MINUTE) * MINUTE).toISOString();

  const decide = (replyId: string, payload: Record<string, unknown>) =>
    w.t.app.inject({ method: 'POST', url: `/api/v1/replies/${replyId}/decide`, headers: auth(), payload });

  async function leadView(leadId: string) {
    const res = await w.t.app.inject({ method: 'GET', url: '/api/v1/leads?limit=500', headers: auth() });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ leads: { id: string; meetingResponse?: string | null; meetingBookedAt: string | null }[] }>().leads.find((l) => l.id === leadId)!;
  }

  async function pendingFor(leadId: string) {
    const res = await w.t.app.inject({ method: 'GET', url: '/api/v1/replies', headers: auth() });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ replies: { lead: { id: string } }[] }>().replies.filter((r) => r.lead.id === leadId);
  }

  const lastMessageTo = async (email: string): Promise<{ raw: string; mail: ParsedMail }> => {
    const m = messagesTo(w.smtp, email).at(-1);
    expect(m, `a message went to ${email}`).toBeDefined();
    return { raw: m!.raw, mail: await simpleParser(m!.raw) };
  };

  const bookingOf = (uid: string) =>
    w.t.db
      .selectFrom('meeting_bookings')
      .selectAll()
      .where('workspace_id', '=', ws())
      .where('tool', '=', 'ical')
      .where('booking_uid', '=', uid)
      .executeTakeFirst();

  /** Sends `invite` with a time to a fresh lead's reply; answers the lead, its address and the invitation's UID. */
  async function invited(meetingMinutes?: number) {
    const lead = await leadWithPendingReply();
    const meetingAt = inThreeDays();
    const res = await decide(lead.replyId, { decision: 'invite', meetingAt, ...(meetingMinutes && { meetingMinutes }) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ decision: 'invite', messaged: true });
    const { mail } = await lastMessageTo(lead.email);
    const ics = mail.attachments.find((a) => a.contentType === 'application/ics')!;
    const uid = calendarOf(ics.content.toString('utf8')).getFirstSubcomponent('vevent')!.getFirstPropertyValue('uid') as string;
    return { ...lead, meetingAt, uid };
  }

  it('meetingAt in the past answers 400 naming meetingAt, and nothing is sent', async () => {
    const { replyId, email } = await leadWithPendingReply();
    const sent = messagesTo(w.smtp, email).length;
    const res = await decide(replyId, { decision: 'invite', meetingAt: new Date(w.now() - HOUR).toISOString() });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.body).toContain('meetingAt');
    const outOfRange = await decide(replyId, { decision: 'invite', meetingAt: new Date(w.now() + HOUR).toISOString(), meetingMinutes: 5 });
    expect(outOfRange.statusCode, outOfRange.body).toBe(400);
    expect(outOfRange.body).toContain('meetingMinutes');
    expect(messagesTo(w.smtp, email)).toHaveLength(sent);
  });

  it('invite with meetingAt sends the draft with a METHOD:REQUEST alternative and an invite.ics that ical.js reads', async () => {
    const lead = await leadWithPendingReply();
    const meetingAt = inThreeDays();
    const res = await decide(lead.replyId, { decision: 'invite', meetingAt, meetingMinutes: 45 });
    expect(res.statusCode, res.body).toBe(200);

    const { raw: source, mail } = await lastMessageTo(lead.email);
    expect(mail.from?.value[0].address).toBe(MAILBOX);
    expect(source).toMatch(/Content-Type: text\/calendar; charset=utf-8; method=REQUEST/i);
    // The text/calendar alternative and the application/ics attachment, both parsed with ical.js.
    const part = mail.attachments.find((a) => a.contentType === 'text/calendar');
    const ics = mail.attachments.find((a) => a.contentType === 'application/ics');
    expect(part, 'a text/calendar part').toBeDefined();
    expect(ics?.filename).toBe('invite.ics');
    expect(mail.text).toBeTruthy();
    for (const text of [part!.content.toString('utf8'), ics!.content.toString('utf8')]) {
      const cal = calendarOf(text);
      expect(cal.getFirstPropertyValue('method')).toBe('REQUEST');
      const ev = cal.getFirstSubcomponent('vevent')!;
      expect(ev.getFirstPropertyValue('uid')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}@acme\.example$/);
      const start = ev.getFirstPropertyValue('dtstart') as InstanceType<typeof ICAL.Time>;
      expect(start.isDate).toBe(false);
      expect(start.zone?.tzid).toBe('UTC');
      expect(start.toJSDate().toISOString()).toBe(meetingAt);
      expect((ev.getFirstPropertyValue('dtend') as InstanceType<typeof ICAL.Time>).toJSDate().getTime()).toBe(Date.parse(meetingAt) + 45 * MINUTE);
      expect(ev.getFirstPropertyValue('dtstamp')).toBeTruthy();
      expect(ev.getFirstPropertyValue('sequence')).toBe(0);
      expect(ev.getFirstPropertyValue('summary')).toBeTruthy();
      expect(ev.getFirstPropertyValue('description')).toBe(mail.text!.trim());
      expect(ev.getFirstPropertyValue('organizer')).toBe(`mailto:${MAILBOX}`);
      const attendees = ev.getAllProperties('attendee');
      expect(attendees).toHaveLength(1);
      expect(attendees[0].getFirstValue()).toBe(`mailto:${lead.email}`);
      expect(attendees[0].getParameter('rsvp')).toBe('TRUE');
      expect(attendees[0].getParameter('partstat')).toBe('NEEDS-ACTION');
    }
    const uid = calendarOf(ics!.content.toString('utf8')).getFirstSubcomponent('vevent')!.getFirstPropertyValue('uid') as string;

    // Recorded as the lead's booking (tool ical, invited) and on the ledger as the spec's meeting_invited.
    expect(await bookingOf(uid)).toMatchObject({ lead_id: lead.leadId, status: 'invited' });
    expect((await bookingOf(uid))!.starts_at!.toISOString()).toBe(meetingAt);
    const entry = await w.t.db
      .selectFrom('activity')
      .select(['detail', 'outcome'])
      .where('lead_id', '=', lead.leadId)
      .where('action', '=', 'meeting_invited')
      .executeTakeFirstOrThrow();
    expect(entry.outcome).toBe('ok');
    expect(JSON.parse(entry.detail)).toMatchObject({ decision: 'invite', channel: 'email', invitationUid: uid, meetingAt });
  });

  it('invite without meetingAt answers 200 and sends the sender’s tracked booking link, no calendar part', async () => {
    await w.t.db.updateTable('workspaces').set({ booking_link: WORKSPACE_LINK }).where('id', '=', ws()).execute();
    await w.t.db.updateTable('messaging_accounts').set({ booking_link: ACCOUNT_LINK }).where('id', '=', w.account).execute();
    try {
      const lead = await leadWithPendingReply();
      const res = await decide(lead.replyId, { decision: 'invite' });
      expect(res.statusCode, res.body).toBe(200);
      const { raw: source, mail } = await lastMessageTo(lead.email);
      const link = trackedBookingLink(senderBookingLink(ACCOUNT_LINK, WORKSPACE_LINK), bookingRef(w.t.cipher, ws(), lead.leadId))!;
      expect(link.startsWith(`${ACCOUNT_LINK}?`)).toBe(true);
      expect(mail.text).toContain(link);
      // Once, even though the meeting-intent draft carries the link already ({{bookingLink}}).
      expect(mail.text!.split(link)).toHaveLength(2);
      expect(source).not.toMatch(/text\/calendar|application\/ics|BEGIN:VCALENDAR/i);
      expect(mail.attachments).toHaveLength(0);
      const bookings = await w.t.db.selectFrom('meeting_bookings').select('booking_uid').where('lead_id', '=', lead.leadId).execute();
      expect(bookings).toEqual([]);
    } finally {
      await w.t.db.updateTable('workspaces').set({ booking_link: null }).where('id', '=', ws()).execute();
      await w.t.db.updateTable('messaging_accounts').set({ booking_link: null }).where('id', '=', w.account).execute();
    }
  });

  it('an unthreaded METHOD:REPLY ACCEPTED for our UID sets meetingResponse accepted and books the meeting; no pending reply', async () => {
    const lead = await invited();
    await w.deliver(itipReply({ from: `Bob <${lead.email}>`, uid: lead.uid, attendee: lead.email, partstat: 'ACCEPTED', at: w.now() }));
    const summary = await w.tick();
    expect(summary.mailboxes?.[w.mailboxId]).toMatchObject({ meetingResponses: 1, replies: 0 });
    const view = await leadView(lead.leadId);
    expect(view.meetingResponse).toBe('accepted');
    expect(view.meetingBookedAt).not.toBeNull();
    expect(await pendingFor(lead.leadId)).toEqual([]);
    expect(await w.repliesOf(lead.leadId)).toHaveLength(1);
    expect(await bookingOf(lead.uid)).toMatchObject({ status: 'accepted' });
    const synced = await w.t.db.selectFrom('activity').select('detail').where('lead_id', '=', lead.leadId).where('action', '=', 'meeting_synced').execute();
    expect(synced.map((a) => JSON.parse(a.detail) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ source: 'ical', bookingUid: lead.uid, change: 'response', response: 'accepted' }),
    ]);

    // The same answer again (a client that sends it twice) changes nothing more.
    await w.deliver(itipReply({ from: lead.email, uid: lead.uid, attendee: lead.email, partstat: 'ACCEPTED', at: w.now() }));
    await w.tick();
    expect(await w.t.db.selectFrom('activity').select('id').where('lead_id', '=', lead.leadId).where('action', '=', 'meeting_synced').execute()).toHaveLength(
      1,
    );
  });

  it('a second lead’s DECLINED sets meetingResponse declined and books nothing', async () => {
    const lead = await invited(60);
    await w.deliver(itipReply({ from: lead.email, uid: lead.uid, attendee: lead.email, partstat: 'DECLINED', at: w.now() }));
    await w.tick();
    const view = await leadView(lead.leadId);
    expect(view.meetingResponse).toBe('declined');
    expect(view.meetingBookedAt).toBeNull();
    expect(await pendingFor(lead.leadId)).toEqual([]);
    expect(await bookingOf(lead.uid)).toMatchObject({ status: 'declined' });
  });

  it('a REPLY with a UID we never sent changes nothing and is no reply; a malformed calendar part is passed over', async () => {
    const lead = await invited();
    // The lead's own address, our mailbox's domain, a well-formed UUID: still not a UID we sent.
    await w.deliver(itipReply({ from: lead.email, uid: `${newId()}@acme.example`, attendee: lead.email, partstat: 'ACCEPTED', at: w.now() }));
    // Garbage in a calendar part (from nobody we know) is read as any other mail, without harm.
    await w.deliver(
      raw(
        {
          From: 'mallory@evil.example',
          To: MAILBOX,
          Subject: 'Accepted',
          'Content-Type': 'text/calendar; method=REPLY',
          'Message-ID': `<junk-${newId()}@evil.example>`,
        },
        `BEGIN:VCALENDAR\nMETHOD:REPLY\nBEGIN:VEVENT\nUID;;;\nATTENDEE;PARTSTAT=ACCEPTED:mailto:${lead.email}\n`,
      ),
    );
    const summary = await w.tick();
    expect(summary.mailboxes?.[w.mailboxId]).not.toHaveProperty('meetingResponses');
    expect(summary.mailboxes?.[w.mailboxId]).toMatchObject({ replies: 0, unparseable: 0 });
    const view = await leadView(lead.leadId);
    expect(view.meetingResponse).toBeNull();
    expect(view.meetingBookedAt).toBeNull();
    expect(await pendingFor(lead.leadId)).toEqual([]);
    expect(await bookingOf(lead.uid)).toMatchObject({ status: 'invited' });
    const meetingEntries = await w.t.db
      .selectFrom('activity')
      .select('action')
      .where('lead_id', '=', lead.leadId)
      .where('action', 'like', 'meeting_%')
      .execute();
    expect(meetingEntries.map((a) => a.action)).toEqual(['meeting_invited']);
    const records = await w.t.db
      .selectFrom('email_inbound_seen')
      .select(['verdict', 'effect'])
      .where('mailbox_id', '=', w.mailboxId)
      .where('reason', '=', 'ical_reply:accepted')
      .execute();
    expect(records).toContainEqual({ verdict: 'ignored', effect: 'none' });
  });
});

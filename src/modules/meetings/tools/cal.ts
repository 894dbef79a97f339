import { createHmac, timingSafeEqual } from 'node:crypto';
import { field, headerOf, ToolRefusal, type BookingToolReader, type MeetingKind } from './types.js';

/**
 * How far a Cal.com event's `createdAt` may lie behind now (24 h) or ahead of it (5 min). Cal.com signs the body
 * only (no timestamp header), so the signed `createdAt` is the age that can be checked, and a replay inside that
 * window is caught by the idempotency key (docs/meetings.md).
 */
export const CAL_MAX_AGE_MS = 24 * 3_600_000;
export const CAL_MAX_SKEW_MS = 5 * 60_000;

const TRIGGERS: Record<string, MeetingKind> = {
  BOOKING_CREATED: 'booked',
  BOOKING_RESCHEDULED: 'rescheduled',
  BOOKING_CANCELLED: 'cancelled',
  BOOKING_REJECTED: 'cancelled',
  MEETING_ENDED: 'ended',
  AFTER_GUESTS_CAL_VIDEO_NO_SHOW: 'no_show',
};

/**
 * Cal.com (cloud or self-hosted; cal.com/docs "Webhooks", read 2026-11-29): `X-Cal-Signature-256` is the hex
 * HMAC-SHA256 of the raw body with the webhook's secret. The body is `{triggerEvent, createdAt, payload}`; a booking is
 * its `uid`, a reschedule names the old one in `rescheduleUid`, `BOOKING_NO_SHOW_UPDATED` carries `bookingUid` and
 * `attendees[{email, noShow}]`, and the booking link's `metadata[outreach_ref]` comes back in `payload.metadata`.
 */
export const cal: BookingToolReader = {
  tool: 'cal',
  verify(headers, raw, secret, now) {
    const header = headerOf(headers, 'x-cal-signature-256');
    if (!header || !/^[0-9a-f]{64}$/i.test(header)) throw new ToolRefusal(401, 'signature_invalid', 'the X-Cal-Signature-256 header is missing or not hex');
    const expected = createHmac('sha256', secret).update(raw).digest();
    if (!timingSafeEqual(expected, Buffer.from(header, 'hex')))
      throw new ToolRefusal(401, 'signature_invalid', 'the signature does not match the endpoint’s secret');
    void now;
    return { signedAt: null };
  },
  read(body, _signedAt, now) {
    const b = field.obj(body, 'body');
    const trigger = field.text(b.triggerEvent, 'triggerEvent');
    const created = field.optTime(b.createdAt, 'createdAt');
    if (!created) throw new ToolRefusal(400, 'invalid_payload', 'createdAt must be an ISO 8601 time');
    const age = now.getTime() - created.getTime();
    if (age > CAL_MAX_AGE_MS || age < -CAL_MAX_SKEW_MS)
      throw new ToolRefusal(401, 'signature_stale', `createdAt is ${Math.round(age / 1000)} s old; from -300 s to 86400 s is accepted`);
    const p = field.obj(b.payload, 'payload');
    let kind: MeetingKind = TRIGGERS[trigger] ?? 'ignored';
    let bookingUid: string;
    let email: string | null;
    if (trigger === 'BOOKING_NO_SHOW_UPDATED') {
      bookingUid = field.text(p.bookingUid, 'payload.bookingUid');
      const attendees = Array.isArray(p.attendees) ? (p.attendees as unknown[]).slice(0, 100) : [];
      const marked = attendees.filter((a): a is Record<string, unknown> => typeof a === 'object' && a !== null);
      kind = marked.some((a) => a.noShow === true) ? 'no_show' : 'no_show_cleared';
      email = field.optText(marked[0]?.email);
    } else {
      bookingUid = field.text(p.uid, 'payload.uid');
      const attendees = Array.isArray(p.attendees) ? (p.attendees as unknown[]) : [];
      const first = attendees[0] && typeof attendees[0] === 'object' ? (attendees[0] as Record<string, unknown>) : {};
      email = field.optText(first.email);
    }
    const metadata = p.metadata && typeof p.metadata === 'object' ? (p.metadata as Record<string, unknown>) : {};
    const tracking = p.tracking && typeof p.tracking === 'object' ? (p.tracking as Record<string, unknown>) : {};
    const rescheduledFrom = kind === 'rescheduled' ? field.optText(p.rescheduleUid) : null;
    if (kind === 'rescheduled' && !rescheduledFrom) kind = 'booked';
    return {
      tool: 'cal',
      trigger,
      kind,
      bookingUid,
      rescheduledFrom,
      signedAt: created.toISOString(),
      inviteeEmail: email,
      startsAt: field.optTime(p.startTime, 'payload.startTime'),
      ref: field.optText(metadata.outreach_ref) ?? field.optText(metadata.utm_content) ?? field.optText(tracking.utm_content),
    };
  },
};

import { createHmac, timingSafeEqual } from 'node:crypto';
import { field, headerOf, invalid, ToolRefusal, type BookingToolReader, type MeetingKind } from './types.js';

/**
 * How old a Calendly signature may be, in seconds. Calendly's webhook signature guide (developer.calendly.com,
 * "Webhook signatures", read 2026-11-29) recommends a three-minute tolerance against replays; it signs each delivery
 * attempt afresh, so a retry carries a new `t`.
 */
export const CALENDLY_TOLERANCE_S = 180;

const TRIGGERS: Record<string, MeetingKind> = {
  'invitee.created': 'booked',
  'invitee.canceled': 'cancelled',
  'invitee_no_show.created': 'no_show',
  'invitee_no_show.deleted': 'no_show_cleared',
};

/**
 * Calendly (API v2 webhooks): `Calendly-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.<raw body>">`
 * with the subscription's signing key. The body is `{event, created_at, payload}`; an invitee is the booking (its
 * `uri`), a reschedule cancels the old invitee (`rescheduled: true`, `new_invitee`) and creates a new one
 * (`old_invitee`), and the booking link's UTM parameters come back in `payload.tracking`.
 */
export const calendly: BookingToolReader = {
  tool: 'calendly',
  verify(headers, raw, secret, now) {
    const header = headerOf(headers, 'calendly-webhook-signature');
    if (!header) throw new ToolRefusal(401, 'signature_invalid', 'the Calendly-Webhook-Signature header is missing');
    const parts = new Map(header.split(',').map((p) => p.trim().split('=', 2) as [string, string]));
    const t = parts.get('t');
    const v1 = parts.get('v1');
    if (!t || !/^\d{1,12}$/.test(t) || !v1 || !/^[0-9a-f]{64}$/i.test(v1))
      throw new ToolRefusal(401, 'signature_invalid', 'the Calendly-Webhook-Signature header is not t=<seconds>,v1=<hex>');
    const expected = createHmac('sha256', secret).update(`${t}.`).update(raw).digest();
    if (!timingSafeEqual(expected, Buffer.from(v1, 'hex')))
      throw new ToolRefusal(401, 'signature_invalid', 'the signature does not match the endpoint’s secret');
    const age = now.getTime() / 1000 - Number(t);
    if (Math.abs(age) > CALENDLY_TOLERANCE_S)
      throw new ToolRefusal(401, 'signature_stale', `the signature is ${Math.round(age)} s old; at most ${CALENDLY_TOLERANCE_S} s is accepted`);
    return { signedAt: new Date(Number(t) * 1000).toISOString() };
  },
  read(body, signedAt) {
    const b = field.obj(body, 'body');
    const trigger = field.text(b.event, 'event');
    const p = field.obj(b.payload, 'payload');
    let kind: MeetingKind = TRIGGERS[trigger] ?? 'ignored';
    // A no-show's payload names the invitee it is about; an invitee's own events carry its URI.
    const bookingUid =
      kind.startsWith('no_show') && typeof p.invitee === 'string' ? field.text(p.invitee, 'payload.invitee') : field.text(p.uri, 'payload.uri');
    const oldInvitee = field.optText(p.old_invitee);
    if (kind === 'booked' && oldInvitee) kind = 'rescheduled';
    // The old invitee of a reschedule: its replacement's invitee.created says all there is.
    if (kind === 'cancelled' && p.rescheduled === true) kind = 'ignored';
    const event = p.scheduled_event && typeof p.scheduled_event === 'object' ? (p.scheduled_event as Record<string, unknown>) : {};
    const tracking = p.tracking && typeof p.tracking === 'object' ? (p.tracking as Record<string, unknown>) : {};
    if (!signedAt) throw invalid('Calendly-Webhook-Signature', 'signed');
    return {
      tool: 'calendly',
      trigger,
      kind,
      bookingUid,
      rescheduledFrom: kind === 'rescheduled' ? oldInvitee : null,
      signedAt,
      inviteeEmail: field.optText(p.email),
      startsAt: field.optTime(event.start_time, 'payload.scheduled_event.start_time'),
      ref: field.optText(tracking.utm_content),
    };
  },
};

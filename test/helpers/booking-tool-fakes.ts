import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'undici';

// Faithful fakes of the two booking tools' webhook senders (docs/meetings.md): each keeps its bookings, and on every
// change POSTs the tool's own payload to a subscription's URL over a real socket, signed as the tool signs it.
// - Calendly (developer.calendly.com "Webhook signatures", "Webhook payload"): `Calendly-Webhook-Signature:
//   t=<unix s>,v1=<hex HMAC-SHA256(key, "t.body")>`, a fresh `t` per delivery; `{event, created_at, created_by, payload}`
//   with the invitee resource as payload; a reschedule cancels the old invitee (`rescheduled: true`, `new_invitee`)
//   and creates a new one (`old_invitee`); a no-show is `invitee_no_show.created` on the invitee.
// - Cal.com (cal.com/docs "Webhooks"): `X-Cal-Signature-256: <hex HMAC-SHA256(secret, body)>`;
//   `{triggerEvent, createdAt, payload}`; the booking page's `metadata[key]` query parameters come back in
//   `payload.metadata`; `BOOKING_NO_SHOW_UPDATED` carries `{bookingUid, attendees: [{email, noShow}], message}`.

export interface Delivery {
  status: number;
  body: Record<string, unknown>;
  /** The exact bytes and headers sent, for a replay. */
  raw: string;
  headers: Record<string, string>;
}

export interface Booking {
  uid: string;
  email: string;
  name: string;
  startsAt: Date;
  ref: string | null;
  metadata: Record<string, string>;
}

abstract class FakeTool {
  readonly deliveries: Delivery[] = [];
  constructor(
    protected readonly sub: { url: string; secret: string },
    protected readonly now: () => Date,
  ) {}

  protected abstract sign(raw: string, at: Date): Record<string, string>;

  /** POSTs one payload, signed at `at` (now unless a test signs it earlier). */
  async post(payload: unknown, at = this.now()): Promise<Delivery> {
    const raw = JSON.stringify(payload);
    const headers = { 'content-type': 'application/json', 'user-agent': this.userAgent, ...this.sign(raw, at) };
    return this.send(raw, headers);
  }

  /** Sends bytes and headers exactly as given (a replay of an earlier delivery, or a forged one). */
  async send(raw: string, headers: Record<string, string>): Promise<Delivery> {
    const res = await request(this.sub.url, { method: 'POST', body: raw, headers });
    const text = await res.body.text();
    const d = { status: res.statusCode, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, raw, headers };
    this.deliveries.push(d);
    return d;
  }

  protected abstract readonly userAgent: string;
}

/** The reference a booking link carries, read as the booking page reads its query string. */
const queryOf = (link: string | null) => (link ? new URL(link).searchParams : new URLSearchParams());

export class FakeCalendly extends FakeTool {
  protected readonly userAgent = 'Calendly Webhooks';
  private readonly org = `https://api.calendly.com/organizations/${randomUUID()}`;

  protected sign(raw: string, at: Date) {
    const t = Math.floor(at.getTime() / 1000);
    const v1 = createHmac('sha256', this.sub.secret).update(`${t}.${raw}`).digest('hex');
    return { 'calendly-webhook-signature': `t=${t},v1=${v1}` };
  }

  private invitee(b: Booking, extra: Record<string, unknown> = {}) {
    const eventUri = `https://api.calendly.com/scheduled_events/${b.uid.split('/')[4] ?? randomUUID()}`;
    const at = this.now().toISOString();
    return {
      uri: b.uid,
      email: b.email,
      name: b.name,
      first_name: null,
      last_name: null,
      status: 'active',
      timezone: 'Europe/Oslo',
      event: eventUri,
      created_at: at,
      updated_at: at,
      canceled: false,
      rescheduled: false,
      old_invitee: null,
      new_invitee: null,
      no_show: null,
      payment: null,
      reconfirmation: null,
      routing_form_submission: null,
      text_reminder_number: null,
      questions_and_answers: [],
      cancel_url: `https://calendly.com/cancellations/${randomUUID()}`,
      reschedule_url: `https://calendly.com/reschedulings/${randomUUID()}`,
      scheduled_event: {
        uri: eventUri,
        name: '30 Minute Meeting',
        status: 'active',
        start_time: b.startsAt.toISOString(),
        end_time: new Date(b.startsAt.getTime() + 30 * 60_000).toISOString(),
        event_type: `https://api.calendly.com/event_types/${randomUUID()}`,
        location: { type: 'google_conference', status: 'pushed', join_url: 'https://meet.example/abc' },
        invitees_counter: { total: 1, active: 1, limit: 1 },
        created_at: at,
        updated_at: at,
        event_memberships: [{ user: `https://api.calendly.com/users/${randomUUID()}`, user_email: 'host@acme.example' }],
        event_guests: [],
      },
      tracking: { utm_campaign: null, utm_source: null, utm_medium: null, utm_content: b.ref, utm_term: null, salesforce_uuid: null },
      ...extra,
    };
  }

  private envelope(event: string, payload: unknown) {
    return { event, created_at: this.now().toISOString(), created_by: `${this.org}`, payload };
  }

  /** A prospect books through `link` (the booking link we sent, with its utm_content), or with no link at all. */
  async book(p: { email: string; name?: string; startsAt: Date; link?: string | null }): Promise<{ booking: Booking; delivery: Delivery }> {
    const eventId = randomUUID();
    const booking: Booking = {
      uid: `https://api.calendly.com/scheduled_events/${eventId}/invitees/${randomUUID()}`,
      email: p.email,
      name: p.name ?? 'Invitee',
      startsAt: p.startsAt,
      ref: queryOf(p.link ?? null).get('utm_content'),
      metadata: {},
    };
    return { booking, delivery: await this.post(this.envelope('invitee.created', this.invitee(booking))) };
  }

  /** Calendly's reschedule: the old invitee canceled (rescheduled), then a new invitee created naming the old one. */
  async reschedule(old: Booking, startsAt: Date): Promise<{ booking: Booking; deliveries: Delivery[] }> {
    const next: Booking = { ...old, uid: `https://api.calendly.com/scheduled_events/${randomUUID()}/invitees/${randomUUID()}`, startsAt };
    const cancel = await this.post(
      this.envelope('invitee.canceled', this.invitee(old, { status: 'canceled', canceled: true, rescheduled: true, new_invitee: next.uid })),
    );
    const created = await this.post(this.envelope('invitee.created', this.invitee(next, { old_invitee: old.uid })));
    return { booking: next, deliveries: [cancel, created] };
  }

  async cancel(b: Booking): Promise<Delivery> {
    return this.post(
      this.envelope(
        'invitee.canceled',
        this.invitee(b, { status: 'canceled', canceled: true, cancellation: { canceled_by: b.name, reason: 'Something came up', canceler_type: 'invitee' } }),
      ),
    );
  }

  async noShow(b: Booking): Promise<Delivery> {
    return this.post(
      this.envelope(
        'invitee_no_show.created',
        this.invitee(b, { no_show: { uri: `https://api.calendly.com/invitee_no_shows/${randomUUID()}`, created_at: this.now().toISOString() } }),
      ),
    );
  }
}

export class FakeCalCom extends FakeTool {
  protected readonly userAgent = 'Cal.com Webhooks';

  protected sign(raw: string) {
    return { 'x-cal-signature-256': createHmac('sha256', this.sub.secret).update(raw).digest('hex') };
  }

  private bookingPayload(b: Booking, extra: Record<string, unknown> = {}) {
    return {
      type: '30min',
      title: `30 min between Host and ${b.name}`,
      description: '',
      additionalNotes: '',
      customInputs: {},
      startTime: b.startsAt.toISOString(),
      endTime: new Date(b.startsAt.getTime() + 30 * 60_000).toISOString(),
      organizer: { id: 5, name: 'Host', email: 'host@acme.example', timeZone: 'Europe/Oslo', language: { locale: 'en' } },
      responses: { name: { label: 'your_name', value: b.name }, email: { label: 'email_address', value: b.email } },
      userFieldsResponses: {},
      attendees: [{ email: b.email, name: b.name, timeZone: 'Europe/Berlin', language: { locale: 'de' } }],
      location: 'integrations:daily',
      destinationCalendar: null,
      hideCalendarNotes: false,
      requiresConfirmation: null,
      eventTypeId: 7,
      seatsShowAttendees: true,
      uid: b.uid,
      bookingId: 91,
      metadata: { videoCallUrl: 'https://app.cal.com/video/xyz', ...b.metadata },
      status: 'ACCEPTED',
      ...extra,
    };
  }

  private envelope(triggerEvent: string, payload: unknown, createdAt = this.now()) {
    return { triggerEvent, createdAt: createdAt.toISOString(), payload };
  }

  /** A prospect books on the Cal.com page `link` opened: its `metadata[key]` query parameters become booking metadata. */
  async book(p: { email: string; name?: string; startsAt: Date; link?: string | null }): Promise<{ booking: Booking; delivery: Delivery }> {
    const metadata: Record<string, string> = {};
    for (const [k, v] of queryOf(p.link ?? null)) {
      const m = /^metadata\[(.+)\]$/.exec(k);
      if (m) metadata[m[1]] = v;
    }
    const booking: Booking = {
      uid: randomUUID().replace(/-/g, '').slice(0, 22),
      email: p.email,
      name: p.name ?? 'Invitee',
      startsAt: p.startsAt,
      ref: null,
      metadata,
    };
    return { booking, delivery: await this.post(this.envelope('BOOKING_CREATED', this.bookingPayload(booking))) };
  }

  async reschedule(old: Booking, startsAt: Date): Promise<{ booking: Booking; deliveries: Delivery[] }> {
    const next: Booking = { ...old, uid: randomUUID().replace(/-/g, '').slice(0, 22), startsAt };
    const d = await this.post(
      this.envelope('BOOKING_RESCHEDULED', this.bookingPayload(next, { rescheduleUid: old.uid, rescheduleStartTime: old.startsAt.toISOString() })),
    );
    return { booking: next, deliveries: [d] };
  }

  async cancel(b: Booking): Promise<Delivery> {
    return this.post(this.envelope('BOOKING_CANCELLED', this.bookingPayload(b, { status: 'CANCELLED', cancellationReason: 'Something came up' })));
  }

  async noShow(b: Booking): Promise<Delivery> {
    return this.post(
      this.envelope('BOOKING_NO_SHOW_UPDATED', {
        bookingUid: b.uid,
        bookingId: 91,
        attendees: [{ email: b.email, noShow: true }],
        message: 'x marked as no-show',
      }),
    );
  }

  async ended(b: Booking): Promise<Delivery> {
    return this.post(this.envelope('MEETING_ENDED', this.bookingPayload(b)));
  }

  /** An event stamped `createdAt` long ago (a stale or replayed capture), signed with the secret. */
  async postStampedAt(triggerEvent: string, b: Booking, createdAt: Date): Promise<Delivery> {
    return this.post(this.envelope(triggerEvent, this.bookingPayload(b), createdAt));
  }
}

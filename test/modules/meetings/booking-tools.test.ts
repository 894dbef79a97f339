import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount, insertReply, insertSequence } from '../../helpers/factories.js';
import { FakeCalCom, FakeCalendly, type Booking } from '../../helpers/booking-tool-fakes.js';
import { bookingRef, trackedBookingLink } from '../../../src/domain/booking-link.js';

// Issue 42 §1–§3 and §7: each booking tool's events, sent by a fake that signs as the tool does over a real socket,
// have their effect end to end (lead fields, ledger, webhook event, funnel, stopped lanes); a bad signature, a stale
// one, a replay, an unknown invitee and another workspace's URL change nothing.

type Ws = Awaited<ReturnType<typeof createWorkspaceWithKey>>;
const LINK = { calendly: 'https://calendly.com/acme/intro', cal: 'https://cal.example/acme/intro' } as const;

describe.each([
  { tool: 'calendly' as const, Fake: FakeCalendly },
  { tool: 'cal' as const, Fake: FakeCalCom },
])('$tool webhooks', ({ tool, Fake }) => {
  let t: TestApp;
  let a: Ws;
  let b: Ws;
  let base: string;
  let fake: FakeCalendly | FakeCalCom;
  let endpoint: { id: string; url: string; secret: string; steps: string[] };
  let sequenceId: string;
  let account: string;

  beforeAll(async () => {
    t = await buildTestApp();
    base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
    a = await createWorkspaceWithKey(t, 'Meetings Co');
    b = await createWorkspaceWithKey(t, 'Other Co');
    account = await insertMessagingAccount(t.db, a.workspaceId);
    sequenceId = await insertSequence(t.db, a.workspaceId, { name: 'Outbound' });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/meetings/endpoints', headers: a.auth, payload: { tool } });
    expect(res.statusCode).toBe(201);
    endpoint = res.json();
    fake = new Fake({ url: `${base}/inbound/meetings/${endpoint.id}`, secret: endpoint.secret }, () => t.clock.now());
  }, 60_000);
  afterAll(async () => t?.close());
  // Each step a minute after the last, as a tool's events come: the ledger reads in the order things happened.
  beforeEach(() => t?.clock.advance(60_000));

  const get = (ws: Ws, url: string) => t.app.inject({ method: 'GET', url, headers: ws.auth });
  const leadOf = async (id: string) => ((await get(a, '/api/v1/leads?limit=200')).json().leads as Record<string, unknown>[]).find((l) => l.id === id)!;
  const ledger = async (leadId: string) =>
    (await t.db.selectFrom('activity').select(['action', 'detail']).where('lead_id', '=', leadId).orderBy('created_at').orderBy('id').execute()).map((r) => ({
      action: r.action,
      ...(JSON.parse(r.detail) as Record<string, unknown>),
    }));
  const bookedEvents = async (leadId: string) =>
    (await t.db.selectFrom('outbox_events').select('data').where('event', '=', 'lead.meeting_booked').execute()).filter(
      (e) => (e.data as { lead: { id: string } }).lead.id === leadId,
    ).length;
  const funnel = async () => (await get(a, '/api/v1/progress')).json().funnel as Record<string, number>;
  const eventCount = async () =>
    Number(
      (
        await t.db
          .selectFrom('meeting_events')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  /** A person in two sequences (two lanes, both due), with a pending reply on the first. */
  async function person(email: string) {
    const lane = {
      account_id: account,
      sequence_id: sequenceId,
      stage: 'messaged' as const,
      next_action_at: new Date('2026-11-22T09:00:00Z'),
      messaged_at: new Date('2026-11-20T09:00:00Z'),
    };
    const first = await insertLead(t.db, a.workspaceId, { ...lane, email, person: 'Ada Example' });
    const second = await insertLead(t.db, a.workspaceId, { ...lane, email: email.toUpperCase(), sequence_id: await insertSequence(t.db, a.workspaceId) });
    const replyId = await insertReply(t.db, t.cipher, a.workspaceId, { leadId: first, classification: 'meeting_intent' });
    return { first, second, replyId };
  }
  const inTwoDays = () => new Date(t.clock.now().getTime() + 2 * 86_400_000);

  it('the endpoint is shown with its URL, its secret once and the steps to register it; the list never shows the secret', async () => {
    expect(endpoint.url).toMatch(new RegExp(`/inbound/meetings/${endpoint.id}$`));
    expect(endpoint.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(endpoint.steps.join(' ')).toContain(endpoint.url);
    const list = (await get(a, '/api/v1/meetings/endpoints')).json();
    expect(list.endpoints).toEqual([expect.objectContaining({ id: endpoint.id, tool })]);
    expect(JSON.stringify(list)).not.toContain(endpoint.secret);
    expect((await get(b, '/api/v1/meetings/endpoints')).json().endpoints).toEqual([]);
  });

  let booking: Booking;
  let bookedAt: string;
  let ada: Awaited<ReturnType<typeof person>>;

  it('a booking through the link we sent: tied by its reference, the meeting booked, every lane of the person stopped, replies closed, one event', async () => {
    ada = await person('ada@initech.example');
    const link = trackedBookingLink(LINK[tool], bookingRef(t.cipher, a.workspaceId, ada.second));
    // The invitee books with another address: the reference alone ties the booking to the lead whose link it was.
    const { booking: bk, delivery } = await fake.book({ email: 'ada.private@mail.example', name: 'Ada', startsAt: inTwoDays(), link });
    booking = bk;
    expect(delivery.status).toBe(200);
    expect(delivery.body).toMatchObject({ ok: true, status: 'applied', kind: 'booked' });
    const lead = await leadOf(ada.second);
    bookedAt = t.clock.now().toISOString();
    expect(lead).toMatchObject({ meetingBookedAt: bookedAt, meetingOutcome: null, sequenceDone: true });
    // The person's other lane (same address, another spelling) stops too, and its pending reply closes as decided.
    expect(await leadOf(ada.first)).toMatchObject({ sequenceDone: true, meetingBookedAt: null });
    const reply = await t.db.selectFrom('replies').select(['state', 'decision', 'decided_by']).where('id', '=', ada.replyId).executeTakeFirstOrThrow();
    expect(reply).toEqual({ state: 'decided', decision: 'meeting_booked', decided_by: tool });
    expect(await ledger(ada.second)).toEqual([
      expect.objectContaining({
        action: 'meeting_booked',
        source: tool,
        bookingUid: booking.uid,
        matchedBy: 'ref',
        stoppedLeadIds: [ada.first, ada.second].sort(),
        closedReplyIds: [ada.replyId],
      }),
    ]);
    expect(await bookedEvents(ada.second)).toBe(1);
    expect(await funnel()).toMatchObject({ meetingsBooked: 1, meetingsQualifying: 1, meetingsNoShowOrCancelled: 0 });
  });

  it('a reschedule moves the meeting: meeting_synced, no second lead.meeting_booked, the same lead', async () => {
    const { booking: next, deliveries } = await fake.reschedule(booking, new Date(inTwoDays().getTime() + 86_400_000));
    expect(deliveries.map((d) => d.status)).toEqual(deliveries.map(() => 200));
    expect(deliveries.at(-1)!.body).toMatchObject({ status: 'applied', kind: 'rescheduled' });
    booking = next;
    const entries = await ledger(ada.second);
    expect(entries.map((e) => e.action)).toEqual(['meeting_booked', 'meeting_synced']);
    expect(entries[1]).toMatchObject({ change: 'rescheduled', bookingUid: next.uid, startsAt: next.startsAt.toISOString() });
    expect(await bookedEvents(ada.second)).toBe(1);
    expect((await leadOf(ada.second)).meetingBookedAt).toBe(bookedAt);
  });

  it('a no-show sets the outcome and writes meeting_no_show; the funnel counts it', async () => {
    const d = await fake.noShow(booking);
    expect(d.body).toMatchObject({ status: 'applied', kind: 'no_show' });
    expect(await leadOf(ada.second)).toMatchObject({ meetingOutcome: 'no_show' });
    expect((await ledger(ada.second)).at(-1)).toMatchObject({ action: 'meeting_no_show', change: 'no_show', outcome: 'no_show' });
    expect(await funnel()).toMatchObject({ meetingsBooked: 1, meetingsQualifying: 0, meetingsNoShowOrCancelled: 1 });
  });

  it('a booking by the invitee’s address alone (any spelling), then its cancellation: cancelled, and the sequence never resumes', async () => {
    const bo = await person('bo@initech.example');
    const { booking: bk, delivery } = await fake.book({ email: ' Bo@INITECH.example ', startsAt: inTwoDays() });
    expect(delivery.body).toMatchObject({ status: 'applied' });
    // The most recently messaged lane of the person is given the booking; both stop.
    const booked = [await leadOf(bo.first), await leadOf(bo.second)].filter((l) => l.meetingBookedAt);
    expect(booked).toHaveLength(1);
    t.clock.advance(60_000);
    const c = await fake.cancel(bk);
    expect(c.body).toMatchObject({ status: 'applied', kind: 'cancelled' });
    const lead = await leadOf(booked[0].id as string);
    expect(lead).toMatchObject({ meetingOutcome: 'cancelled', sequenceDone: true, nextActionAt: null });
    expect((await ledger(lead.id as string)).at(-1)).toMatchObject({ action: 'meeting_synced', change: 'cancelled', outcome: 'cancelled' });
    expect(await funnel()).toMatchObject({ meetingsBooked: 2, meetingsNoShowOrCancelled: 2 });
  });

  it('a bad signature, a stale one and a replay are refused with 4xx, and change nothing', async () => {
    const before = await eventCount();
    const { delivery } = await fake.book({ email: 'cy@initech.example', startsAt: inTwoDays() });
    expect(delivery.body).toMatchObject({ status: 'unmatched' });
    const counted = await eventCount();
    expect(counted).toBe(before + 1);
    // The same bytes and signature again: a replay.
    const replay = await fake.send(delivery.raw, delivery.headers);
    expect(replay.status).toBe(409);
    expect(replay.body).toMatchObject({ error: 'duplicate_event' });
    // The body altered after signing.
    const forged = await fake.send(delivery.raw.replace('cy@initech', 'dy@initech'), delivery.headers);
    expect(forged.status).toBe(401);
    expect(forged.body).toMatchObject({ error: 'signature_invalid' });
    // Signed with another secret.
    const other = new Fake({ url: `${base}/inbound/meetings/${endpoint.id}`, secret: 'not-the-secret' }, () => t.clock.now());
    expect((await other.book({ email: 'ey@initech.example', startsAt: inTwoDays() })).delivery).toMatchObject({
      status: 401,
      body: { error: 'signature_invalid' },
    });
    // Signed (or stamped) too long ago.
    const past = new Date(t.clock.now().getTime() - (tool === 'calendly' ? 10 * 60_000 : 3 * 86_400_000));
    const stale =
      fake instanceof FakeCalCom
        ? await fake.postStampedAt(
            'BOOKING_CREATED',
            { uid: 'old-uid', email: 'fy@initech.example', name: 'F', startsAt: inTwoDays(), ref: null, metadata: {} },
            past,
          )
        : await fake.post(JSON.parse(delivery.raw), past);
    expect(stale).toMatchObject({ status: 401, body: { error: 'signature_stale' } });
    // No signature at all, and a body that is not the tool's shape.
    expect((await fake.send(delivery.raw, { 'content-type': 'application/json' })).status).toBe(401);
    expect(await eventCount()).toBe(counted);
  });

  it('an unknown invitee is recorded as unmatched, visible, and changes nothing', async () => {
    const events = (await get(a, '/api/v1/meetings/events?status=unmatched')).json().events as Record<string, unknown>[];
    expect(events.some((e) => e.inviteeEmail === 'cy@initech.example' && e.leadId === null && e.tool === tool)).toBe(true);
    expect((await get(b, '/api/v1/meetings/events')).json().events).toEqual([]);
    const page = (await get(a, '/api/v1/meetings/events?limit=1')).json();
    expect(page.events).toHaveLength(1);
    const next = (await get(a, `/api/v1/meetings/events?limit=1&cursor=${page.nextCursor}`)).json();
    expect(next.events[0].id).not.toBe(page.events[0].id);
  });

  it('another workspace’s URL: its secret does not verify ours, and a reference to our lead never crosses over', async () => {
    const theirs = (await t.app.inject({ method: 'POST', url: '/api/v1/meetings/endpoints', headers: b.auth, payload: { tool } })).json();
    const dana = await person('dana@initech.example');
    const link = trackedBookingLink(LINK[tool], bookingRef(t.cipher, a.workspaceId, dana.first));
    // Our secret on their URL: refused.
    const wrongUrl = new Fake({ url: `${base}/inbound/meetings/${theirs.id}`, secret: endpoint.secret }, () => t.clock.now());
    expect((await wrongUrl.book({ email: 'dana@initech.example', startsAt: inTwoDays(), link })).delivery.status).toBe(401);
    // Their own secret, naming our lead: not theirs, so unmatched, and our lead is untouched.
    const theirTool = new Fake({ url: `${base}/inbound/meetings/${theirs.id}`, secret: theirs.secret }, () => t.clock.now());
    expect((await theirTool.book({ email: 'dana@initech.example', startsAt: inTwoDays(), link })).delivery.body).toMatchObject({ status: 'unmatched' });
    expect(await leadOf(dana.first)).toMatchObject({ meetingBookedAt: null, sequenceDone: false });
    // A removed endpoint, and an id that is no endpoint, answer 404.
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/meetings/endpoints/${theirs.id}`, headers: a.auth })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/meetings/endpoints/${theirs.id}`, headers: b.auth })).statusCode).toBe(200);
    expect((await theirTool.book({ email: 'dana@initech.example', startsAt: inTwoDays() })).delivery.status).toBe(404);
  });

  it('a rotated secret: the old one stops verifying at once', async () => {
    const rotated = (await t.app.inject({ method: 'POST', url: `/api/v1/meetings/endpoints/${endpoint.id}/rotate`, headers: a.auth })).json();
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect((await fake.book({ email: 'gy@initech.example', startsAt: inTwoDays() })).delivery.status).toBe(401);
    const fresh = new Fake({ url: `${base}/inbound/meetings/${endpoint.id}`, secret: rotated.secret }, () => t.clock.now());
    expect((await fresh.book({ email: 'gy@initech.example', startsAt: inTwoDays() })).delivery.status).toBe(200);
  });
});

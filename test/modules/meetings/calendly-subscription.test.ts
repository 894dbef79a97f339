import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { insertLead } from '../../helpers/factories.js';
import { FakeCalendlyApi, type FakeAccount, type FakeSubscription } from '../../helpers/calendly-api-fake.js';

// A Calendly endpoint's webhook subscription made from here with a person's token (docs/meetings.md "Subscribing from
// here"), against a fake of Calendly's API that keeps the subscriptions and then delivers bookings signed with the
// signing key it was given: a booking it sends after the subscription has its effect, so the key we gave is the one
// the endpoint verifies with. Every refusal (token, plan, role, outage, tool, workspace, body) changes nothing.

type Ws = Awaited<ReturnType<typeof createWorkspaceWithKey>>;

describe('Calendly subscriptions made from here', () => {
  let t: TestApp;
  let api: FakeCalendlyApi;
  let a: Ws;
  let b: Ws;
  let base: string;
  let owner: FakeAccount;

  beforeAll(async () => {
    api = await new FakeCalendlyApi().start();
    t = await buildTestApp({ env: { OUTREACH_CALENDLY_API_URL: `${api.url}/`, OUTREACH_PUBLIC_URL: 'https://outreach.example' } });
    base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
    a = await createWorkspaceWithKey(t, 'Subscribing Co');
    b = await createWorkspaceWithKey(t, 'Other Co');
    owner = api.account({ role: 'owner' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await api?.stop();
  });
  beforeEach(() => {
    api.down = null;
    t?.clock.advance(60_000);
  });

  const call = (ws: Ws, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    t.app.inject({ method, url: `/api/v1${url}`, headers: ws.auth, ...(payload !== undefined && { payload }) });
  const endpoint = async (tool: 'calendly' | 'cal' = 'calendly') => {
    const res = await call(a, 'POST', '/meetings/endpoints', { tool });
    expect(res.statusCode).toBe(201);
    return res.json<{ id: string; url: string; secret: string; subscription: null }>();
  };
  const listed = async (id: string) =>
    ((await call(a, 'GET', '/meetings/endpoints')).json().endpoints as { id: string; subscription: unknown }[]).find((e) => e.id === id);
  const subsAt = (url: string) => [...api.subscriptions.values()].filter((s) => s.callback_url === url);
  const onlySub = (url: string): FakeSubscription => {
    const subs = subsAt(url);
    expect(subs).toHaveLength(1);
    return subs[0];
  };
  /** A prospect books through the subscription; the answer and the lead's meetingBookedAt say whether it was believed. */
  async function bookThrough(sub: FakeSubscription) {
    const email = `p${Math.random().toString(36).slice(2, 8)}@prospect.example`;
    const lead = await insertLead(t.db, a.workspaceId, { email, stage: 'messaged' });
    const { delivery } = await api.sender(sub, base, () => t.clock.now()).book({ email, startsAt: new Date(t.clock.now().getTime() + 86_400_000) });
    const row = await t.db.selectFrom('leads').select('meeting_booked_at').where('id', '=', lead).executeTakeFirstOrThrow();
    return { status: delivery.status, booked: row.meeting_booked_at !== null };
  }

  it('subscribes with the endpoint’s URL, the four invitee events and its secret as signing key; a booking Calendly then sends is applied', async () => {
    const e = await endpoint();
    const res = await call(a, 'POST', `/meetings/endpoints/${e.id}/subscription`, { personalAccessToken: owner.token });
    expect(res.statusCode, res.body).toBe(200);
    const sub = onlySub(e.url);
    expect(e.url).toBe(`https://outreach.example/inbound/meetings/${e.id}`);
    expect(sub).toMatchObject({
      events: ['invitee.created', 'invitee.canceled', 'invitee_no_show.created', 'invitee_no_show.deleted'],
      scope: 'user',
      user: owner.user,
      organization: owner.organization,
      signing_key: e.secret,
    });
    expect(res.json()).toMatchObject({ id: e.id, subscription: { uri: sub.uri, scope: 'user', subscribedAt: t.clock.now().toISOString() } });
    expect((await listed(e.id))?.subscription).toMatchObject({ uri: sub.uri });
    expect(await bookThrough(sub)).toEqual({ status: 200, booked: true });
    // The token is kept encrypted and shown nowhere.
    for (const body of [res.body, (await call(a, 'GET', '/meetings/endpoints')).body]) expect(body).not.toContain(owner.token);
    const stored = await t.db.selectFrom('meeting_endpoints').select('subscription_token').where('id', '=', e.id).executeTakeFirstOrThrow();
    expect(stored.subscription_token).toBeTruthy();
    expect(stored.subscription_token).not.toContain(owner.token);
  });

  it('replaces a subscription someone made by hand at the same URL (Calendly’s 409), and an organization scope with an owner’s token', async () => {
    const e = await endpoint();
    const hand = await fetch(`${api.url}/webhook_subscriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: e.url, events: ['invitee.created'], organization: owner.organization, scope: 'organization', signing_key: 'typed-by-hand' }),
    });
    expect(hand.status).toBe(201);
    const res = await call(a, 'POST', `/meetings/endpoints/${e.id}/subscription`, { personalAccessToken: owner.token, scope: 'organization' });
    expect(res.statusCode, res.body).toBe(200);
    const sub = onlySub(e.url);
    expect(sub).toMatchObject({ scope: 'organization', user: null, signing_key: e.secret });
    expect(await bookThrough(sub)).toEqual({ status: 200, booked: true });
  });

  it('a rotation makes the subscription again with the new secret: Calendly signs with it, and the old key is refused', async () => {
    const e = await endpoint();
    expect((await call(a, 'POST', `/meetings/endpoints/${e.id}/subscription`, { personalAccessToken: owner.token })).statusCode).toBe(200);
    const before = onlySub(e.url);
    const rotated = await call(a, 'POST', `/meetings/endpoints/${e.id}/rotate`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    const after = onlySub(e.url);
    expect(after.uri).not.toBe(before.uri);
    expect(after.signing_key).toBe(rotated.json().secret);
    expect(rotated.json().subscription).toMatchObject({ uri: after.uri, scope: 'user' });
    expect(await bookThrough(after)).toEqual({ status: 200, booked: true });
    expect(await bookThrough(before)).toEqual({ status: 401, booked: false });
  });

  it('refusals name their cause and change nothing: token, plan, role, outage, tool, workspace, body', async () => {
    const e = await endpoint();
    const cal = await endpoint('cal');
    const free = api.account({ plan: 'free' });
    const member = api.account({ role: 'user' });
    const cases: [Ws, string, Record<string, unknown>, number, string][] = [
      [a, e.id, { personalAccessToken: 'not-a-token' }, 400, 'calendly_token_refused'],
      [a, e.id, { personalAccessToken: free.token }, 409, 'calendly_forbidden'],
      [a, e.id, { personalAccessToken: member.token, scope: 'organization' }, 409, 'calendly_forbidden'],
      [a, cal.id, { personalAccessToken: owner.token }, 409, 'wrong_tool'],
      [b, e.id, { personalAccessToken: owner.token }, 404, 'meeting endpoint not found'],
      [a, e.id, { personalAccessToken: owner.token, scope: 'team' }, 400, 'scope'],
      [a, e.id, {}, 400, 'personalAccessToken'],
    ];
    for (const [ws, id, body, status, says] of cases) {
      const res = await call(ws, 'POST', `/meetings/endpoints/${id}/subscription`, body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(status);
      expect(res.body).toContain(says);
    }
    expect((await call(a, 'POST', `/meetings/endpoints/${e.id}/subscription`, { personalAccessToken: 'not-a-token' })).json().message).toContain(
      'personalAccessToken',
    );
    api.down = 503;
    const outage = await call(a, 'POST', `/meetings/endpoints/${e.id}/subscription`, { personalAccessToken: owner.token });
    expect(outage.statusCode).toBe(503);
    expect(outage.json().error).toBe('calendly_unavailable');
    api.down = null;
    expect(subsAt(e.url)).toHaveLength(0);
    expect((await listed(e.id))?.subscription).toBeNull();
    expect((await listed(cal.id))?.subscription).toBeNull();
  });

  it('a rotation Calendly cannot follow is refused: the secret stays and still verifies', async () => {
    const e = await endpoint();
    expect((await call(a, 'POST', `/meetings/endpoints/${e.id}/subscription`, { personalAccessToken: owner.token })).statusCode).toBe(200);
    api.down = 503;
    const res = await call(a, 'POST', `/meetings/endpoints/${e.id}/rotate`);
    expect(res.statusCode).toBe(503);
    expect(res.json().message).toContain('the secret was not rotated');
    api.down = null;
    expect(await bookThrough(onlySub(e.url))).toEqual({ status: 200, booked: true });
  });

  it('unsubscribe deletes it at Calendly (one gone already counts); a removal deletes it first, and waits for an answer', async () => {
    const e = await endpoint();
    const sub = () => call(a, 'POST', `/meetings/endpoints/${e.id}/subscription`, { personalAccessToken: owner.token });
    expect((await sub()).statusCode).toBe(200);
    const off = await call(a, 'DELETE', `/meetings/endpoints/${e.id}/subscription`);
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().subscription).toBeNull();
    expect(subsAt(e.url)).toHaveLength(0);
    expect((await call(a, 'DELETE', `/meetings/endpoints/${e.id}/subscription`)).json().error).toBe('no_subscription');

    expect((await sub()).statusCode).toBe(200);
    api.subscriptions.clear(); // deleted by hand at Calendly
    expect((await call(a, 'DELETE', `/meetings/endpoints/${e.id}/subscription`)).statusCode).toBe(200);

    expect((await sub()).statusCode).toBe(200);
    api.down = 503;
    expect((await call(a, 'DELETE', `/meetings/endpoints/${e.id}`)).statusCode).toBe(503);
    expect(await listed(e.id)).toBeDefined();
    api.down = null;
    const removed = await call(a, 'DELETE', `/meetings/endpoints/${e.id}`);
    expect(removed.json()).toEqual({ ok: true, subscription: 'deleted' });
    expect(subsAt(e.url)).toHaveLength(0);

    // A token revoked since: the endpoint goes, and the answer says the subscription is left at Calendly.
    const other = await endpoint();
    const member = api.account({ organization: owner.organization, role: 'user' });
    expect((await call(a, 'POST', `/meetings/endpoints/${other.id}/subscription`, { personalAccessToken: member.token })).statusCode).toBe(200);
    api.accounts.delete(member.token);
    expect((await call(a, 'DELETE', `/meetings/endpoints/${other.id}`)).json()).toEqual({ ok: true, subscription: 'left_at_calendly' });
    expect(subsAt(other.url)).toHaveLength(1);
  });
});

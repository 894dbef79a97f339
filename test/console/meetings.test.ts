import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { insertLead, insertMessagingAccount } from '../helpers/factories.js';
import { FakeCalendlyApi } from '../helpers/calendly-api-fake.js';

// Issue 42 §4 and §5 in the console over HTTP (docs/console.md "Meetings"): the booking links per sender (the workspace's
// on the Meetings page, each account's on Accounts), the Meeting form's refusals, another workspace's ids, and CSRF.
// The browser flow is test/console/meetings.browser.test.ts.

let t: TestApp;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let other: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let c: ConsoleClient;
let dana: string;
let foreignAccount: string;
let ada: string;
let foreignLead: string;
let calendly: FakeCalendlyApi;

beforeAll(async () => {
  calendly = await new FakeCalendlyApi().start();
  t = await buildTestApp({ env: { OUTREACH_CALENDLY_API_URL: calendly.url } });
  acme = await createWorkspaceWithKey(t, 'Acme');
  other = await createWorkspaceWithKey(t, 'Other');
  dana = await insertMessagingAccount(t.db, acme.workspaceId, { name: 'Dana (LinkedIn)' });
  foreignAccount = await insertMessagingAccount(t.db, other.workspaceId, { name: 'Theirs' });
  ada = await insertLead(t.db, acme.workspaceId, { person: 'Ada Lovelace', email: 'ada@engines.example' });
  foreignLead = await insertLead(t.db, other.workspaceId, { person: 'Not yours', email: 'x@other.example' });
  c = await signedInConsole(t, acme.key);
});
afterAll(async () => {
  await t?.close();
  await calendly?.stop();
});

const workspaceLink = async (id: string) =>
  (await t.db.selectFrom('workspaces').select('booking_link').where('id', '=', id).executeTakeFirstOrThrow()).booking_link;
const accountLink = async (id: string) =>
  (await t.db.selectFrom('messaging_accounts').select('booking_link').where('id', '=', id).executeTakeFirstOrThrow()).booking_link;

describe('booking links in the console (issue 42 §5)', () => {
  it('sets, refuses and clears the workspace booking link on the Meetings page', async () => {
    await c.get('/console/meetings');
    const saved = await c.post('/console/meetings/booking-link', { bookingLink: ' https://cal.com/acme/intro ' });
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toBe('/console/meetings');
    expect(await workspaceLink(acme.workspaceId)).toBe('https://cal.com/acme/intro');
    const page = await c.get('/console/meetings');
    expect(page.body).toContain('Saved the workspace booking link: https://cal.com/acme/intro');
    expect(page.body).toContain('value="https://cal.com/acme/intro"');

    for (const bad of ['javascript:alert(1)', 'not a url', `https://cal.com/${'a'.repeat(2000)}`]) {
      const refused = await c.post('/console/meetings/booking-link', { bookingLink: bad });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain('bookingLink must be an http(s) URL of at most 2000 characters');
      expect(refused.body).toContain('notice-refused');
    }
    expect(await workspaceLink(acme.workspaceId)).toBe('https://cal.com/acme/intro');

    await c.get('/console/meetings');
    expect((await c.post('/console/meetings/booking-link', { bookingLink: '' })).statusCode).toBe(303);
    expect(await workspaceLink(acme.workspaceId)).toBeNull();
    expect(await workspaceLink(other.workspaceId)).toBeNull();
  });

  it("sets an account's own booking link on the Accounts page; another workspace's account is the 404 page", async () => {
    await c.get('/console/accounts');
    const saved = await c.post(`/console/accounts/${dana}/booking-link`, { bookingLink: 'https://calendly.com/dana/30min' });
    expect(saved.statusCode).toBe(303);
    expect(await accountLink(dana)).toBe('https://calendly.com/dana/30min');
    const page = await c.get('/console/accounts');
    expect(page.body).toContain('Booking link of Dana (LinkedIn)');
    expect(page.body).toContain('value="https://calendly.com/dana/30min"');

    const refused = await c.post(`/console/accounts/${dana}/booking-link`, { bookingLink: 'ftp://files.example/x' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('bookingLink must be an http(s) URL');
    expect(await accountLink(dana)).toBe('https://calendly.com/dana/30min');

    await c.get('/console/accounts');
    expect((await c.post(`/console/accounts/${foreignAccount}/booking-link`, { bookingLink: 'https://calendly.com/evil' })).statusCode).toBe(404);
    expect(await accountLink(foreignAccount)).toBeNull();
  });

  it('refuses a POST without the CSRF token; nothing changes', async () => {
    await c.get('/console/accounts');
    expect((await c.post(`/console/accounts/${dana}/booking-link`, { bookingLink: 'https://calendly.com/other', _csrf: null })).statusCode).toBe(403);
    expect((await c.post('/console/meetings/booking-link', { bookingLink: 'https://calendly.com/other', _csrf: null })).statusCode).toBe(403);
    expect(await accountLink(dana)).toBe('https://calendly.com/dana/30min');
    expect(await workspaceLink(acme.workspaceId)).toBeNull();
  });
});

describe('the Meeting form and the endpoints over HTTP (issue 42 §1, §4)', () => {
  it("another workspace's lead or endpoint, a malformed id: the 404 page, nothing recorded", async () => {
    await c.get(`/console/leads/${ada}`);
    expect((await c.post(`/console/leads/${foreignLead}/meeting`, { bookedAt: '2026-12-01T10:00' })).statusCode).toBe(404);
    expect((await c.post('/console/leads/not-a-uuid/meeting', { outcome: 'held' })).statusCode).toBe(404);
    const theirs = await t.services.meetings.createEndpoint(other.workspaceId, { tool: 'cal' });
    await c.get('/console/meetings');
    expect((await c.post(`/console/meetings/endpoints/${theirs.id}/rotate`)).statusCode).toBe(404);
    expect((await c.post(`/console/meetings/endpoints/${theirs.id}/remove`)).statusCode).toBe(404);
    expect((await t.services.meetings.listEndpoints(other.workspaceId)).map((e) => e.rotatedAt)).toEqual([null]);
    const lead = await t.db.selectFrom('leads').select('meeting_booked_at').where('id', '=', foreignLead).executeTakeFirstOrThrow();
    expect(lead.meeting_booked_at).toBeNull();
  });

  it('says why an outcome was not recorded: an unreadable time, a long note, an unknown outcome', async () => {
    const post = async (fields: Record<string, string>) => {
      await c.get(`/console/leads/${ada}`);
      const res = await c.post(`/console/leads/${ada}/meeting`, { from: 'lead', ...fields });
      expect(res.statusCode).toBe(303);
      return res.headers.location;
    };
    expect(await post({ bookedAt: 'tomorrow' })).toBe(`/console/leads/${ada}?notice=meeting_time_invalid#meeting-lead`);
    expect(await post({ bookedAt: '2026-12-01T10:00' })).toBe(`/console/leads/${ada}?notice=meeting_booked_elsewhere#meeting-lead`);
    expect(await post({ outcome: 'held', note: 'x'.repeat(2001) })).toBe(`/console/leads/${ada}?notice=meeting_note_too_long#meeting-lead`);
    expect(await post({ outcome: 'maybe' })).toBe(`/console/leads/${ada}?notice=meeting_outcome_invalid#meeting-lead`);
    expect(await post({ outcome: 'cancelled', from: 'replies' })).toBe('/console/replies?notice=meeting_cancelled');
    const row = await t.db.selectFrom('leads').select(['meeting_booked_at', 'meeting_outcome']).where('id', '=', ada).executeTakeFirstOrThrow();
    expect(row.meeting_booked_at).not.toBeNull();
    expect(row.meeting_outcome).toBe('cancelled');
    const page = await c.get(`/console/leads/${ada}?notice=meeting_note_too_long`);
    expect(page.body).toContain('Not recorded: the note is longer than 2,000 characters.');
    expect(page.body).toContain('role="alert"');
  });

  it('subscribes a Calendly endpoint at Calendly with a token, says why Calendly refused one, and unsubscribes', async () => {
    const e = await t.services.meetings.createEndpoint(acme.workspaceId, { tool: 'calendly', label: 'Sales' });
    let page = await c.get('/console/meetings');
    expect(page.body).toContain('Subscribe at Calendly');
    expect(page.body).toContain('none made here');

    const refused = await c.post('/console/meetings/subscribe', { endpointId: e.id, personalAccessToken: 'revoked-token', scope: 'user' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('personalAccessToken was refused by Calendly');
    expect(refused.body).not.toContain('revoked-token');
    expect(calendly.subscriptions.size).toBe(0);

    const owner = calendly.account({ role: 'owner' });
    await c.get('/console/meetings');
    const done = await c.post('/console/meetings/subscribe', { endpointId: e.id, personalAccessToken: owner.token, scope: 'organization' });
    expect(done.statusCode).toBe(303);
    expect([...calendly.subscriptions.values()].map((s) => [s.callback_url, s.scope])).toEqual([[e.url, 'organization']]);
    page = await c.get('/console/meetings');
    expect(page.body).toContain('Subscribed at Calendly (organization scope)');
    expect(page.body).toContain('Organization scope, ');
    expect(page.body).not.toContain(owner.token);

    await c.get('/console/meetings');
    expect((await c.post(`/console/meetings/endpoints/${e.id}/unsubscribe`)).statusCode).toBe(303);
    expect(calendly.subscriptions.size).toBe(0);
    expect((await c.get('/console/meetings')).body).toContain('The Calendly subscription is deleted.');
  });
});

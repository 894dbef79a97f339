import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/build-test-app.js';
import { startConsoleApp, type ConsoleClient, type TestWorkspace } from '../helpers/console.js';
import { insertActivity, insertLead, insertMessagingAccount, insertReply, insertSequence, insertXAccount } from '../helpers/factories.js';

// Issue 27 §4 (the lead page) and §5 (keyset pages and search on the leads and activity pages).

const XSS = '<img src=x onerror=alert(1)>';
const NOW = '2026-11-21T12:00:00.000Z';

let t: TestApp, acme: TestWorkspace, other: TestWorkspace, c: ConsoleClient;
let ada: string, grace: string, foreignLead: string, replyId: string;

/** The href of the pager link named `name` on a page, unescaped (null when the page has none). */
const linkNamed = (html: string, name: string) => {
  const m = new RegExp(`<a href="([^"]+)">${name}</a>`).exec(html);
  return m ? m[1].replace(/&amp;/g, '&') : null;
};
/** The ledger entries a page shows, by their (unique) detail text. */
const entriesOf = (html: string) => [...html.matchAll(/<td>(entry-\d+)<\/td>/g)].map((m) => m[1]);
/** The lead names the lead list shows, in order. */
const leadsOf = (html: string) => [...html.matchAll(/<a href="\/console\/leads\/[0-9a-f-]{36}">([^<]*)<\/a>/g)].map((m) => m[1]);

beforeAll(async () => {
  ({ t, acme, other, c } = await startConsoleApp({ now: NOW }));
  const account = await insertMessagingAccount(t.db, acme.workspaceId, { name: 'Dana (LinkedIn)' });
  const sequence = await insertSequence(t.db, acme.workspaceId, { name: 'Berlin founders' });
  await insertXAccount(t.db, acme.workspaceId, { userId: '42', handle: 'acme_sales' });
  ada = await insertLead(t.db, acme.workspaceId, {
    person: 'Ada Lovelace',
    company: 'Analytical Engines',
    title: 'CTO',
    email: 'ada@engines.example',
    linkedin_url: 'https://www.linkedin.com/in/ada',
    x_user_id: '7000000001',
    username: 'ada_x',
    account_id: account,
    account_user_id: '42',
    sequence_id: sequence,
    stage: 'messaged',
    current_step: 1,
    next_action_at: new Date('2026-11-23T09:00:00.000Z'),
    messaged_at: new Date('2026-11-10T09:00:00.000Z'),
    created_at: new Date('2026-11-01T09:00:00.000Z'),
  });
  grace = await insertLead(t.db, acme.workspaceId, {
    person: XSS,
    company: 'Navy',
    linkedin_url: 'javascript:alert(1)',
    stage: 'queued',
    created_at: new Date('2026-11-02T09:00:00.000Z'),
  });
  foreignLead = await insertLead(t.db, other.workspaceId, { person: 'Foreign Person', linkedin_url: 'https://li.example/f', stage: 'replied' });
  replyId = await insertReply(t.db, t.cipher, acme.workspaceId, {
    leadId: ada,
    theirMessage: 'Tell me more about the engine',
    repliedAt: '2026-11-20T10:00:00.000Z',
  });
  // 60 entries of Ada's (two pages of her timeline), 241 of nobody's: 301 in all. Every fifth shares its time with
  // the entry before it, so the keyset's tie-break on the id is walked too.
  for (let i = 0; i < 301; i++) {
    const at = new Date(Date.parse('2026-11-20T00:00:00.000Z') - Math.floor(i - (i % 5 === 4 ? 1 : 0)) * 60_000);
    await insertActivity(t.db, acme.workspaceId, { action: 'message', createdAt: at, leadId: i < 60 ? ada : null, detail: `entry-${i}` });
  }
  await insertActivity(t.db, other.workspaceId, { action: 'invite', createdAt: new Date(), leadId: foreignLead, detail: 'entry-foreign' });
}, 120_000);
afterAll(async () => t?.close());

describe('the lead page /console/leads/{id} (issue 27 §4)', () => {
  it('shows the person, lanes, stage, sequence and account, the replies and the newest page of the timeline', async () => {
    const res = await c.get(`/console/leads/${ada}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<h1>Ada Lovelace</h1>');
    expect(res.body).toContain('CTO, Analytical Engines');
    // lanes
    expect(res.body).toContain('ada@engines.example');
    expect(res.body).toContain('href="https://www.linkedin.com/in/ada"');
    expect(res.body).toContain('<a href="https://x.com/ada_x" rel="noopener noreferrer">@ada_x</a>');
    // stage, sequence, account
    expect(res.body).toMatch(/<span class="badge badge-info">messaged<\/span>/);
    expect(res.body).toContain('Berlin founders');
    expect(res.body).toContain('Dana (LinkedIn), @acme_sales');
    // replies and timeline
    expect(res.body).toContain('Tell me more about the engine');
    expect(res.body).toContain('60 ledger entries for this lead');
    expect(entriesOf(res.body)).toHaveLength(50);
    expect(entriesOf(res.body)[0]).toBe('entry-0');
    expect(res.body).not.toContain('entry-60');
    expect(res.body).toContain('Stop sequence');
    expect(res.body).toContain('data-confirm="Opt Ada Lovelace out permanently?');
    void replyId;
  });

  it('the timeline pages by keyset: Older shows the rest, Newer comes back', async () => {
    const first = await c.get(`/console/leads/${ada}`);
    const older = await c.get(linkNamed(first.body, 'Older')!);
    // entries 53/54 and 58/59 share their time: the id orders them, so compare the page as a set.
    expect(new Set(entriesOf(older.body))).toEqual(new Set(Array.from({ length: 10 }, (_, i) => `entry-${50 + i}`)));
    expect(linkNamed(older.body, 'Older')).toBeNull();
    const back = await c.get(linkNamed(older.body, 'Newer')!);
    expect(entriesOf(back.body)).toEqual(entriesOf(first.body));
  });

  it('escapes database strings and never links a non-web URL', async () => {
    const res = await c.get(`/console/leads/${grace}`);
    expect(res.statusCode).toBe(200);
    // Outside quoted attribute values (where `<` is plain text), no markup from the database.
    expect(res.body.replace(/"[^"]*"/g, '""')).not.toContain('<img');
    expect(res.body).toContain('<h1>&lt;img src=x onerror=alert(1)></h1>');
    expect(res.body).not.toContain('href="javascript:');
    expect(res.body).toContain('No reply from this lead yet.');
  });

  it("another workspace's lead, an unknown id and a malformed id are the HTML 404 page; their actions change nothing", async () => {
    for (const id of [foreignLead, '00000000-0000-4000-8000-000000000000', 'nope']) {
      const res = await c.get(`/console/leads/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.body).not.toContain('Foreign Person');
      await c.get(`/console/leads/${ada}`);
      expect((await c.post(`/console/leads/${id}/stop`)).statusCode).toBe(404);
      expect((await c.post(`/console/leads/${id}/opt-out`)).statusCode).toBe(404);
    }
    const row = await t.db.selectFrom('leads').select(['automation_stopped', 'opted_out_at']).where('id', '=', foreignLead).executeTakeFirstOrThrow();
    expect(row).toEqual({ automation_stopped: false, opted_out_at: null });
  });

  it('a cursor that is not an id is a 400 page naming the field', async () => {
    const res = await c.get(`/console/leads/${ada}?before=abc`);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('before');
  });

  it('Stop sequence stops the lead through the one lead stop and says so; a second stop says nothing changed', async () => {
    const lead = await insertLead(t.db, acme.workspaceId, { person: 'Stop Me', email: 'stop@x.example', stage: 'invited', next_action_at: new Date(NOW) });
    await c.get(`/console/leads/${lead}`);
    expect((await c.post(`/console/leads/${lead}/stop`, { _csrf: null })).statusCode).toBe(403);
    const res = await c.post(`/console/leads/${lead}/stop`);
    expect([res.statusCode, res.headers.location]).toEqual([303, `/console/leads/${lead}?notice=stopped`]);
    const page = await c.get(res.headers.location as string);
    expect(page.body).toContain('role="status"><p>Sequence stopped: nothing more is sent to this lead.');
    expect(page.body).toContain('Sequence stopped or done.');
    const row = await t.db.selectFrom('leads').select(['automation_stopped', 'next_action_at']).where('id', '=', lead).executeTakeFirstOrThrow();
    expect(row).toEqual({ automation_stopped: true, next_action_at: null });
    const ledger = await t.db.selectFrom('activity').select(['action', 'detail']).where('lead_id', '=', lead).execute();
    expect(ledger).toHaveLength(1);
    expect(ledger[0].action).toBe('manual_override');
    expect(JSON.parse(ledger[0].detail)).toMatchObject({ op: 'stop' });
    const again = await c.post(`/console/leads/${lead}/stop`);
    expect(again.headers.location).toBe(`/console/leads/${lead}?notice=already_stopped`);
    expect((await c.get(again.headers.location as string)).body).toContain('The sequence was already stopped for this lead; nothing changed.');
    expect(await t.db.selectFrom('activity').select('id').where('lead_id', '=', lead).execute()).toHaveLength(1);
  });

  it('Opt out asks for confirmation, opts the person out through the one opt-out (via console) and says so; a repeat changes nothing', async () => {
    const lead = await insertLead(t.db, acme.workspaceId, { person: 'Opt Me', email: 'optme@x.example', stage: 'messaged' });
    const twin = await insertLead(t.db, acme.workspaceId, { person: 'Opt Me (other sequence)', email: 'OptMe@x.example', stage: 'queued' });
    await c.get(`/console/leads/${lead}`);
    const res = await c.post(`/console/leads/${lead}/opt-out`);
    expect([res.statusCode, res.headers.location]).toEqual([303, `/console/leads/${lead}?notice=opted_out`]);
    const page = await c.get(res.headers.location as string);
    expect(page.body).toContain('Opted out: this person gets nothing more from any sequence of this workspace, permanently.');
    expect(page.body).not.toContain('aria-label="Opt out"');
    for (const id of [lead, twin]) {
      const row = await t.db.selectFrom('leads').select(['opted_out_at', 'automation_stopped']).where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.opted_out_at).not.toBeNull();
      expect(row.automation_stopped).toBe(true);
      const [entry] = await t.db.selectFrom('activity').select(['action', 'detail']).where('lead_id', '=', id).execute();
      expect(entry.action).toBe('manual_override');
      expect(JSON.parse(entry.detail)).toMatchObject({ op: 'opt_out', via: 'console', by: 'console', permanent: true });
    }
    const again = await c.post(`/console/leads/${lead}/opt-out`);
    expect(again.headers.location).toBe(`/console/leads/${lead}?notice=already_opted_out`);
    expect(await t.db.selectFrom('activity').select('id').where('lead_id', 'in', [lead, twin]).execute()).toHaveLength(2);
  });

  it('an unknown notice code shows nothing: a link cannot make the page say something', async () => {
    const res = await c.get(`/console/leads/${ada}?notice=your+key+expired`);
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('your key expired');
    expect(res.body).not.toContain('class="notice');
  });
});

describe('keyset pages and search on the leads and activity pages (issue 27 §5)', () => {
  it('the activity pages walk all 301 entries exactly once, newest first, and back again', async () => {
    const seen: string[] = [];
    let url: string | null = '/console/activity?action=message';
    const pages: string[] = [];
    while (url) {
      const res = await c.get(url);
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('301 entries match');
      pages.push(url);
      seen.push(...entriesOf(res.body));
      url = linkNamed(res.body, 'Older');
      expect(pages.length).toBeLessThan(10);
    }
    expect(pages).toHaveLength(4);
    expect(seen).toHaveLength(301);
    expect(new Set(seen).size).toBe(301);
    expect(new Set(seen)).toEqual(new Set(Array.from({ length: 301 }, (_, i) => `entry-${i}`)));
    // every link keeps the filters
    expect(pages.slice(1).every((p) => p.includes('action=message') && p.includes('before='))).toBe(true);

    // Newer, from the last page, walks back to the first page in the same order.
    const back: string[] = [];
    let last = await c.get(pages[pages.length - 1]);
    back.unshift(...entriesOf(last.body));
    for (let next = linkNamed(last.body, 'Newer'); next; next = linkNamed(last.body, 'Newer')) {
      last = await c.get(next);
      back.unshift(...entriesOf(last.body));
    }
    expect(back).toEqual(seen);
    expect(linkNamed(last.body, 'Newest')).toBeNull();
  });

  it('the newest-first order is (created_at, id): equal times never repeat or skip an entry across a page boundary', async () => {
    const seen: string[] = [];
    let url: string | null = '/console/activity?limit=7';
    while (url) {
      const res = await c.get(url);
      seen.push(...entriesOf(res.body));
      url = linkNamed(res.body, 'Older');
    }
    expect(seen).toHaveLength(301);
    expect(new Set(seen).size).toBe(301);
    expect(seen).not.toContain('entry-foreign');
  });

  it("activity searches by lead name, escaped, and links each entry's lead to its page", async () => {
    const res = await c.get('/console/activity?lead=LOVELACE&action=&outcome=');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('60 entries match');
    expect(res.body).toContain(`<a href="/console/leads/${ada}">Ada Lovelace</a>`);
    expect(res.body).toContain('value="LOVELACE"');
    expect((await c.get('/console/activity?lead=100%25')).body).toContain('0 entries match');
    expect((await c.get('/console/activity?lead=Foreign')).body).toContain('0 entries match');
    expect((await c.get('/console/activity?before=nope')).statusCode).toBe(400);
  });

  it('the leads list pages by keyset with its search, each row linking to its lead page', async () => {
    for (let i = 0; i < 25; i++) {
      await insertLead(t.db, acme.workspaceId, {
        person: `Bulk ${String(i).padStart(2, '0')}`,
        stage: 'queued',
        created_at: new Date(Date.parse('2026-10-01T00:00:00.000Z') + Math.floor(i / 3) * 1000),
      });
    }
    const seen: string[] = [];
    let url: string | null = '/console/leads?q=bulk&limit=10';
    let pages = 0;
    while (url) {
      const res = await c.get(url);
      expect(res.body).toContain('25 leads match');
      seen.push(...leadsOf(res.body));
      url = linkNamed(res.body, 'Older');
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(25);
    expect(new Set(seen)).toEqual(new Set(Array.from({ length: 25 }, (_, i) => `Bulk ${String(i).padStart(2, '0')}`)));
    const one = await c.get('/console/leads?q=lovelace');
    expect(one.body).toContain('1 lead matches');
    expect(one.body).toContain(`<a href="/console/leads/${ada}">Ada Lovelace</a>`);
    expect(linkNamed(one.body, 'Older')).toBeNull();
  });

  it('the API keeps its contract: GET /leads and GET /activity take no cursor and answer the same first page', async () => {
    const api = await t.app.inject({ method: 'GET', url: `/api/v1/activity?action=message&limit=5&before=${ada}`, headers: acme.auth });
    expect(api.statusCode).toBe(200);
    expect(Object.keys(api.json()).sort()).toEqual(['actions', 'count', 'returned']);
    expect(
      api
        .json()
        .actions.map((a: { detail: string }) => a.detail)
        .slice(0, 3),
    ).toEqual(['entry-0', 'entry-1', 'entry-2']);
    const leads = await t.app.inject({ method: 'GET', url: `/api/v1/leads?q=bulk&limit=3&before=${ada}`, headers: acme.auth });
    expect(leads.statusCode).toBe(200);
    expect(Object.keys(leads.json()).sort()).toEqual(['count', 'leads', 'returned']);
    expect(leads.json().count).toBe(25);
  });
});

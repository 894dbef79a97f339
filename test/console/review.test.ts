import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { insertCandidates, insertPlay, insertReviewPlay, type CandidateFixture, type PlayFixture, type SequenceFixture } from '../helpers/factories.js';
import { REVIEW_PAGE_SIZE } from '../../src/console/pages/review.js';

const XSS = '<img src=x onerror=alert(1)>';

let t: TestApp;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let other: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let team: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let c: ConsoleClient;

beforeAll(async () => {
  t = await buildTestApp();
  acme = await createWorkspaceWithKey(t, 'Acme');
  other = await createWorkspaceWithKey(t, 'Other');
  team = await createWorkspaceWithKey(t, 'Team client');
  await t.services.workspaces.addTeamLink({ ownerWorkspaceId: acme.workspaceId, clientWorkspaceId: team.workspaceId, role: 'admin' });
  c = await signedInConsole(t, acme.key);
});
afterAll(async () => t?.close());

async function setup(candidates: CandidateFixture[], f: { play?: PlayFixture; sequence?: SequenceFixture; workspaceId?: string } = {}) {
  const world = await insertReviewPlay(t.db, f.workspaceId ?? acme.workspaceId, f);
  const rows = await insertCandidates(t.db, f.workspaceId ?? acme.workspaceId, world.play.id, candidates);
  return { ...world, candidates: rows, url: `/review/plays/${world.play.id}` };
}

const candidateRow = (id: string) => t.db.selectFrom('candidates').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const leadsOf = (playId: string) => t.db.selectFrom('leads').select(['id', 'x_user_id']).where('play_id', '=', playId).execute();
const htmx = { 'hx-request': 'true' };

describe('review page /review/plays/{id}', () => {
  it('shows the Play name as heading, the four filter links with counts, and one row per candidate with @username, name and status', async () => {
    const s = await setup(
      [{ username: 'ada', name: 'Ada Lovelace' }, { username: 'bob' }, { review: { decision: 'good_fit' } }, { review: { decision: 'not_a_good_fit' } }],
      {
        play: { name: 'Founders in Berlin' },
      },
    );
    const res = await c.get(s.url);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<h1>Founders in Berlin</h1>');
    expect(res.body).toMatch(/>Unreviewed <span class="count">2<\/span><\/a>/);
    expect(res.body).toMatch(/>Good fit <span class="count">1<\/span><\/a>/);
    expect(res.body).toMatch(/>Not a good fit <span class="count">1<\/span><\/a>/);
    expect(res.body).toMatch(/>All <span class="count">4<\/span><\/a>/);
    expect(res.body).toContain('<td>@ada</td><td>Ada Lovelace</td><td>Proposed</td>');
    expect(res.body).toContain('Good fit <span class="visually-hidden">@ada</span>');
    expect(res.body).toContain('Not a good fit <span class="visually-hidden">@ada</span>');
    expect(res.body).toMatch(/<button type="submit" id="review-enroll"[^>]*>\s*Good fit: enroll selected/);
    // The default filter is Unreviewed: decided candidates are on their own filters.
    expect((res.body.match(/data-candidate=/g) ?? []).length).toBe(2);
    expect((await c.get(`${s.url}?filter=all`)).body.match(/data-candidate=/g)).toHaveLength(4);
  });

  it('escapes every database string: a candidate and a Play named <img src=x onerror=alert(1)> render as text', async () => {
    const s = await setup([{ username: XSS, name: XSS }], { play: { name: XSS } });
    const res = await c.get(s.url);
    expect(res.statusCode).toBe(200);
    // In text, `<` is escaped, so no element can start; inside a quoted attribute (escaped `"`) it is inert.
    const outsideAttributes = (html: string) => html.replace(/="[^"]*"/g, '=""');
    expect(outsideAttributes(res.body)).not.toContain('<img');
    expect(res.body).toContain('aria-label="Select @<img src=x onerror=alert(1)>"');
    expect(res.body).toContain('<h1>&lt;img src=x onerror=alert(1)></h1>');
    expect(res.body).toContain('<td>@&lt;img src=x onerror=alert(1)></td><td>&lt;img src=x onerror=alert(1)></td>');
    const plays = await c.get('/console/plays');
    expect(outsideAttributes(plays.body)).not.toContain('<img');
    expect(plays.body).toContain('<td>&lt;img src=x onerror=alert(1)></td>');
  });

  it('"Good fit" enrolls the candidate (same rules and result as POST /plays/{id}/enroll) and answers the row with the outcome', async () => {
    const s = await setup([{ username: 'ada' }, {}]);
    const [a] = s.candidates;
    await c.get(s.url);
    const res = await c.post(
      `${s.url}/candidates/${a.id}/good-fit`,
      { expectedRevision: '1', sequenceId: s.sequence.id, sequenceRevision: String(s.sequence.revision), xUserId: a.xUserId },
      htmx,
    );
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/^<tr id="candidate-/);
    expect(res.body).toContain('<td>Good fit</td>');
    expect(res.body).toContain('<span class="outcome" role="status">Enrolled</span>');
    expect(res.body).not.toContain('data-action="good-fit"');
    // The filter counts come along, swapped out of band.
    expect(res.body).toContain('<nav id="review-filters" aria-label="Filter candidates" class="filters" hx-swap-oob="true">');
    expect(res.body).toMatch(/>Unreviewed <span class="count">1<\/span>/);
    expect(res.body).toMatch(/>Good fit <span class="count">1<\/span>/);
    expect((await candidateRow(a.id)).review_decision).toBe('good_fit');
    expect(await leadsOf(s.play.id)).toEqual([expect.objectContaining({ x_user_id: a.xUserId })]);
  });

  it('"Not a good fit" records the review decision (by the signed-in key) and enrolls nothing', async () => {
    const s = await setup([{ username: 'bob' }]);
    const [b] = s.candidates;
    await c.get(s.url);
    const res = await c.post(`${s.url}/candidates/${b.id}/not-a-good-fit`, { expectedRevision: '1', xUserId: b.xUserId }, htmx);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<td>Not a good fit</td>');
    expect(res.body).toContain('Rejected');
    const row = await candidateRow(b.id);
    expect(row.review_decision).toBe('not_a_good_fit');
    expect(row.reviewed_by).toBe(`console:${acme.keyId}`);
    expect(await leadsOf(s.play.id)).toEqual([]);
  });

  it('a stale Play revision is refused by the service and shown on the row; nothing changes', async () => {
    const s = await setup([{}], { play: { revision: 3 } });
    const [a] = s.candidates;
    await c.get(s.url);
    const res = await c.post(
      `${s.url}/candidates/${a.id}/good-fit`,
      { expectedRevision: '2', sequenceId: s.sequence.id, sequenceRevision: '1', xUserId: a.xUserId },
      htmx,
    );
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('role="alert">Not saved: the Play is at revision 3, not 2</span>');
    expect((await candidateRow(a.id)).review_decision).toBeNull();
  });

  it('"Enroll selected" enrolls the checked rows and redraws the page with a tally', async () => {
    const s = await setup([{}, {}, {}]);
    const [a, b] = s.candidates;
    await c.get(s.url);
    const res = await c.post(`${s.url}/enroll`, {
      expectedRevision: '1',
      sequenceId: s.sequence.id,
      sequenceRevision: '1',
      filter: 'unreviewed',
      candidateIds: [a.id, b.id],
    });
    expect(res.statusCode).toBe(303);
    const page = await c.get(res.headers.location as string);
    expect(page.body).toContain('Enroll selected: Enrolled 2.');
    expect((await leadsOf(s.play.id)).map((l) => l.x_user_id).sort()).toEqual([a.xUserId, b.xUserId].sort());
    expect(page.body).toMatch(/>Unreviewed <span class="count">1<\/span>/);
  });

  it('"Select all" in the header enrolls every open candidate of the page without JS (selectAll=page), with a live count hook', async () => {
    const s = await setup([{}, {}, {}, { review: { decision: 'not_a_good_fit' } }]);
    const page = await c.get(s.url);
    expect(page.body).toContain('name="selectAll" value="page" data-select-all');
    expect(page.body).toContain('Select all 3 candidates on this page');
    expect(page.body).toMatch(/id="review-selection" role="status" aria-live="polite"/);
    expect(page.body).toContain('data-selected-count');
    const pageIds = [...page.body.matchAll(/name="pageIds" value="([^"]+)"/g)].map((m) => m[1]);
    expect(pageIds.sort()).toEqual(
      s.candidates
        .slice(0, 3)
        .map((x) => x.id)
        .sort(),
    );
    const res = await c.post(`${s.url}/enroll`, {
      expectedRevision: '1',
      sequenceId: s.sequence.id,
      sequenceRevision: '1',
      filter: 'unreviewed',
      selectAll: 'page',
      pageIds,
    });
    expect(res.statusCode).toBe(303);
    expect((await c.get(res.headers.location as string)).body).toContain('Enroll selected: Enrolled 3.');
    expect(await leadsOf(s.play.id)).toHaveLength(3);
  });

  it('"Good fit" says what it does: the sequence, its status and when sending starts; or why it cannot enroll', async () => {
    const active = await setup([{}], { play: {}, sequence: { name: 'Warm intro', status: 'active' } });
    const a = await c.get(active.url);
    expect(a.body).toContain('Good fit: enroll selected');
    expect(a.body).toContain('into sequence <span>‘Warm intro’</span> <span>(active — sending starts at the next pass)</span>');
    expect(a.body).toContain('Good fit enrolls the candidate into sequence ‘Warm intro’ (active — sending starts at the next pass');
    const paused = await setup([{}], { sequence: { name: 'Held', status: 'paused' } });
    expect((await c.get(paused.url)).body).toContain('(paused — nothing is sent until it is resumed)');
    const none = await setup([{}], { play: { sequenceId: null } });
    const n = await c.get(none.url);
    expect(n.body).toContain('Good fit cannot enroll: this Play has no sequence');
    expect(n.body).not.toContain('into sequence');
  });

  it('a POST without a valid CSRF token answers 403 and changes nothing', async () => {
    const s = await setup([{}]);
    const [a] = s.candidates;
    const res = await c.post(
      `${s.url}/candidates/${a.id}/good-fit`,
      { _csrf: 'nope', expectedRevision: '1', sequenceId: s.sequence.id, sequenceRevision: '1', xUserId: a.xUserId },
      htmx,
    );
    expect(res.statusCode).toBe(403);
    const missing = await c.post(`${s.url}/enroll`, {
      _csrf: null,
      expectedRevision: '1',
      sequenceId: s.sequence.id,
      sequenceRevision: '1',
      candidateIds: a.id,
    });
    expect(missing.statusCode).toBe(403);
    expect((await candidateRow(a.id)).review_decision).toBeNull();
    expect(await leadsOf(s.play.id)).toEqual([]);
  });

  it('a Play of another workspace, one without the review API, or a malformed id gives the 404 page', async () => {
    const foreign = await setup([{}], { workspaceId: other.workspaceId });
    const noReview = await insertPlay(t.db, acme.workspaceId, { reviewApiEnabled: false });
    for (const url of [foreign.url, `/review/plays/${noReview.id}`, '/review/plays/not-a-uuid', '/console/no-such-page']) {
      const res = await c.get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('<h1>Not found</h1>');
    }
    // Deciding on a foreign Play's candidate changes nothing either.
    const [fc] = foreign.candidates;
    await c.get('/console/plays');
    const res = await c.post(`${foreign.url}/candidates/${fc.id}/not-a-good-fit`, { expectedRevision: '1', xUserId: fc.xUserId }, htmx);
    expect(res.statusCode).toBe(404);
    expect((await candidateRow(fc.id)).review_decision).toBeNull();
  });

  it('autopilot and archived Plays show their candidates read-only', async () => {
    for (const play of [{ autopilot: true }, { status: 'archived' as const }]) {
      const s = await setup([{ username: 'carol' }], { play });
      const res = await c.get(s.url);
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('@carol');
      expect(res.body).toContain('read-only');
      expect(res.body).not.toContain('data-action=');
      expect(res.body).not.toContain('Enroll selected');
      expect(res.body).not.toContain('type="checkbox"');
    }
  });

  it('pages come by cursor', async () => {
    const s = await setup(Array.from({ length: REVIEW_PAGE_SIZE + 3 }, () => ({})));
    const first = await c.get(`${s.url}?filter=all`);
    expect(first.body.match(/data-candidate=/g)).toHaveLength(REVIEW_PAGE_SIZE);
    const next = /href="([^"]+after=[^"]+)">Next page/.exec(first.body)![1].replace(/&amp;/g, '&');
    const second = await c.get(next);
    expect(second.body.match(/data-candidate=/g)).toHaveLength(3);
    expect(second.body).not.toContain('Next page');
    expect(second.body).toContain('First page');
  });

  it('a Team owner switches to a client workspace (X-Workspace-Client rules) and sees its Plays; a foreign workspace is refused', async () => {
    const s = await setup([{ username: 'teamie' }], { workspaceId: team.workspaceId, play: { name: 'Client Play' } });
    const owner = await signedInConsole(t, acme.key);
    expect((await owner.get(s.url)).statusCode).toBe(404);
    const plays = await owner.get('/console/plays');
    expect(plays.body).toContain('id="workspace-switcher"');
    expect(plays.body).toContain('Team client (admin)');
    const refused = await owner.post('/console/workspace', { workspaceId: other.workspaceId });
    expect(refused.statusCode).toBe(403);
    const switched = await owner.post('/console/workspace', { workspaceId: team.workspaceId });
    expect(switched.statusCode).toBe(303);
    const page = await owner.get(s.url);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Client Play</h1>');
    // A client workspace's own key has no switcher.
    const client = await signedInConsole(t, team.key);
    expect((await client.get('/console/plays')).body).not.toContain('workspace-switcher');
  });

  it('/console/plays lists the Plays and links those with the review API to their review page', async () => {
    const s = await setup([], { play: { name: 'Listed Play' } });
    const hidden = await insertPlay(t.db, acme.workspaceId, { name: 'Unreviewable Play', reviewApiEnabled: false });
    const res = await c.get('/console/plays');
    expect(res.body).toContain(`<a href="/review/plays/${s.play.id}">Review <span>Listed Play</span></a>`);
    expect(res.body).toContain('Unreviewable Play');
    expect(res.body).not.toContain(`/review/plays/${hidden.id}`);
  });

  it('/console/accounts lists the sending accounts and X accounts with their channel, and the Connect X account button when X is configured', async () => {
    const res = await c.get('/console/accounts');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<h1>Accounts</h1>');
    expect(res.body).toContain('<h2 id="x-accounts">X accounts</h2>');
    expect(res.body).toMatch(/<td>@[^<]+<\/td>/);
    expect(res.body).toContain('Sandbox (simulated)');
    // No OUTREACH_X_CLIENT_ID here: the page says what to set instead of offering a button that cannot work.
    expect(res.body).not.toContain('Connect X account</button>');
    expect(res.body).toContain('OUTREACH_X_CLIENT_ID');
  });

  it('a decision posted without htmx (a plain form POST) is saved and 303s back to the page with the outcome', async () => {
    const s = await setup([{ username: 'plain' }]);
    const [a] = s.candidates;
    await c.get(s.url);
    const res = await c.post(`${s.url}/candidates/${a.id}/not-a-good-fit`, { expectedRevision: '1', xUserId: a.xUserId, filter: 'all' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${s.url}?filter=all&notice=rejected`);
    expect((await c.get(res.headers.location as string)).body).toContain('<p role="status" class="notice">Rejected</p>');
    expect((await candidateRow(a.id)).review_decision).toBe('not_a_good_fit');
  });
});

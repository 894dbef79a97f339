import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/build-test-app.js';
import { startConsoleApp, type ConsoleClient, type TestWorkspace } from '../helpers/console.js';
import { insertCandidates, insertReviewPlay, type CandidateFixture } from '../helpers/factories.js';
import { tableResolver } from '../webhooks/receiver.js';
import { AVATAR_MAX_BYTES } from '../../src/modules/publicdata/avatars.js';

// Issue 27 §6: review rows a person can judge. A row shows the candidate's picture (fetched by the server and served
// from the console's origin) or initials, bio, location, followers, the last post and the profile link; a row
// without a handle shows the name or "Unknown X user", never a bare user id.

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const XSS = '<img src=x onerror=alert(1)>';

let t: TestApp, acme: TestWorkspace, other: TestWorkspace, c: ConsoleClient;
let pictures: Server, base: string;
const served: string[] = [];

beforeAll(async () => {
  // The picture host: a local server the safe-URL check admits only in the local-development mode, as for webhooks.
  pictures = createServer((req, res) => {
    served.push(req.url ?? '');
    if (req.url === '/ok.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    else if (req.url === '/big.png') res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.concat([PNG, Buffer.alloc(AVATAR_MAX_BYTES + 1)]));
    else if (req.url === '/page.png') res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not a picture</html>');
    else if (req.url === '/lying.png') res.writeHead(200, { 'content-type': 'image/png' }).end('<svg onload="alert(1)"></svg>');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => pictures.listen(0, '127.0.0.1', resolve));
  base = `http://pictures.test:${(pictures.address() as AddressInfo).port}`;
  ({ t, acme, other, c } = await startConsoleApp({
    env: { OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1' },
    resolver: tableResolver({ 'pictures.test': ['127.0.0.1'], 'private.test': ['10.0.0.7'] }),
  }));
});
afterAll(async () => {
  await t?.close();
  pictures?.closeAllConnections();
  await new Promise<void>((resolve) => pictures?.close(() => resolve()));
});

interface ProfileFixture {
  bio?: string | null;
  location?: string | null;
  followersCount?: number | null;
  picture?: string | null;
  lastPost?: { text: string; at: string } | null;
}

/** Profiles are what the public-data provider said; the world file or the provider writes them (no API route). */
async function setup(workspaceId: string, people: (CandidateFixture & { profile?: ProfileFixture })[]) {
  const world = await insertReviewPlay(t.db, workspaceId, { play: { name: 'Founders in Berlin' } });
  const rows = await insertCandidates(t.db, workspaceId, world.play.id, people);
  const profiles = people.flatMap((p, i) =>
    p.profile
      ? [
          {
            x_user_id: rows[i].xUserId,
            bio: p.profile.bio ?? null,
            location: p.profile.location ?? null,
            followers_count: p.profile.followersCount ?? null,
            profile_image_url: p.profile.picture ?? null,
            last_post_text: p.profile.lastPost?.text ?? null,
            last_post_at: p.profile.lastPost?.at ?? null,
          },
        ]
      : [],
  );
  if (profiles.length > 0) await t.db.insertInto('x_profiles').values(profiles).execute();
  return { url: `/review/plays/${world.play.id}`, playId: world.play.id, candidates: rows };
}

/** The table row of one candidate, as HTML. */
const rowOf = (html: string, id: string) => {
  const start = html.indexOf(`<tr id="candidate-${id}"`);
  expect(start, `row of ${id}`).toBeGreaterThan(-1);
  return html.slice(start, html.indexOf('</tr>', start));
};

describe('review rows show what a reviewer judges a good fit by', () => {
  it('a candidate with a profile: picture from the console origin, bio, location, followers, last post and the profile link', async () => {
    const s = await setup(acme.workspaceId, [
      {
        username: 'ada',
        name: 'Ada Lovelace',
        profile: {
          bio: 'Founder of Analytical Engines. Notes on computing.',
          location: 'London',
          followersCount: 12_345,
          picture: `${base}/ok.png`,
          lastPost: { text: 'Our engine weaves algebraic patterns.', at: '2026-11-20T09:30:00Z' },
        },
      },
    ]);
    const res = await c.get(s.url);
    expect(res.statusCode).toBe(200);
    const row = rowOf(res.body, s.candidates[0].id);
    expect(row).toContain(`<img class="avatar" src="/console/avatars/${s.candidates[0].id}" alt=""`);
    expect(row).toContain('Founder of Analytical Engines. Notes on computing.');
    expect(row).toContain('London');
    expect(row).toContain('12,345 followers');
    expect(row).toContain('Our engine weaves algebraic patterns.');
    expect(row).toMatch(/Last post <time datetime="2026-11-20T09:30:00.000Z"/);
    expect(row).toContain('href="https://x.com/ada"');
    expect(row).toContain('Profile on X');
    // The page itself never points the browser at the picture's host.
    expect(res.body).not.toContain('pictures.test');
    expect(res.headers['content-security-policy']).toMatch(/img-src 'self' data:/);
  });

  it('a candidate without a picture shows initials; profile text is escaped', async () => {
    const s = await setup(acme.workspaceId, [{ username: 'grace', name: 'Grace Brewster Hopper', profile: { bio: XSS, location: XSS, followersCount: 1 } }]);
    const row = rowOf((await c.get(s.url)).body, s.candidates[0].id);
    expect(row).toContain('<span class="avatar avatar-initials" aria-hidden="true">GH</span>');
    expect(row).not.toContain('<img');
    expect(row).toContain('&lt;img src=x onerror=alert(1)>');
    expect(row).toContain('1 follower<');
  });

  it('a candidate without a handle shows the name, or "Unknown X user" with the id as a muted detail, never "user <id>"', async () => {
    const s = await setup(acme.workspaceId, [
      { username: null, name: null, xUserId: '1575000718781392388' },
      { username: null, name: 'Lin Named', xUserId: '1575000718781392389' },
    ]);
    const html = (await c.get(s.url)).body;
    const unknown = rowOf(html, s.candidates[0].id);
    expect(unknown).toContain('<td>Unknown X user</td>');
    expect(unknown).toMatch(/<span class="muted">\s*no handle\s*<span class="nowrap">\(id 1575000718781392388\)<\/span>/);
    expect(unknown).toContain('aria-label="Select Unknown X user"');
    expect(unknown).toContain('<span class="avatar avatar-initials" aria-hidden="true">?</span>');
    expect(unknown).not.toContain('x.com/');
    const named = rowOf(html, s.candidates[1].id);
    expect(named).toContain('<td>Lin Named</td>');
    expect(named).toContain('aria-label="Select Lin Named"');
    expect(named).toContain('>LN</span>');
    expect(html).not.toMatch(/user 157500071878139238/);
  });

  it('a row redrawn after a decision keeps its profile', async () => {
    const s = await setup(acme.workspaceId, [{ username: 'kay', name: 'Kay Reviewed', profile: { bio: 'Still here after the decision', followersCount: 5 } }]);
    const page = await c.get(s.url);
    expect(page.statusCode).toBe(200);
    const res = await c.post(
      `${s.url}/candidates/${s.candidates[0].id}/not-a-good-fit`,
      { expectedRevision: '1', xUserId: s.candidates[0].xUserId },
      { 'hx-request': 'true' },
    );
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Still here after the decision');
    expect(res.body).toContain('5 followers');
  });
});

describe('/console/avatars/{candidateId}: the picture fetched by the server, or initials', () => {
  it('serves the picture fetched from the profile URL, as the image type its bytes and header agree on, and caches it', async () => {
    const s = await setup(acme.workspaceId, [{ username: 'pic', name: 'Pia Picture', profile: { picture: `${base}/ok.png` } }]);
    const before = served.filter((u) => u === '/ok.png').length;
    const res = await c.get(`/console/avatars/${s.candidates[0].id}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toContain('private');
    expect(res.rawPayload.equals(PNG)).toBe(true);
    const again = await c.get(`/console/avatars/${s.candidates[0].id}`);
    expect(again.rawPayload.equals(PNG)).toBe(true);
    expect(served.filter((u) => u === '/ok.png').length - before).toBe(1);
  });

  it.each([
    ['a picture over 256 KB', '/big.png'],
    ['an answer that is not an image', '/page.png'],
    ['an image Content-Type whose bytes are not an image', '/lying.png'],
    ['a missing picture (404)', '/gone.png'],
  ])('refuses %s and answers the initials instead', async (_label, path) => {
    const s = await setup(acme.workspaceId, [{ username: 'nope', name: 'Noor Refused', profile: { picture: `${base}${path}` } }]);
    const res = await c.get(`/console/avatars/${s.candidates[0].id}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(res.body).toContain('>NR</text>');
    expect(res.body).not.toContain('onload');
  });

  it('never fetches a private address: the initials, and no request leaves', async () => {
    const s = await setup(acme.workspaceId, [{ username: 'priv', name: 'Pat Private', profile: { picture: 'http://private.test/a.png' } }]);
    const res = await c.get(`/console/avatars/${s.candidates[0].id}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('>PP</text>');
  });

  it('a candidate of another workspace, an unknown id or a malformed id is the 404 page', async () => {
    const foreign = await setup(other.workspaceId, [{ username: 'theirs', profile: { picture: `${base}/ok.png` } }]);
    const before = served.length;
    for (const id of [foreign.candidates[0].id, '00000000-0000-4000-8000-00000000beef', 'not-a-uuid']) {
      const res = await c.get(`/console/avatars/${id}`);
      expect(res.statusCode, id).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
    }
    expect(served.length).toBe(before);
  });

  it('needs a session', async () => {
    const s = await setup(acme.workspaceId, [{ username: 'anon', profile: { picture: `${base}/ok.png` } }]);
    const res = await t.app.inject({ method: 'GET', url: `/console/avatars/${s.candidates[0].id}` });
    expect(res.statusCode).not.toBe(200);
    expect(res.headers['content-type'] ?? '').not.toMatch(/^image\//);
  });
});

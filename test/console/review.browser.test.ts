import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32, deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { launchConsoleBrowser, axeSeriousOrCritical } from '../helpers/browser.js';
import { insertCandidates, insertReviewPlay } from '../helpers/factories.js';
import { dbEngine } from '../helpers/test-database.js';
import { tableResolver } from '../webhooks/receiver.js';

const XSS = '<img src=x onerror=alert(1)>';
// Screenshots for the README come from one run (PGlite), and only when asked for (UPDATE_SCREENSHOTS=1), so a test
// run never rewrites the committed images; the PostgreSQL run checks the same flows.
const saveShots = dbEngine() === 'pglite' && process.env.UPDATE_SCREENSHOTS === '1';

let t: TestApp;
let b: Awaited<ReturnType<typeof launchConsoleBrowser>>;
let page: Page;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let reviewPath: string;
let playId: string;
const dialogs: string[] = [];
let pictures: Server;

/** A 96×96 PNG: a soft two-colour disc, so the screenshot shows a picture where a profile has one. */
function discPng(rgb: [number, number, number]): Buffer {
  const size = 96;
  const rows: Buffer[] = [];
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 3);
    for (let x = 0; x < size; x++) {
      const shade = 0.75 + (0.25 * (x + y)) / (2 * size);
      for (let c = 0; c < 3; c++) row[1 + x * 3 + c] = Math.round(rgb[c] * shade);
    }
    rows.push(row);
  }
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type), data])) >>> 0);
    return Buffer.concat([length, Buffer.from(type), data, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const leadsOfPlay = () => t.db.selectFrom('leads').select('x_user_id').where('play_id', '=', playId).execute();
const decisionOf = (username: string) =>
  t.db.selectFrom('candidates').select('review_decision').where('play_id', '=', playId).where('username', '=', username).executeTakeFirstOrThrow();

beforeAll(async () => {
  // Profile pictures come from a local picture host, admitted as webhook receivers are in local development.
  const png = { '/ada.png': discPng([120, 160, 220]), '/linus.png': discPng([230, 170, 90]) } as Record<string, Buffer>;
  pictures = createServer((req, res) => {
    const body = png[req.url ?? ''];
    if (body) res.writeHead(200, { 'content-type': 'image/png' }).end(body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => pictures.listen(0, '127.0.0.1', resolve));
  const host = `http://pictures.test:${(pictures.address() as AddressInfo).port}`;
  t = await buildTestApp({ realClock: true, env: { OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1' }, resolver: tableResolver({ 'pictures.test': ['127.0.0.1'] }) });
  acme = await createWorkspaceWithKey(t, 'Northwind');
  const world = await insertReviewPlay(t.db, acme.workspaceId, { play: { name: 'Berlin founders' } });
  playId = world.play.id;
  // Fixed ids in row order (the table is ordered by candidate id), so j/k land on known rows.
  const ids = [1, 2, 3, 4, 5].map((n) => `10000000-0000-4000-8000-00000000000${n}`);
  await insertCandidates(t.db, acme.workspaceId, playId, [
    { id: ids[0], username: 'ada', name: 'Ada Lovelace' },
    { id: ids[1], username: 'grace', name: 'Grace Hopper' },
    { id: ids[2], username: 'xss', name: XSS },
    { id: ids[3], username: 'linus', name: 'Linus T' },
    { id: ids[4], username: 'margaret', name: 'Margaret H' },
  ]);
  // What the public-data provider said of them (world file or X API): bio, location, followers, pinned post, picture.
  const rows = await t.db.selectFrom('candidates').select(['username', 'x_user_id']).where('play_id', '=', playId).execute();
  const idOf = (username: string) => rows.find((r) => r.username === username)!.x_user_id;
  const day = (n: number) => new Date(Date.now() - n * 86_400_000);
  await t.db
    .insertInto('x_profiles')
    .values([
      {
        x_user_id: idOf('ada'),
        bio: 'Founder at Analytical Engines. Writing about the first programs.',
        location: 'London',
        followers_count: 12_480,
        profile_image_url: `${host}/ada.png`,
        last_post_text: 'Our engine weaves algebraic patterns just as the Jacquard loom weaves flowers and leaves.',
        last_post_at: day(2),
      },
      {
        x_user_id: idOf('grace'),
        bio: 'Rear admiral of compilers. Ask forgiveness, not permission.',
        location: 'Arlington, VA',
        followers_count: 8_210,
        profile_image_url: `${host}/missing.png`,
        last_post_text: 'Found the first actual bug today. Taped it into the log book.',
        last_post_at: day(5),
      },
      {
        x_user_id: idOf('linus'),
        bio: 'Kernel maintainer. Talk is cheap.',
        location: 'Portland, OR',
        followers_count: 310,
        profile_image_url: `${host}/linus.png`,
      },
      { x_user_id: idOf('margaret'), bio: 'Software engineering lead, Apollo guidance.', location: 'Boston, MA', followers_count: 1_905 },
    ])
    .execute();
  reviewPath = `/review/plays/${playId}`;
  b = await launchConsoleBrowser(t);
  page = b.page;
  page.on('console', (m) => process.env.DEBUG_BROWSER && console.log('browser:', m.type(), m.text()));
  page.on('pageerror', (e) => process.env.DEBUG_BROWSER && console.log('pageerror:', e.message));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
}, 120_000);

afterAll(async () => {
  await b?.close();
  await t?.close();
  pictures?.closeAllConnections();
  await new Promise<void>((resolve) => pictures?.close(() => resolve()));
});

describe('console in a real browser', { timeout: 120_000 }, () => {
  it('the review URL without a session shows the sign-in form; a wrong key gets a clear message; the right key returns to the review page', async () => {
    await page.goto(b.url(reviewPath));
    const keyBox = page.getByRole('textbox', { name: 'Workspace key' });
    await expect(keyBox.isVisible()).resolves.toBe(true);
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    if (saveShots) await page.screenshot({ path: 'docs/images/sign-in.png' });

    await keyBox.fill('ows_this-is-not-a-key-of-anything-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('That workspace key was not accepted');

    await page.getByRole('textbox', { name: 'Workspace key' }).fill(acme.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Berlin founders' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(reviewPath);
    // The browser keeps only the opaque session cookie, never the key.
    const cookies = await page.context().cookies();
    expect(cookies.some((c) => c.value.includes(acme.key))).toBe(false);
    expect(await page.evaluate(() => document.cookie)).toBe('');
  });

  it('the review page escapes names, passes axe-core, and "Good fit" enrolls a row in place without a reload', async () => {
    // The only images are the avatars, from the console's own origin; none is broken (a failed fetch draws initials).
    expect(await page.locator('img:not(.avatar)').count()).toBe(0);
    const avatars = await page.locator('img.avatar').evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).getAttribute('src')));
    expect(avatars.length).toBe(3);
    for (const src of avatars) expect(src).toMatch(/^\/console\/avatars\/[0-9a-f-]{36}$/);
    await page.waitForFunction(() =>
      [...document.querySelectorAll('img.avatar')].every((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0),
    );
    const adaProfile = page.getByRole('row', { name: /@ada/ });
    await expect(adaProfile.getByText('London').isVisible()).resolves.toBe(true);
    await expect(adaProfile.getByText('12,480 followers').isVisible()).resolves.toBe(true);
    expect(await adaProfile.getByRole('link', { name: 'Profile on X of @ada' }).getAttribute('href')).toBe('https://x.com/ada');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(page.viewportSize()!.width);
    await expect(page.getByRole('cell', { name: XSS, exact: true }).isVisible()).resolves.toBe(true);
    expect(dialogs).toEqual([]);
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    await expect(page.getByRole('link', { name: 'Unreviewed 5' }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('link', { name: 'All 5' }).isVisible()).resolves.toBe(true);

    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    await page.getByRole('button', { name: 'Good fit @ada', exact: true }).click();
    const adaRow = page.getByRole('row', { name: /@ada/ });
    await adaRow.getByRole('status').waitFor();
    expect(await adaRow.getByRole('status').textContent()).toBe('Enrolled');
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);
    await page.getByRole('link', { name: 'Unreviewed 4' }).waitFor();
    await expect(page.getByRole('link', { name: 'Good fit 1' }).isVisible()).resolves.toBe(true);
    expect((await leadsOfPlay()).length).toBe(1);
  });

  it('keyboard: j/k move between rows, n marks not a good fit, g good fit', async () => {
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('j'); // ada (decided)
    await page.keyboard.press('j'); // grace
    await page.keyboard.press('j'); // xss
    await page.keyboard.press('k'); // back to grace
    await page.keyboard.press('n');
    const graceRow = page.getByRole('row', { name: /@grace/ });
    await graceRow.getByRole('status').waitFor();
    expect(await graceRow.getByRole('status').textContent()).toBe('Rejected');
    expect((await decisionOf('grace')).review_decision).toBe('not_a_good_fit');

    await page.keyboard.press('j'); // xss
    await page.keyboard.press('g');
    const xssRow = page.getByRole('row', { name: /@xss/ });
    await xssRow.getByRole('status').waitFor();
    expect(await xssRow.getByRole('status').textContent()).toBe('Enrolled');
    expect((await decisionOf('xss')).review_decision).toBe('good_fit');
    // Mid-review: decided rows with their outcome, the rest with their buttons and checkboxes.
    if (saveShots) await page.screenshot({ path: 'docs/images/review.png', fullPage: true });
  });

  it('checking rows and "Enroll selected" enrolls them', async () => {
    await page.getByRole('checkbox', { name: 'Select @linus' }).check();
    await page.getByRole('checkbox', { name: 'Select @margaret' }).check();
    await page.getByRole('button', { name: 'Enroll selected' }).click();
    await page.getByText('Enroll selected: Enrolled 2.').waitFor();
    expect((await leadsOfPlay()).length).toBe(4);
    await expect(page.getByRole('link', { name: 'Unreviewed 0' }).isVisible()).resolves.toBe(true);
    await page.getByRole('link', { name: /^All 5/ }).click();
    await page.getByRole('row', { name: /@margaret/ }).waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
  });

  it('"Sign out" ends the session', async () => {
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('textbox', { name: 'Workspace key' }).waitFor();
    await page.goto(b.url(reviewPath));
    await expect(page.getByRole('textbox', { name: 'Workspace key' }).isVisible()).resolves.toBe(true);
  });

  it('rule: "Sign out everywhere" ends the other browsers\' sessions too, a login-link session included', async () => {
    await page.getByRole('textbox', { name: 'Workspace key' }).fill(acme.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Berlin founders' }).waitFor();
    // A second browser, signed in with a one-time login link.
    const other = await b.browser.newContext();
    try {
      const otherPage = await other.newPage();
      const link = await t.services.consoleSessions.createLoginLink(acme.workspaceId);
      await otherPage.goto(b.url(link.path));
      await otherPage.getByRole('button', { name: 'Sign in' }).click();
      await otherPage.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();

      await page.getByRole('button', { name: 'Sign out everywhere' }).click();
      await page.getByRole('textbox', { name: 'Workspace key' }).waitFor();
      await otherPage.goto(b.url('/console'));
      await expect(otherPage.getByRole('textbox', { name: 'Workspace key' }).isVisible()).resolves.toBe(true);
    } finally {
      await other.close();
    }
  });
});

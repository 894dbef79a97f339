// Issue 27 §7: every console page fits a phone. Chromium at 390x844 visits every GET route under /console (read from
// the app's own route table, so pages added later are checked too) and /review/plays/{id}, over a realistic
// workspace, and asserts document.documentElement.scrollWidth <= 390 and no serious/critical axe-core violation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import type { BrowserContext, Dialog, Page } from 'playwright-core';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { axeSeriousOrCritical, launchConsoleBrowser, signInWithKey, closeBrowserAndApp } from '../helpers/browser.js';
import { insertActivity, insertCandidates, insertLead, insertMessagingAccount, insertReply, insertReviewPlay, insertSequence } from '../helpers/factories.js';
import { dbEngine } from '../helpers/test-database.js';
import { tableResolver } from '../webhooks/receiver.js';

// The layout does not depend on the database, so this runs on PGlite only; the screenshots for docs/ are written
// only with UPDATE_SCREENSHOTS=1 (a plain run never rewrites the committed images). SHOTS_DIR writes the same shots
// elsewhere (before/after comparisons), never into docs/.
const onPglite = dbEngine() === 'pglite';
const shotsDir = process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/images' : process.env.SHOTS_DIR;
const shotName = (name: string) => (process.env.UPDATE_SCREENSHOTS === '1' ? name : name.replace(/^dashboard/, 'desktop-dashboard'));
const PHONE = { width: 390, height: 844 };
const LONG = 'https://hooks.example.com/outreach/receivers/a-very-long-path-that-would-widen-a-phone-page-without-wrapping/0123456789abcdef';

let t: TestApp;
let b: Awaited<ReturnType<typeof launchConsoleBrowser>>;
let phone: BrowserContext;
let phonePage: Page;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
const ids: Record<string, string> = {};

/** The GET paths of the app's route table (find-my-way's tree, printed without prefix compression). */
export function getPaths(tree: string): string[] {
  const paths: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([ │]*)(?:[├└]── )?([^ │├└].*?)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = Math.floor(m[1].length / 4);
    stack.length = depth;
    stack[depth] = m[2];
    if (m[3] && /\bGET\b/.test(m[3])) paths.push(stack.join(''));
  }
  return paths;
}

/** The seeded row a path parameter stands for, by the collection before it (`/sequences/:id` → a sequence). */
const PARAM_OWNERS: Record<string, string> = { sequences: 'sequence', plays: 'play', leads: 'lead', webhooks: 'webhook', replies: 'reply' };

/** Every GET route under /console and /review, with its parameters replaced by the seeded ids. */
function consolePaths(): string[] {
  const tree = t.app.printRoutes({ commonPrefix: false });
  return [...new Set(getPaths(tree))]
    .filter((p) => (p.startsWith('/console') || p.startsWith('/review')) && !p.startsWith('/console/assets') && !p.includes('*'))
    .map((p) => p.replace(/\/([\w-]+)\/:(\w+)/g, (_, collection: string, name: string) => `/${collection}/${ids[PARAM_OWNERS[collection] ?? name] ?? name}`))
    .sort();
}

/** The deepest elements that reach past the viewport's right edge: what widens the page (for the failure message). */
function widest(page: Page): Promise<string[]> {
  return page.evaluate((limit) => {
    const name = (el: Element) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.classList.length ? `.${[...el.classList].join('.')}` : ''}`;
    const clipped = (el: Element) => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) if (getComputedStyle(a).overflowX !== 'visible') return true;
      return false;
    };
    const past = [...document.body.querySelectorAll('*')].filter((el) => el.getBoundingClientRect().right > limit + 0.5 && !clipped(el));
    const deepest = past.filter((el) => !past.some((other) => other !== el && el.contains(other)));
    return deepest.slice(0, 4).map((el) => `${name(el.parentElement!)} > ${name(el)} right=${Math.round(el.getBoundingClientRect().right)}`);
  }, PHONE.width);
}

async function signIn(page: Page) {
  await signInWithKey(page, b.url('/console'), acme.key);
  await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
}

beforeAll(async () => {
  if (!onPglite) return;
  t = await buildTestApp({ realClock: true, resolver: tableResolver({ 'hooks.example.com': ['93.184.216.34'] }) });
  acme = await createWorkspaceWithKey(t, 'Northwind Traders');
  const account = await insertMessagingAccount(t.db, acme.workspaceId, { name: 'Dana Scully (LinkedIn, Berlin office)' });
  ids.sequence = await insertSequence(t.db, acme.workspaceId, {
    name: 'Berlin founders, seed to series A, with a deliberately long sequence name',
    status: 'draft',
    approvedRevision: null,
    steps: [
      { index: 0, kind: 'connect', delayDays: 0, subject: null, message: 'Hi {{firstName}}', actions: [], variants: null, tool: null },
      {
        index: 1,
        kind: 'message',
        delayDays: 2,
        subject: null,
        message: `Thanks for connecting! ${'A long sentence. '.repeat(20)}`,
        actions: [],
        variants: null,
        tool: null,
      },
      { index: 2, kind: 'email', delayDays: 4, subject: 'Quick question', message: 'Following up by email.', actions: [], variants: null, tool: null },
    ],
  });
  const now = Date.now();
  const day = 86_400_000;
  for (let i = 0; i < 40; i++) {
    const at = new Date(now - (i % 28) * day - 3_600_000);
    const id = await insertLead(t.db, acme.workspaceId, {
      person: `Person ${i} with a rather long name`,
      company: `Initech Holdings International GmbH & Co. KG ${i}`,
      title: 'Chief Executive Officer and Co-Founder',
      linkedin_url: `https://www.linkedin.com/in/person-${i}-with-a-long-public-profile-slug`,
      email: `person.${i}.with.a.long.address@initech-holdings.example`,
      account_id: account,
      sequence_id: ids.sequence,
      stage: i < 6 ? 'replied' : 'invited',
      invited_at: at,
      ...(i < 25 && { connected_at: at }),
      ...(i < 15 && { messaged_at: at }),
      ...(i < 6 && { replied_at: at }),
      ...(i < 2 && { meeting_booked_at: at }),
    });
    if (i === 0) ids.lead = id;
    await insertActivity(t.db, acme.workspaceId, { action: i % 3 === 0 ? 'email_sent' : 'message', createdAt: at, accountId: account, leadId: id });
    await insertActivity(t.db, acme.workspaceId, { action: 'invite', createdAt: at, accountId: account, leadId: id, detail: LONG });
    if (i < 6) {
      await insertActivity(t.db, acme.workspaceId, { action: 'reply_detected', createdAt: at, leadId: id });
      await insertReply(t.db, t.cipher, acme.workspaceId, { leadId: id, theirMessage: `Interesting! ${'Tell me more. '.repeat(15)}`, repliedAt: at });
    }
    if (i < 2) await insertActivity(t.db, acme.workspaceId, { action: 'meeting_booked', createdAt: at, leadId: id });
  }
  await insertActivity(t.db, acme.workspaceId, { action: 'x_dm', outcome: 'failed', createdAt: new Date(now - day), detail: LONG });
  const world = await insertReviewPlay(t.db, acme.workspaceId, { play: { name: 'Munich CTOs who post about Rust' } });
  ids.play = world.play.id;
  await insertCandidates(
    t.db,
    acme.workspaceId,
    ids.play,
    Array.from({ length: 8 }, (_, i) => ({ username: `candidate_with_a_long_handle_${i}`, name: `Candidate ${i} Longname-Doublebarrel` })),
  );
  await t.services.webhooks.createWebhook(acme.workspaceId, { url: LONG, events: ['reply.received', 'lead.invited', 'lead.messaged'] });
  b = await launchConsoleBrowser(t);
  phone = await b.browser.newContext({ viewport: PHONE });
  phonePage = await phone.newPage();
  phonePage.setDefaultTimeout(15_000);
  await signIn(b.page);
  await signIn(phonePage);
  if (shotsDir) mkdirSync(shotsDir, { recursive: true });
}, 120_000);

afterAll(() => closeBrowserAndApp(b, t));

describe.skipIf(!onPglite)('every console page at 390x844 (issue 27 §7)', { timeout: 480_000 }, () => {
  it('screenshots: the dashboard on a desktop and a phone, and the webhooks page', async () => {
    if (!shotsDir) return;
    await b.page.goto(b.url('/console'));
    await b.page.locator('#funnel-chart canvas').waitFor();
    await b.page.screenshot({ path: `${shotsDir}/${shotName('dashboard')}.png`, fullPage: true });
    await phonePage.goto(b.url('/console'));
    await phonePage.locator('#funnel-chart canvas').waitFor();
    await phonePage.screenshot({ path: `${shotsDir}/mobile-dashboard.png`, fullPage: true });
    if (process.env.UPDATE_SCREENSHOTS !== '1') {
      await b.page.goto(b.url('/console/webhooks'));
      await b.page.screenshot({ path: `${shotsDir}/webhooks.png`, fullPage: true });
      await phonePage.goto(b.url('/console/webhooks'));
      await phonePage.screenshot({ path: `${shotsDir}/mobile-webhooks.png`, fullPage: true });
    }
  });

  it('the shared look: Delete asks first, a refusal is red and an outcome green, the current section is marked', async () => {
    const dialogs: string[] = [];
    const onDialog = (d: Dialog) => {
      dialogs.push(d.message());
      void d.dismiss();
    };
    phonePage.on('dialog', onDialog);
    try {
      await phonePage.goto(b.url('/console/webhooks'));
      await phonePage.getByRole('button', { name: `Delete ${LONG}` }).click();
      expect(dialogs).toEqual([expect.stringContaining('Delete the webhook to')]);
      const hooks = await t.db.selectFrom('webhooks').select('id').where('workspace_id', '=', acme.workspaceId).where('disabled_at', 'is', null).execute();
      expect(hooks).toHaveLength(1); // dismissed: nothing deleted
    } finally {
      phonePage.off('dialog', onDialog);
    }
    const current = phonePage.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Webhooks' });
    expect(await current.getAttribute('aria-current')).toBe('page');
    expect(await current.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(11, 92, 173)');
    await phonePage.getByRole('textbox', { name: 'Receiver URL' }).fill('http://hooks.example.com/plain');
    await phonePage.getByRole('checkbox', { name: 'ping' }).check();
    await phonePage.getByRole('button', { name: 'Create webhook' }).click();
    const refused = phonePage.getByRole('alert');
    await refused.waitFor();
    expect(await refused.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(253, 238, 237)');
    await phonePage.getByRole('button', { name: `Send test ping to ${LONG}` }).click();
    const done = phonePage.getByRole('status').filter({ hasText: 'Test ping scheduled' });
    await done.waitFor();
    expect(await done.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(235, 246, 237)');
  });

  it('the route table lists the console pages (so a new page is checked without editing this test)', () => {
    if (process.env.DEBUG_ROUTES) console.log(t.app.printRoutes({ commonPrefix: false }), consolePaths());
    const paths = consolePaths();
    for (const p of [
      '/console',
      '/console/plays',
      '/console/replies',
      '/console/sequences',
      '/console/leads',
      '/console/activity',
      '/console/webhooks',
      '/console/accounts',
    ]) {
      expect(paths).toContain(p);
    }
    expect(paths).toContain(`/console/sequences/${ids.sequence}`);
    expect(paths).toContain(`/review/plays/${ids.play}`);
  });

  it('signed out too: the sign-in form and a login link’s page fit 390px and pass axe-core', async () => {
    const guest = await b.browser.newContext({ viewport: PHONE });
    try {
      const page = await guest.newPage();
      const failures: string[] = [];
      for (const path of ['/console', '/console/login/not-a-real-token']) {
        await page.goto(b.url(path));
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        if (width > PHONE.width) failures.push(`${path}: scrollWidth ${width}`);
        for (const v of await axeSeriousOrCritical(page)) failures.push(`${path}: axe ${v}`);
      }
      expect(failures, failures.join('\n')).toEqual([]);
    } finally {
      await guest.close();
    }
  });

  it('no page is wider than 390px and none has a serious or critical axe-core violation', async () => {
    const failures: string[] = [];
    for (const path of consolePaths()) {
      const answer = await phonePage.goto(b.url(path));
      const status = answer?.status() ?? 0;
      if (status === 500) failures.push(`${path}: status ${status}`);
      await phonePage.waitForLoadState('load');
      const width = await phonePage.evaluate(() => document.documentElement.scrollWidth);
      if (width > PHONE.width) failures.push(`${path}: scrollWidth ${width} (${(await widest(phonePage)).join(', ')})`);
      for (const v of await axeSeriousOrCritical(phonePage)) failures.push(`${path}: axe ${v}`);
    }
    expect(failures, failures.join('\n')).toEqual([]);
  });
});

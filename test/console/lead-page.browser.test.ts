import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { launchConsoleBrowser, axeSeriousOrCritical, phoneScrollWidth, signInWithKey, closeBrowserAndApp } from '../helpers/browser.js';
import { createMemoryChannels } from '../helpers/memory-channels.js';
import { insertActivity, insertLead, insertMessagingAccount, insertReply, insertSequence, insertXAccount } from '../helpers/factories.js';
import { dbEngine } from '../helpers/test-database.js';

// The lead page opened from the leads list, and "Mark handled" on an X reply, in Chromium with axe-core (issue 27
// §4, §5). Screenshots only from the PGlite run and only when asked for (UPDATE_SCREENSHOTS=1), as pages.browser.
const saveShots = dbEngine() === 'pglite' && process.env.UPDATE_SCREENSHOTS === '1';
const channels = createMemoryChannels();

let t: TestApp;
let b: Awaited<ReturnType<typeof launchConsoleBrowser>>;
let page: Page;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let ada: string;
let xReply: string;

beforeAll(async () => {
  t = await buildTestApp({ realClock: true, drivers: channels.drivers });
  acme = await createWorkspaceWithKey(t, 'Northwind');
  const account = await insertMessagingAccount(t.db, acme.workspaceId, { name: 'Dana (LinkedIn)' });
  const sequence = await insertSequence(t.db, acme.workspaceId, { name: 'Berlin founders' });
  await insertXAccount(t.db, acme.workspaceId, { userId: '42', handle: 'northwind' });
  const day = 86_400_000;
  ada = await insertLead(t.db, acme.workspaceId, {
    person: 'Ada Lovelace',
    company: 'Analytical Engines',
    title: 'CTO',
    email: 'ada@engines.example',
    linkedin_url: 'https://www.linkedin.com/in/ada-lovelace',
    x_user_id: '7000000001',
    username: 'ada_x',
    account_id: account,
    account_user_id: '42',
    sequence_id: sequence,
    stage: 'replied',
    current_step: 2,
    invited_at: new Date(Date.now() - 9 * day),
    connected_at: new Date(Date.now() - 8 * day),
    messaged_at: new Date(Date.now() - 6 * day),
    replied_at: new Date(Date.now() - 2 * day),
  });
  const entries: [string, number, string][] = [
    ['invite', 9, '{"note":"connection request"}'],
    ['accepted', 8, ''],
    ['message', 6, '{"step":1}'],
    ['x_dm', 5, '{"step":2}'],
    ['reply_detected', 2, '{"channel":"x"}'],
  ];
  for (const [action, daysAgo, detail] of entries) {
    await insertActivity(t.db, acme.workspaceId, { action, createdAt: new Date(Date.now() - daysAgo * day), accountId: account, leadId: ada, detail });
  }
  await insertReply(t.db, t.cipher, acme.workspaceId, {
    leadId: ada,
    channel: 'linkedin',
    theirMessage: 'Thanks, what does it cost?',
    draft: 'It depends on the size of the team.',
    repliedAt: new Date(Date.now() - 3 * day),
  });
  xReply = await insertReply(t.db, t.cipher, acme.workspaceId, {
    leadId: ada,
    channel: 'x',
    theirMessage: 'Sounds interesting, DM me the deck',
    draft: null,
    repliedAt: new Date(Date.now() - 2 * day),
  });
  await insertLead(t.db, acme.workspaceId, { person: 'Grace Hopper', company: 'Navy', email: 'grace@navy.example', stage: 'invited' });
  b = await launchConsoleBrowser(t);
  page = b.page;
}, 120_000);

afterAll(() => closeBrowserAndApp(b, t));

describe('the lead page and Mark handled in a real browser', { timeout: 120_000 }, () => {
  it('opens a lead page from the leads list: lanes, stage, replies and timeline; Stop sequence confirms and says so', async () => {
    await signInWithKey(page, b.url('/console/leads'), acme.key);
    await page.getByRole('heading', { level: 1, name: 'Leads' }).waitFor();
    await page.getByRole('link', { name: 'Ada Lovelace' }).click();
    await page.getByRole('heading', { level: 1, name: 'Ada Lovelace' }).waitFor();
    expect(page.url()).toBe(b.url(`/console/leads/${ada}`));
    await page.getByRole('link', { name: '@ada_x' }).waitFor();
    await page.getByText('Sounds interesting, DM me the deck').waitFor();
    await page.getByText('5 ledger entries for this lead, newest first.').waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
    if (saveShots) await page.screenshot({ path: 'docs/images/lead.png', fullPage: true });

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Stop sequence' }).click();
    await page.getByText('Sequence stopped: nothing more is sent to this lead.').waitFor();
    const row = await t.db.selectFrom('leads').select('automation_stopped').where('id', '=', ada).executeTakeFirstOrThrow();
    expect(row.automation_stopped).toBe(true);
  });

  it('Mark handled on an X reply row takes it off the queue and shows the notice', async () => {
    await page.getByRole('link', { name: 'Replies', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Replies' }).waitFor();
    // X account 42 is a sandbox account (never connected with OAuth): its conversation has no page on x.com.
    await page.getByText('Sandbox conversation').first().waitFor();
    expect(await page.getByRole('link', { name: /^Open on X/ }).count()).toBe(0);
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
    if (saveShots) await page.screenshot({ path: 'docs/images/replies.png', fullPage: true });

    await page.getByRole('button', { name: /^Mark handled/ }).click();
    await page.getByText('Marked handled: the reply left the queue.').waitFor();
    expect(await page.getByRole('button', { name: /^Mark handled/ }).count()).toBe(0);
    expect(await page.getByText('Thanks, what does it cost?').count()).toBe(1);
    const reply = await t.db.selectFrom('replies').select(['state', 'decided_by']).where('id', '=', xReply).executeTakeFirstOrThrow();
    expect(reply).toEqual({ state: 'decided', decided_by: expect.stringMatching(/^console:/) });
    expect(await axeSeriousOrCritical(page)).toEqual([]);
  });
});

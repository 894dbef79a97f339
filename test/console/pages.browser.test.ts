import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { launchConsoleBrowser, axeSeriousOrCritical, signInWithKey, closeBrowserAndApp } from '../helpers/browser.js';
import { createMemoryChannels } from '../helpers/memory-channels.js';
import { insertLead, insertMessagingAccount, insertReply, insertSequence } from '../helpers/factories.js';
import { dbEngine } from '../helpers/test-database.js';
import { tableResolver } from '../webhooks/receiver.js';

// Screenshots for the README come from one run (PGlite), and only when asked for (UPDATE_SCREENSHOTS=1), so a test
// run never rewrites the committed images; the PostgreSQL run checks the same flows.
const saveShots = dbEngine() === 'pglite' && process.env.UPDATE_SCREENSHOTS === '1';
const channels = createMemoryChannels();

let t: TestApp;
let b: Awaited<ReturnType<typeof launchConsoleBrowser>>;
let page: Page;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let leadId: string;
let draftSequence: string;

beforeAll(async () => {
  t = await buildTestApp({ realClock: true, drivers: channels.drivers, resolver: tableResolver({ 'hooks.example.com': ['93.184.216.34'] }) });
  acme = await createWorkspaceWithKey(t, 'Northwind');
  const account = await insertMessagingAccount(t.db, acme.workspaceId, { name: 'Dana (LinkedIn)' });
  const sequence = await insertSequence(t.db, acme.workspaceId, { name: 'Berlin founders' });
  const at = new Date(Date.now() - 5 * 86_400_000);
  for (let i = 0; i < 12; i++) {
    const stage = { invited_at: at, ...(i < 8 && { connected_at: at }), ...(i < 6 && { messaged_at: at }), ...(i < 2 && { replied_at: at }) };
    const id = await insertLead(t.db, acme.workspaceId, {
      person: `Person ${i}`,
      company: 'Initech',
      linkedin_url: `https://www.linkedin.com/in/p${i}`,
      email: `p${i}@initech.example`,
      account_id: account,
      sequence_id: sequence,
      stage: i < 2 ? 'replied' : 'invited',
      ...stage,
    });
    if (i === 0) leadId = id;
  }
  draftSequence = await insertSequence(t.db, acme.workspaceId, {
    name: 'Munich CTOs',
    status: 'draft',
    revision: 1,
    approvedRevision: null,
    steps: [
      { index: 0, kind: 'connect', delayDays: 0, subject: null, message: 'Hi {{firstName}}', actions: [], variants: null, tool: null },
      { index: 1, kind: 'message', delayDays: 2, subject: null, message: 'Thanks for connecting', actions: [], variants: null, tool: null },
    ],
  });
  await insertReply(t.db, t.cipher, acme.workspaceId, { leadId, theirMessage: 'Interesting, can you send details?', draft: 'Sure, here they are.' });
  b = await launchConsoleBrowser(t);
  page = b.page;
}, 120_000);

afterAll(() => closeBrowserAndApp(b, t));

describe('console pages in a real browser', { timeout: 120_000 }, () => {
  it('the dashboard draws the funnel chart and passes axe-core', async () => {
    await signInWithKey(page, b.url('/console'), acme.key);
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    await page.locator('#funnel-chart canvas').waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    if (saveShots) await page.screenshot({ path: 'docs/images/dashboard.png', fullPage: true });
  });

  it('a reply decision: Send asks for confirmation, then sends the edited draft once', async () => {
    await page.getByRole('link', { name: 'Pending replies: 1' }).click();
    await page.getByRole('heading', { level: 1, name: 'Replies' }).waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    await page.getByRole('textbox', { name: 'Draft' }).fill('Sure, the details are attached.');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Confirm: Send' }).waitFor();
    expect(channels.delivered.filter((d) => d.recipient.leadId === leadId)).toHaveLength(0);
    await page.getByRole('button', { name: 'Yes, send' }).click();
    await page.getByText('No reply is waiting for a decision.').waitFor();
    expect(channels.delivered.filter((d) => d.recipient.leadId === leadId).map((d) => d.text)).toEqual(['Sure, the details are attached.']);
  });

  it('webhooks: create shows the secret once, then a test ping is scheduled', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('textbox', { name: 'Receiver URL' }).fill('https://hooks.example.com/outreach');
    await page.getByRole('checkbox', { name: 'reply.received' }).check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByText('Signing secret, shown only now').waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    await page.getByRole('button', { name: 'Send test ping to https://hooks.example.com/outreach' }).click();
    await page.getByText('Test ping scheduled').waitFor();
    expect(await page.getByText('Signing secret, shown only now').count()).toBe(0);
  });

  it('sequence approval: the page shows the steps of the exact revision, Approve records it, Activate starts it', async () => {
    await page.getByRole('link', { name: 'Sequences' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sequences' }).waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    await page.getByRole('link', { name: 'Munich CTOs' }).click();
    await page.getByRole('heading', { level: 2, name: 'Steps of revision 1 (none approved yet)' }).waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    if (saveShots) await page.screenshot({ path: 'docs/images/sequence-approval.png', fullPage: true });
    await page.getByRole('button', { name: 'Approve revision 1' }).click();
    await page.getByText('Approved revision 1.').waitFor();
    const row = await t.db.selectFrom('sequences').select(['approved_revision', 'status']).where('id', '=', draftSequence).executeTakeFirstOrThrow();
    expect(row).toEqual({ approved_revision: 1, status: 'draft' });
    await page.getByRole('link', { name: 'All sequences' }).click();
    await page.getByRole('button', { name: 'Activate Munich CTOs' }).click();
    await page.getByText('Status changed from draft to active.').waitFor();
    expect((await t.db.selectFrom('sequences').select('status').where('id', '=', draftSequence).executeTakeFirstOrThrow()).status).toBe('active');
  });

  it('leads and activity: the filter forms narrow the lists and pass axe-core', async () => {
    await page.getByRole('link', { name: 'Leads' }).click();
    await page.getByRole('heading', { level: 1, name: 'Leads' }).waitFor();
    await page.getByLabel('Stage reached').selectOption('replied');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('2 leads match').waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    await page.getByRole('link', { name: 'Activity' }).click();
    await page.getByRole('heading', { level: 1, name: 'Activity' }).waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
  });
});

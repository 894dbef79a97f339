import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { launchConsoleBrowser, axeSeriousOrCritical, phoneScrollWidth, signInWithKey, closeBrowserAndApp } from '../helpers/browser.js';
import { insertLead, insertXAccount } from '../helpers/factories.js';
import { dbEngine } from '../helpers/test-database.js';

// Issue 27 §1–2 in Chromium: a sequence of two steps with an A/B variant written, previewed, created and approved,
// then a Play created on it, by the labels a person reads. Browser tests run on PGlite only; screenshots for the
// docs only with UPDATE_SCREENSHOTS=1.
const saveShots = process.env.UPDATE_SCREENSHOTS === '1';

describe.runIf(dbEngine() === 'pglite')('authoring in a real browser (issue 27 §1–2)', { timeout: 120_000 }, () => {
  let t: TestApp;
  let b: Awaited<ReturnType<typeof launchConsoleBrowser>>;
  let page: Page;
  let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  let account: { userId: string; handle: string };

  beforeAll(async () => {
    t = await buildTestApp({ realClock: true });
    acme = await createWorkspaceWithKey(t, 'Northwind');
    account = await insertXAccount(t.db, acme.workspaceId, { handle: 'northwind' });
    await insertLead(t.db, acme.workspaceId, { person: 'Ada Lovelace', company: 'Analytical' });
    b = await launchConsoleBrowser(t);
    page = b.page;
  }, 120_000);

  afterAll(() => closeBrowserAndApp(b, t));

  it('writes a sequence of two steps with a variant, previews it for a lead, creates it and approves it', async () => {
    await signInWithKey(page, b.url('/console/sequences'), acme.key);
    await page.getByText('No sequence yet').waitFor();
    await page.getByRole('link', { name: 'New sequence' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'New sequence' }).waitFor();

    await page.getByLabel('Name', { exact: true }).fill('Launch week');
    const step1 = page.getByRole('group', { name: 'Step 1' });
    await step1.getByLabel('Kind').selectOption('x_engage');
    await step1.getByLabel('Action 1').selectOption('like_last_post');
    await page.getByRole('button', { name: 'Add step' }).click();
    const step2 = page.getByRole('group', { name: 'Step 2' });
    await step2.waitFor();
    // What was typed before the round trip is still there.
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Launch week');
    await step2.getByLabel('Kind').selectOption('x_dm');
    await step2.getByLabel('Delay (days)').fill('2');
    await step2.getByLabel('Message', { exact: true }).fill('Hi {{firstName}}, saw your launch.');
    await step2.getByRole('button', { name: 'Add variant to step 2' }).click();
    await page.getByRole('group', { name: 'Step 2' }).getByRole('group', { name: 'Variant 2' }).getByLabel('Message').fill('Hello {{firstName|there}}!');
    await page.getByLabel('Preview for lead').selectOption({ label: 'Ada Lovelace, Analytical' });
    await page.getByRole('button', { name: 'Preview step 2' }).click();
    await page.getByText('Preview for Ada Lovelace').waitFor();
    await page.getByText('Hi Ada, saw your launch.').waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
    if (saveShots) await page.screenshot({ path: 'docs/images/authoring-sequence.png', fullPage: true });

    await page.getByRole('button', { name: 'Create sequence' }).click();
    await page.getByText('Created the draft Launch week (revision 1).').waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    // A draft offers no Pause; Approve comes before Activate.
    expect(await page.getByRole('button', { name: 'Pause Launch week' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Approve revision 1' }).click();
    await page.getByText('Approved revision 1.').waitFor();
    const row = await t.db.selectFrom('sequences').selectAll().where('name', '=', 'Launch week').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'draft', revision: 1, approved_revision: 1 });
    const steps = (typeof row.steps === 'string' ? JSON.parse(row.steps) : row.steps) as { kind: string; variants: unknown[] | null }[];
    expect(steps.map((s) => s.kind)).toEqual(['x_engage', 'x_dm']);
    expect(steps[1].variants).toEqual([
      { key: 'A', weight: 1, messageTmpl: 'Hi {{firstName}}, saw your launch.' },
      { key: 'B', weight: 1, messageTmpl: 'Hello {{firstName|there}}!' },
    ]);
  });

  it('creates a Play on that sequence from New Play', async () => {
    await page.getByRole('link', { name: 'Review/Plays' }).click();
    await page.getByRole('heading', { level: 1, name: 'Plays' }).waitFor();
    await page.getByRole('link', { name: 'New Play' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'New Play' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Launch followers');
    await page.getByLabel('X account').selectOption({ label: '@northwind' });
    await page.getByLabel('Sequence').selectOption({ label: 'Launch week (draft)' });
    await page.getByRole('button', { name: 'Create Play' }).click();
    await page.getByText('Created the Play Launch followers (revision 1).').waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
    if (saveShots) await page.screenshot({ path: 'docs/images/authoring-play.png', fullPage: true });
    const play = await t.db.selectFrom('plays').selectAll().where('name', '=', 'Launch followers').executeTakeFirstOrThrow();
    expect(play).toMatchObject({ account_user_id: account.userId, status: 'active', revision: 1 });

    await page.getByRole('link', { name: 'All Plays' }).click();
    await page.getByRole('link', { name: 'Edit Launch followers' }).waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
  });
});

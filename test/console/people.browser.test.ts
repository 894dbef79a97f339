import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { launchConsoleBrowser, axeSeriousOrCritical, CHROMIUM_PATH, closeBrowserAndApp } from '../helpers/browser.js';
import { insertLead, insertReply } from '../helpers/factories.js';
import { OPERATOR } from '../../src/domain/auth-context.js';

// People in Chromium (docs/roles.md "People"): an invitation opened in a browser, a name given, a decision made under
// that name, and the audit page that shows it. The docs' screenshots with UPDATE_SCREENSHOTS=1.
const saveShots = process.env.UPDATE_SCREENSHOTS === '1';
const hasChromium = existsSync(CHROMIUM_PATH);
if (!hasChromium) console.warn(`test/console/people.browser.test.ts skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium).`);

describe.runIf(hasChromium)('people in Chromium', { timeout: 120_000 }, () => {
  let t: TestApp;
  let b: Awaited<ReturnType<typeof launchConsoleBrowser>>;
  let page: Page;
  let workspaceId: string;
  let replyId: string;
  let leadId: string;
  const operator = { actor: OPERATOR, role: 'owner' as const };

  beforeAll(async () => {
    t = await buildTestApp({ realClock: true });
    workspaceId = (await t.services.workspaces.createWorkspace({ name: 'Northwind' })).id;
    leadId = await insertLead(t.db, workspaceId, { person: 'Maria Lopez', company: 'Fabrikam', email: 'maria.lopez@fabrikam.example' });
    replyId = await insertReply(t.db, t.cipher, workspaceId, { leadId, classification: 'not_interested', theirMessage: 'Not for us, thanks.' });
    b = await launchConsoleBrowser(t);
    page = b.page;
  }, 120_000);
  afterAll(async () => closeBrowserAndApp(b, t));

  const join = async (path: string, name: string) => {
    await page.goto(b.url(path));
    await page.getByRole('textbox', { name: /Your name/ }).fill(name);
    await page.getByRole('button', { name: 'Join and sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
  };

  it('an invited person joins with their name, and a decision they make carries it', async () => {
    const ana = await t.services.people.invite(workspaceId, { email: 'ana@northwind.example', role: 'owner' }, operator);
    await page.goto(b.url(ana.path));
    await page.getByRole('heading', { level: 1, name: 'Join Northwind' }).waitFor();
    expect(await page.getByText('You are invited as ana@northwind.example with the owner role.').count()).toBe(1);
    await join(ana.path, 'Ana Lima');
    expect(await page.locator('.signed-in-as').textContent()).toBe('Ana Lima · owner');

    await page.goto(b.url('/console/people'));
    await page.getByRole('textbox', { name: 'E-mail' }).fill('dana@northwind.example');
    await page.getByRole('combobox', { name: 'Role', exact: true }).selectOption('admin');
    await page.getByRole('button', { name: 'Create invitation link' }).click();
    const link = await page.locator('.secret-once code').textContent();
    expect(link).toMatch(/\/console\/join\/[A-Za-z0-9_-]{43}$/);
    expect(await axeSeriousOrCritical(page)).toEqual([]);

    await page.context().clearCookies();
    await join(new URL(link!, b.base).pathname, 'Dana Reyes');
    expect(await page.locator('.signed-in-as').textContent()).toBe('Dana Reyes · admin');
    await page.goto(b.url('/console/replies'));
    await page
      .getByRole('button', { name: /^Dismiss/ })
      .first()
      .click();
    await expect
      .poll(async () => (await t.db.selectFrom('replies').select('decided_by').where('id', '=', replyId).executeTakeFirst())?.decided_by)
      .toBe('Dana Reyes <dana@northwind.example>');
    // She finds her name on the decision (the lead's page) and in the audit trail.
    await page.goto(b.url(`/console/leads/${leadId}`));
    await page.getByText('decided dismiss by Dana Reyes <dana@northwind.example>').waitFor();
    await page.goto(b.url('/console/audit'));
    await page.getByRole('heading', { level: 1, name: 'Audit trail' }).waitFor();
    expect(await page.locator('table').textContent()).toContain('Dana Reyes <dana@northwind.example>person.joined');
  });

  it('the owner finds the names on the People and Audit pages', async () => {
    await page.context().clearCookies();
    const link = await t.services.people.signInLink(workspaceId, 'ana@northwind.example', operator);
    await page.goto(b.url(link.path));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();

    await page.goto(b.url('/console/people'));
    const rows = page.locator('table tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(1).textContent()).toContain('Dana Reyes');
    if (saveShots) await page.screenshot({ path: 'docs/images/people.png', fullPage: true });

    await page.goto(b.url('/console/audit'));
    await page.getByRole('heading', { level: 1, name: 'Audit trail' }).waitFor();
    const text = await page.locator('table').textContent();
    for (const expected of ['person.invited', 'person.joined', 'Dana Reyes <dana@northwind.example>', 'Ana Lima <ana@northwind.example>'])
      expect(text).toContain(expected);
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    if (saveShots) await page.screenshot({ path: 'docs/images/audit.png', fullPage: true });
  });

  it('a person registers a passkey (a virtual authenticator) and signs in with it, no link needed', async () => {
    // WebAuthn wants a host name, not an IP address: the same server, addressed as localhost.
    const base = b.base.replace('127.0.0.1', 'localhost');
    await page.context().clearCookies();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    const link = await t.services.people.signInLink(workspaceId, 'dana@northwind.example', operator);
    await page.goto(`${base}${link.path}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    await page.goto(`${base}/console/people`);
    await page.getByRole('button', { name: 'Register a passkey' }).click();
    await page.getByText('Passkey registered. Next time, sign in with it.').waitFor();
    const stored = await t.db.selectFrom('passkeys').select(['person_id', 'workspace_id']).execute();
    expect(stored).toHaveLength(1);

    await page.context().clearCookies();
    await page.goto(`${base}/console/sign-in`);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    expect(await page.locator('.signed-in-as').textContent()).toBe('Dana Reyes · admin');
    const entries = await t.services.audit.list(workspaceId, { actor: stored[0].person_id });
    expect(entries.entries.map((e) => `${e.action} ${JSON.stringify(e.detail)}`)).toEqual(
      expect.arrayContaining(['person.passkey_added {}', 'person.signed_in {"with":"passkey"}']),
    );
  });
});

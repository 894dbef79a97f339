import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { launchConsoleBrowser, axeSeriousOrCritical, phoneScrollWidth, CHROMIUM_PATH, signInWithKey } from '../helpers/browser.js';
import { startDnsFake, type DnsFake } from '../helpers/dns-server.js';
import { insertInboundSeen, insertLead, insertMessagingAccount } from '../helpers/factories.js';
import { seedMailbox } from '../../src/channels/email/index.js';
import { suppress, type SuppressionReason } from '../../src/domain/suppression.js';

// Issue 38 §6 in Chromium (docs/console.md "A mailbox's inbound mail", "The suppression list"): the mailbox page's
// Inbound mail section with a reply, a bounce, an unsubscribe and an unmatched message (the excerpt shown as text),
// filtered by verdict through the plain GET form; the suppression list reached from the navigation, searched by
// @domain, and a bounced address removed (the confirm dialog accepted, the notice shown). Each page axe-clean and
// 390 px wide. The docs' screenshots with UPDATE_SCREENSHOTS=1.
const saveShots = process.env.UPDATE_SCREENSHOTS === '1';
const hasChromium = existsSync(CHROMIUM_PATH);
if (!hasChromium) console.warn(`test/console/inbound.browser.test.ts skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium).`);

const MIN = 60_000;

describe.runIf(hasChromium)('inbound mail and the suppression list in Chromium (issue 38 §6)', { timeout: 120_000 }, () => {
  let dns: DnsFake;
  let t: TestApp;
  let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  let b: Awaited<ReturnType<typeof launchConsoleBrowser>>;
  let page: Page;
  const mailboxId = 'mbx_dana_northwind';

  beforeAll(async () => {
    dns = await startDnsFake();
    t = await buildTestApp({ realClock: true, env: { OUTREACH_DNS_SERVERS: dns.server } });
    ws = await createWorkspaceWithKey(t, 'Northwind');
    const accountId = await insertMessagingAccount(t.db, ws.workspaceId, { mode: 'email', name: 'Dana' });
    await seedMailbox(t.db, t.cipher, {
      id: mailboxId,
      workspaceId: ws.workspaceId,
      accountId,
      address: 'dana@northwind.example',
      smtpUrl: 'smtp://u:p@127.0.0.1:2525',
      imapUrl: 'imap://u:p@127.0.0.1:1143',
    });
    const lead = (person: string, company: string, email: string) => insertLead(t.db, ws.workspaceId, { person, company, email });
    const maria = await lead('Maria Lopez', 'Fabrikam', 'maria.lopez@fabrikam.example');
    const tomas = await lead('Tomás Okafor', 'Contoso', 'tomas.okafor@contoso.example');
    const priya = await lead('Priya Raman', 'Tailspin Toys', 'priya@tailspintoys.example');

    const now = Date.now();
    let uid = 0;
    const record = (
      minutesAgo: number,
      r: { verdict: string; reason: string; effect: string; leadId?: string; label?: string; confidence?: number; needsReview?: boolean; excerpt?: string },
    ) =>
      insertInboundSeen(t.db, t.cipher, {
        ...r,
        mailboxId,
        workspaceId: ws.workspaceId,
        uid: ++uid,
        seenAt: new Date(now - minutesAgo * MIN),
        receivedAt: new Date(now - minutesAgo * MIN - 40_000),
        messageId: `m${uid}@sender.example`,
        tiedMessageId: r.leadId ? `<o${uid}@northwind.example>` : null,
      });
    // The watcher's own vocabulary (docs/email.md "The inbound record").
    await record(180, { verdict: 'bounce', reason: 'hard:user_unknown', effect: 'lead_failed,suppressed:bounced_hard', leadId: tomas });
    await record(95, { verdict: 'unsubscribe', reason: 'mailto_token', effect: 'opted_out', leadId: priya });
    await record(40, { verdict: 'unmatched', reason: 'no_message_of_ours', effect: 'none' });
    await record(12, {
      verdict: 'reply',
      reason: 'any-question-mark',
      effect: 'replied,needs_review',
      leadId: maria,
      label: 'question',
      confidence: 0.64,
      needsReview: true,
      excerpt: 'Thursday works <b>for us</b>. Can you send the pilot terms first?',
    });

    const suppressed = (address: string, reason: SuppressionReason, minutesAgo: number, leadId: string | null = null) =>
      suppress(t.db, { workspaceId: ws.workspaceId, address, reason, leadId, sourceMessageId: null, at: new Date(now - minutesAgo * MIN) });
    await suppressed('tomas.okafor@contoso.example', 'bounced_hard', 180, tomas);
    await suppressed('priya@tailspintoys.example', 'unsubscribed', 95, priya);
    await suppressed('ops@contoso.example', 'left_company', 60);
    await suppressed('billing@contoso.example', 'complaint', 30);
    await suppressed('full@litware.example', 'bounced_soft', 10);

    b = await launchConsoleBrowser(t);
    page = b.page;
    await signInWithKey(page, b.url('/console'), ws.key);
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    await t?.close();
    await dns?.close();
  });

  const section = () => page.locator('#inbound-mail');
  const rows = () => section().locator('tbody tr');

  it("the mailbox page shows each inbound message: verdict, label, review flag, effect, the lead's link and the excerpt as text", async () => {
    await page.goto(b.url(`/console/mailboxes/${mailboxId}`));
    await page.getByRole('heading', { level: 2, name: 'Inbound mail' }).waitFor();
    expect(await rows().count()).toBe(4);
    const first = rows().first();
    expect(await first.getByText('reply', { exact: true }).count()).toBe(1);
    expect(await first.getByText('Needs review', { exact: true }).count()).toBe(1);
    expect(await first.getByText('64%').count()).toBe(1);
    // The excerpt is text: its tags are shown, not applied.
    expect(await first.locator('td.excerpt').innerText()).toContain('Thursday works <b>for us</b>. Can you send the pilot terms first?');
    expect(await first.locator('td.excerpt b').count()).toBe(0);
    await section()
      .getByRole('link', { name: /^Maria Lopez/ })
      .waitFor();
    expect(await rows().nth(3).innerText()).toContain('lead failed, suppressed: bounced hard');
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
  });

  it('the verdict filter narrows the list without script (a GET form) and keeps its choice', async () => {
    await page.getByLabel('Verdict').selectOption('bounce');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/\?verdict=bounce#inbound-mail$/);
    expect(await rows().count()).toBe(1);
    expect(await page.getByLabel('Verdict').inputValue()).toBe('bounce');
    await section()
      .getByRole('link', { name: /^Tomás Okafor/ })
      .waitFor();
    expect(await axeSeriousOrCritical(page)).toEqual([]);

    await page.getByLabel('Verdict').selectOption('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/\?verdict=#inbound-mail$/);
    expect(await rows().count()).toBe(4);
    if (saveShots) {
      await page.setViewportSize({ width: 1280, height: 800 });
      await section().screenshot({ path: 'docs/images/mailbox-inbound.png' });
      await page.setViewportSize({ width: 1200, height: 800 });
    }
  });

  it('the suppression list, from the navigation: search by @domain, Remove on a bounce (asked first), a notice; none on a complaint', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Suppressions' }).click();
    await page.getByRole('heading', { level: 1, name: 'Suppression list' }).waitFor();
    const table = page.locator('table tbody tr');
    expect(await table.count()).toBe(5);
    expect(await page.getByRole('button', { name: /^Remove / }).count()).toBe(3);
    expect(await page.getByText('Cannot be removed: the person asked to stop').count()).toBe(2);
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
    if (saveShots) await page.screenshot({ path: 'docs/images/suppressions.png', fullPage: true });

    await page.getByLabel('Address or @domain').fill('@contoso.example');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\/console\/suppressions\?q=%40contoso\.example&reason=$/);
    expect(await table.count()).toBe(3);
    expect(await page.getByRole('button', { name: 'Remove billing@contoso.example from the suppression list' }).count()).toBe(0);

    let asked = '';
    page.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await page.getByRole('button', { name: 'Remove tomas.okafor@contoso.example from the suppression list' }).click();
    await page.getByText('Removed tomas.okafor@contoso.example (hard bounce) from the suppression list: the workspace may e-mail it again.').waitFor();
    expect(asked).toBe('Remove tomas.okafor@contoso.example from the suppression list? The workspace may e-mail it again.');
    expect(page.url()).toMatch(/\/console\/suppressions\?q=%40contoso\.example$/);
    expect(await table.count()).toBe(2);
    expect(await page.getByLabel('Address or @domain').inputValue()).toBe('@contoso.example');
    const removal = await t.db.selectFrom('suppression_removals').select(['address', 'removed_by']).executeTakeFirstOrThrow();
    expect(removal).toEqual({ address: 'tomas.okafor@contoso.example', removed_by: `console:${ws.keyId}` });
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
  });
});

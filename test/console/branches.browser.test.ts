import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { launchConsoleBrowser, axeSeriousOrCritical, phoneScrollWidth, signInWithKey, closeBrowserAndApp } from '../helpers/browser.js';
import { insertLead } from '../helpers/factories.js';
import { ENGINE_ENV, insertAccount } from '../engine/helpers.js';
import { connectInMemory, ok } from '../mcp/mcp-client.js';

// A branching LinkedIn → e-mail sequence in Chromium with axe-core: built through the agent tools, read as an outline on
// its page (the step editor is not offered, so it cannot drop the edges), its launch previewed, approved, run, and
// each lead's path read on the lead page (docs/sequences-and-leads.md "Branches", "Forecast"), at 390 px too.

let t: TestApp;
let b: Awaited<ReturnType<typeof launchConsoleBrowser>>;
let page: Page;
let client: Client;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let sequenceId: string;
let ada: string;
let nils: string;
const T0 = Date.now();
const H = 3_600_000;

beforeAll(async () => {
  t = await buildTestApp({ realClock: true, env: ENGINE_ENV });
  acme = await createWorkspaceWithKey(t, 'Northwind');
  const account = await insertAccount(t.db, acme.workspaceId);
  client = await connectInMemory(t.services, acme.workspaceId);
  const created = await ok(client, 'create_sequence', {
    name: 'LinkedIn, then e-mail',
    steps: [
      {
        kind: 'connect',
        delayDays: 0,
        message: 'Hi {{firstName}}',
        id: 'invite',
        next: [{ if: { accepted: true }, withinDays: 3, goto: 'thanks' }],
        else: 'mail',
      },
      { kind: 'message', delayDays: 1, message: 'Thanks for connecting', id: 'thanks', else: 'goal' },
      { kind: 'email', delayDays: 0, subject: 'Hello', message: 'Hello {{firstName}}', id: 'mail', next: [{ if: { lacksAddress: 'email' }, goto: 'exit' }] },
    ],
  });
  sequenceId = created.sequence.id;
  const lead = (person: string, sandbox: object | null) =>
    insertLead(t.db, acme.workspaceId, {
      person,
      email: `${person.split(' ')[0].toLowerCase()}@example.com`,
      linkedin_url: `https://www.linkedin.com/in/${person.split(' ')[0].toLowerCase()}`,
      account_id: account,
      sequence_id: sequenceId,
      next_action_at: new Date(T0),
      ...(sandbox && { sandbox: JSON.stringify(sandbox) }),
    });
  ada = await lead('Ada Lovelace', { acceptsInviteAfterHours: 2 });
  nils = await lead('Nils Never', null);
  b = await launchConsoleBrowser(t);
  page = b.page;
}, 120_000);

afterAll(async () => {
  await client?.close();
  await closeBrowserAndApp(b, t);
});

describe('a branching sequence in the console', { timeout: 120_000 }, () => {
  it('reads as an outline, previews its launch (axe clean, 390 px), is approved, and each lead shows its path', async () => {
    await signInWithKey(page, b.url(`/console/sequences/${sequenceId}`), acme.key);
    await page.getByRole('heading', { level: 1, name: 'LinkedIn, then e-mail' }).waitFor();
    const outline = page.locator('section[aria-labelledby="branches"]');
    await expect(outline.textContent()).resolves.toContain('If the invitation was accepted within 3 days: step “thanks”');
    await expect(outline.textContent()).resolves.toContain('Otherwise: step “mail”');
    // The step editor is not offered for a branching draft: saving through it would drop the edges.
    expect(await page.locator('form.sequence-form').count()).toBe(0);

    await page.getByLabel('Days').fill('2');
    // The form posts and the page comes back with the forecast (the engine's passes on a copy: seconds, not instant).
    await page.getByRole('button', { name: 'Preview launch' }).click({ timeout: 90_000 });
    const status = page.locator('section[aria-labelledby="forecast"] [role="status"]');
    await status.waitFor();
    await expect(status.textContent()).resolves.toMatch(/^2 leads over 2 days: \d+ sent, 1 at the goal, 0 exited/);
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
    // The forecast changed nothing: no ledger entry, both leads still at their first step.
    expect(await t.db.selectFrom('activity').select('id').where('workspace_id', '=', acme.workspaceId).execute()).toHaveLength(0);

    await page.getByRole('button', { name: 'Approve revision 1' }).click();
    await page.getByRole('heading', { level: 1, name: 'LinkedIn, then e-mail' }).waitFor();
    await t.db.updateTable('sequences').set({ status: 'active' }).where('id', '=', sequenceId).execute();
    for (let k = 0; k <= 5 * 24; k++) await t.services.engine.runPass({ now: new Date(T0 + k * H) });

    await page.goto(b.url(`/console/leads/${ada}`));
    const path = page.locator('section[aria-labelledby="path"]');
    await path.waitFor();
    await expect(path.textContent()).resolves.toContain('The run ended at the goal.');
    await expect(path.textContent()).resolves.toContain('thanks (step 1)');
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);

    await page.goto(b.url(`/console/leads/${nils}`));
    await expect(page.locator('section[aria-labelledby="path"]').textContent()).resolves.toContain('mail (step 2)');
  });
});

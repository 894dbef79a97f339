import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { launchConsoleBrowser, axeSeriousOrCritical, phoneScrollWidth, signInWithKey, closeBrowserAndApp } from '../helpers/browser.js';
import { insertLead } from '../helpers/factories.js';
import { ENGINE_ENV, insertAccount } from '../engine/helpers.js';

// A branching LinkedIn → e-mail sequence built by a person in Chromium with axe-core, at 390 px: each step's branch
// block in the editor (its id, its edges, where a lead goes otherwise), saved as the one wire form the API and the
// agent tools use, opened and saved again without losing an edge, read as an outline, its launch previewed, approved,
// run, and each lead's path read on the lead page (docs/sequences-and-leads.md "Branches", "Forecast").

const saveShots = process.env.SAVE_SCREENSHOTS === '1';
let t: TestApp;
let b: Awaited<ReturnType<typeof launchConsoleBrowser>>;
let page: Page;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let account: string;
const T0 = Date.now();
const H = 3_600_000;

/** The steps the person builds, in the wire form GET /api/v1/sequences answers. */
const BUILT = [
  { kind: 'connect', delayDays: 0, message: 'Hi {{firstName}}', id: 'invite', next: [{ if: { accepted: true }, withinDays: 3, goto: 'thanks' }], else: 'mail' },
  { kind: 'message', delayDays: 1, message: 'Thanks for connecting', id: 'thanks', else: 'goal' },
  { kind: 'email', delayDays: 0, subject: 'Hello', message: 'Hello {{firstName}}', id: 'mail', next: [{ if: { lacksAddress: 'email' }, goto: 'exit' }] },
];

beforeAll(async () => {
  t = await buildTestApp({ realClock: true, env: ENGINE_ENV });
  acme = await createWorkspaceWithKey(t, 'Northwind');
  account = await insertAccount(t.db, acme.workspaceId);
  b = await launchConsoleBrowser(t);
  page = b.page;
}, 120_000);

afterAll(async () => {
  await closeBrowserAndApp(b, t);
});

describe('a branching sequence in the console', { timeout: 120_000 }, () => {
  it('is built in the editor (axe clean, 390 px), kept through a second save, previews its launch, is approved, and each lead shows its path', async () => {
    await signInWithKey(page, b.url('/console/sequences/new'), acme.key);
    await page.getByRole('heading', { level: 1, name: 'New sequence' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('LinkedIn, then e-mail');
    const stepGroup = (n: number) => page.getByRole('group', { name: `Step ${n}`, exact: true });

    // Step 1: the invitation; accepted within 3 days goes to "thanks", otherwise to "mail".
    await stepGroup(1).getByLabel('Kind').selectOption('connect');
    await stepGroup(1).getByLabel('Message', { exact: true }).fill('Hi {{firstName}}');
    await stepGroup(1).getByLabel('Step id').fill('invite');
    await page.getByRole('button', { name: 'Add edge after step 1' }).click();
    const edge11 = stepGroup(1).getByRole('group', { name: 'Edge 1' });
    await edge11.getByLabel('If').selectOption({ label: 'Invitation accepted' });
    // The condition's own inputs follow the choice: an invitation has no channel, it has a wait.
    await expect(edge11.getByLabel('Channel').isVisible()).resolves.toBe(false);
    await edge11.getByLabel('Within (days)').fill('3');
    await edge11.getByLabel('Go to', { exact: true }).fill('thanks');
    await stepGroup(1).getByLabel('Otherwise go to').fill('mail');

    // Step 2: a LinkedIn message a day after the edge; the run ends at the goal.
    await page.getByRole('button', { name: 'Add step' }).click();
    await stepGroup(2).waitFor();
    expect(await stepGroup(1).getByRole('group', { name: 'Edge 1' }).getByLabel('Go to', { exact: true }).inputValue()).toBe('thanks');
    await stepGroup(2).getByLabel('Kind').selectOption('message');
    await stepGroup(2).getByLabel('Delay (days)').fill('1');
    await stepGroup(2).getByLabel('Message', { exact: true }).fill('Thanks for connecting');
    await stepGroup(2).getByLabel('Step id').fill('thanks');
    await stepGroup(2).getByLabel('Otherwise go to').fill('goal');

    // Step 3: the e-mail; a lead without an address exits.
    await page.getByRole('button', { name: 'Add step' }).click();
    await stepGroup(3).waitFor();
    await stepGroup(3).getByLabel('Kind').selectOption('email');
    await stepGroup(3).getByLabel('Subject').fill('Hello');
    await stepGroup(3).getByLabel('Message', { exact: true }).fill('Hello {{firstName}}');
    await stepGroup(3).getByLabel('Step id').fill('mail');
    await page.getByRole('button', { name: 'Add edge after step 3' }).click();
    const edge31 = stepGroup(3).getByRole('group', { name: 'Edge 1' });
    await edge31.getByLabel('If').selectOption({ label: 'Has no address on' });
    await edge31.getByLabel('Channel').selectOption('email');
    await edge31.getByLabel('Go to', { exact: true }).fill('exit');
    // The target's suggestions (a datalist) close when the focus leaves it.
    await page.getByRole('heading', { level: 1, name: 'New sequence' }).click();
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
    if (saveShots) await page.screenshot({ path: 'docs/images/sequence-branch-editor.png', fullPage: true });

    await page.getByRole('button', { name: 'Create sequence' }).click();
    await page.getByText('Created the draft LinkedIn, then e-mail (revision 1).').waitFor();
    const stored = async () => {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/sequences', headers: acme.auth });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().sequences as { id: string; name: string; revision: number; steps: unknown[] }[]).find((q) => q.name === 'LinkedIn, then e-mail')!;
    };
    const first = await stored();
    expect(first.steps).toMatchObject(BUILT);
    const sequenceId = first.id;

    // Opened in the editor and saved again untouched: the service finds the very same steps (not an edge lost).
    await page.getByRole('button', { name: 'Save steps' }).click();
    await page.getByText('Nothing changed: the steps are those of revision 1.').waitFor();
    const second = await stored();
    expect(second.revision).toBe(1);
    expect(second.steps).toEqual(first.steps);

    const outline = page.locator('section[aria-labelledby="branches"]');
    await expect(outline.textContent()).resolves.toContain('If the invitation was accepted within 3 days: step “thanks”');
    await expect(outline.textContent()).resolves.toContain('Otherwise: step “mail”');

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
    const ada = await lead('Ada Lovelace', { acceptsInviteAfterHours: 2 });
    const nils = await lead('Nils Never', null);
    await page.reload();

    await page.locator('section[aria-labelledby="forecast"]').getByLabel('Days', { exact: true }).fill('2');
    // The form posts and the page comes back with the forecast (the engine's passes on a copy: seconds, not instant).
    await page.getByRole('button', { name: 'Preview launch' }).click({ timeout: 90_000 });
    const status = page.locator('section[aria-labelledby="forecast"] [role="status"]');
    await status.waitFor();
    await expect(status.textContent()).resolves.toMatch(/^2 leads over 2 days: \d+ sent, 1 at the goal, 0 exited/);
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
    if (saveShots) await page.screenshot({ path: 'docs/images/sequence-forecast.png', fullPage: true });
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
    if (saveShots) await page.screenshot({ path: 'docs/images/lead-path.png', fullPage: true });

    await page.goto(b.url(`/console/leads/${nils}`));
    await expect(page.locator('section[aria-labelledby="path"]').textContent()).resolves.toContain('mail (step 2)');
  });

  it('every condition of the grammar, written by an agent, opens in the editor and saves back unchanged', async () => {
    const w = { within: 3 } as const;
    const steps = [
      {
        kind: 'email',
        delayDays: 0,
        subject: 'Hello',
        message: 'Hello {{firstName}}',
        id: 'mail',
        next: [
          { if: { bounced: true }, withinDays: w.within, goto: 'exit' },
          { if: { outOfOffice: true }, withinDays: w.within, goto: 'last' },
          { if: { replied: true, channel: 'email', intent: 'positive' }, withinDays: w.within, goto: 'goal' },
          { if: { replied: false }, withinDays: w.within, goto: 'invite' },
          { if: { meetingBooked: false }, withinDays: w.within, goto: 'last' },
          { if: { hasAddress: 'linkedin' }, goto: 'invite' },
          { if: { lacksAddress: 'x' }, goto: 'last' },
          { if: { field: 'custom.plan', equals: 'Pro' }, goto: 'goal' },
          { if: { field: 'title', contains: 'CEO' }, goto: 'goal' },
          { if: { field: 'company', exists: false }, goto: 'exit' },
        ],
        else: 'invite',
      },
      { kind: 'connect', delayDays: 1, message: 'Hi {{firstName}}', id: 'invite', next: [{ if: { allowed: false }, goto: 'last' }], else: 'last' },
      {
        kind: 'email',
        delayDays: 2,
        subject: 'One more',
        message: 'One more, {{firstName}}',
        id: 'last',
        next: [
          { if: { split: 30 }, goto: 'goal' },
          { if: { accepted: false }, withinDays: 2, goto: 'exit' },
          { if: { allowed: true }, goto: 'exit' },
          { if: { outOfOffice: false }, withinDays: 1, goto: 'exit' },
          { if: { meetingBooked: true }, withinDays: 1, goto: 'goal' },
          { if: { bounced: false }, withinDays: 1, goto: 'exit' },
          { if: { replied: true, channel: 'linkedin' }, withinDays: 1, goto: 'goal' },
          { if: { field: 'title', exists: true }, goto: 'goal' },
        ],
        else: 'exit',
      },
    ];
    const created = await t.services.authoring.createSequence(acme.workspaceId, {
      name: 'Every condition',
      steps: steps.map((st, index) => ({ index, subject: null, actions: [], variants: null, tool: null, ...st })) as never,
    });
    // Signed in by the test before (the session cookie stands).
    await page.goto(b.url(`/console/sequences/${created.sequence.id}`));
    await page.getByRole('heading', { level: 1, name: 'Every condition' }).waitFor();
    // Each edge shows its own condition chosen (not the first choice of the list).
    const edge = (step: number, n: number) =>
      page.getByRole('group', { name: `Step ${step}`, exact: true }).getByRole('group', { name: `Edge ${n}`, exact: true });
    await expect(edge(1, 3).getByLabel('If').inputValue()).resolves.toBe('replied:true');
    await expect(edge(1, 3).getByLabel('Intent').inputValue()).resolves.toBe('positive');
    await expect(edge(3, 1).getByLabel('Percent of leads').inputValue()).resolves.toBe('30');
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await phoneScrollWidth(page)).toBeLessThanOrEqual(390);
    await page.getByRole('button', { name: 'Save steps' }).click();
    await page.getByText('Nothing changed: the steps are those of revision 1.').waitFor();
    const row = await t.db.selectFrom('sequences').select(['revision', 'steps']).where('id', '=', created.sequence.id).executeTakeFirstOrThrow();
    expect(row.revision).toBe(1);
    expect(row.steps).toMatchObject(steps);
  });
});

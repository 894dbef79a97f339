import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { insertLead, insertMessagingAccount, insertReply, insertSequence } from '../helpers/factories.js';

const XSS = '<img src=x onerror=alert(1)>';

let t: TestApp;
let c: ConsoleClient;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
beforeAll(async () => {
  t = await buildTestApp();
  acme = await createWorkspaceWithKey(t, 'Acme');
  const other = await createWorkspaceWithKey(t, 'Other');
  const account = await insertMessagingAccount(t.db, acme.workspaceId, { name: `Sales ${XSS}` });
  const sequence = await insertSequence(t.db, acme.workspaceId, { name: `Founders ${XSS}` });
  const at = new Date('2026-11-10T10:00:00.000Z');
  await insertLead(t.db, acme.workspaceId, { account_id: account, sequence_id: sequence, invited_at: at, connected_at: at, messaged_at: at });
  const replied = await insertLead(t.db, acme.workspaceId, {
    account_id: account,
    sequence_id: sequence,
    invited_at: at,
    connected_at: at,
    messaged_at: at,
    replied_at: at,
  });
  await insertLead(t.db, acme.workspaceId, { account_id: account, sequence_id: sequence, invited_at: at });
  await insertReply(t.db, t.cipher, acme.workspaceId, { leadId: replied });
  // Another workspace's leads never count here.
  await insertLead(t.db, other.workspaceId, { invited_at: at });
  c = await signedInConsole(t, acme.key);
});
afterAll(async () => t?.close());

describe('console dashboard /console (issue 15 §5)', () => {
  it('shows the funnel as a chart and as tables by sequence and by account, with the same counts as GET /reports/funnel', async () => {
    const page = await c.get('/console');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="funnel-chart"');
    expect(page.body).toContain('/console/assets/uPlot.iife.min.js');
    const api = (await t.app.inject({ method: 'GET', url: '/api/v1/reports/funnel?group_by=account', headers: acme.auth })).json();
    expect(api.total).toMatchObject({ leads: 3, invited: 3, accepted: 2, messaged: 2, replied: 1 });
    const data = /data-funnel="([^"]+)"/.exec(page.body)![1].replace(/&#34;|&quot;/g, '"');
    expect(JSON.parse(data).values).toEqual([3, 3, 2, 2, 1, 0]);
    expect(page.body).toContain('By sequence');
    expect(page.body).toContain('By account');
    expect(page.body).toContain('50.0 %'); // reply rate 1 / 2
  });

  it('links the pending replies and shows failures and each account’s pacing today', async () => {
    const page = await c.get('/console');
    expect(page.body).toContain('<a href="/console/replies">Pending replies: 1</a>');
    expect(page.body).toMatch(/Failures in the last 7 days: \d+/);
    expect(page.body).toContain('Pacing today');
    expect(page.body).toMatch(/<td>\d+ of \d+<\/td>/);
  });

  it('escapes sequence and account names', async () => {
    const page = await c.get('/console');
    expect(page.body).not.toContain('<img');
    expect(page.body).toContain('Founders &lt;img src=x onerror=alert(1)');
    expect(page.body).toContain('Sales &lt;img src=x onerror=alert(1)');
  });
});

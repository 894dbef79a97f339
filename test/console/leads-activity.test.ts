import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { startConsoleApp, signedInConsole, type ConsoleClient, type TestWorkspace } from '../helpers/console.js';
import { insertActivity, insertLead } from '../helpers/factories.js';

let t: TestApp, acme: TestWorkspace, other: TestWorkspace, c: ConsoleClient;
beforeAll(async () => {
  ({ t, acme, other, c } = await startConsoleApp());
  const ada = await insertLead(t.db, acme.workspaceId, {
    person: 'Ada Lovelace',
    company: 'Analytical Engines',
    linkedin_url: 'https://li.example/ada',
    stage: 'replied',
    replied_at: new Date(),
  });
  await insertLead(t.db, acme.workspaceId, {
    person: '<script>alert(1)</script>',
    company: 'Evil & Co',
    linkedin_url: 'https://li.example/x',
    stage: 'invited',
  });
  await insertLead(t.db, acme.workspaceId, { person: 'Grace Hopper', company: 'Navy', linkedin_url: 'https://li.example/grace', stage: 'queued' });
  await insertLead(t.db, other.workspaceId, { person: 'Foreign Person', linkedin_url: 'https://li.example/f', stage: 'replied' });
  await insertActivity(t.db, acme.workspaceId, { action: 'invite', outcome: 'ok', createdAt: new Date(), leadId: ada, detail: 'sent' });
  await insertActivity(t.db, acme.workspaceId, { action: 'message', outcome: 'failed', createdAt: new Date(), leadId: ada, detail: 'provider refused <b>' });
  await insertActivity(t.db, other.workspaceId, { action: 'invite', outcome: 'ok', createdAt: new Date(), detail: 'foreign entry' });
});
afterAll(async () => t?.close());

const rowsOf = (html: string) => [...html.matchAll(/<tr>\s*<td[^>]*>(?:<a [^>]*>)?([^<]*)<\/(?:a|td)>/g)].map((m) => m[1]);

describe('console leads /console/leads (issue 15 §6)', () => {
  it('lists the workspace’s leads only, escaped, with the count', async () => {
    const res = await c.get('/console/leads');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('3 leads match; showing 3');
    expect(res.body).not.toContain('Foreign Person');
    expect(res.body).not.toContain('<script>alert(1)</script>');
    expect(res.body).toContain('&lt;script>alert(1)&lt;/script>');
    expect(res.body).toContain('Evil &amp; Co');
  });

  it('the API’s filters work as a form: a stage is cumulative, q searches, empty fields mean no filter', async () => {
    const invited = await c.get('/console/leads?stage=invited&q=&sinceDays=');
    expect(invited.statusCode).toBe(200);
    expect(rowsOf(invited.body).sort()).toEqual(['&lt;script>alert(1)&lt;/script>', 'Ada Lovelace']);
    expect(invited.body).toContain('<option value="invited" selected>');
    const q = await c.get('/console/leads?q=hopper');
    expect(rowsOf(q.body)).toEqual(['Grace Hopper']);
  });

  it('a value the API refuses is a 400 page naming the field and the allowed values', async () => {
    const res = await c.get('/console/leads?stage=pending');
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('stage');
    expect(res.body).toContain('replied');
    expect((await c.get('/console/leads?sinceDays=999')).statusCode).toBe(400);
  });
});

describe('console activity /console/activity (issue 15 §6)', () => {
  it('lists the workspace’s ledger only, escaped, filtered by action and outcome', async () => {
    const all = await c.get('/console/activity');
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain('2 entries match');
    expect(all.body).not.toContain('foreign entry');
    expect(all.body).toContain('provider refused &lt;b>');
    const failed = await c.get('/console/activity?outcome=failed&action=&account=');
    expect(failed.body).toContain('1 entry matches');
    expect(failed.body).toContain('provider refused');
    const invites = await c.get('/console/activity?action=invite');
    expect(invites.body).toContain('1 entry matches');
    expect(invites.body).toContain('<option value="invite" selected>');
  });

  it('an unknown action is a 400 page that names it and lists the known ones', async () => {
    const res = await c.get('/console/activity?action=teleport');
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('teleport');
    expect(res.body).toContain('invite');
  });

  it('without a session the pages ask for sign-in', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console/leads' });
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('Workspace key');
  });
});

describe('console activity in words (readable action names and details)', () => {
  it('names actions and says JSON details in words: no raw JSON, no action codes, reasons explained', async () => {
    const ws = await createWorkspaceWithKey(t, 'Words');
    const words = await signedInConsole(t, ws.key);
    const lead = await insertLead(t.db, ws.workspaceId, { person: 'Lin Words', linkedin_url: 'https://li.example/lin', stage: 'invited' });
    const at = new Date();
    await insertActivity(t.db, ws.workspaceId, {
      action: 'invite',
      outcome: 'ok',
      createdAt: at,
      leadId: lead,
      detail: '{"step":0,"kind":"connect","channel":"linkedin"}',
    });
    await insertActivity(t.db, ws.workspaceId, {
      action: 'email_sent',
      outcome: 'skipped',
      createdAt: at,
      leadId: lead,
      detail: JSON.stringify({ step: 1, kind: 'email', reason: 'broken_placeholder', field: 'firstName', token: '{{firstName' }),
    });
    await insertActivity(t.db, ws.workspaceId, {
      action: 'reply_detected',
      outcome: 'ok',
      createdAt: at,
      leadId: lead,
      detail: JSON.stringify({ channel: 'x', replyId: '00000000-0000-4000-8000-000000000001', mood: 'warm', text: 'the secret words of the reply' }),
    });
    const res = await words.get('/console/activity');
    expect(res.statusCode).toBe(200);
    const table = res.body.slice(res.body.indexOf('<table'));
    expect(table).toContain('Invitation sent');
    expect(table).toContain('step 1; connection request; via LinkedIn');
    expect(table).toContain('Step skipped: broken placeholder');
    expect(table).toContain('step 2; e-mail; broken placeholder; placeholder “firstName”');
    expect(table).toContain('Reply received');
    expect(table).toContain('via X; mood: warm');
    expect(table).not.toContain('{&quot;');
    expect(table).not.toContain('{"');
    expect(table).not.toContain('the secret words');
    expect(table).not.toMatch(/<td>\s*(invite|email_sent|reply_detected)\s*<\/td>/);
    expect(res.body).toMatch(/<option value="email_sent"[^>]*>E-mail sent<\/option>/);
  });
});

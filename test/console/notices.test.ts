import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { ConsoleClient } from '../helpers/console.js';
import { insertSequence } from '../helpers/factories.js';

// Issue 27: the outcome of an action travels to the next page in a short-lived cookie, never in the URL, so a
// crafted link cannot put words on a console page in the console's own voice.
let t: TestApp;
let c: ConsoleClient;
let sequenceId: string;

beforeAll(async () => {
  t = await buildTestApp();
  const acme = await createWorkspaceWithKey(t, 'Notices');
  sequenceId = await insertSequence(t.db, acme.workspaceId, { name: 'Founders', status: 'active' });
  c = new ConsoleClient(t);
  await c.signIn(acme.key);
});
afterAll(async () => t?.close());

it('a notice in the query string is never shown (no phishing text in the console’s voice)', async () => {
  for (const path of ['/console/sequences', `/console/sequences/${sequenceId}`, '/console/plays', '/console/leads/import']) {
    const page = await c.get(`${path}?done=Your+session+expired%2C+paste+your+key+at+evil.example&refused=Call+us`);
    expect(page.statusCode, path).toBe(200);
    expect(page.body, path).not.toContain('evil.example');
    expect(page.body, path).not.toContain('Call us');
  }
});

it('the outcome of an action is shown once on the page the action redirects to, then forgotten', async () => {
  const list = await c.get(`/console/sequences/${sequenceId}`);
  expect(list.statusCode).toBe(200);
  const paused = await c.post(`/console/sequences/${sequenceId}/status`, { status: 'paused', back: 'page' });
  expect([200, 303]).toContain(paused.statusCode);
  const shown = paused.statusCode === 303 ? await c.get(paused.headers.location as string) : paused;
  expect(shown.body).toContain('Status changed from active to paused.');
  const again = await c.get(`/console/sequences/${sequenceId}`);
  expect(again.body).not.toContain('Status changed from active to paused.');
});

import { afterAll, beforeAll, expect, it } from 'vitest';

// A whole import at its bound (2,000 rows), each row with an e-mail address and a LinkedIn profile: the identity
// lookup of every row's keys stays one small statement. With the keys spelled as a list of row values the embedded
// database (PGlite) aborted from about 250 such rows, and the API answered 500.
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());
it('imports 2,000 rows with e-mail and LinkedIn, and finds them all duplicates the second time', async () => {
  const ws = await createWorkspaceWithKey(t, 'Big');
  const rows = Array.from({ length: 2000 }, (_, i) => `P ${i},Co,T,p${i}@big.example,https://www.linkedin.com/in/p-${i}`);
  const csv = ['person,company,title,email,linkedinUrl', ...rows].join('\n');
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/leads/import', headers: ws.auth, payload: { csv } });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  expect(res.json().counts.new).toBe(2000);
  const again = await t.app.inject({ method: 'POST', url: '/api/v1/leads/import', headers: ws.auth, payload: { csv, dryRun: true } });
  expect(again.json().counts.duplicate).toBe(2000);
}, 120_000);

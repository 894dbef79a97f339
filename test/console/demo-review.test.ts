import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole } from '../helpers/console.js';

const DEMO_PLAY = '9002e57c-2cff-467b-befc-728559a5dd9c';
let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await buildTestApp();
  const result = await t.services.world.seed(JSON.parse(fs.readFileSync('examples/demo-world.json', 'utf8')));
  key = result.workspaces[0].apiKeys[0];
});
afterAll(async () => t?.close());

// Issue 15's "done when": sign in with the printed demo key and review the demo Play's candidates.
describe('the demo world in the console', () => {
  it('the demo key signs in; the Plays page links to the demo Play; a candidate is enrolled from the review page', async () => {
    const c = await signedInConsole(t, key);
    const plays = await c.get('/console/plays');
    expect(plays.body).toContain(`href="/review/plays/${DEMO_PLAY}"`);
    const page = await c.get(`/review/plays/${DEMO_PLAY}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Followers of @northwind_hq</h1>');
    const row = /data-candidate="([^"]+)"[\s\S]*?hx-vals="\{&#34;xUserId&#34;:&#34;(\d+)&#34;\}"/.exec(page.body);
    expect(row, 'the demo Play has an unreviewed candidate').not.toBeNull();
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body)![1];
    const res = await c.post(
      `/review/plays/${DEMO_PLAY}/candidates/${row![1]}/good-fit`,
      { expectedRevision: field('expectedRevision'), sequenceId: field('sequenceId'), sequenceRevision: field('sequenceRevision'), xUserId: row![2] },
      { 'hx-request': 'true' },
    );
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/role="status">(Enrolled|Existing lead kept)</);
  });
});

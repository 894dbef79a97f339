import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertPlay, insertXAccount } from '../helpers/factories.js';
import { ENGINE_ENV } from '../engine/helpers.js';
import { startXApiFake, type XApiFake } from '../helpers/x-api-fake.js';

// Issue 18 §4: Play discovery through OUTREACH_PUBLICDATA_PROVIDER=x reads the account's followers from the X API v2
// (here the fake) in pages of 1,000, within X's 15-requests-per-15-minutes window for followers.
const T0 = new Date();
let x: XApiFake;
let t: TestApp;

beforeAll(async () => {
  x = await startXApiFake();
  x.addUser({ id: '2001', username: 'acme_hq' });
  for (let i = 0; i < 5_000; i++) {
    const id = String(100_000 + i);
    x.addUser({ id, username: `f${i}` });
    x.follow(id, '2001');
  }
  const app = x.issueTokens('2001'); // stands in for the X app's Bearer Token
  t = await buildTestApp({
    now: T0.toISOString(),
    env: {
      ...ENGINE_ENV,
      OUTREACH_DISCOVERY_INTERVAL: 3600,
      OUTREACH_PUBLICDATA_PROVIDER: 'x',
      OUTREACH_PUBLICDATA_KEY: app.accessToken,
      OUTREACH_X_API_URL: x.url,
    },
  });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await x?.close();
});

it('discovery over 5,000 followers reads 5 pages of 1,000 and saves every follower once as a proposed candidate', async () => {
  const { workspaceId } = await createWorkspaceWithKey(t, 'Discovery over X');
  await t.db.updateTable('workspaces').set({ energy_balance: 1_000 }).where('id', '=', workspaceId).execute();
  await insertXAccount(t.db, workspaceId, { userId: '2001', handle: 'acme_hq' });
  const playId = (await insertPlay(t.db, workspaceId, { accountUserId: '2001' })).id;
  const summary = await t.services.engine.runPass({ now: T0 });
  expect(summary.discovered).toBe(5_000);
  expect(x.requests.filter((r) => r === 'GET /2/users/2001/followers')).toHaveLength(5);
  const saved = await t.db
    .selectFrom('candidates')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('play_id', '=', playId)
    .executeTakeFirstOrThrow();
  expect(Number(saved.n)).toBe(5_000);
  // A new follower is found on the next run (after the discovery interval), and only it is new.
  x.addUser({ id: '999999', username: 'late_fan' });
  x.follow('999999', '2001');
  const next = await t.services.engine.runPass({ now: new Date(T0.getTime() + 2 * 3_600_000) });
  expect(next.discovered).toBe(1);
});

it("resolve through the x provider while X's by-username window is spent: 503 provider_unavailable with Retry-After and retryAfterSeconds", async () => {
  const { workspaceId, auth } = await createWorkspaceWithKey(t, 'Resolve while limited');
  await t.db.updateTable('workspaces').set({ energy_balance: 100 }).where('id', '=', workspaceId).execute();
  x.addUser({ id: '3001', username: 'limited_lee' });
  x.failNext('GET /2/users/by/username', { status: 429, resetAt: Math.ceil(Date.now() / 1000) + 600 });
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/x/users/resolve', headers: auth, payload: { username: 'limited_lee' } });
  expect(res.statusCode, res.body).toBe(503);
  const body = res.json();
  expect(body).toMatchObject({ error: 'provider_unavailable', status: 'unknown', user: null, sendsMessages: false });
  expect(body.retryAfterSeconds).toBeGreaterThan(500);
  expect(body.retryAfterSeconds).toBeLessThanOrEqual(601);
  expect(res.headers['retry-after']).toBe(String(body.retryAfterSeconds));
  // The window is remembered: the next resolve does not call X, still says how long to wait, and costs no energy
  // (the first one did: X was asked).
  const balance = async () =>
    Number((await t.db.selectFrom('workspaces').select('energy_balance').where('id', '=', workspaceId).executeTakeFirstOrThrow()).energy_balance);
  expect(await balance()).toBe(99);
  const calls = x.requests.filter((r) => r.startsWith('GET /2/users/by/username')).length;
  const again = await t.app.inject({ method: 'POST', url: '/api/v1/x/users/resolve', headers: auth, payload: { username: 'limited_lee' } });
  expect(again.statusCode).toBe(503);
  expect(Number(again.headers['retry-after'])).toBeGreaterThan(500);
  expect(x.requests.filter((r) => r.startsWith('GET /2/users/by/username')).length).toBe(calls);
  expect(await balance()).toBe(99);
});

it("eligibility while X's followers window is spent: unknown rows say provider_unavailable and how long to wait; the snapshot read costs nothing", async () => {
  const { workspaceId, auth } = await createWorkspaceWithKey(t, 'Eligibility while limited');
  await t.db.updateTable('workspaces').set({ energy_balance: 100 }).where('id', '=', workspaceId).execute();
  await insertXAccount(t.db, workspaceId, { userId: '2001', handle: 'acme_hq' });
  // One read closes the window (X answers 429 with its reset); every later read is refused before the charge.
  x.failNext('GET /2/users/2001/followers', { status: 429, resetAt: Math.ceil(Date.now() / 1000) + 600 });
  const eligibility = () =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/x/eligibility',
      headers: auth,
      payload: { account: 'acme_hq', leads: [{ xUserId: '100001' }, { xUserId: '100002' }] },
    });
  const first = await eligibility();
  expect(first.statusCode, first.body).toBe(200);
  for (const row of first.json().results) {
    expect(row).toMatchObject({ followsAccount: null, reason: 'provider_unavailable' });
    expect(row.retryAfterSeconds).toBeGreaterThan(500);
    expect(row.retryAfterSeconds).toBeLessThanOrEqual(601);
  }
  const balance = async () =>
    Number((await t.db.selectFrom('workspaces').select('energy_balance').where('id', '=', workspaceId).executeTakeFirstOrThrow()).energy_balance);
  expect(await balance()).toBe(99); // the read that met the 429 was charged: X was asked
  const calls = x.requests.filter((r) => r === 'GET /2/users/2001/followers').length;
  const again = await eligibility();
  expect(again.json().results[0]).toMatchObject({ reason: 'provider_unavailable' });
  expect(again.json().results[0].retryAfterSeconds).toBeGreaterThan(500);
  expect(x.requests.filter((r) => r === 'GET /2/users/2001/followers').length).toBe(calls);
  expect(await balance()).toBe(99);
});

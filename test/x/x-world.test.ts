import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { ADMIN, admin } from '../helpers/world-fixtures.js';

// World-file contract, "Connected X accounts": `oauth` needs accessToken, refreshToken and expiresAt; tokens are
// stored encrypted and never echoed.
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
});
afterAll(async () => t?.close());

const seed = (oauth: Record<string, unknown>) =>
  t.app.inject({
    method: 'POST',
    url: '/admin/v1/seed',
    headers: admin,
    payload: { workspaces: [{ name: 'Seeded X', xAccounts: [{ userId: '2001', handle: 'acme_hq', oauth }] }] },
  });

it.each([
  ['refreshToken', { accessToken: 'at-secret-1', expiresAt: '2026-12-01T00:00:00Z' }],
  ['accessToken', { refreshToken: 'rt-secret-1', expiresAt: '2026-12-01T00:00:00Z' }],
  ['expiresAt', { accessToken: 'at-secret-1', refreshToken: 'rt-secret-1' }],
])('an oauth block without %s is a 400 naming it, and nothing is saved', async (field, oauth) => {
  const res = await seed(oauth);
  expect(res.statusCode).toBe(400);
  expect(res.body).toContain(`/workspaces/0/xAccounts/0/oauth/${field}`);
  expect(res.body).not.toContain('secret-1');
  expect(await t.db.selectFrom('x_account_oauth').selectAll().execute()).toHaveLength(0);
});

it('seeded tokens are stored encrypted and never echoed', async () => {
  const res = await seed({ accessToken: 'at-secret-2', refreshToken: 'rt-secret-2', expiresAt: '2026-12-01T00:00:00Z', scopes: ['dm.write'] });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.body).not.toContain('secret-2');
  const rows = await t.db.selectFrom('x_account_oauth').selectAll().execute();
  expect(rows).toHaveLength(1);
  expect(JSON.stringify(rows)).not.toContain('secret-2');
  expect(rows[0]).toMatchObject({ user_id: '2001', scopes: 'dm.write', disconnected_at: null });
});

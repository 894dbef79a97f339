import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { ENGINE_ENV, insertAccount, step, steps } from './helpers.js';

let t: TestApp;
const token = 'control-token-for-engine-tick-test';
beforeAll(async () => {
  t = await buildTestApp({ env: ENGINE_ENV, controlToken: token });
});
afterAll(async () => t?.close());

it('POST /admin/v1/engine/tick runs one pass as of the given time and answers its summary', async () => {
  const { workspaceId } = await createWorkspaceWithKey(t, 'Tick');
  const account = await insertAccount(t.db, workspaceId);
  const seq = await insertSequence(t.db, workspaceId, { steps: steps(step('connect')) });
  await insertLead(t.db, workspaceId, { account_id: account, sequence_id: seq, next_action_at: new Date('2026-12-01T10:00:00Z') });
  const early = await t.app.inject({
    method: 'POST',
    url: '/admin/v1/engine/tick',
    headers: { authorization: `Bearer ${token}` },
    payload: { now: '2026-12-01T09:00:00Z' },
  });
  expect(early.statusCode).toBe(200);
  expect(early.json()).toMatchObject({ actions: 0 });
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/v1/engine/tick',
    headers: { authorization: `Bearer ${token}` },
    payload: { now: '2026-12-01T10:00:00Z' },
  });
  expect(res.json()).toEqual({ actions: 1, skipped: 0, failed: 0, repliesDetected: 0, deferred: 0, observations: 0, discovered: 0 });
  const bad = await t.app.inject({
    method: 'POST',
    url: '/admin/v1/engine/tick',
    headers: { authorization: `Bearer ${token}` },
    payload: { now: 'yesterday' },
  });
  expect(bad.statusCode).toBe(400);
  const unauth = await t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', payload: {} });
  expect(unauth.statusCode).toBe(404);
});

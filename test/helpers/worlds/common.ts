import { expect } from 'vitest';
import type { TestApp } from '../build-test-app.js';
import { admin } from '../world-fixtures.js';

// What every channel world does the same way: seeding workspaces through the world file, and one engine pass at a
// test's clock.

/** A seeded workspace: its id, its first API key, and that key as an Authorization header. */
export interface SeededWorkspace {
  id: string;
  key: string;
  auth: { authorization: string };
}

/**
 * Seeds `workspaces` (world-file entries, `docs/world-file.md`) through POST /admin/v1/seed and fails the test unless
 * the answer is 200. Returns the workspaces in the order given; `key` is undefined for a workspace without `apiKeys`.
 */
export async function seedWorkspaces(t: TestApp, workspaces: Record<string, unknown>[]): Promise<SeededWorkspace[]> {
  const res = await t.app.inject({ method: 'POST', url: '/admin/v1/seed', headers: admin, payload: { workspaces } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().workspaces as { id: string; apiKeys?: string[] }[]).map((w) => ({
    id: w.id,
    key: w.apiKeys?.[0] as string,
    auth: { authorization: `Bearer ${w.apiKeys?.[0]}` },
  }));
}

/**
 * One engine pass (POST /admin/v1/engine/tick) at `at` (epoch milliseconds); fails the test unless the answer is 200.
 * `setClock`: the app's clock moves to `at` first, for the services a test calls directly. Returns the pass's summary.
 */
export async function engineTick(t: TestApp, at: number, opts: { setClock?: boolean } = {}) {
  if (opts.setClock) t.clock.set(new Date(at));
  const res = await t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: { now: new Date(at).toISOString() } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

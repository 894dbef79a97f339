import { expect } from 'vitest';
import type { TestApp } from './build-test-app.js';
import { buildTestApp, createWorkspaceWithKey } from './build-test-app.js';

/** HTTP calls as one workspace key, through the whole app (auth hook, validation, serialization). */
export function client(t: TestApp, headers: Record<string, string>) {
  return {
    get: (url: string, extra: Record<string, string> = {}) => t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: { ...headers, ...extra } }),
    post: (url: string, body?: unknown, extra: Record<string, string> = {}) =>
      t.app.inject({
        method: 'POST',
        url: `/api/v1${url}`,
        headers: { ...headers, ...(typeof body === 'string' && { 'content-type': 'application/json' }), ...extra },
        ...(body !== undefined && { payload: body as string }),
      }),
  };
}
export type Client = ReturnType<typeof client>;

export type TestWorkspace = Awaited<ReturnType<typeof createWorkspaceWithKey>>;

/**
 * The tenancy every read test checks: the owner `a`, a stranger `b`, and a Team `client` of `a` that `a`
 * reaches through the x-workspace-client selector with the given role.
 */
export async function createTeamWorkspaces(t: TestApp, ownerName: string, role: 'admin' | 'member' = 'admin') {
  const a = await createWorkspaceWithKey(t, ownerName);
  const b = await createWorkspaceWithKey(t, 'Other Co');
  const teamClient = await createWorkspaceWithKey(t, 'Client Co');
  await t.services.workspaces.addTeamLink({ ownerWorkspaceId: a.workspaceId, clientWorkspaceId: teamClient.workspaceId, role });
  return { a, b, client: teamClient };
}

/**
 * The Play tests' world: a fresh app, the calling workspace `acme` (with `api`, its client), a stranger
 * `other`, and with `team: true` a Team client of acme. Each test file builds its own and closes `t` after.
 */
export async function startPlayTest(options: { team?: boolean } = {}) {
  const t = await buildTestApp();
  const acme = await createWorkspaceWithKey(t, 'Acme');
  const other = await createWorkspaceWithKey(t, 'Other');
  let team: TestWorkspace | undefined;
  if (options.team) {
    team = await createWorkspaceWithKey(t, 'Team client');
    await t.services.workspaces.addTeamLink({ ownerWorkspaceId: acme.workspaceId, clientWorkspaceId: team.workspaceId, role: 'admin' });
  }
  return { t, acme, other, team: team as TestWorkspace, api: client(t, acme.auth) };
}

/** The JSON body of an answer that must be 200 (the body is printed when it is not). */
export function okJson(res: { statusCode: number; body: string; json(): any }) {
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

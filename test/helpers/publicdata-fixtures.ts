import { sql } from 'kysely';
import type { Database } from '../../src/db/database.js';
import type { DB } from '../../src/db/schema.js';
import { createSandboxProvider, type SandboxWorld } from '../../src/providers/publicdata/index.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from './build-test-app.js';
import { insertXAccount } from './factories.js';

/** Workspace energy state and ledger reads for public-data, energy and readiness tests; inserts live in factories.ts. */

export interface WorkspaceEnergy {
  plan?: string;
  status?: 'active' | 'trialing' | 'past_due' | 'canceled';
  balance?: number;
  dailyRefill?: number;
  /** Last refill; tests set it to "now" to rule out a lazy refill, or to yesterday to owe one. */
  refilledAt?: Date | string;
  xChannelEnabled?: boolean;
}

export async function setWorkspace(db: Database, workspaceId: string, v: WorkspaceEnergy) {
  await db
    .updateTable('workspaces')
    .set({
      ...(v.plan !== undefined && { billing_plan: v.plan }),
      ...(v.status !== undefined && { billing_status: v.status }),
      ...(v.balance !== undefined && { energy_balance: v.balance }),
      ...(v.dailyRefill !== undefined && { energy_daily_refill: v.dailyRefill }),
      ...(v.refilledAt !== undefined && { energy_refilled_at: new Date(v.refilledAt) }),
      ...(v.xChannelEnabled !== undefined && { x_channel_enabled: v.xChannelEnabled }),
    })
    .where('id', '=', workspaceId)
    .execute();
}

export async function energyRow(db: Database, workspaceId: string) {
  return db.selectFrom('workspaces').select(['energy_balance', 'energy_refilled_at']).where('id', '=', workspaceId).executeTakeFirstOrThrow();
}

/** Public-data charges in the activity ledger of one workspace. */
export async function ledger(db: Database, workspaceId: string) {
  const rows = await db
    .selectFrom('activity')
    .select(['action', 'outcome', 'units', 'detail'])
    .where('workspace_id', '=', workspaceId)
    .where('action', 'in', ['resolve', 'enrich'])
    .execute();
  return { count: rows.length, units: rows.reduce((n, r) => n + r.units, 0), rows };
}

/** Writes the sandbox world into the publicdata_* tables, as the world loader does. */
export async function seedPublicWorld(db: Database, world: SandboxWorld) {
  if (world.users?.length) {
    await db
      .insertInto('publicdata_users')
      .values(world.users.map((u) => ({ x_user_id: u.xUserId, username: u.username, name: u.name })))
      .onConflict((oc) => oc.column('x_user_id').doNothing())
      .execute();
  }
  if (world.follows?.length) {
    await db
      .insertInto('publicdata_follows')
      .values(world.follows)
      .onConflict((oc) => oc.columns(['followed', 'follower']).doNothing())
      .execute();
  }
  if (world.unavailable?.length) {
    await db
      .insertInto('publicdata_unavailable')
      .values(world.unavailable.map((handle) => ({ handle })))
      .onConflict((oc) => oc.column('handle').doNothing())
      .execute();
  }
}

/** How many rows `table` holds, all workspaces together. */
export async function countRows(db: Database, table: keyof DB) {
  const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(db);
  return r.rows[0].n;
}

/** The people both sandbox worlds (provider unit tests and the HTTP tests) know: one unavailable, one without a name. */
export const SANDBOX_PEOPLE = [
  { xUserId: '1001', username: 'alice', name: 'Alice A.' },
  { xUserId: '1002', username: 'Bob_B', name: null },
  { xUserId: '1003', username: 'carol', name: 'Carol' },
  { xUserId: '1004', username: 'ghost', name: 'Ghost' },
];

/** The connected account of the public-data HTTP tests' workspaces. */
export const ACCOUNT_ID = '2001';
const HTTP_WORLD: SandboxWorld = {
  users: [
    ...SANDBOX_PEOPLE,
    { xUserId: ACCOUNT_ID, username: 'Acme_HQ', name: 'Acme' },
    { xUserId: '3001', username: 'other_hq', name: 'Other' },
    ...Array.from({ length: 20 }, (_, i) => ({ xUserId: String(5001 + i), username: `user${i + 1}`, name: null })),
  ],
  follows: [
    { follower: '1001', followed: ACCOUNT_ID },
    { follower: '1003', followed: ACCOUNT_ID },
    { follower: '9999', followed: ACCOUNT_ID },
    { follower: '1002', followed: '1001' },
  ],
  unavailable: ['ghost'],
};

/**
 * The public-data HTTP tests' app over the sandbox world, a stranger workspace with its own account, and the
 * calls they make (src/modules/publicdata/publicdata*.test.ts).
 */
export async function startPublicDataTest() {
  const t: TestApp = await buildTestApp({ publicData: createSandboxProvider(HTTP_WORLD, { now: () => t.clock.now() }) });
  const stranger = await createWorkspaceWithKey(t, 'Stranger');
  await insertXAccount(t.db, stranger.workspaceId, { userId: '3001', handle: 'other_hq' });

  const sandbox = (opts: { latencyMs?: number; failureRate?: number } = {}) => createSandboxProvider(HTTP_WORLD, { ...opts, now: () => t.clock.now() });

  /** A fresh workspace with the connected account `Acme_HQ`, full energy that is not due a refill. */
  async function workspace(energy: WorkspaceEnergy = {}, app: TestApp = t) {
    const ws = await createWorkspaceWithKey(app, 'Acme');
    await insertXAccount(app.db, ws.workspaceId, { userId: ACCOUNT_ID, handle: 'Acme_HQ' });
    await setWorkspace(app.db, ws.workspaceId, { balance: 1000, dailyRefill: 1000, refilledAt: app.clock.now(), ...energy });
    return ws;
  }

  const post = (url: string, headers: Record<string, string>, payload: unknown, app: TestApp = t) =>
    app.app.inject({ method: 'POST', url: `/api/v1${url}`, headers, payload: payload as object });
  const resolve = (headers: Record<string, string>, username: unknown, app?: TestApp) => post('/x/users/resolve', headers, { username }, app);
  const eligibility = (headers: Record<string, string>, body: unknown, app?: TestApp) => post('/x/eligibility', headers, body, app);

  return { t, stranger, sandbox, workspace, post, resolve, eligibility };
}
export type PublicDataTest = Awaited<ReturnType<typeof startPublicDataTest>>;

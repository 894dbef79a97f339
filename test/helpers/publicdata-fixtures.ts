import { sql } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { newMessagingAccountId } from '../../src/lib/ids.js';
import type { SandboxWorld } from '../../src/providers/publicdata/index.js';

/** Direct inserts for public-data, energy and readiness tests; the world loader is not needed. */

export async function addXAccount(db: Database, workspaceId: string, account: { userId: string; handle: string }) {
  await db.insertInto('x_accounts').values({ workspace_id: workspaceId, user_id: account.userId, handle: account.handle }).execute();
}

export async function addMessagingAccount(db: Database, workspaceId: string, account: { name?: string; storedStatus?: string } = {}) {
  const id = newMessagingAccountId();
  await db
    .insertInto('messaging_accounts')
    .values({ id, workspace_id: workspaceId, name: account.name ?? 'Dana (LinkedIn)', stored_status: account.storedStatus ?? 'connected' })
    .execute();
  return id;
}

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
  return db
    .selectFrom('workspaces')
    .select(['energy_balance', 'energy_refilled_at'])
    .where('id', '=', workspaceId)
    .executeTakeFirstOrThrow();
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
    await db.insertInto('publicdata_follows').values(world.follows).onConflict((oc) => oc.columns(['followed', 'follower']).doNothing()).execute();
  }
  if (world.unavailable?.length) {
    await db
      .insertInto('publicdata_unavailable')
      .values(world.unavailable.map((handle) => ({ handle })))
      .onConflict((oc) => oc.column('handle').doNothing())
      .execute();
  }
}

export async function countRows(db: Database, table: 'leads' | 'candidates' | 'outbox_events') {
  const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(db);
  return r.rows[0].n;
}

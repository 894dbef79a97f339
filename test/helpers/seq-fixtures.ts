import type { Insertable } from 'kysely';
import type { Database } from '../../src/db/database.js';
import type { LeadsTable } from '../../src/db/schema.js';
import { newId, newMessagingAccountId } from '../../src/lib/ids.js';

// Direct inserts for the sequences and x-leads tests: they stage rows the public API cannot create,
// independent of the world-file loader.

export async function setWorkspaceState(
  db: Database,
  workspaceId: string,
  state: {
    xChannelEnabled?: boolean;
    billingStatus?: 'active' | 'trialing' | 'past_due' | 'canceled';
    energyBalance?: number;
    energyDailyRefill?: number;
    energyRefilledAt?: Date;
  },
) {
  await db
    .updateTable('workspaces')
    .set({
      ...(state.xChannelEnabled !== undefined && { x_channel_enabled: state.xChannelEnabled }),
      ...(state.billingStatus !== undefined && { billing_status: state.billingStatus }),
      ...(state.energyBalance !== undefined && { energy_balance: state.energyBalance }),
      ...(state.energyDailyRefill !== undefined && { energy_daily_refill: state.energyDailyRefill }),
      ...(state.energyRefilledAt !== undefined && { energy_refilled_at: state.energyRefilledAt }),
    })
    .where('id', '=', workspaceId)
    .execute();
}

export interface SequenceFixture {
  id?: string;
  name?: string;
  status?: 'draft' | 'active' | 'paused' | 'archived';
  revision?: number;
  /** Defaults to `revision` (approved); pass null for never approved. */
  approvedRevision?: number | null;
  approvedAt?: Date | null;
  channels?: string[];
  // Loose on purpose: tests store steps that omit optional fields, as world files and older rows may.
  steps?: object[];
  createdAt?: Date;
}

export async function insertSequence(db: Database, workspaceId: string, f: SequenceFixture = {}) {
  const id = f.id ?? newId();
  const revision = f.revision ?? 1;
  const approvedRevision = f.approvedRevision === undefined ? revision : f.approvedRevision;
  await db
    .insertInto('sequences')
    .values({
      id,
      workspace_id: workspaceId,
      name: f.name ?? `Sequence ${id.slice(0, 8)}`,
      status: f.status ?? 'active',
      revision,
      approved_revision: approvedRevision,
      approved_at: f.approvedAt !== undefined ? f.approvedAt : approvedRevision === null ? null : new Date('2026-11-01T09:00:00.000Z'),
      channels: f.channels ?? ['linkedin'],
      steps: JSON.stringify(f.steps ?? [{ index: 0, kind: 'connect', delayDays: 0, subject: null, message: 'Hi', actions: [], variants: null, tool: null }]),
      ...(f.createdAt && { created_at: f.createdAt }),
    })
    .execute();
  return id;
}

export async function insertMessagingAccount(db: Database, workspaceId: string, f: { mode?: string; storedStatus?: string; id?: string } = {}) {
  const id = f.id ?? newMessagingAccountId();
  await db
    .insertInto('messaging_accounts')
    .values({ id, workspace_id: workspaceId, name: `Account ${id.slice(4, 12)}`, mode: f.mode ?? 'linkedin', stored_status: f.storedStatus ?? 'connected', connected_at: new Date('2026-10-01T00:00:00.000Z'), warmup_started_at: null, account_score: null, relations_count: null })
    .execute();
  return id;
}

export async function insertXAccount(db: Database, workspaceId: string, f: { userId?: string; handle?: string } = {}) {
  const userId = f.userId ?? String(2000 + Math.floor(Math.random() * 1_000_000));
  await db.insertInto('x_accounts').values({ workspace_id: workspaceId, user_id: userId, handle: f.handle ?? `acct_${userId}` }).execute();
  return userId;
}

export async function insertPlay(
  db: Database,
  workspaceId: string,
  f: { id?: string; sequenceId?: string | null; accountUserId?: string | null; autopilot?: boolean } = {},
) {
  const id = f.id ?? newId();
  await db
    .insertInto('plays')
    .values({
      id,
      workspace_id: workspaceId,
      name: `Play ${id.slice(0, 8)}`,
      status: 'active',
      sequence_id: f.sequenceId ?? null,
      account_user_id: f.accountUserId ?? null,
      ...(f.autopilot !== undefined && { autopilot: f.autopilot }),
    })
    .execute();
  return id;
}

export type LeadFixture = Partial<Omit<Insertable<LeadsTable>, 'workspace_id'>>;

/** Every column the fixture does not name takes its database default (null for the nullable ones). */
export async function insertLead(db: Database, workspaceId: string, f: LeadFixture = {}) {
  const id = f.id ?? newId();
  await db.insertInto('leads').values({ ...f, id, workspace_id: workspaceId }).execute();
  return id;
}

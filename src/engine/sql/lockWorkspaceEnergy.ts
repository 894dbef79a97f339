import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { WorkspaceEnergyRow } from './rows.js';

export async function lockWorkspaceEnergy(trx: Database, workspaceIds: string[]): Promise<WorkspaceEnergyRow[]> {
  const out: WorkspaceEnergyRow[] = [];
  // One at a time in id order: the same order in every worker, so they queue instead of deadlocking. NO KEY UPDATE,
  // not UPDATE: inserting a row that references the workspace (an activity entry, an outbox event) takes KEY SHARE
  // on it until commit, which FOR UPDATE waits for; a recording transaction holding that while it waits on a pacing
  // counter this claim holds was a deadlock. NO KEY UPDATE still serializes energy debits against each other.
  for (const id of [...workspaceIds].sort()) {
    const { rows } = await sql<WorkspaceEnergyRow>`SELECT id, billing_status, energy_balance, energy_daily_refill, energy_refilled_at
      FROM workspaces WHERE id = ${id}::uuid FOR NO KEY UPDATE`.execute(trx);
    if (rows[0]) out.push(rows[0]);
  }
  return out;
}

import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { WorkspaceEnergyRow } from './rows.js';

export async function lockWorkspaceEnergy(trx: Database, workspaceIds: string[]): Promise<WorkspaceEnergyRow[]> {
  const out: WorkspaceEnergyRow[] = [];
  // One at a time in id order: the same order in every worker, so they queue instead of deadlocking.
  for (const id of [...workspaceIds].sort()) {
    const { rows } = await sql<WorkspaceEnergyRow>`SELECT id, billing_status, energy_balance, energy_daily_refill, energy_refilled_at
      FROM workspaces WHERE id = ${id}::uuid FOR UPDATE`.execute(trx);
    if (rows[0]) out.push(rows[0]);
  }
  return out;
}

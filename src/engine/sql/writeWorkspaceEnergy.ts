import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/** The balance after a claim's debits, with the refill it wrote (src/domain/energy.ts afterSpending). */
export async function writeWorkspaceEnergy(trx: Database, id: string, balance: number, refilledAt: Date) {
  await sql`UPDATE workspaces SET energy_balance = ${balance}, energy_refilled_at = ${refilledAt.toISOString()}::timestamptz WHERE id = ${id}::uuid`.execute(
    trx,
  );
}

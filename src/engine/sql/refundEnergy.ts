import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/** Gives back what failed sends were charged, workspace by workspace in id order (the claim's lock order). */
export async function refundEnergy(trx: Database, refunds: Map<string, number>) {
  for (const id of [...refunds.keys()].sort()) {
    const units = refunds.get(id)!;
    if (units > 0) await sql`UPDATE workspaces SET energy_balance = energy_balance + ${units} WHERE id = ${id}::uuid`.execute(trx);
  }
}

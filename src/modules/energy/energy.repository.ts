import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { effectiveBalanceSql, refillDueSql } from '../../domain/energy.js';

export async function findEnergyRow(db: Database, workspaceId: string) {
  return db
    .selectFrom('workspaces')
    .select(['billing_plan', 'billing_status', 'energy_balance', 'energy_daily_refill', 'energy_refilled_at'])
    .where('id', '=', workspaceId)
    .executeTakeFirst();
}

export interface ChargeInput {
  workspaceId: string;
  units: number;
  /** Stamps the ledger entry and decides which UTC day's refill applies (src/domain/energy.ts). */
  now: Date;
  activityId: string;
  action: string;
  detail: string;
}

/**
 * Refill, debit and ledger entry in ONE statement. The refill and the affordability test read the
 * same row version the UPDATE locks, and PostgreSQL re-checks the WHERE clause against the latest
 * committed version when concurrent charges queue on that row, so no interleaving can refill twice
 * in a day or push the balance below zero; the CHECK (energy_balance >= 0) is only the backstop.
 * The ledger row exists exactly when the debit happened, so balance and ledger never disagree.
 * Returns the balance after the charge, or null when the workspace cannot afford it.
 */
export async function chargeEnergy(db: Database, p: ChargeInput): Promise<number | null> {
  const due = refillDueSql('w', p.now);
  const available = effectiveBalanceSql('w', p.now);
  const result = await sql<{ energy_balance: number }>`
    WITH charged AS (
      UPDATE workspaces w SET
        energy_balance = ${available} - ${p.units}::int,
        energy_refilled_at = CASE WHEN ${due} THEN ${p.now.toISOString()}::timestamptz ELSE w.energy_refilled_at END
      WHERE w.id = ${p.workspaceId}::uuid AND ${available} >= ${p.units}::int
      RETURNING w.id, w.energy_balance
    ), ledger AS (
      INSERT INTO activity (id, workspace_id, created_at, action, outcome, units, detail)
      SELECT ${p.activityId}::uuid, c.id, ${p.now.toISOString()}::timestamptz, ${p.action}::text, 'ok', ${p.units}::int, ${p.detail}::text
      FROM charged c
    )
    SELECT energy_balance FROM charged`.execute(db);
  return result.rows[0]?.energy_balance ?? null;
}

import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { effectiveBalanceSql, refillDueSql } from '../../domain/energy.js';
import { appendLedgerSql, type LedgerDetail } from '../../domain/ledger.js';

/** The public-data reads that cost energy, each a ledger action of its own. */
export type EnergyAction = 'resolve' | 'enrich';

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
  action: EnergyAction;
  detail: LedgerDetail<EnergyAction>;
}

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
      ${appendLedgerSql({ id: p.activityId, leadId: null, accountId: null, at: p.now, action: p.action, outcome: 'ok', units: p.units, detail: p.detail }, 'charged c', 'c.id')}
    )
    SELECT energy_balance FROM charged`.execute(db);
  return result.rows[0]?.energy_balance ?? null;
}

import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, tooManyRequests } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { effectiveBalance, nextRefillAt } from '../../domain/energy.js';
import type { BillingStatus } from '../../domain/vocabulary.js';
import * as repo from './energy.repository.js';
import type { EnergyAction } from './energy.repository.js';

/** Ledger actions of the spec's activity enum that a public-data read is recorded under. */
export type { EnergyAction } from './energy.repository.js';

export interface Billing {
  plan: string;
  status: BillingStatus;
}

export interface EnergyState {
  /** What the workspace can spend right now, including a refill that is owed but not yet written. */
  balance: number;
  dailyRefill: number;
  /** null when no refill will come (canceled billing). */
  nextRefillAt: Date | null;
}

export type ChargeResult = { ok: true; balance: number } | { ok: false; nextRefillAt: Date | null };

export function createEnergyService(deps: { db: Database; config: Config; clock: Clock }) {
  const { db, clock } = deps;
  const unitsPerLookup = deps.config.energy.unitsPerLookup;

  async function readRow(workspaceId: string) {
    const row = await repo.findEnergyRow(db, workspaceId);
    if (!row) throw new AppError(404, 'workspace not found', 'workspace not found');
    return row;
  }

  /**
   * Spends `units` (one lookup by default) and writes the ledger entry, or reports that the
   * workspace cannot afford it. Never throws for lack of energy: eligibility turns that into
   * per-lead nulls, resolve into a 429. `now` (default: the clock) is the time the charge is made at: it
   * stamps the ledger entry and decides which day's refill applies; the engine passes its pass time.
   */
  async function charge(workspaceId: string, input: { action: EnergyAction; read: string; units?: number; now?: Date }): Promise<ChargeResult> {
    const now = input.now ?? clock.now();
    const balance = await repo.chargeEnergy(db, {
      workspaceId,
      units: input.units ?? unitsPerLookup,
      now,
      activityId: newId(),
      action: input.action,
      detail: { provider: 'publicdata', read: input.read },
    });
    if (balance !== null) return { ok: true, balance };
    const row = await readRow(workspaceId);
    return { ok: false, nextRefillAt: nextRefillAt(now, row.billing_status) };
  }

  function exhaustedError(result: { nextRefillAt: Date | null }): AppError {
    const message = 'energy exhausted; public-data reads resume after the next refill';
    if (result.nextRefillAt === null) {
      // No refill is coming, so a Retry-After would promise something false.
      return new AppError(429, 'energy_exhausted', 'energy exhausted and billing is canceled; no refill is scheduled', { reason: 'billing_inactive' });
    }
    return tooManyRequests('energy_exhausted', (result.nextRefillAt.getTime() - clock.now().getTime()) / 1000, message);
  }

  async function getEnergy(workspaceId: string): Promise<EnergyState> {
    const now = clock.now();
    const row = await readRow(workspaceId);
    return {
      balance: effectiveBalance(row, now),
      dailyRefill: row.energy_daily_refill,
      nextRefillAt: nextRefillAt(now, row.billing_status),
    };
  }

  async function getBilling(workspaceId: string): Promise<Billing> {
    const row = await readRow(workspaceId);
    return { plan: row.billing_plan, status: row.billing_status };
  }

  return { unitsPerLookup, charge, exhaustedError, getEnergy, getBilling };
}

export type EnergyService = ReturnType<typeof createEnergyService>;

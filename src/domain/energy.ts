import { sql, type RawBuilder } from 'kysely';
import type { BillingStatus } from './vocabulary.js';

/**
 * The energy-refill rule, in its one home. Energy refills at UTC midnight: a workspace last refilled before the
 * start of the current UTC day is owed a refill, unless its billing is canceled. A refill tops the balance up to
 * the daily amount and never lowers a larger balance. The TypeScript functions and the SQL fragments below are
 * built from the same constants, so a read that must not write (readiness, the engine's budget) and a charge
 * that writes in one statement cannot disagree.
 */

export type { BillingStatus };

export const DAY_MS = 86_400_000;

/** The one billing status that is never refilled. */
export const NO_REFILL_STATUS: BillingStatus = 'canceled';

export interface EnergyRow {
  energy_balance: number;
  energy_daily_refill: number;
  energy_refilled_at: Date;
  billing_status: BillingStatus;
}

export function utcDayStart(now: Date): Date {
  return new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
}

/** The next UTC midnight: when the next refill is owed. */
export function nextUtcDayStart(now: Date): Date {
  return new Date(utcDayStart(now).getTime() + DAY_MS);
}

/** Refills happen at UTC midnight; a canceled workspace is never refilled. */
export function nextRefillAt(now: Date, status: BillingStatus): Date | null {
  return status === NO_REFILL_STATUS ? null : nextUtcDayStart(now);
}

/** True when the workspace is owed today's refill and it has not been written yet. */
export function refillDue(row: Pick<EnergyRow, 'energy_refilled_at' | 'billing_status'>, now: Date): boolean {
  return new Date(row.energy_refilled_at).getTime() < utcDayStart(now).getTime() && row.billing_status !== NO_REFILL_STATUS;
}

/** What the workspace can spend at `now`, including a refill that is owed but not yet written. */
export function effectiveBalance(row: EnergyRow, now: Date): number {
  return refillDue(row, now) ? Math.max(row.energy_balance, row.energy_daily_refill) : row.energy_balance;
}

/** The row after spending `units` (the caller checked affordability): the owed refill is written with the debit. */
export function afterSpending(row: EnergyRow, units: number, now: Date): { energy_balance: number; energy_refilled_at: Date } {
  return {
    energy_balance: effectiveBalance(row, now) - units,
    energy_refilled_at: refillDue(row, now) ? now : new Date(row.energy_refilled_at),
  };
}

/** `refillDue` as SQL over the workspaces row aliased `alias`, for the UTC day containing `now`. */
export function refillDueSql(alias: string, now: Date): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(`${alias}.energy_refilled_at`)} < ${utcDayStart(now).toISOString()}::timestamptz
    AND ${sql.ref(`${alias}.billing_status`)} <> ${NO_REFILL_STATUS}::text)`;
}

/** `effectiveBalance` as SQL over the workspaces row aliased `alias`. */
export function effectiveBalanceSql(alias: string, now: Date): RawBuilder<number> {
  return sql<number>`(CASE WHEN ${refillDueSql(alias, now)}
    THEN GREATEST(${sql.ref(`${alias}.energy_balance`)}, ${sql.ref(`${alias}.energy_daily_refill`)}) ELSE ${sql.ref(`${alias}.energy_balance`)} END)`;
}

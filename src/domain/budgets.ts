import type { EngineConfig } from '../config/config.js';
import { localDaysBetween } from './time.js';

/**
 * Send budgets: how many of each kind of action an account may take in its window. Today this file holds the
 * warm-up ramp of the daily invitation cap; the budget ledger (every cap as one row) builds on it.
 */
export type PacingRules = EngineConfig['pacing'];

export interface Ramp {
  /** Warm-up week 1…N of the ramp schedule; N+1 once the ramp is over (or when no warm-up was started). */
  rampPhase: number;
  warmupComplete: boolean;
  inviteCapToday: number;
}

/** Week index counts local calendar days since the warm-up day, so a ramp step lands at local midnight. */
export function rampOf(rules: PacingRules, warmupStartedAt: Date | null, now: Date, timeZone: string): Ramp {
  const n = rules.rampSchedule.length;
  if (!warmupStartedAt || n === 0) return { rampPhase: n + 1, warmupComplete: true, inviteCapToday: rules.inviteCap };
  const week = Math.floor(Math.max(0, localDaysBetween(warmupStartedAt, now, timeZone)) / 7);
  if (week >= n) return { rampPhase: n + 1, warmupComplete: true, inviteCapToday: rules.inviteCap };
  return { rampPhase: week + 1, warmupComplete: false, inviteCapToday: Math.min(rules.rampSchedule[week], rules.inviteCap) };
}


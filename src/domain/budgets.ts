import type { EngineConfig } from '../config/config.js';
import { localDay, localDaysBetween, safeZone } from './time.js';

/**
 * Send budgets, in their one home: how many of each kind of action a sender may take in a window, as rows of one
 * ledger (table `send_budgets`, migration 0023; the SQL is budgets.repository.ts). A row is one budget of one
 * sender in one window: `(workspace, scope, scopeId, budget, window, windowStart) -> used`.
 *
 * | scope        | scopeId               | budget                          | window    | cap                                   |
 * |--------------|-----------------------|---------------------------------|-----------|---------------------------------------|
 * | `account`    | messaging account id  | `invites`                       | local day | ramp week's figure, then invite cap   |
 * | `account`    | messaging account id  | `messages`                      | local day | message cap                           |
 * | `account`    | messaging account id  | `actions` (every paced send)    | local day | none (it carries the spacing instant) |
 * | `mailbox`    | mailbox id            | `emails`                        | local day | message cap, ramped during warm-up    |
 * | `x_account`  | X user id             | `dms`, `follows`                | UTC day   | message cap, invite cap               |
 *
 * Local days are the messaging account's `time_zone` (a mailbox follows its account's). Reserved by one conditional
 * upsert that never passes the cap whatever the concurrency, and given back when the step is not performed.
 *
 * Made for what comes next, with no migration: a `rolling_week` window (LinkedIn invitations: the cap counts the
 * day's row and the six before it), a reservation at any moment (a task reserves when a person completes it, not at
 * claim), and new scopes and budgets (`mailbox_domain`, scopeId `<mailbox id>:<domain>`), since scope, scopeId and
 * budget are plain text in the table.
 */
export type PacingRules = EngineConfig['pacing'];

export type BudgetScope = 'account' | 'mailbox' | 'x_account' | 'mailbox_domain';
export type BudgetName = 'invites' | 'messages' | 'actions' | 'emails' | 'dms' | 'follows';
export type BudgetWindow = 'local_day' | 'utc_day' | 'rolling_week';

/** One row of the ledger. `windowStart` is a calendar day, `YYYY-MM-DD`. */
export interface BudgetKey {
  workspaceId: string;
  scope: BudgetScope;
  scopeId: string;
  budget: BudgetName;
  window: BudgetWindow;
  /** The day the row counts: the local or UTC day; for `rolling_week`, the local day the units landed on. */
  windowStart: string;
}

/** How many days (rows) one cap counts, ending with the key's own day: 1 for a day, 7 for a rolling week. */
export const WINDOW_DAYS: Readonly<Record<BudgetWindow, number>> = { local_day: 1, utc_day: 1, rolling_week: 7 };

/** The engine's budgets of a messaging account, reserved at claim. */
export type AccountBudget = 'invites' | 'messages' | 'actions';
/** The budgets a connected X account's driver reserves at send time. */
export type XBudget = 'dms' | 'follows';

/** The window of each budget, per scope: the one place a budget's window is decided. */
export const BUDGET_WINDOWS = {
  account: { invites: 'local_day', messages: 'local_day', actions: 'local_day' },
  mailbox: { emails: 'local_day' },
  mailbox_domain: { emails: 'local_day' },
  x_account: { dms: 'utc_day', follows: 'utc_day' },
} as const satisfies Partial<Record<BudgetScope, Partial<Record<BudgetName, BudgetWindow>>>>;

/** The day a window containing `at` counts under: the local day in `timeZone`, or the UTC day. */
export function windowStartOf(window: BudgetWindow, at: Date, timeZone: string | null): string {
  return window === 'utc_day' ? at.toISOString().slice(0, 10) : localDay(at, safeZone(timeZone));
}

/** The next UTC midnight after `at`: when a `utc_day` budget starts over. */
export function nextUtcDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));
}

/** A stable text form of a key: map keys, and the order every writer takes several rows in (no deadlocks). */
export function budgetKeyText(k: BudgetKey): string {
  return [k.workspaceId, k.scope, k.scopeId, k.budget, k.window, k.windowStart].join('|');
}

export function accountBudgetKey(workspaceId: string, accountId: string, budget: AccountBudget, day: string): BudgetKey {
  return { workspaceId, scope: 'account', scopeId: accountId, budget, window: BUDGET_WINDOWS.account[budget], windowStart: day };
}

export function mailboxBudgetKey(workspaceId: string, mailboxId: string, day: string): BudgetKey {
  return { workspaceId, scope: 'mailbox', scopeId: mailboxId, budget: 'emails', window: BUDGET_WINDOWS.mailbox.emails, windowStart: day };
}

export function xAccountBudgetKey(workspaceId: string, userId: string, budget: XBudget, at: Date): BudgetKey {
  const window = BUDGET_WINDOWS.x_account[budget];
  return { workspaceId, scope: 'x_account', scopeId: userId, budget, window, windowStart: windowStartOf(window, at, null) };
}

/** One mailbox's e-mails to one recipient domain on one local day (OUTREACH_MAILBOX_DOMAIN_DAILY_CAP). */
export function mailboxDomainBudgetKey(workspaceId: string, mailboxId: string, domain: string, day: string): BudgetKey {
  const scopeId = mailboxDomainScopeId(mailboxId, domain);
  return { workspaceId, scope: 'mailbox_domain', scopeId, budget: 'emails', window: BUDGET_WINDOWS.mailbox_domain.emails, windowStart: day };
}

/** The scope id of a budget per recipient domain of one mailbox (scope `mailbox_domain`). */
export function mailboxDomainScopeId(mailboxId: string, domain: string): string {
  return `${mailboxId}:${domain.trim().toLowerCase()}`;
}

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

/** Today's caps of a messaging account's budgets (null: uncapped). */
export function accountCaps(rules: PacingRules, warmupStartedAt: Date | null, now: Date, timeZone: string): Record<AccountBudget, number | null> {
  return { invites: rampOf(rules, warmupStartedAt, now, timeZone).inviteCapToday, messages: rules.messageCap, actions: null };
}

/**
 * Today's cap of a mailbox, which follows its messaging account (time zone, warm-up): during warm-up no more than the
 * ramp's figure for the week (as invites), then the message cap.
 */
export function mailboxCap(rules: PacingRules, warmupStartedAt: Date | null, now: Date, timeZone: string): number {
  const ramp = rampOf(rules, warmupStartedAt, now, timeZone);
  return ramp.warmupComplete ? rules.messageCap : Math.min(rules.messageCap, ramp.inviteCapToday);
}

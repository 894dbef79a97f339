import type { EngineConfig } from '../config/config.js';
import type { SequenceStepRow } from '../db/schema.js';
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
 * | `linkedin_gateway` | messaging account id | `invites` / `messages`     | rolling week / UTC day | gateway's weekly invites, daily messages |
 * | `linkedin_gateway` | messaging account id | `notes` (an invitation's note) | rolling month (30 local days) | notes a month |
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

/**
 * `channel` is a channel's own scope (one registered at run time included): its scope id is `<channel>:<owner>`, its
 * budgets and their windows are the channel's (its descriptor's `budgetWindows`).
 */
export type BudgetScope = 'account' | 'mailbox' | 'x_account' | 'mailbox_domain' | 'linkedin_gateway' | 'channel';
export type BudgetName = 'invites' | 'messages' | 'notes' | 'actions' | 'emails' | 'dms' | 'follows';
export type BudgetWindow = 'local_day' | 'utc_day' | 'rolling_week' | 'rolling_month';

/** One row of the ledger. `windowStart` is a calendar day, `YYYY-MM-DD`. */
export interface BudgetKey {
  workspaceId: string;
  scope: BudgetScope;
  scopeId: string;
  /** A built-in budget, or one a channel names in its own scope (`channel`). */
  budget: BudgetName | (string & {});
  window: BudgetWindow;
  /** The day the row counts: the local or UTC day; for a rolling window, the local day the units landed on. */
  windowStart: string;
}

/** How many days (rows) one cap counts, ending with the key's own day: 1 for a day, 7 for a rolling week, 30 for a month. */
export const WINDOW_DAYS: Readonly<Record<BudgetWindow, number>> = { local_day: 1, utc_day: 1, rolling_week: 7, rolling_month: 30 };

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
  linkedin_gateway: { invites: 'rolling_week', messages: 'utc_day', notes: 'rolling_month' },
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

/**
 * A LinkedIn gateway account's budget (channels/linkedin/driver.ts reserves it at send time): the week's invitations
 * (rolling seven local days in `timeZone`), the UTC day's messages, or the invitation notes of the last 30 local days,
 * windows as BUDGET_WINDOWS.linkedin_gateway says.
 */
export function gatewayBudgetKey(
  workspaceId: string,
  accountId: string,
  budget: 'invites' | 'messages' | 'notes',
  at: Date,
  timeZone: string | null,
): BudgetKey {
  const window = BUDGET_WINDOWS.linkedin_gateway[budget];
  return { workspaceId, scope: 'linkedin_gateway', scopeId: accountId, budget, window, windowStart: windowStartOf(window, at, timeZone) };
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

/**
 * The sender a step goes out through, as the claim resolved it (domain/claim-layout.ts): the messaging account
 * (`accountId`, its time zone and warm-up) and, for a channel that sends as a platform account, that account's user id
 * (`accountUserId`, X). `delivery` is how the sender reaches its platform (domain/policy.ts AccountDelivery).
 */
export interface Sender {
  workspaceId: string;
  accountId: string | null;
  accountUserId: string | null;
  timeZone: string | null;
  warmupStartedAt: Date | null;
  delivery: string;
}

/** What a channel says about its budgets (channels/descriptor.ts `budgetsOf`); passed in, so the domain imports no channel. */
export interface BudgetSource {
  budgetsOf?(step: SequenceStepRow, sender: Sender, at: Date): BudgetKey[];
  /** The channel's name: the prefix of its own keys' scope ids. */
  readonly channel?: string;
  /** The windows of the channel's own budgets (scope `channel`), by budget name. */
  readonly budgetWindows?: Readonly<Record<string, BudgetWindow>>;
}

/**
 * The budgets a step draws from its sender at `at`: the keys its channel names, each checked against
 * BUDGET_WINDOWS, or for the channel's own scope (`channel`) against its `budgetWindows` and its name (a key whose
 * window is not the one written there, or another channel's, is a programming error and throws). A channel without
 * budgets (or an unknown step kind, `source` undefined) draws none.
 */
export function budgetsOf(source: BudgetSource | undefined, step: SequenceStepRow, sender: Sender, at: Date): BudgetKey[] {
  const keys = source?.budgetsOf?.(step, sender, at) ?? [];
  for (const k of keys) {
    if (k.scope === 'channel') {
      if (!source?.channel || !k.scopeId.startsWith(`${source.channel}:`) || source.budgetWindows?.[k.budget] !== k.window)
        throw new Error(`channel budget ${k.scopeId}/${k.budget} has no ${k.window} window in its channel's budgetWindows`);
      continue;
    }
    const windows: Partial<Record<BudgetScope, Partial<Record<string, BudgetWindow>>>> = BUDGET_WINDOWS;
    if (windows[k.scope]?.[k.budget] !== k.window) throw new Error(`budget ${k.scope}/${k.budget} has no ${k.window} window in BUDGET_WINDOWS`);
  }
  return keys;
}

/**
 * A budget of a channel's own (scope `channel`): `budget` of `owner` (an account, a workspace: the channel's choice)
 * on `channel`, in the window the channel's `budgetWindows` gives it (a local day in `timeZone`, or the UTC day).
 */
export function channelBudgetKey(
  workspaceId: string,
  channel: string,
  owner: string,
  budget: string,
  window: BudgetWindow,
  at: Date,
  timeZone: string | null,
): BudgetKey {
  return { workspaceId, scope: 'channel', scopeId: `${channel}:${owner}`, budget, window, windowStart: windowStartOf(window, at, timeZone) };
}

/**
 * The keys a paced send of `budget` takes on its messaging account's local day (the claim's reservation,
 * engine/pacing.ts): the budget's own row and, for every send, one `actions` row. None without an account.
 */
export function accountBudgetKeys(sender: Sender, budget: AccountBudget, at: Date): BudgetKey[] {
  if (!sender.accountId) return [];
  const day = windowStartOf(BUDGET_WINDOWS.account[budget], at, sender.timeZone);
  const own = accountBudgetKey(sender.workspaceId, sender.accountId, budget, day);
  return budget === 'actions' ? [own] : [own, accountBudgetKey(sender.workspaceId, sender.accountId, 'actions', day)];
}

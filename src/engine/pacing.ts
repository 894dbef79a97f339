import type { Database } from '../db/database.js';
import { sendingDaysLabel } from '../config/config.js';
import * as sql from './sql/index.js';
import type { PacingAccountRow, PacingRelease } from './sql/rows.js';
import type { BudgetAsk, ChannelDescriptor, ChannelRegistry, ResolvedBudget } from '../channels/descriptor.js';

export type { PacingRelease } from './sql/rows.js';
import { isWithinWindow, localDay, nextDayWindowStart, nextWindowStart, safeZone } from '../domain/time.js';
import {
  accountBudgetKey,
  accountCaps,
  budgetKeyText,
  mailboxBudgetKey,
  mailboxCap,
  rampOf,
  type AccountBudget,
  type BudgetKey,
  type BudgetScope,
  type BudgetWindow,
  type Sender,
  type PacingRules,
} from '../domain/budgets.js';
import { SANDBOX_DELIVERY } from '../domain/policy.js';
import { lockBudgets, readBudgetUsage, releaseBudgets, reserveBudgets, type BudgetReservation } from '../domain/budgets.repository.js';

/** Which daily budget of its messaging account a step draws from (every one also takes one of `actions`). */
export type PacingBucket = AccountBudget;

const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

/** One budget as GET /progress lists it: a row of the send budget ledger with the cap that holds it today. */
export interface BudgetFigure {
  scope: BudgetScope;
  scopeId: string;
  budget: BudgetKey['budget'];
  window: BudgetWindow;
  windowStart: string;
  used: number;
  /** null: uncapped (an account's `actions` only carry the spacing). */
  cap: number | null;
}

/** What GET /progress reports per messaging account: exactly the numbers the engine enforces. */
export interface AccountPacing {
  accountId: string;
  pacingTimeZone: string;
  localDay: string;
  rampPhase: number;
  warmupComplete: boolean;
  inviteCapToday: number;
  invitesSentToday: number;
  messageCapToday: number;
  messagesSentToday: number;
  sendingHours: string;
  /** Local weekdays that send, e.g. `mon,tue,wed,thu,fri`. */
  sendingDays: string;
  withinSendingHours: boolean;
  /** Now when inside the sending hours, else when they next open (account's local time). */
  nextWindowAt: string;
  spacingSeconds: number;
  /**
   * Every budget of the account today (invites, messages, actions), then each of its mailboxes' e-mails, then those
   * its channels hold of their own (channels/descriptor.ts `accountBudgets`: a LinkedIn gateway account's).
   */
  budgets: BudgetFigure[];
}

/** A channel's own budget of an account, with its cap (channels/descriptor.ts `accountBudgets`, `budgetCap`). */
export interface ChannelBudget {
  key: BudgetKey;
  cap: number | null;
}

/**
 * The cap of a channel's budget key: its descriptor's `budgetCap` under the running config (engine/index.ts), null
 * where the channel sets none (the key is counted, uncapped). The claim and the pacing reader read caps only here.
 */
export type BudgetCapOf = (channel: ChannelDescriptor, key: BudgetKey) => number | null;

/**
 * What the claim reserves beyond the messaging account's pacing (engine/index.ts): the caps of `budgetsOf`'s keys
 * (`capOf`), and the budgets only the database can name (`resolve`: the descriptor's `resolveBudgets` in the claim's
 * transaction, under the running config; [] for a channel without one).
 */
export interface ClaimBudgets {
  capOf: BudgetCapOf;
  resolve(channel: ChannelDescriptor, trx: Database, asks: BudgetAsk[]): Promise<ResolvedBudget[][]>;
}

/** The ledger rows one account's pacing reads: its own budgets and its mailboxes', today in its time zone. */
function accountBudgetKeys(account: PacingAccountRow, mailboxIds: string[], now: Date): BudgetKey[] {
  const day = localDay(now, safeZone(account.time_zone));
  return [
    ...(['invites', 'messages', 'actions'] as const).map((b) => accountBudgetKey(account.workspace_id, account.id, b, day)),
    ...mailboxIds.map((m) => mailboxBudgetKey(account.workspace_id, m, day)),
  ];
}

/** A messaging account as the sender of `channel`'s steps (domain/budgets.ts Sender), its delivery as read there. */
export function senderOfAccount(account: PacingAccountRow, channel: string): Sender {
  return {
    workspaceId: account.workspace_id,
    accountId: account.id,
    accountUserId: null,
    timeZone: account.time_zone,
    warmupStartedAt: account.warmup_started_at ? new Date(account.warmup_started_at) : null,
    delivery: account.deliveries[channel] ?? SANDBOX_DELIVERY,
  };
}

/** A key's figure as read (`used`: over every day its window counts), its cap left to the caller. */
const figureOf = (k: BudgetKey, usage: Map<string, number>) => ({
  scope: k.scope,
  scopeId: k.scopeId,
  budget: k.budget,
  window: k.window,
  windowStart: k.windowStart,
  used: usage.get(budgetKeyText(k)) ?? 0,
});

export function pacingOf(
  rules: PacingRules,
  account: PacingAccountRow,
  usage: Map<string, number>,
  mailboxIds: string[],
  now: Date,
  channelBudgets: ChannelBudget[] = [],
): AccountPacing {
  const tz = safeZone(account.time_zone);
  const ramp = rampOf(rules, account.warmup_started_at, now, tz);
  const caps = accountCaps(rules, account.warmup_started_at, now, tz);
  const emailCap = mailboxCap(rules, account.warmup_started_at, now, tz);
  const budgets = accountBudgetKeys(account, mailboxIds, now).map((k): BudgetFigure => ({
    ...figureOf(k, usage),
    cap: k.scope === 'mailbox' ? emailCap : caps[k.budget as AccountBudget],
  }));
  for (const { key, cap } of channelBudgets) budgets.push({ ...figureOf(key, usage), cap });
  const used = (b: AccountBudget) => budgets.find((f) => f.scope === 'account' && f.budget === b)!.used;
  return {
    accountId: account.id,
    pacingTimeZone: tz,
    localDay: localDay(now, tz),
    rampPhase: ramp.rampPhase,
    warmupComplete: ramp.warmupComplete,
    inviteCapToday: ramp.inviteCapToday,
    invitesSentToday: used('invites'),
    messageCapToday: rules.messageCap,
    messagesSentToday: used('messages'),
    sendingHours: `${hhmm(rules.hoursStart)}-${hhmm(rules.hoursEnd)}`,
    sendingDays: sendingDaysLabel(rules.days),
    withinSendingHours: isWithinWindow(now, tz, rules),
    nextWindowAt: nextWindowStart(now, tz, rules).toISOString(),
    spacingSeconds: rules.spacingSeconds,
    budgets,
  };
}

/**
 * Pacing reads for GET /progress and operators. `accountPacing(accountId, now)` answers one account (null
 * when it does not exist); `workspacePacing(workspaceId, now)` every account of a workspace, keyed by id.
 * Both read the same ledger rows the engine and the drivers reserve against, so "sent today" never disagrees
 * with the cap.
 */
export function createPacingReader(deps: { db: Database; rules: PacingRules; channels: ChannelRegistry; budgetCapOf: BudgetCapOf }) {
  const { db, rules, channels, budgetCapOf } = deps;

  /** The budgets of their own the channels say an account holds (descriptor `accountBudgets`), each with its cap. */
  const channelBudgetsOf = (account: PacingAccountRow, now: Date): ChannelBudget[] =>
    channels.all().flatMap((d) => (d.accountBudgets?.(senderOfAccount(account, d.channel), now) ?? []).map((key) => ({ key, cap: budgetCapOf(d, key) })));

  function mailboxesByAccount(rows: { id: string; account_id: string }[]) {
    const out = new Map<string, string[]>();
    for (const m of rows) out.set(m.account_id, [...(out.get(m.account_id) ?? []), m.id]);
    return out;
  }

  async function workspacePacing(workspaceId: string, now: Date): Promise<Map<string, AccountPacing>> {
    const [accounts, mailboxes] = await Promise.all([sql.readWorkspacePacingAccounts(db, workspaceId, channels), sql.readPacingMailboxes(db, workspaceId)]);
    const owned = mailboxesByAccount(mailboxes);
    const own = new Map(accounts.map((a) => [a.id, channelBudgetsOf(a, now)]));
    const usage = await readBudgetUsage(
      db,
      accounts.flatMap((a) => [...accountBudgetKeys(a, owned.get(a.id) ?? [], now), ...own.get(a.id)!.map((b) => b.key)]),
    );
    return new Map(accounts.map((a) => [a.id, pacingOf(rules, a, usage, owned.get(a.id) ?? [], now, own.get(a.id))]));
  }

  async function accountPacing(accountId: string, now: Date): Promise<AccountPacing | null> {
    const account = await sql.readPacingAccount(db, accountId, channels);
    if (!account) return null;
    const mailboxes = (await sql.readPacingMailboxes(db, account.workspace_id, account.id)).map((m) => m.id);
    const own = channelBudgetsOf(account, now);
    const usage = await readBudgetUsage(db, [...accountBudgetKeys(account, mailboxes, now), ...own.map((b) => b.key)]);
    return pacingOf(rules, account, usage, mailboxes, now, own);
  }

  /**
   * The senders that are no messaging account (channels/descriptor.ts `platformSenders`: X accounts), each with its
   * budgets today as the claim and the drivers count and cap them. One ledger read for all of them.
   */
  async function platformAccounts(workspaceId: string, now: Date): Promise<PlatformAccountPacing[]> {
    const listed = (
      await Promise.all(
        channels
          .all()
          .filter((d) => d.platformSenders !== undefined)
          .map(async (d) => (await d.platformSenders!(db, workspaceId, now)).map((sender) => ({ d, sender }))),
      )
    ).flat();
    const usage = await readBudgetUsage(
      db,
      listed.flatMap(({ sender }) => sender.budgets),
    );
    return listed.map(({ d, sender }) => ({
      channel: d.channel,
      accountUserId: sender.accountUserId,
      handle: sender.handle,
      delivery: sender.delivery,
      budgets: sender.budgets.map((k) => ({ ...figureOf(k, usage), cap: budgetCapOf(d, k) })),
    }));
  }

  return { accountPacing, workspacePacing, platformAccounts };
}

/** A sender that is no messaging account (an X account), as GET /progress lists it under `platformAccounts`. */
export interface PlatformAccountPacing {
  channel: string;
  accountUserId: string;
  handle: string;
  delivery: string;
  budgets: BudgetFigure[];
}

export type PacingReader = ReturnType<typeof createPacingReader>;

/**
 * When a step the admission list's `outside_sending_hours` rule stopped looks again: the window's next opening in
 * the zone the rule read (domain/admission.ts `sendingZone`: the lead's own or its account's), never at or before
 * now (the same pass would claim the lead again at once, batch after batch).
 */
export function sendingWindowRetryAt(rules: PacingRules, timeZone: string | null, now: Date): Date {
  return new Date(Math.max(nextWindowStart(now, safeZone(timeZone), rules).getTime(), now.getTime() + 60_000));
}

/** One claimed step that wants to go out through a paced account (inside its sending hours). */
export interface PacingRequest {
  key: string;
  workspaceId: string;
  accountId: string;
  timeZone: string | null;
  warmupStartedAt: Date | null;
  bucket: PacingBucket;
}

export type PacingDecision = { granted: true; localDay: string } | { granted: false; retryAt: Date; reason: 'daily_cap' | 'spacing' };

/** The ledger rows a reservation of `bucket` on this account-day takes: the bucket's, and one `actions` for every send. */
function releaseKeys(r: PacingRelease): BudgetKey[] {
  const channel = r.channelKeys ?? [];
  if (!r.accountId || !r.localDay || !r.bucket) return channel;
  const actions = accountBudgetKey(r.workspaceId, r.accountId, 'actions', r.localDay);
  return [...(r.bucket === 'actions' ? [actions] : [accountBudgetKey(r.workspaceId, r.accountId, r.bucket, r.localDay), actions]), ...channel];
}

/**
 * Reserves today's budgets for the requests, in order, on the send budget ledger (domain/budgets.ts): each account's
 * rows are locked in key order, so concurrent workers serialize per account and can never together exceed a cap or
 * the spacing; the grants are then written with the ledger's conditional upsert. Runs inside the claim transaction;
 * a send that later is not performed gives its reservation back (releaseReservations).
 */
export async function reservePacing(trx: Database, rules: PacingRules, requests: PacingRequest[], now: Date): Promise<Map<string, PacingDecision>> {
  const decisions = new Map<string, PacingDecision>();
  const byAccount = new Map<string, PacingRequest[]>();
  for (const r of requests) {
    const k = `${r.workspaceId}|${r.accountId}`;
    const list = byAccount.get(k) ?? [];
    list.push(r);
    byAccount.set(k, list);
  }
  if (byAccount.size === 0) return decisions;
  const groups = [...byAccount.keys()].sort().map((k) => {
    const list = byAccount.get(k)!;
    const tz = safeZone(list[0].timeZone);
    const day = localDay(now, tz);
    const key = (b: AccountBudget) => accountBudgetKey(list[0].workspaceId, list[0].accountId, b, day);
    const buckets = new Set<AccountBudget>(['actions', ...list.map((r) => r.bucket)]);
    return { list, tz, day, key, keys: [...buckets].map(key) };
  });
  const rows = new Map(
    (
      await lockBudgets(
        trx,
        groups.flatMap((g) => g.keys),
      )
    ).map((r) => [budgetKeyText(r.key), r]),
  );
  const reservations: BudgetReservation[] = [];
  const spacing = rules.spacingSeconds * 1000;
  for (const { list, tz, day, key } of groups) {
    const first = list[0];
    const row = (b: AccountBudget) => rows.get(budgetKeyText(key(b)));
    const c: Record<AccountBudget, number> = { invites: row('invites')?.used ?? 0, messages: row('messages')?.used ?? 0, actions: row('actions')?.used ?? 0 };
    const granted: Record<AccountBudget, number> = { invites: 0, messages: 0, actions: 0 };
    let last = row('actions')?.lastUsedAt?.getTime() ?? null;
    const caps = accountCaps(rules, first.warmupStartedAt, now, tz);
    const tomorrow = nextDayWindowStart(now, tz, rules);
    let queued = 0;
    for (const r of list) {
      const cap = caps[r.bucket];
      if (cap !== null && c[r.bucket] >= cap) {
        decisions.set(r.key, { granted: false, retryAt: tomorrow, reason: 'daily_cap' });
        continue;
      }
      if (spacing > 0 && last !== null && last + spacing > now.getTime()) {
        // Later requests queue behind each other one spacing apart instead of all retrying at once.
        queued += 1;
        const at = new Date(last + spacing * queued);
        decisions.set(r.key, { granted: false, retryAt: at.getTime() < tomorrow.getTime() ? at : tomorrow, reason: 'spacing' });
        continue;
      }
      if (r.bucket !== 'actions') {
        c[r.bucket] += 1;
        granted[r.bucket] += 1;
      }
      c.actions += 1;
      granted.actions += 1;
      last = now.getTime();
      decisions.set(r.key, { granted: true, localDay: day });
    }
    for (const b of ['invites', 'messages', 'actions'] as const) {
      if (granted[b] > 0) reservations.push({ key: key(b), n: granted[b], cap: caps[b], at: now });
    }
  }
  const ok = await reserveBudgets(trx, reservations);
  // The rows are locked and every grant was counted against them, so the upsert's cap check cannot refuse; if it
  // ever does, the claim transaction rolls back rather than send past a cap.
  const refused = reservations.filter((_, i) => !ok[i]);
  if (refused.length > 0) throw new Error(`send budget refused under its lock: ${refused.map((r) => budgetKeyText(r.key)).join(', ')}`);
  return decisions;
}

/** Gives back reservations of sends that were not performed (failed, rate-limited, unaffordable, not sent). */
export async function releaseReservations(trx: Database, releases: PacingRelease[]): Promise<void> {
  await releaseBudgets(
    trx,
    releases.flatMap((r) => releaseKeys(r).map((key) => ({ key, n: 1 }))),
  );
}

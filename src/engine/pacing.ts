import type { EngineConfig } from '../config/config.js';
import type { Database } from '../db/database.js';
import { sendingDaysLabel } from '../config/config.js';
import * as sql from './sql/index.js';
import type { PacingAccountRow } from './sql/rows.js';
import { isWithinWindow, localDay, localDaysBetween, nextDayWindowStart, nextWindowStart, safeZone } from '../domain/time.js';
import { rampOf, type PacingRules } from '../domain/budgets.js';

export { rampOf, type PacingRules, type Ramp } from '../domain/budgets.js';

/** Which daily budget a step draws from. */
export type PacingBucket = 'invites' | 'messages' | 'actions';

const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

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
}

export function pacingOf(rules: PacingRules, account: PacingAccountRow, counters: { invites: number; messages: number } | undefined, now: Date): AccountPacing {
  const tz = safeZone(account.time_zone);
  const ramp = rampOf(rules, account.warmup_started_at, now, tz);
  return {
    accountId: account.id,
    pacingTimeZone: tz,
    localDay: localDay(now, tz),
    rampPhase: ramp.rampPhase,
    warmupComplete: ramp.warmupComplete,
    inviteCapToday: ramp.inviteCapToday,
    invitesSentToday: counters?.invites ?? 0,
    messageCapToday: rules.messageCap,
    messagesSentToday: counters?.messages ?? 0,
    sendingHours: `${hhmm(rules.hoursStart)}-${hhmm(rules.hoursEnd)}`,
    sendingDays: sendingDaysLabel(rules.days),
    withinSendingHours: isWithinWindow(now, tz, rules),
    nextWindowAt: nextWindowStart(now, tz, rules).toISOString(),
    spacingSeconds: rules.spacingSeconds,
  };
}

/**
 * Pacing reads for GET /progress and operators. `accountPacing(accountId, now)` answers one account (null
 * when it does not exist); `workspacePacing(workspaceId, now)` every account of a workspace, keyed by id.
 * Both read the same counters the engine reserves against, so "sent today" never disagrees with the cap.
 */
export function createPacingReader(deps: { db: Database; rules: PacingRules }) {
  const { db, rules } = deps;

  const countersFor = (workspaceId: string, days: { accountId: string; day: string }[]) => sql.readAccountDayCounters(db, workspaceId, days);

  async function workspacePacing(workspaceId: string, now: Date): Promise<Map<string, AccountPacing>> {
    const accounts = await sql.readWorkspacePacingAccounts(db, workspaceId);
    const days = accounts.map((a) => ({ accountId: a.id, day: localDay(now, safeZone(a.time_zone)) }));
    const counters = await countersFor(workspaceId, days);
    return new Map(accounts.map((a, i) => [a.id, pacingOf(rules, a, counters.get(`${a.id}|${days[i].day}`), now)]));
  }

  async function accountPacing(accountId: string, now: Date): Promise<AccountPacing | null> {
    const account = await sql.readPacingAccount(db, accountId);
    if (!account) return null;
    const day = localDay(now, safeZone(account.time_zone));
    const counters = await countersFor(account.workspace_id, [{ accountId, day }]);
    return pacingOf(rules, account, counters.get(`${accountId}|${day}`), now);
  }

  return { accountPacing, workspacePacing };
}

export type PacingReader = ReturnType<typeof createPacingReader>;

/** One claimed step that wants to go out through a paced account. */
export interface PacingRequest {
  key: string;
  workspaceId: string;
  accountId: string;
  timeZone: string | null;
  warmupStartedAt: Date | null;
  bucket: PacingBucket;
}

export type PacingDecision = { granted: true; localDay: string } | { granted: false; retryAt: Date; reason: 'outside_sending_hours' | 'daily_cap' | 'spacing' };

/**
 * Reserves today's budget for the requests, in order, under a row lock on each account's counter, so
 * concurrent workers serialize per account and can never together exceed a cap or the spacing. Runs inside
 * the claim transaction; a send that later fails gives its reservation back (releaseReservations).
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
  const open: { list: PacingRequest[]; tz: string; day: string }[] = [];
  for (const k of [...byAccount.keys()].sort()) {
    const list = byAccount.get(k)!;
    const tz = safeZone(list[0].timeZone);
    if (!isWithinWindow(now, tz, rules)) {
      // Never a retry at or before now: the same pass would claim the lead again at once, batch after batch.
      const at = new Date(Math.max(nextWindowStart(now, tz, rules).getTime(), now.getTime() + 60_000));
      for (const r of list) decisions.set(r.key, { granted: false, retryAt: at, reason: 'outside_sending_hours' });
    } else {
      open.push({ list, tz, day: localDay(now, tz) });
    }
  }
  if (open.length === 0) return decisions;
  const rows = await sql.lockAccountDays(
    trx,
    open.map((o) => ({ workspace_id: o.list[0].workspaceId, account_id: o.list[0].accountId, local_day: o.day })),
  );
  const current = new Map(rows.map((r) => [r.account_id, r]));
  const updates: {
    workspace_id: string;
    account_id: string;
    local_day: string;
    invites: number;
    messages: number;
    actions: number;
    last_action_at: string | null;
  }[] = [];
  const spacing = rules.spacingSeconds * 1000;
  for (const { list, tz, day } of open) {
    const first = list[0];
    const row = current.get(first.accountId);
    const c = { invites: Number(row?.invites ?? 0), messages: Number(row?.messages ?? 0), actions: Number(row?.actions ?? 0) };
    let last = row?.last_action_at ? new Date(row.last_action_at).getTime() : null;
    const inviteCap = rampOf(rules, first.warmupStartedAt, now, tz).inviteCapToday;
    const tomorrow = nextDayWindowStart(now, tz, rules);
    let queued = 0;
    let changed = false;
    for (const r of list) {
      const full = (r.bucket === 'invites' && c.invites >= inviteCap) || (r.bucket === 'messages' && c.messages >= rules.messageCap);
      if (full) {
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
      if (r.bucket === 'invites') c.invites += 1;
      else if (r.bucket === 'messages') c.messages += 1;
      c.actions += 1;
      last = now.getTime();
      changed = true;
      decisions.set(r.key, { granted: true, localDay: day });
    }
    if (changed) updates.push({ workspace_id: first.workspaceId, account_id: first.accountId, local_day: day, ...c, last_action_at: now.toISOString() });
  }
  await sql.writeAccountDays(trx, updates);
  return decisions;
}

export interface PacingRelease {
  workspaceId: string;
  accountId: string;
  localDay: string;
  bucket: PacingBucket;
}

/** Gives back reservations of sends that did not happen (failed or rate-limited). */
export async function releaseReservations(trx: Database, releases: PacingRelease[]): Promise<void> {
  const grouped = new Map<string, { r: PacingRelease; invites: number; messages: number; actions: number }>();
  for (const r of releases) {
    const k = `${r.workspaceId}|${r.accountId}|${r.localDay}`;
    const g = grouped.get(k) ?? { r, invites: 0, messages: 0, actions: 0 };
    if (r.bucket === 'invites') g.invites += 1;
    else if (r.bucket === 'messages') g.messages += 1;
    g.actions += 1;
    grouped.set(k, g);
  }
  const rows = [...grouped.keys()].sort().map((k) => {
    const g = grouped.get(k)!;
    return { workspace_id: g.r.workspaceId, account_id: g.r.accountId, local_day: g.r.localDay, invites: g.invites, messages: g.messages, actions: g.actions };
  });
  await sql.releaseAccountDays(trx, rows);
}

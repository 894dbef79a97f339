import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { storedSteps } from '../../domain/stored-steps.js';
import { toFunnel, toProgressFunnel, type FunnelCountsRow } from './funnel.js';
import * as repo from './reports.repository.js';

export type GroupBy = 'sequence' | 'account';

/** The kind of the first step carrying variants: a connect-step variant is "sent" with the invite, any other with a message. */
function variantSteps(steps: unknown): { keys: string[]; onConnect: boolean } {
  const keys: string[] = [];
  let onConnect: boolean | null = null;
  for (const step of storedSteps(steps)) {
    if (!Array.isArray(step.variants)) continue;
    if (onConnect === null) onConnect = step.kind === 'connect';
    for (const v of step.variants as { key?: unknown }[]) {
      if (typeof v?.key === 'string' && !keys.includes(v.key)) keys.push(v.key);
    }
  }
  return { keys, onConnect: onConnect ?? false };
}

const COUNT_KEYS = [
  'leads',
  'invited',
  'accepted',
  'messaged',
  'replied',
  'meetings_booked',
  'replies_positive',
  'replies_negative',
  'meetings_qualifying',
  'meetings_no_show_or_cancelled',
] as const;

function sumRows(rows: FunnelCountsRow[]): FunnelCountsRow {
  const total = Object.fromEntries(COUNT_KEYS.map((k) => [k, 0])) as Record<(typeof COUNT_KEYS)[number], number>;
  for (const r of rows) for (const k of COUNT_KEYS) total[k] += Number(r[k]);
  return total;
}

/**
 * GET /progress's funnel: the workspace's lifetime counts under the one funnel definition (funnel.ts) and its queued
 * leads, from one pass over its leads through the caller's `db`.
 */
export async function workspaceProgressFunnel(db: Database, workspaceId: string) {
  const row = await repo.workspaceFunnel(db, workspaceId);
  return { funnel: toProgressFunnel(row), queued: Number(row?.queued ?? 0) };
}

/** The workspace's messaging accounts, whole rows in creation order: the account funnel names its groups from them, GET /progress lists them. */
export function listMessagingAccounts(db: Database, workspaceId: string) {
  return repo.listMessagingAccounts(db, workspaceId);
}

/**
 * What the daily series counts, from ledger entries with outcome `ok` (docs/console.md, "Dashboard"):
 * a send is a message that reached a prospect (a sequence's message, follow-up, email or X DM, and a person's
 * answer from the replies queue, booking invites included); invites, follows, likes and views are not messages.
 * A reply is each reply the watchers detected; a meeting is each meeting recorded; a meeting held is the first
 * held outcome recorded for a booking, and a no-show the first no-show of a booking (reports.repository.ts).
 */
export const DAILY_ACTIONS = {
  sends: ['message', 'followup', 'email_sent', 'x_dm', 'reply_sent', 'meeting_invited'],
  replies: ['reply_detected'],
  meetings: ['meeting_booked'],
  /** Outcomes that say a meeting took place: `qualified` and `not_qualified` imply held (docs/cross-channel.md). */
  heldOutcomes: ['held', 'qualified', 'not_qualified'],
} as const;

const DAY_MS = 86_400_000;
/** The longest series a caller may ask for: the ledger is bounded and recent. */
export const MAX_DAILY_DAYS = 90;

export interface DailyPoint {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  sends: number;
  replies: number;
  /** Meetings booked (`meeting_booked`). */
  meetings: number;
  /** Meetings recorded as held (or qualified, or not qualified) that day, once per booking. */
  held: number;
  /** Meetings the invitee missed, marked that day, once per booking. */
  noShows: number;
}

export function createReportsService(deps: { db: Database; clock?: Clock }) {
  const { db } = deps;
  const now = () => deps.clock?.now() ?? new Date();

  /**
   * Sends, replies and meetings per UTC day over the last `days` days, today included (so far), oldest first;
   * a day without entries is zeros. One grouped query over the ledger.
   */
  async function dailyActivity(workspaceId: string, days = 30): Promise<DailyPoint[]> {
    const span = Math.min(MAX_DAILY_DAYS, Math.max(1, Math.trunc(days)));
    const at = now();
    const today = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
    const since = new Date(today - (span - 1) * DAY_MS);
    const until = new Date(today + DAY_MS);
    const rows = await repo.dailyActivityCounts(db, workspaceId, { since, until, ...DAILY_ACTIONS });
    const byDay = new Map(rows.map((r) => [r.day, r]));
    return Array.from({ length: span }, (_, i) => {
      const day = new Date(since.getTime() + i * DAY_MS).toISOString().slice(0, 10);
      const r = byDay.get(day);
      return {
        day,
        sends: Number(r?.sends ?? 0),
        replies: Number(r?.replies ?? 0),
        meetings: Number(r?.meetings ?? 0),
        held: Number(r?.held ?? 0),
        noShows: Number(r?.no_shows ?? 0),
      };
    });
  }

  async function funnelReport(workspaceId: string, groupBy: GroupBy) {
    const [{ groups: groupRows, arms: armRows }, sequences, accounts] = await Promise.all([
      repo.groupedFunnelAndArms(db, workspaceId, groupBy),
      repo.listSequences(db, workspaceId),
      groupBy === 'account' ? repo.listMessagingAccounts(db, workspaceId) : Promise.resolve([]),
    ]);
    // Every lead is in exactly one group, so the total is their sum: no second pass over the leads.
    const totalRow = sumRows(groupRows);

    const byGroup = new Map(groupRows.map((r) => [r.group_id, r]));
    const named: { id: string; name: string }[] =
      groupBy === 'sequence' ? sequences.map((s) => ({ id: s.id, name: s.name })) : accounts.map((a) => ({ id: a.id, name: a.name }));
    const groups: { id: string | null; name: string | null; funnel: ReturnType<typeof toFunnel> }[] = named.map((g) => ({
      id: g.id,
      name: g.name,
      funnel: toFunnel(byGroup.get(g.id)),
    }));
    const known = new Set(named.map((g) => g.id));
    // A lead can point at an account row another workspace owns only through bad seed data; it still counts, unnamed.
    for (const r of groupRows) {
      if (r.group_id !== null && !known.has(r.group_id)) groups.push({ id: r.group_id, name: null, funnel: toFunnel(r) });
    }
    if (byGroup.has(null)) groups.push({ id: null, name: null, funnel: toFunnel(byGroup.get(null)) });

    const arms = new Map<string, { sequenceId: string; variantKey: string; sent: number; accepted: number; replied: number; meetingsBooked: number }>();
    const armKey = (s: string, k: string) => `${s}\u0000${k}`;
    const onConnect = new Map<string, boolean>();
    for (const s of sequences) {
      const v = variantSteps(s.steps);
      onConnect.set(s.id, v.onConnect);
      for (const key of v.keys) arms.set(armKey(s.id, key), { sequenceId: s.id, variantKey: key, sent: 0, accepted: 0, replied: 0, meetingsBooked: 0 });
    }
    for (const r of armRows) {
      if (r.sequence_id === null || r.variant_key === null) continue;
      arms.set(armKey(r.sequence_id, r.variant_key), {
        sequenceId: r.sequence_id,
        variantKey: r.variant_key,
        sent: Number(onConnect.get(r.sequence_id) ? r.invited : r.messaged),
        accepted: Number(r.accepted),
        replied: Number(r.replied),
        meetingsBooked: Number(r.meetings_booked),
      });
    }
    const order = new Map(sequences.map((s, i) => [s.id, i]));
    const experimentArms = [...arms.values()].sort(
      (a, b) =>
        (order.get(a.sequenceId) ?? Infinity) - (order.get(b.sequenceId) ?? Infinity) ||
        a.sequenceId.localeCompare(b.sequenceId) ||
        a.variantKey.localeCompare(b.variantKey),
    );

    return { groupBy, total: toFunnel(totalRow), groups, experimentArms, excludedWarmupAccounts: [] as string[] };
  }

  return { funnelReport, dailyActivity };
}

export type ReportsService = ReturnType<typeof createReportsService>;

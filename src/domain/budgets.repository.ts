import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Database } from '../db/database.js';
import type { SendBudgetsTable } from '../db/schema.js';
import { budgetKeyText, WINDOW_DAYS, type BudgetKey, type BudgetScope, type BudgetWindow } from './budgets.js';

// The SQL of the send budget ledger (table send_budgets, migration 0023); domain/budgets.ts holds the rule. The
// engine's claim and the e-mail and X drivers all reserve and give back through these functions.

/** Take `n` units of `key`'s window, never past `cap` (null: uncapped). `at` is kept as the row's last use. */
export interface BudgetReservation {
  key: BudgetKey;
  n: number;
  cap: number | null;
  at: Date;
}

/** A ledger row as read: `used` is its own day's count (a rolling window's total is `readBudgetUsage`). */
export interface BudgetRow {
  key: BudgetKey;
  used: number;
  lastUsedAt: Date | null;
}

/** A ledger row as the reads select it: the day as `YYYY-MM-DD` text (drivers differ on a date's time zone). */
export type WireRow = Omit<Selectable<SendBudgetsTable>, 'cap' | 'window_start'> & { window_start: string };

const RECORD = sql`(workspace_id uuid, scope text, scope_id text, budget text, window_kind text, window_start date, n int, cap int, at timestamptz)`;
const KEY_COLUMNS = ['workspace_id', 'scope', 'scope_id', 'budget', 'window_kind', 'window_start'] as const;

const wire = (k: BudgetKey) => ({
  workspace_id: k.workspaceId,
  scope: k.scope,
  scope_id: k.scopeId,
  budget: k.budget,
  window_kind: k.window,
  window_start: k.windowStart,
});

const keyOf = (r: WireRow): BudgetKey => ({
  workspaceId: r.workspace_id,
  scope: r.scope as BudgetScope,
  scopeId: r.scope_id,
  budget: r.budget,
  window: r.window_kind as BudgetWindow,
  windowStart: r.window_start,
});

const rowOf = (r: WireRow): BudgetRow => ({ key: keyOf(r), used: Number(r.used), lastUsedAt: r.last_used_at ? new Date(r.last_used_at) : null });

/** Distinct keys in key order: the order every writer takes several rows in, so concurrent writers queue, never deadlock. */
function ordered<T extends { key: BudgetKey }>(items: T[]): T[] {
  const seen = new Set<string>();
  for (const i of items) {
    const k = budgetKeyText(i.key);
    if (seen.has(k)) throw new Error(`send budget ${k} named twice in one statement`);
    seen.add(k);
  }
  return [...items].sort((a, b) => (budgetKeyText(a.key) < budgetKeyText(b.key) ? -1 : budgetKeyText(a.key) > budgetKeyText(b.key) ? 1 : 0));
}

/** `WINDOW_DAYS` of a window kind, as SQL. */
function windowDaysSql(windowKind: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`(CASE ${windowKind} ${sql.join(
    Object.entries(WINDOW_DAYS).map(([w, d]) => sql`WHEN ${w}::text THEN ${sql.lit(d)}`),
    sql` `,
  )} ELSE 1 END)`;
}

/**
 * Units already used in the days before the key's own day that its window also counts (a rolling week); 0 for a
 * one-day window, without reading anything.
 */
function earlierUsedSql(k: Record<(typeof KEY_COLUMNS)[number], RawBuilder<unknown>>): RawBuilder<number> {
  const days = windowDaysSql(k.window_kind);
  return sql<number>`(CASE WHEN ${days} <= 1 THEN 0 ELSE (SELECT COALESCE(sum(o.used), 0)::int FROM send_budgets o
      WHERE o.workspace_id = ${k.workspace_id} AND o.scope = ${k.scope} AND o.scope_id = ${k.scope_id} AND o.budget = ${k.budget}
        AND o.window_kind = ${k.window_kind} AND o.window_start > ${k.window_start} - ${days} AND o.window_start < ${k.window_start}) END)`;
}

const cols = (alias: string) =>
  Object.fromEntries(KEY_COLUMNS.map((c) => [c, sql.ref(`${alias}.${c}`)])) as Record<(typeof KEY_COLUMNS)[number], RawBuilder<unknown>>;

/**
 * Reserves each of `items` all or nothing, with one conditional upsert: the row's window takes `n` more units only
 * while `used + n <= cap` (over every day the window counts), so no concurrency can overshoot a cap. Answers, per
 * item in the caller's order, whether it was granted. Keys must be distinct; rows are taken in key order.
 */
export async function reserveBudgets(db: Database, items: BudgetReservation[]): Promise<boolean[]> {
  const wanted = items.filter((i) => i.n > 0 && (i.cap === null || i.cap >= i.n));
  if (wanted.length === 0) return items.map((i) => i.n <= 0);
  const json = JSON.stringify(ordered(wanted).map((i) => ({ ...wire(i.key), n: i.n, cap: i.cap, at: i.at.toISOString() })));
  const { rows } = await sql<WireRow>`
    INSERT INTO send_budgets AS b (workspace_id, scope, scope_id, budget, window_kind, window_start, used, cap, last_used_at)
    SELECT v.workspace_id, v.scope, v.scope_id, v.budget, v.window_kind, v.window_start, v.n, v.cap, v.at
    FROM jsonb_to_recordset(${json}::jsonb) AS v${RECORD}
    WHERE v.cap IS NULL OR v.n + ${earlierUsedSql(cols('v'))} <= v.cap
    ORDER BY v.workspace_id, v.scope, v.scope_id, v.budget, v.window_kind, v.window_start
    ON CONFLICT (workspace_id, scope, scope_id, budget, window_kind, window_start) DO UPDATE
      SET used = b.used + EXCLUDED.used, cap = EXCLUDED.cap, last_used_at = GREATEST(b.last_used_at, EXCLUDED.last_used_at)
      WHERE EXCLUDED.cap IS NULL OR b.used + EXCLUDED.used + ${earlierUsedSql(cols('excluded'))} <= EXCLUDED.cap
    RETURNING b.workspace_id, b.scope, b.scope_id, b.budget, b.window_kind, b.window_start::text AS window_start, b.used, b.last_used_at`.execute(db);
  const granted = new Set(rows.map((r) => budgetKeyText(keyOf(r))));
  return items.map((i) => i.n <= 0 || granted.has(budgetKeyText(i.key)));
}

/** One reservation; false when the window's cap has no room for it. */
export async function reserveBudget(db: Database, item: BudgetReservation): Promise<boolean> {
  return (await reserveBudgets(db, [item]))[0];
}

/** Gives units back (the step was not performed), never below zero; rows in key order, as they are reserved. */
export async function releaseBudgets(db: Database, items: { key: BudgetKey; n: number }[]): Promise<void> {
  const grouped = new Map<string, { key: BudgetKey; n: number }>();
  for (const i of items) {
    if (i.n <= 0) continue;
    const k = budgetKeyText(i.key);
    const g = grouped.get(k);
    if (g) g.n += i.n;
    else grouped.set(k, { key: i.key, n: i.n });
  }
  if (grouped.size === 0) return;
  const json = JSON.stringify(ordered([...grouped.values()]).map((i) => ({ ...wire(i.key), n: i.n })));
  await sql`UPDATE send_budgets b SET used = GREATEST(0, b.used - v.n)
    FROM (SELECT * FROM jsonb_to_recordset(${json}::jsonb) AS v${RECORD}) v
    WHERE b.workspace_id = v.workspace_id AND b.scope = v.scope AND b.scope_id = v.scope_id AND b.budget = v.budget
      AND b.window_kind = v.window_kind AND b.window_start = v.window_start`.execute(db);
}

export async function releaseBudget(db: Database, key: BudgetKey, n = 1): Promise<void> {
  await releaseBudgets(db, [{ key, n }]);
}

/**
 * Creates the rows that do not exist yet (used 0) and locks them all in key order, for a caller that decides
 * several units of one sender under one lock (the engine's claim: caps and spacing of a batch), then reserves them
 * with `reserveBudgets` in the same transaction.
 */
export async function lockBudgets(trx: Database, keys: BudgetKey[]): Promise<BudgetRow[]> {
  if (keys.length === 0) return [];
  const json = JSON.stringify(ordered(keys.map((key) => ({ key }))).map((i) => wire(i.key)));
  await sql`INSERT INTO send_budgets (workspace_id, scope, scope_id, budget, window_kind, window_start)
    SELECT v.workspace_id, v.scope, v.scope_id, v.budget, v.window_kind, v.window_start FROM jsonb_to_recordset(${json}::jsonb) AS v${RECORD}
    ORDER BY v.workspace_id, v.scope, v.scope_id, v.budget, v.window_kind, v.window_start
    ON CONFLICT DO NOTHING`.execute(trx);
  const { rows } = await sql<WireRow>`
    SELECT b.workspace_id, b.scope, b.scope_id, b.budget, b.window_kind, b.window_start::text AS window_start, b.used, b.last_used_at
    FROM send_budgets b JOIN jsonb_to_recordset(${json}::jsonb) AS v${RECORD}
      ON b.workspace_id = v.workspace_id AND b.scope = v.scope AND b.scope_id = v.scope_id AND b.budget = v.budget
        AND b.window_kind = v.window_kind AND b.window_start = v.window_start
    ORDER BY b.workspace_id, b.scope, b.scope_id, b.budget, b.window_kind, b.window_start
    FOR UPDATE OF b`.execute(trx);
  return rows.map(rowOf);
}

/**
 * What each key's window has used, keyed by `budgetKeyText`: the day's row, or for a window of several days the sum
 * of its days up to the key's. A window with no row yet is absent (0).
 */
export async function readBudgetUsage(db: Database, keys: BudgetKey[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (keys.length === 0) return out;
  const distinct = [...new Map(keys.map((k) => [budgetKeyText(k), k])).values()];
  const json = JSON.stringify(distinct.map(wire));
  const { rows } = await sql<WireRow>`
    SELECT v.workspace_id, v.scope, v.scope_id, v.budget, v.window_kind, v.window_start::text AS window_start,
      sum(o.used)::int AS used, max(o.last_used_at) AS last_used_at
    FROM jsonb_to_recordset(${json}::jsonb) AS v${RECORD}
    JOIN send_budgets o ON o.workspace_id = v.workspace_id AND o.scope = v.scope AND o.scope_id = v.scope_id AND o.budget = v.budget
      AND o.window_kind = v.window_kind AND o.window_start <= v.window_start AND o.window_start > v.window_start - ${windowDaysSql(sql.ref('v.window_kind'))}
    GROUP BY 1, 2, 3, 4, 5, 6`.execute(db);
  for (const r of rows) out.set(budgetKeyText(keyOf(r)), Number(r.used));
  return out;
}

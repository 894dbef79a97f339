import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/test-database.js';
import { databaseMigrated } from '../helpers/migrated-database.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { newId } from '../../src/lib/ids.js';
import {
  accountBudgetKey,
  accountCaps,
  mailboxBudgetKey,
  mailboxCap,
  mailboxDomainScopeId,
  windowStartOf,
  xAccountBudgetKey,
  type BudgetKey,
  type PacingRules,
} from '../../src/domain/budgets.js';
import {
  lockBudgets,
  readBudgetUsage,
  releaseBudget,
  releaseBudgets,
  reserveBudget,
  reserveBudgets,
  type WireRow,
} from '../../src/domain/budgets.repository.js';

// The send budget ledger (domain/budgets.ts, budgets.repository.ts): one table, one conditional upsert to reserve,
// one update to give back; windows of a day (local or UTC) and a rolling week; and migration 0023, which moved the
// three old day-counter tables into it.

let h: DatabaseHandle;
let ws: string;
const at = new Date('2026-11-24T15:00:00.000Z');

beforeAll(async () => {
  h = await createTestDatabase();
  ws = newId();
  await h.db.insertInto('workspaces').values({ id: ws, name: 'Budgets Co' }).execute();
});
afterAll(async () => h?.close());

const key = (over: Partial<BudgetKey> = {}): BudgetKey => ({
  workspaceId: ws,
  scope: 'account',
  scopeId: `onb_${newId().slice(0, 8)}`,
  budget: 'invites',
  window: 'local_day',
  windowStart: '2026-11-24',
  ...over,
});
const used = async (k: BudgetKey) =>
  (await readBudgetUsage(h.db, [k])).get([k.workspaceId, k.scope, k.scopeId, k.budget, k.window, k.windowStart].join('|')) ?? 0;

describe('the rule', () => {
  const rules: PacingRules = { inviteCap: 40, rampSchedule: [10, 20, 30], messageCap: 100, hoursStart: 480, hoursEnd: 1080, days: 62, spacingSeconds: 30 };

  it('windows: the local day in the zone, the UTC day for X', () => {
    expect(windowStartOf('local_day', new Date('2026-11-24T03:00:00.000Z'), 'America/New_York')).toBe('2026-11-23');
    expect(windowStartOf('local_day', new Date('2026-11-24T03:00:00.000Z'), 'Not/AZone')).toBe('2026-11-24');
    expect(xAccountBudgetKey(ws, '42', 'dms', new Date('2026-11-24T23:59:00.000Z'))).toMatchObject({
      scope: 'x_account',
      window: 'utc_day',
      windowStart: '2026-11-24',
    });
    expect(accountBudgetKey(ws, 'onb_1', 'messages', '2026-11-24')).toMatchObject({ scope: 'account', window: 'local_day' });
    expect(mailboxBudgetKey(ws, 'mbx', '2026-11-24')).toMatchObject({ scope: 'mailbox', budget: 'emails', window: 'local_day' });
    expect(mailboxDomainScopeId('mbx', 'Initech.Example')).toBe('mbx:initech.example');
  });

  it('caps: the ramp for invites and a warming mailbox, then the full caps; actions are uncapped', () => {
    const warm = new Date('2026-11-14T12:00:00.000Z'); // 10 local days before: week 2
    expect(accountCaps(rules, warm, at, 'UTC')).toEqual({ invites: 20, messages: 100, actions: null });
    expect(accountCaps(rules, null, at, 'UTC')).toEqual({ invites: 40, messages: 100, actions: null });
    expect(mailboxCap(rules, warm, at, 'UTC')).toBe(20);
    expect(mailboxCap(rules, null, at, 'UTC')).toBe(100);
  });
});

describe('the ledger', () => {
  it('reserves up to the cap and no further, gives back, never below zero', async () => {
    const k = key();
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await reserveBudget(h.db, { key: k, n: 1, cap: 3, at }));
    expect(results).toEqual([true, true, true, false]);
    expect(await used(k)).toBe(3);
    await releaseBudget(h.db, k);
    expect(await used(k)).toBe(2);
    expect(await reserveBudget(h.db, { key: k, n: 2, cap: 3, at })).toBe(false);
    expect(await reserveBudget(h.db, { key: k, n: 1, cap: 3, at })).toBe(true);
    await releaseBudgets(h.db, [{ key: k, n: 5 }]);
    expect(await used(k)).toBe(0);
    expect(await reserveBudget(h.db, { key: key(), n: 1, cap: 0, at })).toBe(false);
  });

  it('an uncapped budget always takes the units and keeps the latest instant', async () => {
    const k = key({ budget: 'actions' });
    expect(await reserveBudgets(h.db, [{ key: k, n: 7, cap: null, at }])).toEqual([true]);
    expect(await reserveBudget(h.db, { key: k, n: 1, cap: null, at: new Date(at.getTime() - 60_000) })).toBe(true);
    const [row] = await lockBudgets(h.db, [k]);
    expect(row).toMatchObject({ used: 8, lastUsedAt: at });
  });

  it('concurrent reservations never pass the cap', async () => {
    const k = key({ scope: 'mailbox', budget: 'emails' });
    const results = await Promise.all(Array.from({ length: 24 }, () => reserveBudget(h.db, { key: k, n: 1, cap: 5, at })));
    expect(results.filter(Boolean)).toHaveLength(5);
    expect(await used(k)).toBe(5);
  });

  it('a batch answers per item, all or nothing per row', async () => {
    const a = key();
    const b = key();
    await reserveBudget(h.db, { key: b, n: 2, cap: 3, at });
    expect(
      await reserveBudgets(h.db, [
        { key: a, n: 2, cap: 3, at },
        { key: b, n: 2, cap: 3, at },
      ]),
    ).toEqual([true, false]);
    expect([await used(a), await used(b)]).toEqual([2, 2]);
    await expect(
      reserveBudgets(h.db, [
        { key: a, n: 1, cap: 9, at },
        { key: a, n: 1, cap: 9, at },
      ]),
    ).rejects.toThrow(/named twice/);
  });

  it('a rolling week counts its day and the six before it', async () => {
    const scopeId = `onb_${newId().slice(0, 8)}`;
    const day = (d: string) => key({ scopeId, window: 'rolling_week', windowStart: d });
    const take = (d: string, n: number) => reserveBudget(h.db, { key: day(d), n, cap: 5, at });
    expect(await take('2026-11-01', 3)).toBe(true);
    expect(await take('2026-11-04', 2)).toBe(true);
    expect(await take('2026-11-07', 1)).toBe(false); // 3 + 2 already in Nov 1–7
    expect(await used(day('2026-11-07'))).toBe(5);
    expect(await take('2026-11-08', 3)).toBe(true); // Nov 1 left the window: 2 + 3
    expect(await take('2026-11-08', 1)).toBe(false);
    expect(await used(day('2026-11-08'))).toBe(5);
    expect(await take('2026-11-11', 1)).toBe(true); // Nov 4 left: 3 + 1
    // A day window of the same scope and budget is its own budget.
    expect(await reserveBudget(h.db, { key: key({ scopeId, windowStart: '2026-11-08' }), n: 5, cap: 5, at })).toBe(true);
  });

  it('any scope: a budget per recipient domain of a mailbox, reserved whenever its caller decides (a task completing)', async () => {
    const k = key({ scope: 'mailbox_domain', scopeId: mailboxDomainScopeId('mbx_1', 'initech.example'), budget: 'emails' });
    expect(await reserveBudget(h.db, { key: k, n: 1, cap: 1, at })).toBe(true);
    expect(await reserveBudget(h.db, { key: k, n: 1, cap: 1, at })).toBe(false);
  });

  it('lockBudgets creates missing rows at zero and locks them for a decision, then the reservation writes it', async () => {
    const k = key({ budget: 'messages' });
    await h.db.transaction().execute(async (trx) => {
      const rows = await lockBudgets(trx, [k]);
      expect(rows).toEqual([{ key: k, used: 0, lastUsedAt: null }]);
      expect(await reserveBudgets(trx, [{ key: k, n: 2, cap: 2, at }])).toEqual([true]);
    });
    expect(await used(k)).toBe(2);
  });
});

describe('migration 0023_send_budgets', () => {
  it('moves every counter of the three day tables into the ledger and drops them', async () => {
    const { handle, drop } = await databaseMigrated('0022_x_disconnect', 'through');
    const db = handle.db;
    try {
      const w = newId();
      await sql`INSERT INTO workspaces (id, name) VALUES (${w}::uuid, 'Old Co')`.execute(db);
      await sql`INSERT INTO messaging_accounts (id, workspace_id, name) VALUES ('onb_old', ${w}::uuid, 'Old')`.execute(db);
      await sql`INSERT INTO mailboxes (id, workspace_id, account_id, address, smtp_url_enc, imap_url_enc) VALUES ('mbx_old', ${w}::uuid, 'onb_old', 'a@b.example', 'x', 'y')`.execute(
        db,
      );
      await sql`INSERT INTO engine_account_days (workspace_id, account_id, local_day, invites, messages, actions, last_action_at)
        VALUES (${w}::uuid, 'onb_old', '2026-11-23', 4, 0, 6, '2026-11-23T15:00:00Z'), (${w}::uuid, 'onb_old', '2026-11-24', 0, 2, 2, NULL)`.execute(db);
      await sql`INSERT INTO mailbox_days (mailbox_id, local_day, sent) VALUES ('mbx_old', '2026-11-24', 9), ('mbx_old', '2026-11-23', 0)`.execute(db);
      await sql`INSERT INTO x_account_days (workspace_id, user_id, day, dms, follows) VALUES (${w}::uuid, '42', '2026-11-24', 3, 1)`.execute(db);

      await migrateToLatest(db);

      const { rows } = await sql<WireRow>`
        SELECT scope, scope_id, budget, window_kind, window_start::text AS window_start, used, last_used_at FROM send_budgets
        WHERE workspace_id = ${w}::uuid ORDER BY scope, scope_id, budget, window_start`.execute(db);
      expect(rows.map((r) => [r.scope, r.scope_id, r.budget, r.window_kind, r.window_start, Number(r.used), r.last_used_at?.toISOString() ?? null])).toEqual([
        ['account', 'onb_old', 'actions', 'local_day', '2026-11-23', 6, '2026-11-23T15:00:00.000Z'],
        ['account', 'onb_old', 'actions', 'local_day', '2026-11-24', 2, null],
        ['account', 'onb_old', 'invites', 'local_day', '2026-11-23', 4, null],
        ['account', 'onb_old', 'messages', 'local_day', '2026-11-24', 2, null],
        ['mailbox', 'mbx_old', 'emails', 'local_day', '2026-11-24', 9, null],
        ['x_account', '42', 'dms', 'utc_day', '2026-11-24', 3, null],
        ['x_account', '42', 'follows', 'utc_day', '2026-11-24', 1, null],
      ]);
      const { rows: left } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM information_schema.tables
        WHERE table_name IN ('engine_account_days', 'mailbox_days', 'x_account_days')`.execute(db);
      expect(Number(left[0].n)).toBe(0);
    } finally {
      await handle.close();
      await drop();
    }
  });
});

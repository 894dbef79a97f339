import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { energyRow, ledger, setWorkspace, type WorkspaceEnergy } from '../../helpers/publicdata-fixtures.js';
import { effectiveBalance, effectiveBalanceSql, nextRefillAt, utcDayStart, type BillingStatus } from '../../../src/domain/energy.js';

let t: TestApp;
const NOW = '2026-11-21T12:00:00.000Z';

beforeAll(async () => {
  t = await buildTestApp({ now: NOW });
});
afterAll(async () => t?.close());

async function workspace(energy: WorkspaceEnergy) {
  const ws = await createWorkspaceWithKey(t, 'Energy');
  await setWorkspace(t.db, ws.workspaceId, { refilledAt: t.clock.now(), ...energy });
  return ws.workspaceId;
}

describe('refill schedule', () => {
  it('the next refill is the next UTC midnight; canceled billing has none', () => {
    expect(utcDayStart(new Date('2026-11-21T23:59:59.999Z')).toISOString()).toBe('2026-11-21T00:00:00.000Z');
    expect(nextRefillAt(new Date('2026-11-21T00:00:00.000Z'), 'active')?.toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect(nextRefillAt(new Date('2026-12-31T18:00:00.000Z'), 'past_due')?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(nextRefillAt(new Date(NOW), 'canceled')).toBeNull();
  });

  it('the refill rule answers the same in TypeScript and in SQL: owed once a UTC day, never when canceled, never lowering a balance', async () => {
    const now = new Date(NOW);
    const cases: { status: BillingStatus; balance: number; refilledAt: string; expected: number }[] = [];
    for (const status of ['active', 'trialing', 'past_due', 'canceled'] as const) {
      for (const refilledAt of ['2026-11-20T23:59:59.999Z', '2026-11-21T00:00:00.000Z']) {
        for (const balance of [3, 50]) {
          const owed = refilledAt < '2026-11-21' && status !== 'canceled';
          cases.push({ status, balance, refilledAt, expected: owed ? Math.max(balance, 10) : balance });
        }
      }
    }
    for (const c of cases) {
      const ws = await workspace({ balance: c.balance, dailyRefill: 10, refilledAt: c.refilledAt, status: c.status });
      const { rows } = await sql<{
        available: number;
      }>`SELECT ${effectiveBalanceSql('w', now)} AS available FROM workspaces w WHERE w.id = ${ws}::uuid`.execute(t.db);
      const row = { energy_balance: c.balance, energy_daily_refill: 10, energy_refilled_at: new Date(c.refilledAt), billing_status: c.status };
      expect([Number(rows[0].available), effectiveBalance(row, now)], JSON.stringify(c)).toEqual([c.expected, c.expected]);
    }
  });
});

describe('energy charges', () => {
  it('a charge debits the balance and writes one ledger entry with its units', async () => {
    const ws = await workspace({ balance: 10, dailyRefill: 10 });
    expect(await t.services.energy.charge(ws, { action: 'enrich', read: 'follows', units: 4 })).toEqual({ ok: true, balance: 6 });
    expect((await energyRow(t.db, ws)).energy_balance).toBe(6);
    const l = await ledger(t.db, ws);
    expect(l).toMatchObject({ count: 1, units: 4 });
    expect(l.rows[0]).toMatchObject({ action: 'enrich', outcome: 'ok' });
  });

  it('an unaffordable charge changes nothing and reports the next refill', async () => {
    const ws = await workspace({ balance: 2, dailyRefill: 10 });
    expect(await t.services.energy.charge(ws, { action: 'resolve', read: 'resolve_handle', units: 3 })).toEqual({
      ok: false,
      nextRefillAt: new Date('2026-11-22T00:00:00.000Z'),
    });
    expect((await energyRow(t.db, ws)).energy_balance).toBe(2);
    expect(await ledger(t.db, ws)).toMatchObject({ count: 0 });
  });

  it('refills at most once per UTC day, lazily, on the first charge of the day', async () => {
    const ws = await workspace({ balance: 3, dailyRefill: 10, refilledAt: '2026-11-20T12:00:00.000Z' });
    expect(await t.services.energy.charge(ws, { action: 'enrich', read: 'follows' })).toEqual({ ok: true, balance: 9 });
    expect(await t.services.energy.charge(ws, { action: 'enrich', read: 'follows' })).toEqual({ ok: true, balance: 8 });
    expect((await energyRow(t.db, ws)).energy_refilled_at.toISOString()).toBe(t.clock.now().toISOString());
    const app = await buildTestApp({ handle: t.handle, now: '2026-11-22T00:00:00.000Z' });
    try {
      expect(await app.services.energy.charge(ws, { action: 'enrich', read: 'follows' })).toEqual({ ok: true, balance: 9 });
      expect(await app.services.energy.charge(ws, { action: 'enrich', read: 'follows' })).toEqual({ ok: true, balance: 8 });
    } finally {
      await app.close();
    }
  });

  it('a refill tops up to the daily amount and never lowers a larger balance', async () => {
    const ws = await workspace({ balance: 50, dailyRefill: 10, refilledAt: '2026-11-01T00:00:00.000Z' });
    expect(await t.services.energy.charge(ws, { action: 'enrich', read: 'follows' })).toEqual({ ok: true, balance: 49 });
  });

  it('a canceled workspace is not refilled', async () => {
    const ws = await workspace({ balance: 0, dailyRefill: 10, status: 'canceled', refilledAt: '2026-11-01T00:00:00.000Z' });
    expect(await t.services.energy.charge(ws, { action: 'enrich', read: 'follows' })).toEqual({ ok: false, nextRefillAt: null });
    expect((await energyRow(t.db, ws)).energy_balance).toBe(0);
  });

  it('40 concurrent charges of 3 units never overspend: exact balance, exact ledger', async () => {
    const ws = await workspace({ balance: 50, dailyRefill: 50 });
    const results = await Promise.all(Array.from({ length: 40 }, () => t.services.energy.charge(ws, { action: 'enrich', read: 'follows', units: 3 })));
    const ok = results.filter((r) => r.ok);
    expect(ok).toHaveLength(16);
    const balances = ok.map((r) => (r.ok ? r.balance : -1)).sort((a, b) => a - b);
    expect(balances).toEqual(Array.from({ length: 16 }, (_, i) => 2 + 3 * i));
    expect((await energyRow(t.db, ws)).energy_balance).toBe(2);
    expect(await ledger(t.db, ws)).toMatchObject({ count: 16, units: 48 });
  });

  it('20 concurrent first charges of the day refill exactly once', async () => {
    const ws = await workspace({ balance: 0, dailyRefill: 10, refilledAt: '2026-11-20T23:00:00.000Z' });
    const results = await Promise.all(Array.from({ length: 20 }, () => t.services.energy.charge(ws, { action: 'enrich', read: 'follows' })));
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    expect((await energyRow(t.db, ws)).energy_balance).toBe(0);
    expect(await ledger(t.db, ws)).toMatchObject({ count: 10, units: 10 });
  });

  it('two app instances on one database share the balance without overspending', async () => {
    const ws = await workspace({ balance: 15, dailyRefill: 15 });
    const other = await buildTestApp({ handle: t.handle, now: NOW });
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? t : other).services.energy.charge(ws, { action: 'resolve', read: 'resolve_handle' })),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(15);
      expect((await energyRow(t.db, ws)).energy_balance).toBe(0);
      expect(await ledger(t.db, ws)).toMatchObject({ count: 15, units: 15 });
    } finally {
      await other.close();
    }
  });
});

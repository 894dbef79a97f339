import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { insertMessagingAccount, insertXAccount } from '../../helpers/factories.js';
import { energyRow, ledger, setWorkspace, type WorkspaceEnergy } from '../../helpers/publicdata-fixtures.js';
import type { ReadinessSources } from '../../../src/modules/publicdata/readiness.service.js';

let t: TestApp;
const NOW = '2026-11-21T12:00:00.000Z';
const NEXT_REFILL = '2026-11-22T00:00:00.000Z';

beforeAll(async () => {
  t = await buildTestApp({ now: NOW });
});
afterAll(async () => t?.close());

async function workspace(energy: WorkspaceEnergy = {}, accounts = { x: true, messaging: true }) {
  const ws = await createWorkspaceWithKey(t, 'Acme');
  if (accounts.x) await insertXAccount(t.db, ws.workspaceId, { userId: '2001', handle: 'acme_hq' });
  const messagingId = accounts.messaging ? await insertMessagingAccount(t.db, ws.workspaceId, { name: 'Dana (LinkedIn)' }) : null;
  await setWorkspace(t.db, ws.workspaceId, { plan: 'growth', status: 'active', balance: 800, dailyRefill: 1000, refilledAt: NOW, ...energy });
  return { ...ws, messagingId };
}

const readiness = async (headers: Record<string, string>) => {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers });
  return { status: res.statusCode, body: res.json() };
};

describe('GET /x/readiness', () => {
  it('a ready workspace: every section complete, no issues, all spec fields', async () => {
    const ws = await workspace();
    const { status, body } = await readiness(ws.auth);
    expect(status).toBe(200);
    expect(body).toEqual({
      workspaceId: ws.workspaceId,
      asOf: NOW,
      accounts: {
        state: 'complete',
        observedAt: NOW,
        data: {
          xAccounts: [{ userId: '2001', handle: 'acme_hq', openTasks: 0 }],
          messagingAccounts: [
            {
              id: ws.messagingId,
              name: 'Dana (LinkedIn)',
              mode: 'linkedin',
              storedStatus: 'connected',
              openTasks: 0,
              linkedinGateway: { delivery: 'sandbox', error: null },
            },
          ],
          openTasks: 0,
        },
        issues: [],
      },
      billing: { state: 'complete', observedAt: NOW, data: { plan: 'growth', status: 'active' }, issues: [] },
      energy: { state: 'complete', observedAt: NOW, data: { balance: 800, dailyRefill: 1000, nextRefillAt: NEXT_REFILL }, issues: [] },
      providerHealthChecked: false,
      deliveryGuaranteed: false,
      note: expect.any(String),
    });
  });

  it('reports missing and disconnected accounts with stable codes that are not retryable', async () => {
    const empty = await workspace({}, { x: false, messaging: false });
    const { body } = await readiness(empty.auth);
    expect(body.accounts.state).toBe('complete');
    expect(body.accounts.data).toEqual({ xAccounts: [], messagingAccounts: [], openTasks: 0 });
    expect(body.accounts.issues).toEqual([
      { code: 'no_connected_account', message: expect.any(String), retryable: false },
      { code: 'no_messaging_account', message: expect.any(String), retryable: false },
    ]);
    const ws = await workspace();
    await insertMessagingAccount(t.db, ws.workspaceId, { name: 'Sam', stored_status: 'disconnected' });
    const again = await readiness(ws.auth);
    expect(again.body.accounts.issues).toEqual([{ code: 'messaging_account_disconnected', message: expect.any(String), retryable: false }]);
  });

  it('billing: canceled is billing_inactive (and no refill is scheduled), past_due is billing_past_due, trialing is fine', async () => {
    const canceled = await workspace({ status: 'canceled', balance: 0 });
    const c = (await readiness(canceled.auth)).body;
    expect(c.billing).toMatchObject({ state: 'complete', data: { plan: 'growth', status: 'canceled' } });
    expect(c.billing.issues).toEqual([{ code: 'billing_inactive', message: expect.any(String), retryable: false }]);
    expect(c.energy.data.nextRefillAt).toBeNull();
    expect(c.energy.issues).toEqual([{ code: 'energy_exhausted', message: expect.any(String), retryable: false }]);

    const pastDue = await workspace({ status: 'past_due', plan: 'scale' });
    const p = (await readiness(pastDue.auth)).body;
    expect(p.billing.data).toEqual({ plan: 'scale', status: 'past_due' });
    expect(p.billing.issues).toEqual([{ code: 'billing_past_due', message: expect.any(String), retryable: false }]);

    const trialing = await workspace({ status: 'trialing' });
    expect((await readiness(trialing.auth)).body.billing.issues).toEqual([]);
  });

  it('energy: exhausted and low are reported as retryable (a refill is scheduled)', async () => {
    const exhausted = await workspace({ balance: 0 });
    expect((await readiness(exhausted.auth)).body.energy.issues).toEqual([{ code: 'energy_exhausted', message: expect.any(String), retryable: true }]);
    const low = await workspace({ balance: 99 });
    expect((await readiness(low.auth)).body.energy.issues).toEqual([{ code: 'energy_low', message: expect.any(String), retryable: true }]);
    const fine = await workspace({ balance: 100 });
    expect((await readiness(fine.auth)).body.energy.issues).toEqual([]);
    const noRefill = await workspace({ balance: 0, dailyRefill: 0 });
    expect((await readiness(noRefill.auth)).body.energy.issues).toEqual([{ code: 'energy_exhausted', message: expect.any(String), retryable: false }]);
  });

  it('energy shows a refill that is owed today without writing it, and spends nothing', async () => {
    const ws = await workspace({ balance: 0, dailyRefill: 50, refilledAt: '2026-11-20T08:00:00.000Z' });
    const { body } = await readiness(ws.auth);
    expect(body.energy.data).toEqual({ balance: 50, dailyRefill: 50, nextRefillAt: NEXT_REFILL });
    expect(body.energy.issues).toEqual([]);
    const row = await energyRow(t.db, ws.workspaceId);
    expect(row.energy_balance).toBe(0);
    expect(row.energy_refilled_at.toISOString()).toBe('2026-11-20T08:00:00.000Z');
    expect(await ledger(t.db, ws.workspaceId)).toMatchObject({ count: 0 });
  });

  describe('a failing source degrades only its own section and the call still answers 200', () => {
    const fail = () => Promise.reject(new Error('source down'));
    const cases: [keyof ReadinessSources, 'accounts' | 'billing' | 'energy', 'partial' | 'unavailable'][] = [
      ['xAccounts', 'accounts', 'partial'],
      ['messagingAccounts', 'accounts', 'partial'],
      ['billing', 'billing', 'unavailable'],
      ['energy', 'energy', 'unavailable'],
    ];
    for (const [source, section, state] of cases) {
      it(`${source} fails → ${section} ${state}`, async () => {
        const ws = await workspace();
        const restore = t.services.readiness.overrideSource(source, fail);
        try {
          const { status, body } = await readiness(ws.auth);
          expect(status).toBe(200);
          expect(body[section].state).toBe(state);
          const others = (['accounts', 'billing', 'energy'] as const).filter((s) => s !== section);
          for (const other of others) expect(body[other].state, other).toBe('complete');
          if (state === 'unavailable') {
            expect(body[section]).toEqual({
              state: 'unavailable',
              observedAt: null,
              data: null,
              issues: [{ code: 'section_unavailable', message: expect.any(String), retryable: true }],
            });
          } else {
            expect(body.accounts.observedAt).toBe(NOW);
            expect(body.accounts.data[source]).toBeNull();
            const other = source === 'xAccounts' ? 'messagingAccounts' : 'xAccounts';
            expect(body.accounts.data[other]).toHaveLength(1);
            expect(body.accounts.issues).toEqual([{ code: 'section_partial', message: expect.any(String), retryable: true }]);
          }
          expect(body).toMatchObject({ providerHealthChecked: false, deliveryGuaranteed: false, workspaceId: ws.workspaceId });
        } finally {
          restore();
        }
      });
    }

    it('the task queue fails → the open-task counts are left out and the accounts section stays complete', async () => {
      const ws = await workspace();
      const restore = t.services.readiness.overrideSource('openTasks', fail);
      try {
        const { status, body } = await readiness(ws.auth);
        expect(status).toBe(200);
        expect(body.accounts.state).toBe('complete');
        expect(body.accounts.data).not.toHaveProperty('openTasks');
        expect(body.accounts.data.messagingAccounts[0]).not.toHaveProperty('openTasks');
        expect(body.accounts.issues).toEqual([]);
      } finally {
        restore();
      }
    });

    it('both account sources fail → accounts unavailable; every source fails → all three unavailable, still 200', async () => {
      const ws = await workspace();
      const restores = [t.services.readiness.overrideSource('xAccounts', fail), t.services.readiness.overrideSource('messagingAccounts', fail)];
      try {
        let { status, body } = await readiness(ws.auth);
        expect(status).toBe(200);
        expect(body.accounts).toEqual({
          state: 'unavailable',
          observedAt: null,
          data: null,
          issues: [{ code: 'section_unavailable', message: expect.any(String), retryable: true }],
        });
        expect(body.billing.state).toBe('complete');
        restores.push(t.services.readiness.overrideSource('billing', fail), t.services.readiness.overrideSource('energy', fail));
        ({ status, body } = await readiness(ws.auth));
        expect(status).toBe(200);
        for (const s of ['accounts', 'billing', 'energy'] as const) expect(body[s].state, s).toBe('unavailable');
        expect(body.note).toEqual(expect.any(String));
      } finally {
        for (const r of restores) r();
      }
      expect((await readiness(ws.auth)).body.accounts.state).toBe('complete');
    });
  });

  it('reads the workspace selected with X-Workspace-Client, never another', async () => {
    const owner = await workspace();
    const client = await workspace({ balance: 5 }, { x: false, messaging: true });
    await t.services.workspaces.addTeamLink({ ownerWorkspaceId: owner.workspaceId, clientWorkspaceId: client.workspaceId, role: 'admin' });
    const { body } = await readiness({ ...owner.auth, 'x-workspace-client': client.workspaceId });
    expect(body.workspaceId).toBe(client.workspaceId);
    expect(body.accounts.data.xAccounts).toEqual([]);
    expect(body.energy.data.balance).toBe(5);
    expect((await readiness({ ...client.auth, 'x-workspace-client': owner.workspaceId })).status).toBe(403);
  });

  it('403 channel_disabled when the workspace X channel is off', async () => {
    const ws = await workspace({ xChannelEnabled: false });
    const { status, body } = await readiness(ws.auth);
    expect(status).toBe(403);
    expect(body.error).toBe('channel_disabled');
  });
});

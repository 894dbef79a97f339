import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { ADMIN, admin, u } from '../helpers/world-fixtures.js';
import { ENGINE_ENV } from '../engine/helpers.js';
import { gatewayEnv, startLinkedinGatewayFake, type LinkedinGatewayFake } from '../helpers/linkedin-gateway-fake.js';

// World-file contract, "LinkedIn delivery": `messagingAccounts[].linkedin = {delivery, gatewayAccountId?}`;
// gatewayAccountId is required with gateway (a 400 naming the field), and a seeded gateway account sends through
// the gateway from the first engine pass.

const WS = u(901);
const ACC_TASKS = `onb_${u(902)}`;
const ACC_GW = `onb_${u(903)}`;
const SEQ = u(904);
const LEAD = u(905);

describe('world file: LinkedIn delivery', () => {
  let gw: LinkedinGatewayFake;
  let t: TestApp;
  const clock = Date.parse('2026-11-23T10:00:00.000Z');

  beforeAll(async () => {
    gw = await startLinkedinGatewayFake({ now: () => clock });
    gw.addAccount({ id: 'gw_world' });
    gw.addUser('world-person', 'World Person');
    t = await buildTestApp({ now: new Date(clock).toISOString(), env: { ...ENGINE_ENV, OUTREACH_ADMIN_TOKEN: ADMIN, ...gatewayEnv(gw) } });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await gw?.close();
  });

  const seed = (messagingAccounts: unknown[], extra: Record<string, unknown> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/admin/v1/seed',
      headers: admin,
      payload: { workspaces: [{ id: WS, name: 'Seeded LinkedIn', energy: { balance: 1000, dailyRefill: 1000 }, messagingAccounts, ...extra }] },
    });
  const accountRows = () =>
    t.db
      .selectFrom('messaging_accounts')
      .select(['id', 'linkedin_delivery', 'linkedin_gateway_account_id'])
      .where('workspace_id', '=', WS)
      .orderBy('id')
      .execute();

  it.each([
    [
      'gateway without gatewayAccountId',
      { delivery: 'gateway' },
      '/workspaces/0/messagingAccounts/0/linkedin/gatewayAccountId',
      /is required with delivery "gateway"/,
    ],
    ['an unknown delivery', { delivery: 'robot' }, '/workspaces/0/messagingAccounts/0/linkedin/delivery', /must be one of: sandbox, tasks, gateway/],
    ['an unknown field', { delivery: 'tasks', mode: 'x' }, '/workspaces/0/messagingAccounts/0/linkedin/mode', /is not a known field/],
  ])('%s is a 400 naming the field, and nothing is saved', async (_name, linkedin, path, message) => {
    const res = await seed([{ id: ACC_GW, linkedin }]);
    expect(res.statusCode).toBe(400);
    expect(res.json().path ?? res.body).toContain(path);
    expect(res.json().message).toMatch(message);
    expect(await accountRows()).toHaveLength(0);
  });

  it('a linkedin delivery on an account that is not a LinkedIn account is a 400', async () => {
    const res = await seed([{ id: ACC_GW, mode: 'instagram', linkedin: { delivery: 'tasks' } }]);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      path: '/workspaces/0/messagingAccounts/0/linkedin',
      message: expect.stringMatching(/only for an account of mode "linkedin"/),
    });
  });

  it('tasks and gateway accounts are stored as the file says, and the gateway account sends through the gateway', async () => {
    const res = await seed(
      [
        { id: ACC_TASKS, name: 'Dana (LinkedIn)', linkedin: { delivery: 'tasks' } },
        { id: ACC_GW, name: 'Eve (LinkedIn)', linkedin: { delivery: 'gateway', gatewayAccountId: 'gw_world' } },
      ],
      {
        sequences: [
          {
            id: SEQ,
            name: 'Connect',
            status: 'active',
            revision: 1,
            approvedRevision: 1,
            steps: [{ kind: 'connect', delayDays: 0, message: 'Hi {{firstName}}' }],
          },
        ],
        leads: [
          { id: LEAD, person: 'World Person', linkedinUrl: 'https://www.linkedin.com/in/world-person', account: ACC_GW, sequenceId: SEQ, stage: 'queued' },
        ],
      },
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(await accountRows()).toEqual([
      { id: ACC_TASKS, linkedin_delivery: 'tasks', linkedin_gateway_account_id: null },
      { id: ACC_GW, linkedin_delivery: 'gateway', linkedin_gateway_account_id: 'gw_world' },
    ]);
    await t.db
      .updateTable('leads')
      .set({ next_action_at: new Date(clock) })
      .where('id', '=', LEAD)
      .execute();
    const tick = await t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: { now: new Date(clock + 1000).toISOString() } });
    expect(tick.statusCode, tick.body).toBe(200);
    expect(gw.invitations).toEqual([expect.objectContaining({ accountId: 'gw_world', message: 'Hi World' })]);
  });

  it('a gateway account is one messaging account’s: a file giving it to two accounts, or to one when another holds it, is a 409 naming the field', async () => {
    const other = (id: number, gatewayAccountId: string) => ({ id: `onb_${u(id)}`, linkedin: { delivery: 'gateway', gatewayAccountId } });
    const twice = await seed([other(910, 'gw_twice'), other(911, 'gw_twice')]);
    expect(twice.statusCode).toBe(409);
    expect(twice.json()).toMatchObject({ error: 'world_conflict', path: `/workspaces/0/messagingAccounts/1/linkedin/gatewayAccountId` });
    // Another workspace's file naming the gateway account the seeded account holds.
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/seed',
      headers: admin,
      payload: { workspaces: [{ id: u(912), name: 'Prober', messagingAccounts: [other(913, 'gw_world')] }] },
    });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().message).toContain('is linked to another messaging account of this installation');
    const holders = await t.db.selectFrom('messaging_accounts').select('id').where('linkedin_gateway_account_id', 'in', ['gw_world', 'gw_twice']).execute();
    expect(holders.map((h) => h.id)).toEqual([ACC_GW]);
    // The file that holds it loads again.
    expect((await seed([{ id: ACC_GW, name: 'Eve (LinkedIn)', linkedin: { delivery: 'gateway', gatewayAccountId: 'gw_world' } }])).statusCode).toBe(200);
  });
});

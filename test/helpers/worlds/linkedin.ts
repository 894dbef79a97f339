import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../build-test-app.js';
import { ADMIN } from '../world-fixtures.js';
import { gatewayEnv, startLinkedinGatewayFake, type LinkedinGatewayFake } from '../linkedin-gateway-fake.js';
import { ENGINE_ENV, insertAccount } from '../../engine/helpers.js';
import type { Env } from '../../../src/config/config.js';

// The LinkedIn gateway world: a real HTTP fake of the gateway (Unipile API v1, test/helpers/linkedin-gateway-fake.ts),
// an app whose gateway client points at it, and a workspace whose LinkedIn account is linked to one gateway account.

export interface LinkedinWorld {
  gw: LinkedinGatewayFake;
  t: TestApp;
  ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  /** The workspace's LinkedIn account (messaging_accounts id), linked to the first gateway account. */
  account: string;
  /** What services.linkedin.linkGateway answered for it. */
  linked: Awaited<ReturnType<TestApp['services']['linkedin']['linkGateway']>>;
  close(): Promise<void>;
}

/**
 * Starts the gateway fake on `now` (epoch milliseconds) with `gatewayAccounts`, builds the app at `now` with `env` over
 * ENGINE_ENV, the admin token and the gateway's settings, creates `workspaceName` with 10,000 energy and a LinkedIn
 * account, and links that account to `gatewayAccounts[0]` at `now`.
 */
export async function startLinkedinWorld(o: {
  now: () => number;
  gatewayAccounts: string[];
  env?: Partial<Env>;
  workspaceName: string;
}): Promise<LinkedinWorld> {
  const gw = await startLinkedinGatewayFake({ now: o.now });
  for (const id of o.gatewayAccounts) gw.addAccount({ id });
  const t = await buildTestApp({ now: new Date(o.now()).toISOString(), env: { ...ENGINE_ENV, OUTREACH_ADMIN_TOKEN: ADMIN, ...gatewayEnv(gw), ...o.env } });
  const ws = await createWorkspaceWithKey(t, o.workspaceName);
  await t.db.updateTable('workspaces').set({ energy_balance: 10_000 }).where('id', '=', ws.workspaceId).execute();
  const account = await insertAccount(t.db, ws.workspaceId);
  t.clock.set(new Date(o.now()));
  const linked = await t.services.linkedin.linkGateway(ws.workspaceId, account, o.gatewayAccounts[0]);
  return {
    gw,
    t,
    ws,
    account,
    linked,
    async close() {
      await t?.close();
      await gw?.close();
    },
  };
}

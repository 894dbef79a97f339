import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli-process.js';
import { dbEngine } from '../helpers/test-database.js';
import { u } from '../helpers/world-fixtures.js';
import { gatewayEnv, startLinkedinGatewayFake, type LinkedinGatewayFake } from '../helpers/linkedin-gateway-fake.js';

const cli = (args: string[], env: Record<string, string>) => runCli(args, env, { timeoutMs: 60_000 });

// Issue 28 §4: `outreach linkedin connect --workspace W --account onb_… --gateway-account ID` checks the account at
// the gateway and links it; `outreach linkedin tasks|sandbox --account onb_…` switch it (the workspace is the
// account's own). Run on the embedded database directly, as test/cli/cli.test.ts runs the operator commands.
describe.runIf(dbEngine() === 'pglite')('outreach linkedin (CLI)', { timeout: 240_000 }, () => {
  const WS = u(951);
  const ACC = `onb_${u(952)}`;
  let dataDir: string;
  let gw: LinkedinGatewayFake;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-linkedin-cli-'));
    gw = await startLinkedinGatewayFake();
    gw.addAccount({ id: 'gw_cli' });
    gw.addAccount({ id: 'gw_whatsapp', type: 'WHATSAPP' });
    env = { OUTREACH_DATA_DIR: dataDir, OUTREACH_SEED_DEMO: '0', ...gatewayEnv(gw) };
    const world = path.join(dataDir, 'world.json');
    fs.writeFileSync(world, JSON.stringify({ workspaces: [{ id: WS, name: 'CLI LinkedIn', messagingAccounts: [{ id: ACC, name: 'Dana (LinkedIn)' }] }] }));
    const seeded = await cli(['seed', world, '--json'], env);
    expect(seeded.code, seeded.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await gw?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('connect checks the account at the gateway and links it; tasks and sandbox switch it', async () => {
    const connected = await cli(['linkedin', 'connect', '--workspace', WS, '--account', ACC, '--gateway-account', 'gw_cli', '--json'], env);
    expect(connected.code, connected.stderr).toBe(0);
    expect(JSON.parse(connected.stdout)).toMatchObject({
      accountId: ACC,
      workspaceId: WS,
      delivery: 'gateway',
      gatewayAccountId: 'gw_cli',
      gatewayError: null,
    });
    expect(gw.requests).toContain('GET /api/v1/accounts/gw_cli');

    const tasks = await cli(['linkedin', 'tasks', '--account', ACC], env);
    expect(tasks.code, tasks.stderr).toBe(0);
    expect(tasks.stdout).toContain(`LinkedIn account ${ACC} (workspace ${WS}): Tasks: a person performs every LinkedIn action`);

    const sandbox = await cli(['linkedin', 'sandbox', '--account', ACC, '--json'], env);
    expect(JSON.parse(sandbox.stdout)).toMatchObject({ delivery: 'sandbox' });
  });

  it('an account unknown at the gateway, not a LinkedIn one there, or unknown here is refused with what is wrong', async () => {
    const unknown = await cli(['linkedin', 'connect', '--workspace', WS, '--account', ACC, '--gateway-account', 'gw_nobody'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('gateway account not found');
    const whatsapp = await cli(['linkedin', 'connect', '--workspace', WS, '--account', ACC, '--gateway-account', 'gw_whatsapp'], env);
    expect(whatsapp.code).toBe(1);
    expect(whatsapp.stderr).toContain('is a WHATSAPP account, not LinkedIn');
    const missing = await cli(['linkedin', 'tasks', '--account', `onb_${u(959)}`], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('messaging account not found');
  });
});

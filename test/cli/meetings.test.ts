import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli-process.js';
import { dbEngine } from '../helpers/test-database.js';
import { u } from '../helpers/world-fixtures.js';
import { FakeCalendlyApi } from '../helpers/calendly-api-fake.js';

const cli = (args: string[], env: Record<string, string>) => runCli(args, env, { timeoutMs: 60_000 });

// Issue 42 §1: `outreach meetings endpoint create --workspace W --tool calendly|cal` prints the URL, the secret once and
// the steps (`--json` too); `list` never shows a secret; `rotate` prints a new one; `remove` ends it. On the embedded
// database directly, as test/cli/cli.test.ts runs the operator commands.
describe.runIf(dbEngine() === 'pglite')('outreach meetings endpoint (CLI)', { timeout: 240_000 }, () => {
  const WS = u(961);
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-meetings-cli-'));
    env = { OUTREACH_DATA_DIR: dataDir, OUTREACH_SEED_DEMO: '0', OUTREACH_PUBLIC_URL: 'https://outreach.example' };
    const world = path.join(dataDir, 'world.json');
    fs.writeFileSync(world, JSON.stringify({ workspaces: [{ id: WS, name: 'CLI Meetings' }] }));
    const seeded = await cli(['seed', world, '--json'], env);
    expect(seeded.code, seeded.stderr).toBe(0);
  }, 120_000);
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('create, list, rotate and remove; the secret only when made', async () => {
    const created = await cli(['meetings', 'endpoint', 'create', '--workspace', WS, '--tool', 'cal', '--label', 'Sales', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const e = JSON.parse(created.stdout);
    expect(e).toMatchObject({ tool: 'cal', label: 'Sales', url: `https://outreach.example/inbound/meetings/${e.id}`, secret: expect.any(String) });
    expect(e.steps.join('\n')).toContain('Subscriber URL');

    const human = await cli(['meetings', 'endpoint', 'create', '--workspace', WS, '--tool', 'calendly'], env);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/secret: [A-Za-z0-9_-]{43}/);
    expect(human.stdout).toContain('webhook_subscriptions');

    const list = await cli(['meetings', 'endpoint', 'list', '--workspace', WS, '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toHaveLength(2);
    expect(list.stdout).not.toContain(e.secret);

    const rotated = JSON.parse((await cli(['meetings', 'endpoint', 'rotate', '--workspace', WS, '--id', e.id, '--json'], env)).stdout);
    expect(rotated.secret).not.toBe(e.secret);
    expect((await cli(['meetings', 'endpoint', 'remove', '--workspace', WS, '--id', e.id], env)).code).toBe(0);
    const again = await cli(['meetings', 'endpoint', 'remove', '--workspace', WS, '--id', e.id], env);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('not found');

    const bad = await cli(['meetings', 'endpoint', 'create', '--workspace', WS, '--tool', 'zoom'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--tool must be calendly or cal');
  });

  it('subscribe takes the token from CALENDLY_TOKEN only, makes the subscription at Calendly, and unsubscribe deletes it', async () => {
    const api = await new FakeCalendlyApi().start();
    try {
      const withApi = { ...env, OUTREACH_CALENDLY_API_URL: api.url };
      const e = JSON.parse((await cli(['meetings', 'endpoint', 'create', '--workspace', WS, '--tool', 'calendly', '--json'], withApi)).stdout);
      const missing = await cli(['meetings', 'endpoint', 'subscribe', '--workspace', WS, '--id', e.id], withApi);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('set CALENDLY_TOKEN');

      const owner = api.account();
      const sub = await cli(['meetings', 'endpoint', 'subscribe', '--workspace', WS, '--id', e.id], { ...withApi, CALENDLY_TOKEN: owner.token });
      expect(sub.code, sub.stderr).toBe(0);
      expect(sub.stdout).toContain('subscribed at Calendly (user scope)');
      expect([...api.subscriptions.values()].map((s) => [s.callback_url, s.signing_key])).toEqual([[e.url, e.secret]]);
      expect(sub.stdout + sub.stderr).not.toContain(owner.token);

      const off = await cli(['meetings', 'endpoint', 'unsubscribe', '--workspace', WS, '--id', e.id, '--json'], withApi);
      expect(off.code, off.stderr).toBe(0);
      expect(JSON.parse(off.stdout).subscription).toBeNull();
      expect(api.subscriptions.size).toBe(0);
    } finally {
      await api.stop();
    }
  });
});

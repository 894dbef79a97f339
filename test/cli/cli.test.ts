import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config/config.js';
import { startServer } from '../../src/server.js';
import { dbEngine } from '../helpers/test-database.js';

const run = promisify(execFile);
const bin = path.resolve('bin/outreach.js');

async function cli(args: string[], env: Record<string, string>, cwd?: string) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env }, timeout: 60_000, cwd });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

// The CLI is exercised once, on the embedded database, where its two modes (direct and through a running
// server) both matter; on PostgreSQL it only ever works directly, which the direct mode here covers.
describe.runIf(dbEngine() === 'pglite')('operator CLI (npx outreach)', { timeout: 240_000 }, () => {
  let dataDir: string;
  let server: Awaited<ReturnType<typeof startServer>> | null = null;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-cli-'));
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('workspace, key and team commands work on the database directly, with --json and clear errors', async () => {
    const env = { OUTREACH_DATA_DIR: dataDir, OUTREACH_SEED_DEMO: '0' };
    const owner = await cli(['workspace', 'create', '--name', 'Owner', '--json'], env);
    expect(owner.code).toBe(0);
    const ownerWs = JSON.parse(owner.stdout);
    const client = JSON.parse((await cli(['workspace', 'create', '--name', 'Client', '--json'], env)).stdout);
    const team = await cli(['team', 'add', '--owner', ownerWs.id, '--client', client.id, '--role', 'member', '--json'], env);
    expect(JSON.parse(team.stdout)).toEqual({ ownerWorkspaceId: ownerWs.id, clientWorkspaceId: client.id, role: 'member' });
    const key = await cli(['key', 'create', '--workspace', ownerWs.id, '--expires-at', '2099-01-01T00:00:00Z'], env);
    expect(key.stdout).toMatch(/Secret \(shown once\): ows_[A-Za-z0-9_-]{43}/);
    expect(owner.stderr).toContain(`outreach: using the embedded database in ${dataDir}`);
    const bad = await cli(['team', 'add', '--owner', ownerWs.id, '--client', client.id, '--role', 'boss'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--role must be owner, admin or member');
    const missing = await cli(['key', 'create', '--workspace', '00000000-0000-4000-8000-000000000000'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('workspace not found');
  });

  it('while a server runs on the same embedded database, commands go through it and its API sees the result', async () => {
    server = await startServer(
      loadConfig(
        { OUTREACH_DATA_DIR: dataDir, OUTREACH_SEED_DEMO: '0', LOG_LEVEL: 'silent', OUTREACH_ENGINE_INTERVAL: '0' },
        {
          PORT: 0,
          HOST: '127.0.0.1',
        },
      ),
      {
        print: () => undefined,
      },
    );
    expect(fs.existsSync(path.join(dataDir, 'server.json'))).toBe(true);
    const env = { OUTREACH_DATA_DIR: dataDir };
    const live = await cli(['workspace', 'create', '--name', 'Live', '--json'], env);
    expect(live.stderr).toMatch(
      new RegExp(`outreach: using the server at http://127\\.0\\.0\\.1:${server.port} \\(pid ${process.pid}\\) on the embedded database in`),
    );
    const ws = JSON.parse(live.stdout);
    const key = JSON.parse((await cli(['key', 'create', '--workspace', ws.id, '--json'], env)).stdout);
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/workspaces', headers: { authorization: `Bearer ${key.key}` } });
    expect(res.json()).toEqual({ workspaces: [{ id: ws.id, name: 'Live', role: 'owner' }] });
    const revoked = await cli(['key', 'revoke', key.id, '--json'], env);
    expect(JSON.parse(revoked.stdout)).toEqual({ id: key.id, revoked: true });
    expect((await server.app.inject({ method: 'GET', url: '/api/v1/workspaces', headers: { authorization: `Bearer ${key.key}` } })).statusCode).toBe(401);
    const migrate = await cli(['migrate', '--json'], env);
    expect(JSON.parse(migrate.stdout).note).toMatch(/running server/);
  });

  it('without OUTREACH_DATA_DIR and no database in ./.outreach, fails naming the directory and creates nothing', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-cli-cwd-'));
    try {
      const env: Record<string, string> = { OUTREACH_SEED_DEMO: '0', OUTREACH_DATA_DIR: '' };
      const res = await cli(['workspace', 'create', '--name', 'Stray'], env, cwd);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`no database in ${fs.realpathSync(cwd)}/.outreach: OUTREACH_DATA_DIR is not set`);
      expect(fs.readdirSync(cwd)).toEqual([]);
      // Set explicitly, the same directory is created and used.
      const made = await cli(['workspace', 'create', '--name', 'Here', '--json'], { ...env, OUTREACH_DATA_DIR: './.outreach' }, cwd);
      expect(made.code, made.stderr).toBe(0);
      expect(fs.existsSync(path.join(cwd, '.outreach', 'pgdata', 'PG_VERSION'))).toBe(true);
      // Now that ./.outreach holds a database, the default finds it.
      const found = await cli(['workspace', 'create', '--name', 'Found', '--json'], env, cwd);
      expect(found.code, found.stderr).toBe(0);
      expect(found.stderr).toContain('outreach: using the embedded database in');
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('--version prints the package version', async () => {
    const res = await cli(['--version'], {});
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toBe(JSON.parse(fs.readFileSync('package.json', 'utf8')).version);
  });

  it('refuses to open an embedded database a standalone worker holds, naming it, and changes nothing', async () => {
    const held = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-cli-held-'));
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      fs.writeFileSync(path.join(held, 'worker.json'), JSON.stringify({ pid: sleeper.pid }));
      const res = await cli(['workspace', 'create', '--name', 'Clash'], { OUTREACH_DATA_DIR: held, OUTREACH_SEED_DEMO: '0' });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`in use by \`outreach worker\` (pid ${sleeper.pid})`);
      expect(fs.readdirSync(held)).toEqual(['worker.json']);
    } finally {
      sleeper.kill();
      fs.rmSync(held, { recursive: true, force: true });
    }
  });
});

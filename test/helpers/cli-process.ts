import { execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { startServer } from '../../src/server.js';
import { buildTestApp, createWorkspaceWithKey } from './build-test-app.js';

const run = promisify(execFile);
const bin = path.resolve('bin/outreach.js');

/**
 * `npx outreach ARGS` as an operator types it: a child process of this Node running bin/outreach.js (the TypeScript
 * under test: dist/ when fresh, else the sources through tsx, as vitest.config.ts decides), logs silent, `env` on top of this process's.
 * Never throws on a non-zero exit: answers its code, stdout and stderr.
 */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  opts: { cwd?: string; timeoutMs?: number; /** Bytes of output kept (execFile's 1 MiB by default). */ maxBuffer?: number } = {},
) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent', OUTREACH_FROM_SOURCE: process.env.OUTREACH_FROM_SOURCE ?? '1', ...env },
      timeout: opts.timeoutMs ?? 90_000,
      cwd: opts.cwd,
      ...(opts.maxBuffer !== undefined && { maxBuffer: opts.maxBuffer }),
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/**
 * The environment of a spawned `outreach serve` on the embedded database in `dataDir` with the demo world: this
 * process's environment, port 0 on 127.0.0.1, the engine off; `env` over those.
 */
export function demoServeEnv(dataDir: string, env: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, PORT: '0', HOST: '127.0.0.1', OUTREACH_DATA_DIR: dataDir, OUTREACH_SEED_DEMO: '1', OUTREACH_ENGINE_INTERVAL: '0', ...env };
}

/**
 * A server on the embedded database for the CLI's admin-backend path: a fresh data directory under the OS temporary
 * directory (its name starts with `prefix`), listening on a free port of 127.0.0.1, no demo world, the engine off,
 * logs silent; `env` over those settings. `stop()` stops the server and deletes the directory.
 */
export async function startCliServer(prefix: string, env: Record<string, string> = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const server = await startServer(
    loadConfig(
      { OUTREACH_DATA_DIR: dataDir, OUTREACH_SEED_DEMO: '0', LOG_LEVEL: 'silent', OUTREACH_ENGINE_INTERVAL: '0', ...env },
      { PORT: 0, HOST: '127.0.0.1' },
    ),
    { print: () => undefined },
  );
  return {
    dataDir,
    server,
    async stop() {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The app under test (buildTestApp) listening on a free port of 127.0.0.1 for a CLI process, with a workspace `name`
 * and its API key, and a temporary directory (its name starts with `prefix`) for the files the CLI reads. `cli(args)`
 * runs `outreach ARGS --url <the app>` with that key (runCli, two minutes at most). `close()` closes the app and
 * deletes the directory.
 */
export async function startApiForCli(name: string, prefix: string) {
  const t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const ws = await createWorkspaceWithKey(t, name);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return {
    t,
    url,
    ws,
    dir,
    cli: (args: string[]) => runCli([...args, '--url', url], { OUTREACH_API_KEY: ws.key }, { timeoutMs: 120_000 }),
    async close() {
      fs.rmSync(dir, { recursive: true, force: true });
      await t?.close();
    },
  };
}

/**
 * The child processes and clean-ups of a test file: after all its tests, every child still running is killed
 * (SIGKILL) and the clean-ups run, the last added first.
 */
export function childProcesses() {
  const children = new Set<ChildProcess>();
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const c of cleanups.reverse()) await c();
  });
  return { children, cleanups };
}

import { spawn, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertActivity } from '../helpers/factories.js';

// `outreach tail` against the real server on a real port: it follows the key's workspace ledger through the API.

const bin = path.resolve('bin/outreach.js');
let t: TestApp;
let url: string;
let a: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let b: Awaited<ReturnType<typeof createWorkspaceWithKey>>;

beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  a = await createWorkspaceWithKey(t, 'Tail Co');
  b = await createWorkspaceWithKey(t, 'Other Co');
});
afterAll(async () => t?.close());

function startTail(args: string[]) {
  const child: ChildProcess = spawn(process.execPath, [bin, 'tail', '--url', url, '--interval', '200', ...args], {
    env: { ...process.env, OUTREACH_API_KEY: a.key, LOG_LEVEL: 'silent' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const waitFor = async (pred: () => boolean, what: string, ms = 30_000) => {
    const until = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}; stdout=${stdout} stderr=${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = () =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
      child.kill('SIGINT');
    });
  return { out: () => stdout, err: () => stderr, waitFor, stop };
}

describe('outreach tail (issue 17)', { timeout: 90_000 }, () => {
  it('prints only new entries of its own workspace, once each, filtered by --action, and says which server it follows', async () => {
    const old = await insertActivity(t.db, a.workspaceId, { action: 'invite', createdAt: '2026-11-20T10:00:00.000Z', detail: 'before start' });
    const tail = startTail(['--json', '--action', 'invite,x_dm']);
    try {
      await tail.waitFor(() => tail.err().includes('following activity'), 'the tail to start');
      expect(tail.err()).toContain(`server ${url}`);
      const mine = await insertActivity(t.db, a.workspaceId, { action: 'x_dm', createdAt: '2026-11-21T11:00:00.000Z', detail: 'new one' });
      await insertActivity(t.db, a.workspaceId, { action: 'message', createdAt: '2026-11-21T11:00:01.000Z', detail: 'filtered out' });
      await insertActivity(t.db, b.workspaceId, { action: 'x_dm', createdAt: '2026-11-21T11:00:02.000Z', detail: 'other workspace' });
      await tail.waitFor(() => tail.out().includes(mine), 'the new entry');
      // Several more polls see the same page; the entry is still printed once.
      await new Promise((r) => setTimeout(r, 1000));
      const lines = tail
        .out()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines).toEqual([expect.objectContaining({ id: mine, action: 'x_dm', detail: 'new one' })]);
      expect(tail.out()).not.toContain(old);
    } finally {
      expect(await tail.stop()).toBe(0);
    }
  });

  it('--history prints the latest existing entries first, in human form', async () => {
    const tail = startTail(['--history', '1', '--action', 'x_dm']);
    try {
      await tail.waitFor(() => tail.err().includes('following activity'), 'the tail to start');
      expect(tail.out()).toMatch(/x_dm\s+ok\s+new one/);
      expect(tail.out().trim().split('\n')).toHaveLength(1);
    } finally {
      await tail.stop();
    }
  });

  it('without a key it fails with a clear message', async () => {
    const child = spawn(process.execPath, [bin, 'tail', '--url', url], { env: { ...process.env, OUTREACH_API_KEY: '' } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((r) => child.once('exit', r));
    expect(code).toBe(1);
    expect(stderr).toContain('a workspace key is needed');
  });
});

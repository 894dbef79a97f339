import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import type { startServer } from '../../src/server.js';
import { runCli, startCliServer } from '../helpers/cli-process.js';
import { dbEngine } from '../helpers/test-database.js';

const cli = (args: string[], env: Record<string, string>) => runCli(args, env, { timeoutMs: 60_000 });

// `npx outreach login-link` through a running server on the embedded database (the CLI's admin-backend path);
// the direct database path runs the same service (console-sessions), covered by test/console/sign-in.test.ts.
describe.runIf(dbEngine() === 'pglite')('npx outreach login-link', { timeout: 240_000 }, () => {
  let dataDir: string;
  let server: Awaited<ReturnType<typeof startServer>> | null = null;
  beforeAll(async () => {
    ({ dataDir, server } = await startCliServer('outreach-login-link-'));
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints a one-time sign-in link that expires in 10 minutes; it signs in once; an unknown workspace is refused', async () => {
    const ws = await server!.services.workspaces.createWorkspace({ name: 'Linked' });
    const res = await cli(['login-link', '--workspace', ws.id], { OUTREACH_DATA_DIR: dataDir });
    expect(res.code, res.stderr).toBe(0);
    const url = res.stdout.split('\n')[0];
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${server!.port}/console/login/[A-Za-z0-9_-]{43}$`));
    const expires = /expires (\S+)\./.exec(res.stdout)![1];
    const minutes = (Date.parse(expires) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(9);
    expect(minutes).toBeLessThanOrEqual(10);

    const token = url.split('/').pop()!;
    const landing = await server!.app.inject({ method: 'GET', url: `/console/login/${token}` });
    expect(landing.statusCode).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(landing.body)![1];
    const cookie = ([] as string[])
      .concat(landing.headers['set-cookie'] as string[])
      .map((c) => c.split(';')[0])
      .join('; ');
    const form = (t: string) => new URLSearchParams({ _csrf: csrf, token: t }).toString();
    const post = (t: string) =>
      server!.app.inject({ method: 'POST', url: '/console/login', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: form(t) });
    const first = await post(token);
    expect(first.statusCode).toBe(303);
    expect(first.headers.location).toBe('/console');
    expect((await post(token)).statusCode).toBe(401);

    const missing = await cli(['login-link', '--workspace', '00000000-0000-4000-8000-000000000000'], { OUTREACH_DATA_DIR: dataDir });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('workspace not found');
  });

  it('`outreach sessions revoke` ends every console session of the workspace at once, or those of one key', async () => {
    const ws = await server!.services.workspaces.createWorkspace({ name: 'Revoked' });
    const key = await server!.services.workspaces.createApiKey({ workspaceId: ws.id });
    const signIn = async () => (await server!.services.consoleSessions.signInWithKey(key.key))!.sessionId;
    const alive = async (id: string) => (await server!.services.consoleSessions.resume(id)) !== null;
    const [a, b] = [await signIn(), await signIn()];
    const link = await server!.services.consoleSessions.createLoginLink(ws.id);
    const c = (await server!.services.consoleSessions.signInWithLink(link.token))!.sessionId;

    const one = await cli(['sessions', 'revoke', '--workspace', ws.id, '--key-id', key.id, '--json'], { OUTREACH_DATA_DIR: dataDir });
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toEqual({ workspaceId: ws.id, keyId: key.id, ended: 2 });
    expect([await alive(a), await alive(b), await alive(c)]).toEqual([false, false, true]);

    const all = await cli(['sessions', 'revoke', '--workspace', ws.id], { OUTREACH_DATA_DIR: dataDir });
    expect(all.stdout).toContain(`Ended 1 console session of workspace ${ws.id}`);
    expect(await alive(c)).toBe(false);

    const foreign = await cli(['sessions', 'revoke', '--workspace', ws.id, '--key-id', '00000000-0000-4000-8000-000000000000'], { OUTREACH_DATA_DIR: dataDir });
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('key not found');
  });

  it('without a running server, works on the database directly and names OUTREACH_PUBLIC_URL in the link', async () => {
    const ws = await server!.services.workspaces.createWorkspace({ name: 'Direct' });
    await server!.stop();
    server = null;
    const res = await cli(['login-link', '--workspace', ws.id, '--json'], { OUTREACH_DATA_DIR: dataDir, OUTREACH_PUBLIC_URL: 'https://outreach.example/' });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain('using the embedded database');
    const body = JSON.parse(res.stdout);
    expect(body.workspaceId).toBe(ws.id);
    expect(body.url).toMatch(/^https:\/\/outreach\.example\/console\/login\/[A-Za-z0-9_-]{43}$/);
  });
});

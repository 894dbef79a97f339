import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { startServer } from '../../src/server.js';
import { insertReviewPlay } from '../helpers/factories.js';
import { createTestDatabase, dbEngine } from '../helpers/test-database.js';
import { quietServerEnv } from '../helpers/server-env.js';

// Issue 27 §8.1: without OUTREACH_PUBLIC_URL, the links the service hands out (reviewUrl, the console address it
// prints, unsubscribe links) use http://localhost:<the port the server bound>: never the default 8080 when it listens
// elsewhere (PORT=0 here, an ephemeral port known only after listen), and never the request's Host header.

function get(port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('links without OUTREACH_PUBLIC_URL name the port the server bound', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'outreach-public-url-'));
  const printed: string[] = [];
  let pg: Awaited<ReturnType<typeof createTestDatabase>> | null = null;
  let server: Awaited<ReturnType<typeof startServer>>;

  beforeAll(async () => {
    pg = dbEngine() === 'postgres' ? await createTestDatabase() : null;
    const config = loadConfig({}, quietServerEnv(dataDir, pg?.url) as never);
    server = await startServer(config, { print: (line) => printed.push(line) });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await pg?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('reviewUrl in GET /api/v1/plays/{id}/candidates is http://localhost:<bound port>/review/plays/{id}, whatever Host the request names', async () => {
    expect(server.port).toBeGreaterThan(0);
    expect(server.port).not.toBe(8080);
    const ws = await server.services.workspaces.createWorkspace({ name: 'Links' });
    const { key } = await server.services.workspaces.createApiKey({ workspaceId: ws.id });
    const { play } = await insertReviewPlay(server.handle.db, ws.id);

    const res = await get(server.port, `/api/v1/plays/${play.id}/candidates`, { authorization: `Bearer ${key}`, host: 'attacker.example:4444' });
    expect(res.status).toBe(200);
    expect((JSON.parse(res.body) as { reviewUrl: string }).reviewUrl).toBe(`http://localhost:${server.port}/review/plays/${play.id}`);
  });

  it('the console address printed at start names the bound port too', () => {
    expect(printed).toContain(`Console: http://localhost:${server.port}/console`);
  });

  it('the X callback URL is built on the same base (as unsubscribe links are: config.publicBase)', () => {
    expect(server.services.xConnect.callbackUrl()).toBe(`http://localhost:${server.port}/console/accounts/x/callback`);
  });
});

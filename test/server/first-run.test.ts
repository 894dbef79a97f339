import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { startServer } from '../../src/server.js';
import { createTestDatabase, dbEngine } from '../helpers/test-database.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A data dir, and on the postgres project a fresh database, for servers started one after another. */
async function place() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-first-run-'));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const pg = dbEngine() === 'postgres' ? await createTestDatabase() : null;
  if (pg) cleanups.push(() => pg.close());
  return { OUTREACH_DATA_DIR: dataDir, ...(pg ? { DATABASE_URL: pg.url!, OUTREACH_ENCRYPTION_KEY: randomBytes(32).toString('hex') } : {}) };
}

const boot = async (env: Record<string, string | number>) => {
  const lines: string[] = [];
  const config = loadConfig({}, {
    PORT: 0,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    OUTREACH_ENGINE_INTERVAL: 0,
    OUTREACH_WORKER_IN_PROCESS: '0',
    ...env,
  } as never);
  const server = await startServer(config, { print: (l) => lines.push(l) });
  return { server, out: lines.join('\n') };
};

describe('HOST default', () => {
  it('is 127.0.0.1 with the embedded database and 0.0.0.0 with DATABASE_URL; an explicit HOST wins', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ DATABASE_URL: 'postgres://u@db:5432/x' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '::1', DATABASE_URL: 'postgres://u@db:5432/x' }).host).toBe('::1');
  });
});

describe('OUTREACH_ENCRYPTION_KEY', () => {
  it('must be 32 bytes, hex or base64; anything else stops start-up naming the variable (and not echoing the value)', () => {
    for (const bad of [
      'short',
      'a'.repeat(63),
      randomBytes(16).toString('hex'),
      randomBytes(31).toString('base64'),
      'correct horse battery staple and more words',
    ]) {
      const run = () => loadConfig({ OUTREACH_ENCRYPTION_KEY: bad });
      expect(run).toThrow(ConfigError);
      expect(run).toThrow(/OUTREACH_ENCRYPTION_KEY must be 32 bytes/);
      try {
        run();
      } catch (e) {
        expect((e as Error).message).not.toContain(bad);
      }
    }
    const key = randomBytes(32);
    for (const good of [key.toString('hex'), key.toString('base64'), key.toString('base64url'), key.toString('base64').replace(/=$/, '')]) {
      expect(loadConfig({ OUTREACH_ENCRYPTION_KEY: good }).encryptionKey).toBe(good);
    }
  });

  it('a start with another key than the database was written with is refused, naming the variable', { timeout: 120_000 }, async () => {
    const where = await place();
    const first = await boot({ ...where, OUTREACH_SEED_DEMO: '0', OUTREACH_ENCRYPTION_KEY: randomBytes(32).toString('hex') });
    await first.server.stop();
    const other = randomBytes(32).toString('hex');
    const refused = boot({ ...where, OUTREACH_SEED_DEMO: '0', OUTREACH_ENCRYPTION_KEY: other });
    await expect(refused).rejects.toThrow(ConfigError);
    await expect(refused).rejects.toThrow(/OUTREACH_ENCRYPTION_KEY is not the key this database was written with/);
    await expect(refused).rejects.not.toThrow(other);
    if (dbEngine() === 'pglite') {
      // Without the variable, the embedded database's generated key is compared, and the file is named.
      const generated = boot({ ...where, OUTREACH_SEED_DEMO: '0' });
      await expect(generated).rejects.toThrow(/OUTREACH_ENCRYPTION_KEY is not set and the generated key in .*encryption\.key is not the key/);
    }
  });
});

describe('the demo on start', () => {
  it(
    'a start that fails to listen loads nothing; the next start loads the demo and shows a fresh key once; later starts say where to look and how to get a key',
    { timeout: 240_000 },
    async () => {
      const where = await place();
      const busy = net.createServer();
      await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
      const busyPort = (busy.address() as net.AddressInfo).port;
      try {
        await expect(boot({ ...where, PORT: busyPort })).rejects.toThrow(/EADDRINUSE/);
      } finally {
        busy.close();
      }

      const first = await boot(where);
      const demo = first.server.demo!;
      expect(demo.name).toBe('Northwind Outreach');
      expect(demo.newKey).toMatch(/^ows_[A-Za-z0-9_-]{43}$/);
      const base = `http://localhost:${first.server.port}`;
      expect(first.out).toContain(`Demo workspace: Northwind Outreach (${demo.id})`);
      expect(first.out).toContain(`Reference: ${base}/docs`);
      // The printed console URL answers: the sign-in form (not a 404), and the demo key signs in.
      expect(first.out).toContain(`Console: ${base}/console`);
      expect(first.out).toContain(`npx outreach login-link --workspace ${demo.id}`);
      const consolePage = await first.server.app.inject({ method: 'GET', url: '/console' });
      expect(consolePage.statusCode).toBe(401);
      expect(consolePage.body).toContain('Workspace key');
      expect(first.out).toContain(demo.newKey);
      expect(first.out).toContain(`npx outreach key create --workspace ${demo.id}`);
      expect(first.out).toMatch(/Listening on http:\/\/127\.0\.0\.1:\d+ \((embedded database in|PostgreSQL at)/);
      const res = await first.server.app.inject({ method: 'GET', url: '/api/v1/workspaces', headers: { authorization: `Bearer ${demo.newKey}` } });
      expect(res.statusCode).toBe(200);
      // Exactly one demo key exists: the failed start issued none.
      const keys = await first.server.handle.db.selectFrom('api_keys').select('id').where('workspace_id', '=', demo.id).execute();
      expect(keys).toHaveLength(1);
      await first.server.stop();

      const again = await boot({ ...where, OUTREACH_PUBLIC_URL: 'https://outreach.example' });
      expect(again.server.demo).toEqual({ id: demo.id, name: 'Northwind Outreach', newKey: null });
      expect(again.out).toContain(`Demo workspace: Northwind Outreach (${demo.id})`);
      expect(again.out).toContain('Reference: https://outreach.example/docs');
      expect(again.out).toContain('Console: https://outreach.example/console');
      expect(again.out).toContain(`npx outreach key create --workspace ${demo.id}`);
      expect(again.out).not.toMatch(/ows_/);
      await again.server.stop();
    },
  );
});

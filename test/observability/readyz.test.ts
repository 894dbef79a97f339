import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { startEngineLoop } from '../../src/engine/loop.js';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { createTestDatabase, dbEngine } from '../helpers/test-database.js';

// /readyz (src/app/probes.ts): 200 only when the database answers, every shipped migration is applied and this process's
// engine loops (if it runs them) each beat within three intervals (a pass beats as it moves on and when it ends); otherwise 503 with the reason, never a 500.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const silent = { error: () => undefined };

async function readyz(t: TestApp) {
  const res = await t.app.inject({ method: 'GET', url: '/readyz' });
  return { status: res.statusCode, body: res.json<Record<string, unknown>>(), cacheControl: res.headers['cache-control'] };
}

/** An empty database of its own (not the migrated test template), on the engine of the running project. */
async function emptyDatabase(): Promise<DatabaseHandle> {
  if (dbEngine() === 'pglite') return createDatabase({ kind: 'pglite' });
  const base = process.env.TEST_DATABASE_URL!;
  const name = `outreach_t_${process.pid}_ready_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`).finally(() => admin.end());
  const url = new URL(base);
  url.pathname = `/${name}`;
  const handle = await createDatabase({ kind: 'postgres', url: url.toString(), poolSize: 4 });
  return {
    ...handle,
    close: async () => {
      await handle.close();
      const drop = new pg.Client({ connectionString: base });
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => drop.end());
    },
  };
}

describe('/readyz: database, migrations and the engine loop', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t?.close());

  it('answers 200 with every check named, uncached, in a process that runs no engine loop', async () => {
    const { status, body, cacheControl } = await readyz(t);
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, database: 'reachable', migrations: 'current', worker: 'not_in_this_process' });
    expect(cacheControl).toBe('no-store');
    // /healthz (alive) is unchanged.
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ ok: true });
  });

  it('a stalled engine loop (a pass that never ends) is 503 worker_stalled with its last heartbeat, then 200 once passes end again', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    let passes = 0;
    const interval = 0.2; // seconds: stalled after 0.6 s
    const started = Date.now();
    const loop = startEngineLoop(
      {
        runPass: async () => {
          passes++;
          if (passes === 1) await blocked;
        },
      },
      interval,
      silent,
    );
    try {
      // Just started: the loop's start is its first heartbeat.
      expect((await readyz(t)).body).toMatchObject({ ok: true, worker: 'fresh' });
      await sleep(800);
      expect(passes).toBe(1);
      const stalled = await readyz(t);
      expect(stalled.status).toBe(503);
      expect(stalled.body).toMatchObject({
        ok: false,
        reason: 'worker_stalled',
        database: 'reachable',
        migrations: 'current',
        worker: 'stalled',
        loop: 'engine pass',
        allowedAgeSeconds: 0.6,
      });
      const beat = Date.parse(String(stalled.body.lastHeartbeat));
      expect(beat).toBeGreaterThanOrEqual(started - 5);
      expect(beat).toBeLessThan(started + 300);
      expect(stalled.body.heartbeatAgeSeconds).toBeGreaterThan(0.6);

      release();
      await expect.poll(async () => (await readyz(t)).status, { timeout: 5000, interval: 50 }).toBe(200);
      expect((await readyz(t)).body).toEqual({ ok: true, database: 'reachable', migrations: 'current', worker: 'fresh' });
      await sleep(800);
      // Passes run again at every tick, each a heartbeat.
      expect(passes).toBeGreaterThan(2);
      expect((await readyz(t)).status).toBe(200);
    } finally {
      release();
      await loop.stop();
    }
    expect((await readyz(t)).body).toMatchObject({ ok: true, worker: 'not_in_this_process' });
  });

  it('a long pass that moves on (each mailbox polled, each batch sent) is busy, not stalled; one that stops moving is', async () => {
    let moving = true;
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    // One pass that lasts about 1.5 s (over seven intervals of 0.2 s) and reports progress every 50 ms while moving.
    const loop = startEngineLoop(
      {
        runPass: async (o) => {
          for (let i = 0; i < 30 && moving; i++) {
            await sleep(50);
            o?.progress?.();
          }
          await blocked;
        },
      },
      0.2,
      silent,
      'inbox watch',
    );
    try {
      for (let i = 0; i < 6; i++) {
        await sleep(200);
        expect((await readyz(t)).body).toMatchObject({ ok: true, worker: 'fresh' });
      }
      moving = false;
      await sleep(800);
      expect((await readyz(t)).body).toMatchObject({ ok: false, reason: 'worker_stalled', loop: 'inbox watch' });
    } finally {
      release();
      await loop.stop();
    }
  });

  it('a failing pass still beats (its failure is the database\u2019s or a provider\u2019s to report); only the engine loop counts', async () => {
    const failing = startEngineLoop({ runPass: () => Promise.reject(new Error('provider down')) }, 0.2, silent);
    // The hourly retention loop is not the engine: a retention pass that never ends does not make the process unready.
    const retention = startEngineLoop({ runPass: () => new Promise(() => undefined) }, 0.1, silent, 'activity retention');
    try {
      await sleep(800);
      expect((await readyz(t)).body).toEqual({ ok: true, database: 'reachable', migrations: 'current', worker: 'fresh' });
    } finally {
      await failing.stop();
      // The retention pass never ends, so its stop() would wait for ever; unregistering is what matters here.
      void retention.stop();
    }
  });
});

describe('/readyz: migrations pending', () => {
  const names = Object.keys(MIGRATIONS);
  let handle: DatabaseHandle;
  let t: TestApp;
  beforeAll(async () => {
    handle = await emptyDatabase();
  });
  afterAll(async () => {
    await t?.close();
    await handle?.close();
  });

  it('names every migration on a database never migrated, then only those after the step it was migrated to, then 200 once migrated', async () => {
    t = await buildTestApp({ handle });
    const none = await readyz(t);
    expect(none.status).toBe(503);
    expect(none.body).toEqual({ ok: false, reason: 'migrations_pending', database: 'reachable', migrations: 'pending', pending: names });

    // Migrated up to the step before the newest, as a database restored from an older backup would be.
    const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => MIGRATIONS } });
    const { error } = await migrator.migrateTo(names[names.length - 2]);
    expect(error).toBeUndefined();
    const behind = await readyz(t);
    expect(behind.status).toBe(503);
    expect(behind.body).toMatchObject({ reason: 'migrations_pending', pending: [names[names.length - 1]] });

    expect(await migrateToLatest(handle.db)).toEqual([names[names.length - 1]]);
    expect(await readyz(t)).toMatchObject({ status: 200, body: { ok: true, migrations: 'current' } });
  }, 120_000);

  it('once current, the migrations table is not read again; a failure no reason covers answers 503 check_failed, never a 500', async () => {
    // The table is now unreadable under its expected shape: the cached probe does not look; a fresh one does.
    await sql`alter table kysely_migration rename column name to migration_name`.execute(handle.db);
    try {
      expect((await readyz(t)).status).toBe(200);
      const fresh = await buildTestApp({ handle });
      try {
        expect(await readyz(fresh)).toMatchObject({ status: 503, body: { ok: false, reason: 'check_failed' } });
      } finally {
        await fresh.close();
      }
    } finally {
      await sql`alter table kysely_migration rename column migration_name to name`.execute(handle.db);
    }
  });
});

/**
 * A TCP proxy between the service and PostgreSQL. `cut('hold')` destroys every live connection and then accepts new
 * ones without answering (a black-holed network: the client's connect waits); `cut('refuse')` drops new ones at once
 * (a server that is gone); `restore()` drops the held ones and pipes new connections again.
 */
async function startPgProxy(target: { host: string; port: number }) {
  let mode: 'pipe' | 'hold' | 'refuse' = 'pipe';
  const live = new Set<net.Socket>();
  const held = new Set<net.Socket>();
  const server = net.createServer((client) => {
    client.on('error', () => undefined);
    if (mode === 'refuse') return void client.destroy();
    if (mode === 'hold') {
      held.add(client);
      client.once('close', () => held.delete(client));
      return;
    }
    const upstream = net.connect(target.port, target.host);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    live.add(client).add(upstream);
    client.once('close', () => live.delete(client));
    upstream.once('close', () => live.delete(upstream));
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => live.size / 2,
    cut(how: 'hold' | 'refuse') {
      mode = how;
      for (const s of live) s.destroy();
    },
    restore() {
      mode = 'pipe';
      for (const s of held) s.destroy();
    },
    async close() {
      for (const s of [...live, ...held]) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

describe.skipIf(dbEngine() === 'pglite')('/readyz through a cut TCP connection (PostgreSQL only: PGlite runs in-process)', () => {
  let direct: DatabaseHandle & { url?: string };
  let proxied: DatabaseHandle & { url?: string };
  let proxy: Awaited<ReturnType<typeof startPgProxy>>;
  let t: TestApp;
  beforeAll(async () => {
    direct = await createTestDatabase();
    const url = new URL(direct.url!);
    proxy = await startPgProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    // Every connection of the service goes through the proxy: the pool and the auth-change listener.
    proxied = { ...(await createDatabase({ kind: 'postgres', url: url.toString(), poolSize: 4 })), url: url.toString() };
    t = await buildTestApp({ handle: proxied });
  });
  afterAll(async () => {
    await t?.close();
    await proxied?.close();
    await proxy?.close();
    await direct?.close();
  });

  async function timedReadyz() {
    const start = Date.now();
    const r = await readyz(t);
    return { ...r, ms: Date.now() - start };
  }

  it('503 database_unreachable within the probe timeout while the network holds connections, 200 again once restored', async () => {
    expect((await timedReadyz()).status).toBe(200);
    expect(proxy.connections()).toBeGreaterThan(0);
    proxy.cut('hold');
    // The pool notices its dropped connections at once (their sockets close); what is left is a connect that never ends.
    await sleep(100);
    const during = [await timedReadyz(), await timedReadyz()];
    for (const r of during) {
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ ok: false, reason: 'database_unreachable', database: 'unreachable', timeoutMs: 2000 });
      // The check itself hangs (a held connect has no end of its own); the probe's timeout answers for it.
      expect(r.ms).toBeGreaterThanOrEqual(1900);
      expect(r.ms).toBeLessThan(3000);
    }
    proxy.restore();
    await expect.poll(async () => (await timedReadyz()).status, { timeout: 10_000, interval: 100 }).toBe(200);
    expect((await timedReadyz()).body).toEqual({ ok: true, database: 'reachable', migrations: 'current', worker: 'not_in_this_process' });
  }, 30_000);

  it('503 at once while connections are refused, 200 again once restored, with no restart', async () => {
    proxy.cut('refuse');
    const r = await timedReadyz();
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ reason: 'database_unreachable' });
    expect(r.ms).toBeLessThan(1000);
    proxy.restore();
    await expect.poll(async () => (await timedReadyz()).status, { timeout: 10_000, interval: 100 }).toBe(200);
  }, 30_000);
});

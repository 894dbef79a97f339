import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngineLoop } from '../../src/engine/loop.js';
import { enqueueEvent } from '../../src/webhooks/outbox.js';
import { startWorker, type RunningWorker } from '../../src/worker.js';
import type { TestApp } from '../helpers/build-test-app.js';
import { createWorkspaceWithKey } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { createMemoryChannels } from '../helpers/memory-channels.js';
import { captureServiceLogs, findSecrets, KEY_SHAPE } from '../helpers/log-capture.js';
import { buildLoggedTestApp } from '../helpers/reliability-app.js';
import { dbEngine } from '../helpers/test-database.js';
import { ENGINE_ENV, insertAccount, step, steps } from '../engine/helpers.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

// PostgreSQL goes away under load and comes back: the database refuses new connections and every backend
// of the service is terminated (what a restart or failover does to a client), while requests flow. The
// service must answer 503 while the database is away, never crash, and recover by itself, with no process
// restart; the engine and webhook delivery loops resume. PGlite runs in-process: there is no server to lose.
describe.skipIf(dbEngine() === 'pglite')('PostgreSQL restart under load (PostgreSQL only: PGlite has no server connection to lose)', () => {
  let t: TestApp;
  let rx: Receiver;
  let worker: RunningWorker;
  let engine: { stop(): Promise<void> };
  let auth: Record<string, string>;
  let workspaceId: string;
  let dbName: string;
  const logs = captureServiceLogs('debug');
  const channels = createMemoryChannels();
  const statuses: { at: number; status: number; error?: string }[] = [];
  const window = { awayFrom: 0, backAt: 0 };
  // An 'error' event on a pg client nobody listens to is an uncaught exception: it would end the server
  // process. They are recorded here (and pinned by a failing test below) instead of ending the test run.
  const unheardClientErrors: string[] = [];
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be called with .apply(this) below
  const originalEmit = pg.Client.prototype.emit;

  async function admin<T>(fn: (c: pg.Client) => Promise<T>) {
    const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  }

  beforeAll(async () => {
    pg.Client.prototype.emit = function (this: pg.Client, event: string | symbol, ...args: unknown[]) {
      if (event === 'error' && this.listenerCount('error') === 0) {
        unheardClientErrors.push(String((args[0] as Error)?.message));
        return false;
      }
      return originalEmit.call(this, event, ...args);
    } as typeof originalEmit;
    t = await buildLoggedTestApp({
      logger: logs.logger,
      realClock: true,
      drivers: channels.drivers,
      env: { ...ENGINE_ENV, OUTREACH_PACING_RAMP: '', OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1', OUTREACH_RATE_LIMIT_PER_MINUTE: 1_000_000 },
    });
    dbName = new URL((t.handle as { url?: string }).url!).pathname.slice(1);
    rx = await startReceiver();
    const ws = await createWorkspaceWithKey(t, 'Restart');
    auth = ws.auth;
    workspaceId = ws.workspaceId;
    const hook = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: auth,
      payload: { url: `http://127.0.0.1:${rx.port}/ok/restart`, events: ['lead.invited'] },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    worker = startWorker({ db: t.db, config: t.config, cipher: t.cipher, idlePollMs: 200, logger: logs.logger.child({ component: 'webhook-worker' }) });
    engine = startEngineLoop(t.services.engine, 1, logs.logger.child({ component: 'engine' }));

    // Load: four clients reading and writing without pause, through the outage.
    let running = true;
    const client = async () => {
      while (running) {
        const res = await t.app.inject({ method: 'GET', url: '/api/v1/sequences', headers: auth });
        statuses.push({ at: Date.now(), status: res.statusCode, error: res.statusCode >= 400 ? res.body.slice(0, 200) : undefined });
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const clients = [client(), client(), client(), client()];
    await new Promise((r) => setTimeout(r, 1000));
    window.awayFrom = Date.now();
    await admin(async (c) => {
      await c.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS false`);
      await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName]);
    });
    await new Promise((r) => setTimeout(r, 2500));
    await admin((c) => c.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`));
    window.backAt = Date.now();
    await new Promise((r) => setTimeout(r, 3000));
    running = false;
    await Promise.all(clients);
  }, 120_000);

  afterAll(async () => {
    await admin((c) => c.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`)).catch(() => undefined);
    await engine?.stop();
    await worker?.stop();
    await rx?.close();
    await t?.close();
    pg.Client.prototype.emit = originalEmit;
  });

  // Was a defect: terminating the backends emitted 'error' on pooled pg clients that are checked out but idle (no query
  // running), where nothing listens: in a server that is an uncaught exception, and the process exits.
  it('no pooled connection raises an error nobody handles (an uncaught exception would end the process)', () => {
    expect(unheardClientErrors).toEqual([]);
  });

  it('the process survives and every request got an answer: 200 before, and 200 again within 3 s after the database returns', () => {
    const before = statuses.filter((s) => s.at < window.awayFrom);
    const after = statuses.filter((s) => s.at > window.backAt + 3000 - 1000);
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((s) => s.status === 200)).toBe(true);
    expect(after.length).toBeGreaterThan(0);
    expect(after.map((s) => s.status)).toEqual(after.map(() => 200));
    const during = statuses.filter((s) => s.at >= window.awayFrom && s.at <= window.backAt);
    console.info(
      `restart: ${unheardClientErrors.length} unhandled client errors; ${statuses.length} requests, ${during.length} while away: ${JSON.stringify(Object.fromEntries([...new Set(during.map((s) => s.status))].map((c) => [c, during.filter((s) => s.status === c).length])))}`,
    );
  });

  // Was a defect: a request that needed the database while it was away answered 500 internal_error (the pg error is not
  // mapped), where the spec's 503 "dependency unavailable" is the answer a client can retry on.
  it('while the database is away every answer is 503 (dependency unavailable), never a 500', () => {
    const during = statuses.filter((s) => s.at >= window.awayFrom && s.at <= window.backAt);
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((s) => s.status !== 200 && s.status !== 503).map((s) => `${s.status} ${s.error}`)).toEqual([]);
  });

  it('/readyz reports the database reachable again, without a restart', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.json()).toEqual({ ok: true, database: 'reachable', migrations: 'current', worker: 'fresh' });
  });

  it('the engine loop and the webhook delivery loop resume: a lead due now is sent and its event delivered', async () => {
    const account = await insertAccount(t.db, workspaceId);
    const seq = await insertSequence(t.db, workspaceId, { steps: steps(step('connect', { message: 'Hi {{firstName}}' })) });
    const lead = await insertLead(t.db, workspaceId, {
      person: 'After Restart',
      linkedin_url: 'https://li.example/after-restart',
      account_id: account,
      sequence_id: seq,
      next_action_at: new Date(Date.now() - 1000),
    });
    await expect.poll(() => channels.delivered.filter((a) => a.recipient.leadId === lead).length, { timeout: 30_000, interval: 200 }).toBe(1);
    await expect.poll(() => rx.on('/ok/restart').filter((r) => r.body.includes(lead)).length, { timeout: 30_000, interval: 200 }).toBeGreaterThanOrEqual(1);
    // And a plain outbox event, for the delivery loop alone.
    await t.db.transaction().execute((trx) => enqueueEvent(trx, { workspaceId, event: 'lead.invited', data: { marker: 'post-restart' } }));
    await expect.poll(() => rx.on('/ok/restart').filter((r) => r.body.includes('post-restart')).length, { timeout: 30_000, interval: 200 }).toBe(1);
  }, 90_000);

  it('the outage logged no key, and logged the failures by class and message only', () => {
    const text = logs.text();
    expect(text).not.toMatch(KEY_SHAPE);
    expect(findSecrets(text, [auth.authorization.slice(7)])).toEqual([]);
  });
});

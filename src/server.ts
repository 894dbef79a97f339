import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { buildApp } from './app/build-app.js';
import { createServices } from './app/services.js';
import { createMemoryRateLimitStore, createRedisRateLimitStore, type RateLimitStore } from './app/plugins/rate-limit.js';
import { sql } from 'kysely';
import { ConfigError, describeDatabase, type Config } from './config/config.js';
import { createDatabase, type DatabaseHandle } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { unpackInitialSnapshot } from './db/initial-snapshot.js';
import { systemClock } from './lib/clock.js';
import { randomToken } from './lib/ids.js';
import { resolveTextCipher, verifyEncryptionKey } from './lib/encryption-key.js';
import { readControlFile, removeControlFile, writeControlFile } from './lib/control-file.js';
import { createOutboxSignal } from './webhooks/outbox.js';
import { startEngineLoop, startEngineLoops } from './engine/loop.js';
import { tracingLoggerOptions } from './lib/tracing.js';
import { readWorkerLock, startWorker, type RunningWorker } from './worker.js';
import { startMetricsPort } from './app/metrics.js';
import type { MetricsServer } from './lib/metrics.js';

export const DEMO_WORLD_PATH = fileURLToPath(new URL('../examples/demo-world.json', import.meta.url));

export function createLogger(config: Config) {
  return pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.secret', '*.key', '*.apiKey'], censor: '[redacted]' },
    // trace_id and span_id in each line written under a recorded span (docs/tracing.md); nothing when tracing is off.
    ...tracingLoggerOptions(),
  });
}

/**
 * Opens the configured database and proves it answers. A failure here is the operator's setting, not a bug, so it
 * becomes a ConfigError naming the variable (DATABASE_URL or OUTREACH_DATA_DIR) instead of "unexpected error".
 */
export async function openDatabase(config: Config, logger?: { warn(obj: object, msg: string): void }): Promise<DatabaseHandle> {
  let handle: DatabaseHandle | null = null;
  try {
    handle = await createDatabaseFor(config, logger);
    await sql`SELECT 1`.execute(handle.db);
    return handle;
  } catch (err) {
    await handle?.close().catch(() => undefined);
    const e = err as Error & { code?: string };
    const reason = e.message || e.code || String(err);
    throw new ConfigError(
      config.database.kind === 'postgres'
        ? `DATABASE_URL: cannot use the ${describeDatabase(config)}: ${reason}`
        : `OUTREACH_DATA_DIR: cannot open the ${describeDatabase(config)}: ${reason}`,
    );
  }
}

async function createDatabaseFor(config: Config, logger?: { warn(obj: object, msg: string): void }): Promise<DatabaseHandle> {
  if (config.database.kind === 'postgres') {
    return createDatabase({
      kind: 'postgres',
      url: config.database.url,
      poolSize: config.database.poolSize,
      onIdleError: (err) =>
        logger?.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'database connection dropped; it will be replaced'),
    });
  }
  // A new data directory starts from the build's snapshot, unpacked to disk; PGlite then opens it as on a restart.
  await unpackInitialSnapshot(config.database.dataDir);
  return createDatabase({ kind: 'pglite', dataDir: config.database.dataDir });
}

async function createRateLimitStore(config: Config): Promise<RateLimitStore> {
  if (!config.redisUrl) return createMemoryRateLimitStore();
  const { Redis } = await import('ioredis');
  return createRedisRateLimitStore(new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true }));
}

/**
 * Boots the whole service: migrate, seed the demo world on an empty embedded database, serve.
 * Returns a stop function that drains requests before closing the database.
 */
export async function startServer(config: Config, opts: { print?: (line: string) => void } = {}) {
  const print = opts.print ?? ((line: string) => process.stderr.write(`${line}\n`));
  const logger = createLogger(config);
  if (config.database.kind === 'pglite') {
    const running = readControlFile(config.dataDir);
    if (running) throw new Error(`another server (pid ${running.pid}) is using ${config.dataDir}; stop it or set OUTREACH_DATA_DIR`);
    const workerLock = readWorkerLock(config.dataDir);
    if (workerLock)
      throw new Error(`an outreach worker (pid ${workerLock.pid}) is using ${config.dataDir}; stop it first (the server runs the worker in-process)`);
  }
  const cipher = resolveTextCipher(config);
  const handle = await openDatabase(config, logger);
  let app: Awaited<ReturnType<typeof buildApp>> | null = null;
  let rateLimitStore: RateLimitStore | null = null;
  let address: string;
  let demo: DemoWorkspace | null;
  let metricsPort: MetricsServer | null = null;
  const controlToken = config.database.kind === 'pglite' ? randomToken(32) : null;
  const outboxSignal = createOutboxSignal();
  const services = createServices({
    db: handle.db,
    config,
    clock: systemClock,
    cipher,
    outboxSignal,
    authChangesUrl: config.database.kind === 'postgres' ? config.database.url : null,
  });
  try {
    await migrateToLatest(handle.db);
    // The ledger's partitions for this month and the next two (the hourly retention pass does it again).
    await services.activity.ensurePartitions();
    await verifyEncryptionKey(handle.db, config);
    rateLimitStore = await createRateLimitStore(config);
    app = await buildApp({ config, db: handle.db, services, clock: systemClock, controlToken, rateLimitStore, logger });
    if (config.webhooksAllowInsecure)
      logger.warn('OUTREACH_WEBHOOKS_ALLOW_INSECURE=1: http and loopback webhook receivers are allowed; never use this in production');
    address = await app.listen({ port: config.port, host: config.host });
    // Links (reviewUrl, unsubscribe, the console) name the port actually bound: PORT=0 picks one only now.
    config.publicBase.listeningOn((app.server.address() as { port: number }).port);
    // OUTREACH_METRICS_PORT: `/metrics` on a port of its own, up and down with the API (docs/metrics.md).
    metricsPort = await startMetricsPort({ config: config.metrics, db: handle.db, clock: systemClock });
    // Only a server that listens loads the demo: a start that fails (a busy port) leaves the database as it was,
    // so the next start loads the demo and shows its key.
    demo = await loadDemoWorld(config, handle.db, services);
  } catch (err) {
    // The app's close hook stops the services' listeners; without an app they are stopped here.
    await (app ? app.close() : services.workspaces.close()).catch(() => undefined);
    await metricsPort?.close();
    await rateLimitStore?.close?.();
    await handle.close();
    throw err;
  }
  const port = (app.server.address() as { port: number }).port;
  if (controlToken) writeControlFile(config.dataDir, { pid: process.pid, url: `http://127.0.0.1:${port}`, token: controlToken });
  const worker: RunningWorker | null = config.workerInProcess
    ? startWorker({ db: handle.db, config, clock: systemClock, cipher, signal: outboxSignal, logger: logger.child({ component: 'webhook-worker' }) })
    : null;

  const engineLoop = startEngineLoops(services.engine, config.engineIntervalSeconds, logger.child({ component: 'engine' }));
  const retentionLoop = startEngineLoop(
    {
      runPass: async () => {
        const pruned = await services.activity.pruneExpired({ retentionDays: config.activityRetentionDays });
        // Inbound records (docs/email.md) are kept for the same window as the ledger.
        await services.inbound.pruneRecords(config.activityRetentionDays);
        return pruned;
      },
    },
    3600,
    logger.child({ component: 'retention' }),
    'activity retention',
  );

  print(`Listening on ${address} (${describeDatabase(config)})`);
  const base = config.publicBase.url();
  print(`Console: ${base}/console`);
  if (metricsPort) print(`Metrics: http://${config.metrics.host}:${metricsPort.port}/metrics`);
  if (demo) printDemo(print, demo, base);

  // Shutdown (SIGTERM, SIGINT, or a caller's stop()) is over within OUTREACH_SHUTDOWN_TIMEOUT: requests in flight may
  // finish, event streams end at once (the events module's preClose hook), and whatever a client still holds open
  // is cut when the drain time is up, which leaves the rest of the timeout to the worker and the database.
  const shutdownMs = config.shutdownTimeoutSeconds * 1000;
  const drainMs = Math.max(shutdownMs - 2000, shutdownMs / 2);
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      if (controlToken) removeControlFile(config.dataDir);
      const cut = setTimeout(() => {
        logger.warn({ drainMs }, 'shutdown: connections still open after the drain time are closed');
        app.server.closeAllConnections();
      }, drainMs);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), shutdownMs)));
      const work = (async () => {
        await Promise.all([app.close(), engineLoop.stop(), retentionLoop.stop(), metricsPort?.close()]);
        clearTimeout(cut);
        await worker?.stop();
        await rateLimitStore?.close?.();
        await handle.close();
        return 'done' as const;
      })();
      // A failure after the timeout has nobody left to tell; one before it rejects stop() through the race.
      work.catch(() => undefined);
      try {
        if ((await Promise.race([work, timedOut])) === 'timeout') {
          logger.error({ timeoutSeconds: config.shutdownTimeoutSeconds }, 'shutdown did not finish within OUTREACH_SHUTDOWN_TIMEOUT; stopping anyway');
        }
      } finally {
        clearTimeout(cut);
        clearTimeout(timer);
      }
    })());
  return { app, address, port, stop, handle, services, demo, metricsPort };
}

export interface DemoWorkspace {
  id: string;
  name: string;
  /** The key made by this start's load of the demo world; null when the demo was loaded by an earlier start. */
  newKey: string | null;
}

/**
 * Loads the demo world into an empty database (OUTREACH_SEED_DEMO=1). The file names no key secret, so the
 * loader generates a fresh one (shared/contracts/world-file.md): no key is public. Answers the demo workspace
 * whenever the database has it, so that every start can say where to look and how to get a key.
 */
async function loadDemoWorld(config: Config, db: DatabaseHandle['db'], services: ReturnType<typeof createServices>): Promise<DemoWorkspace | null> {
  if (!fs.existsSync(DEMO_WORLD_PATH)) return null;
  const doc = JSON.parse(fs.readFileSync(DEMO_WORLD_PATH, 'utf8')) as { workspaces?: { id?: string; name?: string }[] };
  const first = doc.workspaces?.[0];
  if (!first?.id) return null;
  if (config.seedDemo) {
    const empty = (await db.selectFrom('workspaces').select('id').limit(1).execute()).length === 0;
    if (empty) {
      const result = await services.world.seed(doc);
      const ws = result.workspaces[0];
      return { id: ws.id, name: ws.name, newKey: ws.apiKeys[0] ?? null };
    }
  }
  const saved = await db.selectFrom('workspaces').select(['id', 'name']).where('id', '=', first.id).executeTakeFirst();
  return saved ? { id: saved.id, name: saved.name, newKey: null } : null;
}

function printDemo(print: (line: string) => void, demo: DemoWorkspace, base: string): void {
  print('');
  print(`Demo workspace: ${demo.name} (${demo.id})`);
  if (demo.newKey) {
    print('Demo world loaded. Its key, shown this once (create more with the command below):');
    print(`  ${demo.newKey}`);
    print('Try:');
    print(`  curl -H "Authorization: Bearer ${demo.newKey}" ${base}/api/v1/workspaces`);
  }
  print(`Get a key: npx outreach key create --workspace ${demo.id}`);
  print(`Console sign-in: the workspace key, or a one-time link from: npx outreach login-link --workspace ${demo.id}`);
  print(`Reference: ${base}/docs/   Guide: ${base}/docs/guide   OpenAPI: ${base}/api/v1/openapi.json`);
  print('');
}

export function dataDirOf(config: Config): string {
  return path.resolve(config.dataDir);
}

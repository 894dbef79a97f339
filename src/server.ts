import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { buildApp } from './app/build-app.js';
import { createServices } from './app/services.js';
import { createMemoryRateLimitStore, createRedisRateLimitStore, type RateLimitStore } from './app/plugins/rate-limit.js';
import type { Config } from './config/config.js';
import { createDatabase, type DatabaseHandle } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { initialSnapshotFor } from './db/initial-snapshot.js';
import { systemClock } from './lib/clock.js';
import { randomToken } from './lib/ids.js';
import { resolveTextCipher } from './lib/encryption-key.js';
import { readControlFile, removeControlFile, writeControlFile } from './lib/control-file.js';
import { createOutboxSignal } from './webhooks/outbox.js';
import { startEngineLoop } from './engine/loop.js';
import { readWorkerLock, startWorker, type RunningWorker } from './worker.js';

export const DEMO_WORLD_PATH = fileURLToPath(new URL('../examples/demo-world.json', import.meta.url));

export function createLogger(config: Config) {
  return pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.secret', '*.key', '*.apiKey'], censor: '[redacted]' },
  });
}

export async function openDatabase(config: Config, logger?: { warn(obj: object, msg: string): void }): Promise<DatabaseHandle> {
  if (config.database.kind === 'postgres') {
    return createDatabase({
      kind: 'postgres',
      url: config.database.url,
      poolSize: config.database.poolSize,
      onIdleError: (err) => logger?.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'database connection dropped; it will be replaced'),
    });
  }
  return createDatabase({ kind: 'pglite', dataDir: config.database.dataDir, loadDataDir: initialSnapshotFor(config.database.dataDir) });
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
    if (workerLock) throw new Error(`an outreach worker (pid ${workerLock.pid}) is using ${config.dataDir}; stop it first (the server runs the worker in-process)`);
  }
  const cipher = resolveTextCipher(config);
  const handle = await openDatabase(config, logger);
  await migrateToLatest(handle.db);
  const outboxSignal = createOutboxSignal();
  const services = createServices({ db: handle.db, config, clock: systemClock, cipher, outboxSignal, authChangesUrl: config.database.kind === 'postgres' ? config.database.url : null });

  let demoKey: string | null = null;
  if (config.seedDemo) {
    const empty = (await handle.db.selectFrom('workspaces').select('id').limit(1).execute()).length === 0;
    if (empty && fs.existsSync(DEMO_WORLD_PATH)) {
      const result = (await services.world.seed(JSON.parse(fs.readFileSync(DEMO_WORLD_PATH, 'utf8')))) as { workspaces: { apiKeys: string[] }[] };
      demoKey = result.workspaces[0]?.apiKeys[0] ?? null;
    }
  }

  const controlToken = config.database.kind === 'pglite' ? randomToken(32) : null;
  const rateLimitStore = await createRateLimitStore(config);
  const app = await buildApp({ config, db: handle.db, services, clock: systemClock, controlToken, rateLimitStore, logger });
  if (config.webhooksAllowInsecure) logger.warn('OUTREACH_WEBHOOKS_ALLOW_INSECURE=1: http and loopback webhook receivers are allowed; never use this in production');
  const address = await app.listen({ port: config.port, host: config.host });
  const port = (app.server.address() as { port: number }).port;
  if (controlToken) writeControlFile(config.dataDir, { pid: process.pid, url: `http://127.0.0.1:${port}`, token: controlToken });
  const worker: RunningWorker | null = config.workerInProcess
    ? startWorker({ db: handle.db, config, clock: systemClock, cipher, signal: outboxSignal, logger: logger.child({ component: 'webhook-worker' }) })
    : null;

  const engineLoop = startEngineLoop(services.engine, config.engineIntervalSeconds, logger.child({ component: 'engine' }));
  const retentionLoop = startEngineLoop(
    { runPass: () => services.activity.pruneExpired({ retentionDays: config.activityRetentionDays }) },
    3600,
    logger.child({ component: 'retention' }),
    'activity retention',
  );

  if (demoKey) {
    const base = `http://localhost:${port}`;
    print('');
    print('Demo world loaded. Your demo workspace key (shown once):');
    print(`  ${demoKey}`);
    print('Try:');
    print(`  curl -H "Authorization: Bearer ${demoKey}" ${base}/api/v1/workspaces`);
    print(`Reference: ${base}/docs   OpenAPI: ${base}/api/v1/openapi.json`);
    print('');
  }

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      if (controlToken) removeControlFile(config.dataDir);
      await engineLoop.stop();
      await retentionLoop.stop();
      await app.close();
      await worker?.stop();
      await rateLimitStore.close?.();
      await handle.close();
    })());
  return { app, address, port, stop, handle, services };
}

export function dataDirOf(config: Config): string {
  return path.resolve(config.dataDir);
}

import { randomBytes } from 'node:crypto';

/**
 * The environment of a server a test starts in its own process on `dataDir`: a free port of 127.0.0.1, no demo world,
 * no engine loop, no in-process worker, logs silent, a fresh encryption key; PostgreSQL at `databaseUrl` when given,
 * the embedded database in `dataDir` otherwise. Pass it as loadConfig's second argument, `extra` over it.
 */
export function quietServerEnv(dataDir: string, databaseUrl?: string | null, extra: Record<string, string | number> = {}) {
  return {
    PORT: 0,
    HOST: '127.0.0.1',
    OUTREACH_DATA_DIR: dataDir,
    OUTREACH_SEED_DEMO: '0',
    OUTREACH_ENGINE_INTERVAL: 0,
    OUTREACH_WORKER_IN_PROCESS: '0',
    LOG_LEVEL: 'silent',
    OUTREACH_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...extra,
  };
}

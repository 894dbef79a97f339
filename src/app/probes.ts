import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import { isDatabaseReachable, isDatabaseUnavailable } from '../db/database.js';
import { MIGRATIONS } from '../db/migrations/index.js';
import { loopHeartbeats } from '../engine/heartbeat.js';
import type { AppInstance } from './types.js';

/**
 * `/readyz` (docs/deploy.md "Probes"): whether this process should get traffic. 200 when the database answers, every
 * migration this code ships is applied and, in a process that runs the engine's loops, each loop beat within three
 * intervals (a loop beats as its pass moves on and when it ends: engine/heartbeat.ts); otherwise 503 with the first failing reason. `/healthz` (alive) stays a constant answer.
 */
export type Readiness =
  | { ok: true; database: 'reachable'; migrations: 'current'; worker: 'fresh' | 'not_in_this_process' }
  | { ok: false; reason: 'database_unreachable'; database: 'unreachable'; timeoutMs: number }
  | { ok: false; reason: 'migrations_pending'; database: 'reachable'; migrations: 'pending'; pending: string[] }
  | {
      ok: false;
      reason: 'worker_stalled';
      database: 'reachable';
      migrations: 'current';
      worker: 'stalled';
      /** Which loop: `engine pass` (sending) or `inbox watch`. */
      loop: string;
      /** When the stalled loop of this process last beat (started, moved on in a pass, or ended one). */
      lastHeartbeat: string;
      heartbeatAgeSeconds: number;
      /** Three engine intervals (OUTREACH_ENGINE_INTERVAL). */
      allowedAgeSeconds: number;
    };

/** A load balancer's probe gives up after a second or a few: a cut connection must answer 503 before that, not hang. */
export const READINESS_DB_TIMEOUT_MS = 2000;

/** A loop is stalled once its last heartbeat is older than this many intervals. */
const STALLED_AFTER_INTERVALS = 3;

const TIMED_OUT = Symbol('timed out');

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), ms)));
  // A check that loses the race still settles later (a pooled connection's connect or query): nothing waits on it.
  work.catch(() => undefined);
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** The shipped migrations not applied to this database, in apply order (all of them when none ever ran). */
export async function pendingMigrations(db: Database): Promise<string[]> {
  let applied: Set<string>;
  try {
    // Kysely's Migrator records each applied migration here (src/db/migrate.ts).
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    applied = new Set(rows.map((r) => r.name));
  } catch (err) {
    // No table yet: nothing was ever migrated. Anything else (the database went away meanwhile) is the caller's.
    if ((err as { code?: string }).code !== '42P01') throw err;
    applied = new Set();
  }
  return Object.keys(MIGRATIONS).filter((name) => !applied.has(name));
}

export interface ReadinessOptions {
  db: Database;
  /** How long the database checks may take together before the answer is database_unreachable. */
  timeoutMs?: number;
}

export function createReadinessProbe(opts: ReadinessOptions): () => Promise<Readiness> {
  const timeoutMs = opts.timeoutMs ?? READINESS_DB_TIMEOUT_MS;
  // Migrations are only ever applied, never undone by a running service: once current, the table is not read again.
  let migrationsCurrent = false;
  const unreachable: Readiness = { ok: false, reason: 'database_unreachable', database: 'unreachable', timeoutMs };

  const databaseChecks = async (): Promise<string[] | false> => {
    if (!(await isDatabaseReachable(opts.db))) return false;
    if (migrationsCurrent) return [];
    try {
      return await pendingMigrations(opts.db);
    } catch (err) {
      // The database went away between the two reads; any other failure is not a reason this code knows (check_failed).
      if (isDatabaseUnavailable(err)) return false;
      throw err;
    }
  };

  return async () => {
    const checked = await withTimeout(databaseChecks(), timeoutMs);
    if (checked === TIMED_OUT || checked === false) return unreachable;
    if (checked.length > 0) return { ok: false, reason: 'migrations_pending', database: 'reachable', migrations: 'pending', pending: checked };
    migrationsCurrent = true;

    const loops = loopHeartbeats();
    if (loops.length === 0) return { ok: true, database: 'reachable', migrations: 'current', worker: 'not_in_this_process' };
    const now = Date.now();
    for (const loop of loops) {
      const allowedMs = Math.round(STALLED_AFTER_INTERVALS * loop.intervalSeconds * 1000);
      const ageMs = now - loop.lastBeatAt;
      if (ageMs > allowedMs) {
        return {
          ok: false,
          reason: 'worker_stalled',
          database: 'reachable',
          migrations: 'current',
          worker: 'stalled',
          loop: loop.label,
          lastHeartbeat: new Date(loop.lastBeatAt).toISOString(),
          heartbeatAgeSeconds: Math.round(ageMs / 100) / 10,
          allowedAgeSeconds: allowedMs / 1000,
        };
      }
    }
    return { ok: true, database: 'reachable', migrations: 'current', worker: 'fresh' };
  };
}

/** `GET /readyz`: 200 or 503 with the reason, never a 500 (an unexpected failure answers 503 `check_failed`). */
export function registerReadiness(app: AppInstance, opts: ReadinessOptions): void {
  const probe = createReadinessProbe(opts);
  app.get('/readyz', { schema: { hide: true } }, async (req, reply) => {
    let answer: Readiness | { ok: false; reason: 'check_failed' };
    try {
      answer = await probe();
    } catch (err) {
      req.log.error({ err: { type: (err as Error)?.name, message: (err as Error)?.message } }, 'readiness check failed');
      answer = { ok: false, reason: 'check_failed' };
    }
    // A probe's answer is about this moment: no cache between the prober and the process may keep it.
    return reply
      .status(answer.ok ? 200 : 503)
      .header('cache-control', 'no-store')
      .send(answer);
  });
}

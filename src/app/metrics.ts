import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, onResponseHookHandler } from 'fastify';
import type { MetricsConfig } from '../config/observability.js';
import { poolWaiting, type Database } from '../db/database.js';
import { countOpenTasks } from '../domain/tasks.repository.js';
import type { Clock } from '../lib/clock.js';
import { metrics, metricsText, serveMetrics, UNMATCHED_ROUTE, type Metrics, type MetricsServer, type MetricsSources } from '../lib/metrics.js';
import { outboxBacklog } from '../webhooks/jobs.repository.js';
import type { AppInstance } from './types.js';

// `/metrics` (docs/metrics.md): the HTTP histogram's hooks, the bearer-protected route on the API port, the port of
// its own, and the database gauges' readers. The series themselves live in src/lib/metrics.ts.

/** The database gauges' readers over `db` (the outbox backlog, open tasks, the pool's waiting queries). */
export function databaseSources(db: Database, clock: Clock): MetricsSources {
  return {
    async outbox() {
      const { pending, oldest } = await outboxBacklog(db);
      // Events an explicit-`now` engine pass wrote in the future are not "waiting" yet: never a negative age.
      return { pending, oldestAgeSeconds: oldest ? Math.max(0, (clock.now().getTime() - oldest.getTime()) / 1000) : 0 };
    },
    tasksOpen: () => countOpenTasks(db),
    poolWaiting: () => poolWaiting(db),
  };
}

/** Compares digests, so neither the token's length nor its prefix shows in the answer time. */
const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Registers the HTTP histogram and, with OUTREACH_METRICS_TOKEN, `GET /metrics` behind `Authorization: Bearer`. Call it
 * before any route is registered: each route gets its own onResponse hook with its template bound (onRoute), so a
 * request costs reply.elapsedTime and one observe(), never a lookup of its route. Requests no route matched are
 * observed under `unmatched` by one root hook. Nothing is registered when metrics are off (no cost at all).
 */
export function registerMetrics(app: AppInstance, opts: { config: MetricsConfig; db: Database; clock: Clock; metrics?: Metrics }): void {
  if (!opts.config.enabled) return;
  const m = opts.metrics ?? metrics();
  m.enableDefaultMetrics();
  app.addHook('onRoute', (route) => {
    const observe = m.routeObserver(route.url ?? route.path);
    const hook: onResponseHookHandler = (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      observe(req.method, reply.statusCode, reply.elapsedTime);
      done();
    };
    const given = route.onResponse;
    route.onResponse = given === undefined ? [hook] : Array.isArray(given) ? [...given, hook] : [given, hook];
  });
  const unmatched = m.routeObserver(UNMATCHED_ROUTE);
  app.addHook('onResponse', (req, reply, done) => {
    if (req.is404) unmatched(req.method, reply.statusCode, reply.elapsedTime);
    done();
  });

  // Any process that serves metrics reads the database gauges from its own database; the last app built wins.
  const release = m.useSources(databaseSources(opts.db, opts.clock));
  app.addHook('onClose', async () => release());

  const token = opts.config.token;
  if (token === null) return;
  const expected = digest(token);
  app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
    const header = req.headers.authorization ?? '';
    const presented = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (!presented || !timingSafeEqual(digest(presented), expected)) {
      return reply
        .status(401)
        .header('www-authenticate', 'Bearer realm="metrics"')
        .send({ error: 'unauthorized', message: 'GET /metrics needs Authorization: Bearer <OUTREACH_METRICS_TOKEN>' });
    }
    const { contentType, body } = await metricsText(m);
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
  });
}

/**
 * `/metrics` on OUTREACH_METRICS_PORT (no token; OUTREACH_METRICS_HOST, loopback by default) for a process that has
 * no API (`outreach worker`) or whose API port is public. Null when the port is not set. The gauges read `db`.
 */
export async function startMetricsPort(opts: { config: MetricsConfig; db: Database; clock: Clock; metrics?: Metrics }): Promise<MetricsServer | null> {
  if (opts.config.port === null) return null;
  const m = opts.metrics ?? metrics();
  const release = m.useSources(databaseSources(opts.db, opts.clock));
  try {
    const server = await serveMetrics({ host: opts.config.host, port: opts.config.port, metrics: m });
    return {
      port: server.port,
      close: async () => {
        release();
        await server.close();
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}

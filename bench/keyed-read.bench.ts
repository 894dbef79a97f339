/**
 * Keyed-read benchmark (issue 16): `GET /api/v1/x/leads/{id}` with a valid key, 20 leads in rotation, 50
 * connections, on PostgreSQL. Side by side, alternating, on the same database and data:
 *
 * - the floor: a raw `node:http` + `pg` server that looks the key up by its SHA-256 and then reads the lead by id and
 *   workspace (two round trips, no framework, no validation);
 * - the service: buildApp with its auth cache (one round trip when warm) and the in-memory rate limit raised out of
 *   the way.
 *
 * - the service with observability on (issue 30): `/metrics` enabled (OUTREACH_METRICS_TOKEN), every request timed
 *   into the route histogram, and OpenTelemetry tracing started with a 1 % parent-based sampler exporting to an
 *   unreachable collector (OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9, nothing listens there).
 *
 * - `outreach serve`: what users get, measured from outside: the compiled server (`node dist/main.js`, built by
 *   `npm run build`) in its own process with the production API settings (OUTREACH_ENGINE_INTERVAL=0,
 *   OUTREACH_WORKER_IN_PROCESS=0, LOG_LEVEL=warn), its rate limit raised out of the way, with `/metrics` on and 1 %
 *   tracing to a closed collector, as an operator runs it.
 *
 * Each server runs in its own child process; autocannon drives them from this process. It prints requests/s and
 * p99 of every round, the medians, and each service's ratio to the floor (target >= 1.0). Not a test: it asserts
 * nothing.
 *
 *   npx tsx bench/keyed-read.bench.ts
 *   BENCH_ROUNDS=5 BENCH_SECONDS=10 BENCH_CONNECTIONS=50 npx tsx bench/keyed-read.bench.ts
 *
 * BENCH_DATABASE_URL (default postgres://root@127.0.0.1:5432/postgres) names the server; the bench database
 * outreach_bench_keyed is (re)created beside it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { toXLeadView } from '../src/domain/lead-views.js';

const BASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const DB_NAME = 'outreach_bench_keyed';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const POOL_SIZE = Number(process.env.BENCH_POOL_SIZE ?? 10);
const LEADS = 20;

const target = new URL(BASE_URL);
target.pathname = `/${DB_NAME}`;
const DB_URL = target.toString();

const LEAD_COLUMNS =
  'id, x_user_id, username, account_user_id, play_id, sequence_id, stage, automation_stopped, current_step, next_action_at, ' +
  'followed_at, followed_back_at, messaged_at, replied_at, opted_out_at';

/** The floor: what the request minimally needs, by hand. */
async function runFloor() {
  pg.types.setTypeParser(20, (v) => Number(v));
  const pool = new pg.Pool({ connectionString: DB_URL, max: POOL_SIZE });
  const unauthorized = JSON.stringify({ error: 'unauthorized' });
  const server = http.createServer(async (req, res) => {
    try {
      const m = /^\/api\/v1\/x\/leads\/([0-9a-f-]{36})$/.exec(req.url ?? '');
      const auth = /^bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
      if (!m || !auth) return res.writeHead(m ? 401 : 404, { 'content-type': 'application/json' }).end(unauthorized);
      const hash = createHash('sha256').update(auth[1]).digest('hex');
      const key = (await pool.query('SELECT id, workspace_id, expires_at, revoked_at FROM api_keys WHERE key_hash = $1', [hash])).rows[0];
      if (!key || key.revoked_at || (key.expires_at && key.expires_at <= new Date())) {
        return res.writeHead(401, { 'content-type': 'application/json' }).end(unauthorized);
      }
      const row = (await pool.query(`SELECT ${LEAD_COLUMNS} FROM leads WHERE workspace_id = $1 AND id = $2`, [key.workspace_id, m[1]])).rows[0];
      if (!row) return res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"lead not found"}');
      // Same answer as the service: the one builder of the spec's lead object (pure mapping, no I/O).
      const lead = toXLeadView(row);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ lead }));
    } catch {
      res.writeHead(500).end();
    }
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING ${(server.address() as { port: number }).port}\n`));
}

/** The service as deployed, minus the loops that are not part of a read (engine, webhook worker). */
async function runService(observability = false) {
  if (observability) {
    // As an operator would set them; the collector address is closed, so every export fails quietly.
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_SERVICE_NAME: 'outreach-bench',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.01',
    });
    const { startTracing } = await import('../src/lib/tracing.js');
    await startTracing(process.env);
  }
  const { loadConfig } = await import('../src/config/config.js');
  const { createDatabase } = await import('../src/db/database.js');
  const { createServices } = await import('../src/app/services.js');
  const { buildApp } = await import('../src/app/build-app.js');
  const { systemClock } = await import('../src/lib/clock.js');
  const { createTextCipher } = await import('../src/lib/crypto.js');
  const config = loadConfig(
    {},
    {
      DATABASE_URL: DB_URL,
      OUTREACH_DB_POOL_SIZE: POOL_SIZE,
      OUTREACH_SEED_DEMO: '0',
      OUTREACH_ENGINE_INTERVAL: 0,
      OUTREACH_WORKER_IN_PROCESS: '0',
      OUTREACH_RATE_LIMIT_PER_MINUTE: 1_000_000_000,
      LOG_LEVEL: 'silent',
      ...(observability && { OUTREACH_METRICS_TOKEN: 'bench-metrics-token-0123456789' }),
    },
  );
  const handle = await createDatabase({ kind: 'postgres', url: DB_URL, poolSize: POOL_SIZE });
  const services = createServices({ db: handle.db, config, clock: systemClock, cipher: createTextCipher(randomBytes(32)), authChangesUrl: DB_URL });
  const app = await buildApp({ config, db: handle.db, services, clock: systemClock });
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(`LISTENING ${(app.server.address() as { port: number }).port}\n`);
}

async function seed(): Promise<{ key: string; leadIds: string[] }> {
  const admin = new pg.Client({ connectionString: BASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${DB_NAME}`);
  await admin.end();
  const { createDatabase } = await import('../src/db/database.js');
  const { migrateToLatest } = await import('../src/db/migrate.js');
  const handle = await createDatabase({ kind: 'postgres', url: DB_URL, poolSize: 2 });
  await migrateToLatest(handle.db);
  const { createServices } = await import('../src/app/services.js');
  const { loadConfig } = await import('../src/config/config.js');
  const { systemClock } = await import('../src/lib/clock.js');
  const { createTextCipher } = await import('../src/lib/crypto.js');
  const services = createServices({
    db: handle.db,
    config: loadConfig({}, { LOG_LEVEL: 'silent' }),
    clock: systemClock,
    cipher: createTextCipher(randomBytes(32)),
  });
  const leadIds: string[] = [];
  let key = '';
  // A few workspaces and keys so the key index is not a one-row table; the measured key is the first.
  for (let w = 0; w < 50; w++) {
    const ws = await services.workspaces.createWorkspace({ name: `Bench ${w}` });
    const k = await services.workspaces.createApiKey({ workspaceId: ws.id });
    const rows = Array.from({ length: LEADS }, (_, i) => ({
      id: crypto.randomUUID(),
      workspace_id: ws.id,
      x_user_id: String(1_000_000 + w * LEADS + i),
      username: `bench_${w}_${i}`,
      stage: 'invited' as const,
      next_action_at: new Date(),
    }));
    await handle.db.insertInto('leads').values(rows).execute();
    if (w === 0) {
      key = k.key;
      leadIds.push(...rows.map((r) => r.id));
    }
  }
  await handle.close();
  return { key, leadIds };
}

type Role = 'floor' | 'service' | 'service-obs' | 'serve';

/** `outreach serve` as deployed: the compiled entry point in a process of its own, ready once /healthz answers. */
async function startServe(): Promise<{ child: ChildProcess; port: number }> {
  const entry = fileURLToPath(new URL('../dist/main.js', import.meta.url));
  if (!fs.existsSync(entry)) throw new Error('dist/main.js is missing: run `npm run build` first');
  const port = 20_000 + Math.floor(Math.random() * 10_000);
  const child = spawn(process.execPath, [entry], {
    env: {
      ...process.env,
      DATABASE_URL: DB_URL,
      PORT: String(port),
      HOST: '127.0.0.1',
      OUTREACH_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      OUTREACH_DB_POOL_SIZE: String(POOL_SIZE),
      OUTREACH_SEED_DEMO: '0',
      OUTREACH_ENGINE_INTERVAL: '0',
      OUTREACH_WORKER_IN_PROCESS: '0',
      OUTREACH_RATE_LIMIT_PER_MINUTE: '1000000000',
      LOG_LEVEL: 'warn',
      // Observability on, as an operator runs it: /metrics (every request timed) and 1 % tracing to a closed collector.
      OUTREACH_METRICS_TOKEN: 'bench-metrics-token-0123456789',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_SERVICE_NAME: 'outreach-bench',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.01',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`outreach serve exited with ${child.exitCode}`);
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { child, port };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('outreach serve did not answer /healthz within 60 s');
}

function startChild(role: Role): Promise<{ child: ChildProcess; port: number }> {
  if (role === 'serve') return startServe();
  // BENCH_PROFILE=dir writes a CPU profile of each server there when it stops.
  const profile = process.env.BENCH_PROFILE ? [`--cpu-prof`, `--cpu-prof-dir=${process.env.BENCH_PROFILE}/${role}`] : [];
  const child = spawn(process.execPath, [...profile, ...process.execArgv, fileURLToPath(import.meta.url), `--role=${role}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += String(c);
      const m = /LISTENING (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); null elsewhere. */
function cpuSeconds(pid: number | undefined): number | null {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

async function load(port: number, key: string, leadIds: string[], seconds: number, pid?: number) {
  const cpuBefore = cpuSeconds(pid);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${key}` },
    requests: leadIds.map((id) => ({ method: 'GET' as const, path: `/api/v1/x/leads/${id}` })),
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`port ${port}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const cpuAfter = cpuSeconds(pid);
  // Server CPU per request: less sensitive to a busy machine than requests/s.
  const cpuUs = cpuBefore !== null && cpuAfter !== null ? Math.round(((cpuAfter - cpuBefore) * 1e6) / result.requests.total) : NaN;
  return { rps: result.requests.average, p99: result.latency.p99, cpuUs };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const role = process.argv.find((a) => a.startsWith('--role='))?.slice(7);
  if (role) process.on('SIGTERM', () => process.exit(0));
  if (role === 'floor') return runFloor();
  if (role === 'service') return runService();
  if (role === 'service-obs') return runService(true);

  console.log(
    `keyed-read bench: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s, pool ${POOL_SIZE}, ${os.cpus().length} CPUs, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const { key, leadIds } = await seed();
  const roles: Role[] = ['floor', 'service', 'service-obs', 'serve'];
  const servers = new Map<Role, { child: ChildProcess; port: number }>();
  try {
    for (const role of roles) servers.set(role, await startChild(role));
    // Warm each (JIT, pools, the service's auth cache) before measuring.
    for (const role of roles) await load(servers.get(role)!.port, key, leadIds, 2);
    type Result = Awaited<ReturnType<typeof load>>;
    const rounds: Record<Role, Result>[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // Rotate which goes first, so a drift in machine load touches all alike.
      const order = roles.map((_, i) => roles[(i + r) % roles.length]);
      const round = {} as Record<Role, Result>;
      for (const which of order) {
        const server = servers.get(which)!;
        round[which] = await load(server.port, key, leadIds, SECONDS, server.child.pid);
      }
      rounds.push(round);
      console.log(
        `round ${r + 1}: ` +
          roles.map((role) => `${role} ${round[role].rps.toFixed(0)} req/s p99 ${round[role].p99} ms ${round[role].cpuUs} µs CPU/req`).join(' | ') +
          ` | ratios ${(round.service.rps / round.floor.rps).toFixed(2)}, ${(round['service-obs'].rps / round.floor.rps).toFixed(2)}, ${(round.serve.rps / round.floor.rps).toFixed(2)}`,
      );
    }
    const med = (role: Role, f: (x: Result) => number) => median(rounds.map((r) => f(r[role])));
    const floorRps = med('floor', (x) => x.rps);
    for (const role of roles) {
      const rps = med(role, (x) => x.rps);
      console.log(
        `median ${role.padEnd(11)} ${rps.toFixed(0)} req/s (p99 ${med(role, (x) => x.p99)} ms, ${med(role, (x) => x.cpuUs)} µs CPU/req)` +
          (role === 'floor'
            ? ''
            : `, ratio to the floor ${(rps / floorRps).toFixed(2)} (target >= 1.0); median of the round ratios ${median(rounds.map((r) => r[role].rps / r.floor.rps)).toFixed(2)}`),
      );
    }
    console.log(
      `load after: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    for (const s of servers.values()) s.child.kill();
  }
}

await main();

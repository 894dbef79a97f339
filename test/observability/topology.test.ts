import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertSequence } from '../helpers/factories.js';
import { dbEngine } from '../helpers/test-database.js';
import { ENGINE_ENV, insertAccount, step, steps } from '../engine/helpers.js';

// The production topology of docs/deploy.md, as real processes: N = 2 stateless API processes (`outreach serve` with
// OUTREACH_ENGINE_INTERVAL=0 and OUTREACH_WORKER_IN_PROCESS=0) and M = 2 workers (`outreach worker`: the engine loop and
// webhook delivery) on one PostgreSQL database, all four started at once on an empty database (migrations run once).
// A few hundred sandbox steps fall due while they run: each is done exactly once, every one by a worker.
// PostgreSQL only: the embedded database is one process's. Most of the time is the four processes starting from the
// sources through tsx at once (26–57 s on the shared 2-core machine at load 11–17); the steps themselves take 6–12 s.

const bin = path.resolve('bin/outreach.js');
const LEADS = 240;
const STEPS_PER_LEAD = 2;
const RATE_LIMIT = 20;
const redisUrl = process.env.TEST_REDIS_URL;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Child {
  name: string;
  proc: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

describe.skipIf(dbEngine() === 'pglite')('N API processes and M workers on one PostgreSQL (PostgreSQL only)', () => {
  const children: Child[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
  });

  function start(name: string, args: string[], env: Record<string, string>): Child {
    const proc = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    const child = { name, proc, output: () => out, exited };
    children.push(child);
    return child;
  }

  async function waitFor(c: Child, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = pattern.exec(c.output());
      if (m) return m;
      if (c.proc.exitCode !== null) throw new Error(`${c.name} exited (${c.proc.exitCode}) before ${pattern}: ${c.output()}`);
      if (Date.now() > deadline) throw new Error(`${c.name}: timed out waiting for ${pattern}: ${c.output()}`);
      await sleep(50);
    }
  }

  it(
    `2 API processes + 2 workers: ${LEADS * STEPS_PER_LEAD} due steps each done exactly once, all by the workers; migrations applied once by concurrent starts`,
    { timeout: 180_000 },
    async () => {
      const started = Date.now();
      // An empty database of its own: the four processes migrate it at once, as a first deploy would.
      const base = process.env.TEST_DATABASE_URL!;
      const dbName = `outreach_t_${process.pid}_topo_${randomBytes(4).toString('hex')}`;
      const admin = new pg.Client({ connectionString: base });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${dbName}`);
      cleanups.push(async () => {
        await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
        await admin.end();
      });
      const url = new URL(base);
      url.pathname = `/${dbName}`;
      // Each process names itself to PostgreSQL, so the ledger rows below can say which process wrote them.
      const urlFor = (name: string) => {
        const u = new URL(url);
        u.searchParams.set('application_name', name);
        return u.toString();
      };
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-topology-'));
      cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
      const common = {
        OUTREACH_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        OUTREACH_DATA_DIR: dataDir,
        OUTREACH_SEED_DEMO: '0',
        OUTREACH_ADDRESS_CHECKS: '0',
        OUTREACH_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
        LOG_LEVEL: 'info',
        ...Object.fromEntries(Object.entries(ENGINE_ENV).map(([k, v]) => [k, String(v)])),
        OUTREACH_PACING_RAMP: '',
        OUTREACH_PACING_INVITE_CAP: '10000',
        OUTREACH_PACING_MESSAGE_CAP: '10000',
        OUTREACH_LINKEDIN_INVITES_PER_WEEK: '10000',
        // Small batches, two at a time: the two workers' passes claim from the same due leads side by side.
        OUTREACH_ENGINE_BATCH_SIZE: '5',
        OUTREACH_ENGINE_CONCURRENCY: '2',
        ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
      };
      const apiEnv = { ...common, PORT: '0', HOST: '127.0.0.1', OUTREACH_ENGINE_INTERVAL: '0', OUTREACH_WORKER_IN_PROCESS: '0' };
      const workerEnv = { ...common, OUTREACH_ENGINE_INTERVAL: '1' };
      const apis = [1, 2].map((i) => start(`api-${i}`, ['serve'], { ...apiEnv, DATABASE_URL: urlFor(`topo-api-${i}`) }));
      const workers = [1, 2].map((i) => start(`worker-${i}`, ['worker'], { ...workerEnv, DATABASE_URL: urlFor(`topo-worker-${i}`) }));
      const ports = await Promise.all(apis.map(async (a) => Number((await waitFor(a, /Listening on http:\/\/127\.0\.0\.1:(\d+)/, 120_000))[1])));
      await Promise.all(workers.map((w) => waitFor(w, /webhook worker started/, 120_000)));
      const upAt = Date.now();

      // Concurrent starts on an empty database: every migration applied once (the migrator's advisory lock), none failed.
      const direct: DatabaseHandle = await createDatabase({ kind: 'postgres', url: url.toString(), poolSize: 4 });
      cleanups.push(() => direct.close());
      const applied = await direct.db
        .selectFrom('kysely_migration' as never)
        .select('name' as never)
        .execute();
      expect((applied as { name: string }[]).map((r) => r.name).sort()).toEqual(Object.keys(MIGRATIONS).sort());

      // Every API process is stateless: ready, with no engine loop of its own.
      for (const port of ports) {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`);
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ ok: true, database: 'reachable', migrations: 'current', worker: 'not_in_this_process' });
      }

      // Who writes ledger rows: recorded beside each one by a trigger of this test's own (application_name).
      await sql`CREATE TABLE topo_writers (lead_id uuid, step text, app text)`.execute(direct.db);
      await sql`CREATE FUNCTION topo_writer() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO topo_writers VALUES (NEW.lead_id, NEW.detail::jsonb->>'step', current_setting('application_name')); RETURN NEW; END $$`.execute(
        direct.db,
      );
      await sql`CREATE TRIGGER topo_writer AFTER INSERT ON activity FOR EACH ROW EXECUTE FUNCTION topo_writer()`.execute(direct.db);

      // The world: one workspace, four sandbox LinkedIn accounts, a two-step sequence (invite, then a like).
      const seeder: TestApp = await buildTestApp({ handle: direct });
      cleanups.push(() => seeder.close());
      const { workspaceId: ws, auth } = await createWorkspaceWithKey(seeder, 'Topology');
      const { auth: limitedAuth } = await createWorkspaceWithKey(seeder, 'Topology limit');
      await direct.db.updateTable('workspaces').set({ energy_balance: 1_000_000 }).where('id', '=', ws).execute();
      const accounts = await Promise.all([1, 2, 3, 4].map(() => insertAccount(direct.db, ws)));
      const seq = await insertSequence(direct.db, ws, {
        steps: steps(step('connect', { message: 'Hi {{firstName}}' }), step('engage', { actions: [{ type: 'like', count: 1, reaction: null }] })),
      });
      // Due in eight waves 0.4 s apart: the first at once (both workers' next passes contend for it), the rest while
      // both run, so each worker's passes find due leads.
      await sql`INSERT INTO leads (id, workspace_id, person, linkedin_url, account_id, sequence_id, next_action_at)
        SELECT gen_random_uuid(), ${ws}::uuid, 'Topo ' || g, 'https://li.example/topo-' || g,
          (ARRAY[${accounts[0]}, ${accounts[1]}, ${accounts[2]}, ${accounts[3]}])[1 + g % 4], ${seq}::uuid,
          now() + make_interval(secs => (g % 8) * 0.4)
        FROM generate_series(0, ${LEADS - 1}) g`.execute(direct.db);

      // Meanwhile clients use the API processes, alternately.
      let reads = 0;
      const readStatuses: number[] = [];
      const done = async () => {
        const { rows } = await sql<{ ok: number; inflight: number }>`SELECT
            (SELECT count(*)::int FROM activity WHERE workspace_id = ${ws}::uuid AND outcome = 'ok') AS ok,
            (SELECT count(*)::int FROM leads WHERE workspace_id = ${ws}::uuid AND (inflight_key IS NOT NULL OR current_step < ${STEPS_PER_LEAD})) AS inflight`.execute(
          direct.db,
        );
        return rows[0].ok >= LEADS * STEPS_PER_LEAD && rows[0].inflight === 0;
      };
      const deadline = Date.now() + 45_000;
      while (!(await done())) {
        if (Date.now() > deadline) throw new Error(`the steps did not finish: ${children.map((c) => `${c.name}: ${c.output().slice(-2000)}`).join('\n')}`);
        if (reads < RATE_LIMIT - 2) {
          const res = await fetch(`http://127.0.0.1:${ports[reads++ % 2]}/api/v1/leads?limit=5`, { headers: auth });
          readStatuses.push(res.status);
        }
        await sleep(200);
      }
      const doneAt = Date.now();
      // A second pass over finished leads (a duplicate would show up now) before counting.
      await sleep(2500);

      // Each step exactly once: one ledger entry per lead and step, and no other outcome.
      const { rows: ledger } = await sql<{ lead_id: string; step: string; outcome: string; n: number }>`
        SELECT lead_id, detail::jsonb->>'step' AS step, outcome, count(*)::int AS n FROM activity WHERE workspace_id = ${ws}::uuid GROUP BY 1, 2, 3`.execute(
        direct.db,
      );
      expect(ledger.filter((r) => r.outcome !== 'ok' || r.n !== 1)).toEqual([]);
      expect(ledger.length).toBe(LEADS * STEPS_PER_LEAD);
      expect(new Set(ledger.map((r) => `${r.lead_id}:${r.step}`)).size).toBe(LEADS * STEPS_PER_LEAD);
      const { rows: leads } = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM leads WHERE workspace_id = ${ws}::uuid AND current_step = ${STEPS_PER_LEAD}`.execute(direct.db);
      expect(leads[0].n).toBe(LEADS);

      // Every step was done by a worker, and both workers did some; the API processes did none.
      const { rows: writers } = await sql<{ app: string; n: number }>`SELECT app, count(*)::int AS n FROM topo_writers GROUP BY 1 ORDER BY 1`.execute(
        direct.db,
      );
      expect(writers.map((w) => w.app)).toEqual(['topo-worker-1', 'topo-worker-2']);
      expect(writers.reduce((s, w) => s + w.n, 0)).toBe(LEADS * STEPS_PER_LEAD);
      expect(readStatuses.length).toBeGreaterThan(0);
      expect(readStatuses.filter((s) => s !== 200)).toEqual([]);

      // Rate limits: with Redis (REDIS_URL) the API processes count one budget per key between them.
      if (redisUrl) {
        const codes: number[] = [];
        for (let i = 0; i < RATE_LIMIT + 2; i++)
          codes.push((await fetch(`http://127.0.0.1:${ports[i % 2]}/api/v1/workspaces`, { headers: limitedAuth })).status);
        expect(codes).toEqual([...Array(RATE_LIMIT).fill(200), 429, 429]);
      }

      // A stop is clean for all four (SIGTERM: requests drained, loops stopped).
      for (const c of children) c.proc.kill('SIGTERM');
      const codes = await Promise.all(children.map((c) => c.exited));
      expect(codes).toEqual([0, 0, 0, 0]);
      console.info(
        `topology: 4 processes up in ${upAt - started} ms; ${LEADS * STEPS_PER_LEAD} steps done in ${doneAt - upAt} ms after seeding began ` +
          `(${writers.map((w) => `${w.app} ${w.n}`).join(', ')}); ${readStatuses.length} API reads; total ${Date.now() - started} ms`,
      );
    },
  );
});

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { insertTasks } from '../../src/domain/tasks.repository.js';
import { newId } from '../../src/lib/ids.js';
import { runWatchLoop } from '../../src/channels/watch-loop.js';
import { emptySummary } from '../../src/channels/types.js';
import { metrics, RequestHistogram } from '../../src/lib/metrics.js';
import { Histogram, Registry } from 'prom-client';
import { startServer } from '../../src/server.js';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.js';
import { ENGINE_ENV, insertAccount, step, steps } from '../engine/helpers.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { createTestDatabase, dbEngine } from '../helpers/test-database.js';
import { quietServerEnv } from '../helpers/server-env.js';

// Prometheus metrics (src/lib/metrics.ts, src/app/metrics.ts, docs/metrics.md), through real HTTP: `/metrics` behind
// OUTREACH_METRICS_TOKEN on the API port, or on OUTREACH_METRICS_PORT without one, or nowhere (404).

const TOKEN = 'metrics-token-for-the-test-0123456789';
const CONTROL = 'control-token-for-the-metrics-test';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const EMAIL = /[^\s"@]+@[^\s"@]+\.[a-z]{2,}/i;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The exposition format's sample lines (`name{a="b",…} value`), comments left out. */
function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v.replace(/\\(.)/g, '$1');
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample named `name` whose labels include `labels` (0 when there is none yet). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  expect(found.length).toBeLessThanOrEqual(1);
  return found[0]?.value ?? 0;
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

describe('without OUTREACH_METRICS_TOKEN or OUTREACH_METRICS_PORT', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => t?.close());

  it('there is no /metrics: 404 like any unknown route, with or without a token', async () => {
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }] as Record<string, string>[]) {
      const res = await get(`${base}/metrics`, headers);
      expect(res.status).toBe(404);
      expect(JSON.parse(res.text)).toMatchObject({ error: 'not_found' });
    }
  });
});

describe('with OUTREACH_METRICS_TOKEN: /metrics on the API port behind a bearer token', () => {
  let t: TestApp;
  let base: string;
  const scrape = async () => {
    const res = await get(`${base}/metrics`, { authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
    return parse(res.text);
  };
  const tick = async (now: Date) => {
    const res = await fetch(`${base}/admin/v1/engine/tick`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CONTROL}`, 'content-type': 'application/json' },
      body: JSON.stringify({ now: now.toISOString() }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { actions: number; skipped: number; failed: number };
  };

  beforeAll(async () => {
    t = await buildTestApp({
      env: { ...ENGINE_ENV, OUTREACH_METRICS_TOKEN: TOKEN, OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1', OUTREACH_ENGINE_MAX_ATTEMPTS: 1 },
      controlToken: CONTROL,
    });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => t?.close());

  it('refuses a scrape without the token or with a wrong one (401, JSON), answers the Prometheus text with it', async () => {
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: 'Bearer short' }, { authorization: TOKEN }] as Record<
      string,
      string
    >[]) {
      const res = await get(`${base}/metrics`, headers);
      expect(res.status).toBe(401);
      expect(JSON.parse(res.text)).toEqual({ error: 'unauthorized', message: expect.any(String) });
      expect(res.text).not.toContain(TOKEN);
    }
    const res = await get(`${base}/metrics`, { authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
    expect(res.type.startsWith('text/plain; version=0.0.4')).toBe(true);
    const names = new Set(parse(res.text).map((s) => s.name));
    for (const series of [
      'process_cpu_user_seconds_total',
      'nodejs_eventloop_lag_seconds',
      'outreach_outbox_pending',
      'outreach_outbox_oldest_age_seconds',
      'outreach_tasks_open',
      'outreach_db_pool_waiting',
      'outreach_engine_pass_duration_seconds_count',
    ])
      expect(names).toContain(series);
    // The scrape itself went through the histogram hook: its own route template is there.
    expect(valueOf(await scrape(), 'http_request_duration_seconds_count', { route: '/metrics', method: 'GET', status_class: '2xx' })).toBeGreaterThan(0);
  });

  it('is not in the published OpenAPI document', async () => {
    const doc = JSON.parse((await get(`${base}/api/v1/openapi.json`)).text) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).not.toContain('/metrics');
  });

  it('after an engine tick, outreach_steps_total counts its sends by channel, and its skips and failures by outcome', async () => {
    const { workspaceId } = await createWorkspaceWithKey(t, 'Metrics steps');
    const account = await insertAccount(t.db, workspaceId);
    const connect = await insertSequence(t.db, workspaceId, { steps: steps(step('connect')) });
    const email = await insertSequence(t.db, workspaceId, {
      channels: ['email'],
      steps: steps(step('email', { subject: 'Hi', message: 'Hello {{firstName}}' })),
    });
    const now = new Date('2026-12-01T10:00:00Z');
    const lead = (f: Record<string, unknown>) => insertLead(t.db, workspaceId, { account_id: account, next_action_at: now, ...f });
    for (let i = 0; i < 3; i++) await lead({ sequence_id: connect, person: `Connect ${i}` });
    for (let i = 0; i < 2; i++) await lead({ sequence_id: email, person: `Mail ${i}`, email: `mail${i}@metrics.example` });
    // No address: the step is skipped. A scripted refusal whose text must never become a label. A rate limit.
    await lead({ sequence_id: email, person: 'No Address' });
    await lead({
      sequence_id: connect,
      person: 'Refused',
      sandbox: JSON.stringify({ failWith: { error: 'refused_for_mary@secret.example', retryable: false } }),
    });
    await lead({ sequence_id: connect, person: 'Limited', sandbox: JSON.stringify({ rateLimited: 1 }) });

    const before = await scrape();
    const summary = await tick(now);
    expect(summary).toMatchObject({ actions: 5, skipped: 1, failed: 2 });
    const after = await scrape();
    const delta = (labels: Record<string, string>) => valueOf(after, 'outreach_steps_total', labels) - valueOf(before, 'outreach_steps_total', labels);
    expect(delta({ channel: 'linkedin', outcome: 'ok' })).toBe(3);
    expect(delta({ channel: 'email', outcome: 'ok' })).toBe(2);
    expect(delta({ channel: 'email', outcome: 'skipped' })).toBe(1);
    expect(delta({ channel: 'linkedin', outcome: 'failed' })).toBe(1);
    expect(delta({ channel: 'linkedin', outcome: 'rate_limited' })).toBe(1);
    // The tick's pass was timed.
    expect(valueOf(after, 'outreach_engine_pass_duration_seconds_count') - valueOf(before, 'outreach_engine_pass_duration_seconds_count')).toBe(1);
    // Every outcome value is one of the fixed set.
    for (const s of after.filter((x) => x.name === 'outreach_steps_total'))
      expect(['ok', 'failed', 'skipped', 'rate_limited', 'waiting', 'needs_person', 'other']).toContain(s.labels.outcome);

    // A second tick with nothing due counts nothing more.
    await tick(now);
    expect(valueOf(await scrape(), 'outreach_steps_total', { channel: 'linkedin', outcome: 'ok' })).toBe(
      valueOf(after, 'outreach_steps_total', { channel: 'linkedin', outcome: 'ok' }),
    );
  });

  it('the outbox gauges rise while a webhook receiver refuses, and fall once it takes the deliveries', async () => {
    let down = true;
    const receiver: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(down ? 503 : 200).end());
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const worker = createDeliveryWorker({ db: t.db, config: t.config, clock: t.clock, cipher: t.cipher });
    try {
      // Whatever earlier tests left in the outbox goes first (no subscription wanted it).
      await worker.runOnce();
      expect(valueOf(await scrape(), 'outreach_outbox_pending')).toBe(0);
      expect(valueOf(await scrape(), 'outreach_outbox_oldest_age_seconds')).toBe(0);

      const ws = await createWorkspaceWithKey(t, 'Metrics outbox');
      const port = (receiver.address() as AddressInfo).port;
      const hook = await fetch(`${base}/api/v1/webhooks`, {
        method: 'POST',
        headers: { ...ws.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${port}/hook`, events: ['lead.invited'] }),
      });
      expect(hook.status).toBe(201);
      const account = await insertAccount(t.db, ws.workspaceId);
      const seq = await insertSequence(t.db, ws.workspaceId, { steps: steps(step('connect')) });
      const now = t.clock.now();
      for (let i = 0; i < 2; i++) await insertLead(t.db, ws.workspaceId, { account_id: account, sequence_id: seq, next_action_at: now });
      expect((await tick(now)).actions).toBe(2);
      const deliveriesBefore = await scrape();
      expect(valueOf(deliveriesBefore, 'outreach_outbox_pending')).toBe(2);

      // Five minutes on, the receiver still refuses: the deliveries wait for a retry and the oldest is 300 s old.
      t.clock.advance(300_000);
      const refused = await worker.runOnce();
      expect(refused.reports.map((r) => r.state)).toEqual(['pending', 'pending']);
      const waiting = await scrape();
      expect(valueOf(waiting, 'outreach_outbox_pending')).toBe(2);
      expect(valueOf(waiting, 'outreach_outbox_oldest_age_seconds')).toBe(300);
      t.clock.advance(600_000);
      expect(valueOf(await scrape(), 'outreach_outbox_oldest_age_seconds')).toBe(900);
      const counted = (s: typeof waiting, outcome: string) => valueOf(s, 'outreach_webhook_deliveries_total', { outcome });
      expect(counted(waiting, 'retry') - counted(deliveriesBefore, 'retry')).toBe(2);

      // The receiver is back: the retries go through and the backlog is gone.
      down = false;
      const delivered = await worker.runOnce();
      expect(delivered.reports.map((r) => r.state)).toEqual(['delivered', 'delivered']);
      const drained = await scrape();
      expect(valueOf(drained, 'outreach_outbox_pending')).toBe(0);
      expect(valueOf(drained, 'outreach_outbox_oldest_age_seconds')).toBe(0);
      expect(counted(drained, 'delivered') - counted(waiting, 'delivered')).toBe(2);
    } finally {
      await worker.close();
      await new Promise((r) => receiver.close(r));
    }
  });

  it('outreach_tasks_open counts the open tasks of every workspace at scrape time', async () => {
    const openTasks = async () =>
      Number(
        (
          await t.db
            .selectFrom('tasks')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('status', '=', 'open')
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = valueOf(await scrape(), 'outreach_tasks_open');
    expect(before).toBe(await openTasks());
    const { workspaceId } = await createWorkspaceWithKey(t, 'Metrics tasks');
    const task = async () => {
      const leadId = await insertLead(t.db, workspaceId, { person: 'Task Person' });
      const taskId = newId();
      await insertTasks(t.db, t.cipher, [
        {
          id: taskId,
          workspaceId,
          leadId,
          source: 'step',
          sequenceId: null,
          stepIndex: 0,
          variantKey: null,
          replyId: null,
          decision: null,
          kind: 'connect',
          channel: 'linkedin',
          action: 'invite',
          accountId: null,
          xAccountUserId: null,
          subject: null,
          text: 'Hi',
          actions: [],
          profileUrl: null,
          reason: 'test',
          idempotencyKey: `${leadId}:task`,
          dueAt: t.clock.now(),
        },
      ]);
      return taskId;
    };
    await task();
    const done = await task();
    await t.db.updateTable('tasks').set({ status: 'done' }).where('id', '=', done).execute();
    expect(valueOf(await scrape(), 'outreach_tasks_open')).toBe(before + 1);
  });

  it('outreach_db_pool_waiting is what waits for a pooled connection (always 0 on the embedded database)', async () => {
    expect(valueOf(await scrape(), 'outreach_db_pool_waiting')).toBe(0);
    if (dbEngine() === 'pglite') return;
    // The test pool has 10 connections: 13 slow queries leave 3 waiting while the first 10 sleep.
    const slow = Array.from({ length: 13 }, () => sql`SELECT pg_sleep(0.5)`.execute(t.db));
    try {
      await new Promise((r) => setTimeout(r, 100));
      expect(valueOf(await scrape(), 'outreach_db_pool_waiting')).toBe(3);
    } finally {
      await Promise.all(slow);
    }
    expect(valueOf(await scrape(), 'outreach_db_pool_waiting')).toBe(0);
  });

  it('labels the HTTP histogram with the route template, never an id; an unmatched path is `unmatched`; no label holds an id or address', async () => {
    const ws = await createWorkspaceWithKey(t, 'Metrics routes');
    const id = newId();
    const histogram = async () => parse((await get(`${base}/metrics`, { authorization: `Bearer ${TOKEN}` })).text);
    const count = (samples: Sample[], route: string, method = 'GET', statusClass = '4xx') =>
      valueOf(samples, 'http_request_duration_seconds_count', { route, method, status_class: statusClass });
    const before = await histogram();
    // A route with an id in its path: counted under its template, whatever the id and the answer.
    for (const path of [`/api/v1/x/leads/${id}`, `/api/v1/x/leads/${newId()}`]) expect((await get(`${base}${path}`, ws.auth)).status).toBe(404);
    expect((await get(`${base}/api/v1/webhooks/${id}`, { ...ws.auth })).status).toBe(404);
    const removed = await fetch(`${base}/api/v1/webhooks/${id}`, { method: 'DELETE', headers: ws.auth });
    expect(removed.status).toBe(404);
    // No route has /api/v1/leads/<id> or the made-up path below: `unmatched`, never the path.
    expect((await get(`${base}/api/v1/leads/${id}`, ws.auth)).status).toBe(404);
    expect((await get(`${base}/no/such/${id}/for-someone@example.com`)).status).toBe(404);
    const res = await get(`${base}/metrics`, { authorization: `Bearer ${TOKEN}` });
    const samples = parse(res.text);
    expect(count(samples, '/api/v1/x/leads/:id') - count(before, '/api/v1/x/leads/:id')).toBe(2);
    expect(count(samples, '/api/v1/webhooks/:id', 'DELETE') - count(before, '/api/v1/webhooks/:id', 'DELETE')).toBe(1);
    expect(count(samples, 'unmatched') - count(before, 'unmatched')).toBe(3);
    // The bucket series add up to the count: le="+Inf" holds every request.
    const inf = samples.find((s) => s.name === 'http_request_duration_seconds_bucket' && s.labels.route === '/api/v1/x/leads/:id' && s.labels.le === '+Inf');
    expect(inf?.value).toBe(count(samples, '/api/v1/x/leads/:id'));
    // Whatever ran in this file (leads with addresses, a refusal naming one, ids in paths): no label value carries one.
    for (const s of samples)
      for (const v of Object.values(s.labels)) {
        expect(v).not.toMatch(UUID);
        expect(v).not.toMatch(EMAIL);
      }
    expect(res.text).not.toContain('secret.example');
    expect(res.text).not.toContain(id);
  });
});

describe('with OUTREACH_METRICS_PORT: /metrics on a port of its own, without a token', () => {
  it('answers on its own port while the server runs, is 404 on the API port, and stops with the server', { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'outreach-metrics-'));
    const pg = dbEngine() === 'postgres' ? await createTestDatabase() : null;
    const env = quietServerEnv(dataDir, pg?.url, { OUTREACH_METRICS_PORT: 0 });
    const printed: string[] = [];
    const server = await startServer(loadConfig({}, env as never), { print: (l) => printed.push(l) });
    let stopped = false;
    try {
      expect(server.metricsPort).not.toBeNull();
      const metricsUrl = `http://127.0.0.1:${server.metricsPort!.port}/metrics`;
      expect(printed).toContain(`Metrics: ${metricsUrl}`);
      await get(`http://127.0.0.1:${server.port}/healthz`);
      const res = await get(metricsUrl);
      expect(res.status).toBe(200);
      expect(res.type.startsWith('text/plain; version=0.0.4')).toBe(true);
      const samples = parse(res.text);
      expect(valueOf(samples, 'http_request_duration_seconds_count', { route: '/healthz', method: 'GET', status_class: '2xx' })).toBeGreaterThan(0);
      expect(valueOf(samples, 'outreach_outbox_pending')).toBe(0);
      // Only /metrics on that port; no /metrics on the API port (no token is set).
      expect((await get(`http://127.0.0.1:${server.metricsPort!.port}/healthz`)).status).toBe(404);
      expect((await get(`http://127.0.0.1:${server.port}/metrics`)).status).toBe(404);

      await server.stop();
      stopped = true;
      await expect(fetch(metricsUrl)).rejects.toThrow();
    } finally {
      if (!stopped) await server.stop();
      await pg?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('outreach_watcher_polls_total', () => {
  it('counts each account poll of the shared watcher loop once, by channel and result code, never by account', async () => {
    const accounts = ['mbx_ok', 'mbx_auth', 'mbx_down', 'mbx_throws'];
    let claimed = false;
    // prom-client's get() answers its live entries: copied, so that `before` keeps the values it read.
    const counts = async () => (await metrics().watcherPolls.get()).values.map((v) => ({ labels: { ...v.labels }, value: v.value }));
    // A poll counted earlier in this process (another file's, when the suite shares a worker): deltas still hold.
    metrics().watcherPolls.inc({ channel: 'email', result: 'ok' });
    const before = await counts();
    const loop = runWatchLoop<string, { replies: number; error?: string }>(
      {
        claimDue: async () => (claimed ? [] : ((claimed = true), accounts)),
        keyOf: (a) => a,
        slot: 'mailboxes',
        batchSize: 10,
        concurrency: 4,
        poll: async (a) => {
          if (a === 'mbx_throws') throw new Error('imap said something about someone@example.com');
          return { replies: 1, ...(a === 'mbx_auth' ? { error: 'mailbox_auth_failed' } : a === 'mbx_down' ? { error: 'mailbox_unreachable' } : {}) };
        },
      },
      { now: new Date(), summary: emptySummary(), apply: async () => ({}) as never },
    );
    await expect(loop).rejects.toThrow();
    const after = await counts();
    const delta = (result: string) =>
      (after.find((v) => v.labels.channel === 'email' && v.labels.result === result)?.value ?? 0) -
      (before.find((v) => v.labels.channel === 'email' && v.labels.result === result)?.value ?? 0);
    expect([delta('ok'), delta('auth_failed'), delta('unreachable'), delta('error')]).toEqual([1, 1, 1, 1]);
    for (const v of after) expect(Object.values(v.labels).join(' ')).not.toMatch(/mbx_|@/);
  });
});

describe('`outreach worker` with OUTREACH_METRICS_PORT', () => {
  it('serves its engine series on its own port, and stops serving when it stops', { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'outreach-metrics-worker-'));
    const pg = dbEngine() === 'postgres' ? await createTestDatabase() : null;
    const env = {
      ...process.env,
      OUTREACH_DATA_DIR: dataDir,
      OUTREACH_SEED_DEMO: '0',
      OUTREACH_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      OUTREACH_ENGINE_INTERVAL: '1',
      OUTREACH_METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      ...(pg ? { DATABASE_URL: pg.url! } : {}),
    };
    const child = spawn(process.execPath, [resolve('bin/outreach.js'), 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      let port: number | null = null;
      const deadline = Date.now() + 90_000;
      while (port === null) {
        const line = output.split('\n').find((l) => l.includes('metrics served on /metrics'));
        if (line) port = (JSON.parse(line) as { port: number }).port;
        else if (child.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not serve metrics: ${output}`);
        else await new Promise((r) => setTimeout(r, 100));
      }
      const url = `http://127.0.0.1:${port}/metrics`;
      // The worker's engine loop passes at once, then every second: its pass histogram is what this port is for.
      await expect
        .poll(async () => valueOf(parse((await get(url)).text), 'outreach_engine_pass_duration_seconds_count'), { timeout: 30_000 })
        .toBeGreaterThan(0);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      await expect(fetch(url)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await pg?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('http_request_duration_seconds', () => {
  it("writes the very lines prom-client's own Histogram writes for the same requests", async () => {
    const bounds = [0.001, 0.01, 0.1, 1];
    const ours = new Registry();
    const lean = new RequestHistogram('http_request_duration_seconds', 'help text', bounds);
    ours.registerMetric(lean as unknown as Histogram);
    const theirs = new Registry();
    const reference = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'help text',
      labelNames: ['route', 'method', 'status_class'],
      buckets: bounds,
      registers: [theirs],
    });
    const a = { route: '/api/v1/x/leads/:id', method: 'GET', status_class: '2xx' };
    const b = { route: 'unmatched', method: 'POST', status_class: '4xx' };
    const cells = { a: lean.cell(a), b: lean.cell(b) };
    // On a bound, between bounds, above the last one.
    for (const [labels, seconds] of [
      [a, 0.001],
      [a, 0.0005],
      [a, 0.05],
      [a, 2],
      [b, 0.01],
      [b, 0.3],
    ] as const) {
      lean.observe(labels === a ? cells.a : cells.b, seconds);
      reference.observe(labels, seconds);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    // The JSON form too (prom-client adds an empty `exemplar` to its bucket values; no exemplars are kept here).
    const withoutExemplars = (json: Awaited<ReturnType<Registry['getMetricsAsJSON']>>) =>
      json.map((m) => ({ ...m, values: m.values.map(({ exemplar: _e, ...v }: Record<string, unknown>) => v) }));
    expect(withoutExemplars(await ours.getMetricsAsJSON())).toEqual(withoutExemplars(await theirs.getMetricsAsJSON()));
    lean.reset();
    reference.reset();
    reference.zero(a);
    reference.zero(b);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { dbEngine } from '../helpers/test-database.js';
import { childProcesses, demoServeEnv } from '../helpers/cli-process.js';

// Traces (issue 30 §2, src/lib/tracing.ts): the real server (`outreach serve`, a child process) exports to an OTLP/HTTP
// receiver written here. Spans carry the route template (never the id in the URL), SQL statements are child spans named
// by their kind (never the SQL text or a value), an incoming traceparent is continued, the request's log line carries
// the span's trace id, and a collector that stops answering slows no request. One run is enough: PGlite project only.
const once = dbEngine() === 'postgres';

const bin = path.resolve('bin/outreach.js');
const { children, cleanups } = childProcesses();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(what: string, check: () => T | undefined | null | false, timeoutMs: number, output?: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${output ? `: ${output()}` : ''}`);
    await sleep(50);
  }
}

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  status: number;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };

const attributesOf = (list: OtlpAttribute[] | undefined) =>
  Object.fromEntries(
    (list ?? []).map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue)),
    ]),
  ) as Record<string, string | number | boolean>;

/**
 * A minimal OTLP/HTTP trace receiver: POST /v1/traces with the JSON encoding (what exporter-trace-otlp-http sends),
 * gzip or not. `hang()` makes it a collector that accepts and never answers, the worst an exporter can meet.
 */
async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  let hanging = false;
  const held = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (hanging) {
        held.add(res);
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      contentTypes.add(String(req.headers['content-type']));
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const doc = JSON.parse(body.toString('utf8')) as {
        resourceSpans?: {
          resource?: { attributes?: OtlpAttribute[] };
          scopeSpans?: {
            spans?: {
              traceId: string;
              spanId: string;
              parentSpanId?: string;
              name: string;
              kind: number;
              status?: { code?: number };
              attributes?: OtlpAttribute[];
            }[];
          }[];
        }[];
      };
      for (const rs of doc.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              status: s.status?.code ?? 0,
              attributes: attributesOf(s.attributes),
              resource,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
    hang: () => (hanging = true),
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `outreach serve` on a fresh embedded database with the demo world, its JSON log lines (stdout) collected. */
async function startServer(env: Record<string, string>) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-traces-'));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = spawn(process.execPath, [bin, 'serve'], {
    env: demoServeEnv(dataDir, { OUTREACH_SHUTDOWN_TIMEOUT: '3', DATABASE_URL: '', LOG_LEVEL: 'debug', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(server);
  let stderr = '';
  let stdout = '';
  server.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  server.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((r) => server.once('exit', (code) => r(code)));
  await waitFor(
    'the server to listen and show the demo key',
    () => /shown this once[^\n]*\n\s+\S+/.test(stderr),
    120_000,
    () => stderr,
  );
  const port = Number(/Listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)![1]);
  const key = /shown this once[^\n]*\n\s+(\S+)/.exec(stderr)![1];
  const logLines = () =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { server, url: `http://127.0.0.1:${port}`, key, logLines, output: () => stderr, exited };
}

const DEMO = JSON.parse(fs.readFileSync('examples/demo-world.json', 'utf8')) as { workspaces: { leads: { id: string }[] }[] };
const LEAD_ID = DEMO.workspaces[0].leads[0].id;

/** An OTLP receiver and a server exporting to it (a batch every 50 ms), `env` over that; the receiver closes after the file. */
async function startTracedServer(env: Record<string, string>) {
  const receiver = await startOtlpReceiver();
  cleanups.push(() => receiver.close());
  const s = await startServer({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', ...env });
  return { receiver, s, auth: { authorization: `Bearer ${s.key}` } };
}

describe.skipIf(once)('OpenTelemetry traces (issue 30 §2)', () => {
  it(
    'rule: a request is a span named by its route template with its SQL statements as children (kind only), the log line carries its trace id, a traceparent is continued, and a collector that stops answering slows nothing',
    { timeout: 180_000 },
    async () => {
      const { receiver, s, auth } = await startTracedServer({
        OTEL_SERVICE_NAME: 'outreach-trace-test',
        // One engine pass a second: engine.pass spans with their own SQL children.
        OUTREACH_ENGINE_INTERVAL: '1',
      });

      // The keyed read, with a request id to find its log lines by.
      const read = await fetch(`${s.url}/api/v1/x/leads/${LEAD_ID}`, { headers: { ...auth, 'x-request-id': 'trace-keyed-read' } });
      expect(read.status).toBe(200);

      const server = await waitFor(
        'the keyed read span',
        () => receiver.spans.find((x) => x.name === 'HTTP GET /api/v1/x/leads/:id' && x.attributes['http.response.status_code'] === 200),
        20_000,
        () => JSON.stringify(receiver.spans.map((x) => x.name)),
      );
      expect(receiver.contentTypes).toEqual(new Set(['application/json']));
      expect(server.kind).toBe(2); // SERVER
      expect(server.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/api/v1/x/leads/:id', 'url.scheme': 'http' });
      expect(server.parentSpanId).toBe('');
      expect(server.resource['service.name']).toBe('outreach-trace-test');
      expect(server.traceId).toMatch(/^[0-9a-f]{32}$/);

      // The log lines of this request (Fastify's incoming and completed lines) carry the span's trace and span ids.
      const lines = await waitFor(
        'the request log lines',
        () => {
          const mine = s.logLines().filter((l) => l.reqId === 'trace-keyed-read');
          return mine.some((l) => l.msg === 'request completed') && mine;
        },
        10_000,
        () => JSON.stringify(s.logLines().slice(-5)),
      );
      const completed = lines.find((l) => l.msg === 'request completed')!;
      expect(completed.trace_id).toBe(server.traceId);
      expect(completed.span_id).toBe(server.spanId);
      expect(lines.find((l) => l.msg === 'incoming request')?.trace_id).toBe(server.traceId);

      // A request that ends before any SQL (the key is cached after the first) may have none; this one's first statements:
      // the read of the lead at least, each a CLIENT child named by its kind.
      const sql = await waitFor(
        'SQL child spans of the keyed read',
        () => {
          const found = receiver.spans.filter((x) => x.parentSpanId === server.spanId);
          return found.length > 0 && found;
        },
        10_000,
      );
      for (const span of sql) {
        expect(span.traceId).toBe(server.traceId);
        expect(span.kind).toBe(3); // CLIENT
        expect(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'BEGIN', 'COMMIT', 'WITH']).toContain(span.name);
        expect(span.attributes['db.system.name']).toBe('postgresql');
        expect(span.attributes['db.operation.name']).toBe(span.name);
        expect(Object.keys(span.attributes).sort()).toEqual(expect.arrayContaining(['db.operation.name', 'db.system.name']));
        expect(Object.keys(span.attributes).every((k) => ['db.system.name', 'db.operation.name', 'db.collection.name'].includes(k))).toBe(true);
      }
      expect(sql.some((x) => x.name === 'SELECT' && x.attributes['db.collection.name'] === 'leads')).toBe(true);

      // A POST whose body arrives after its headers: the handler runs once the body is read, from the socket's events,
      // and its statements are still the span's children.
      const body = JSON.stringify({ event: 'ping' });
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(`${s.url}/api/v1/events/trigger`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json', 'content-length': String(body.length), 'x-request-id': 'trace-post' },
        });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.flushHeaders();
        setTimeout(() => req.end(body), 200);
      });
      expect(status).toBe(202);
      const post = await waitFor('the trigger span', () => receiver.spans.find((x) => x.name === 'HTTP POST /api/v1/events/trigger'), 10_000);
      await waitFor('an INSERT child of the POST', () => receiver.spans.find((x) => x.parentSpanId === post.spanId && x.name === 'INSERT'), 10_000);

      // An incoming W3C traceparent (sampled) is continued: same trace id, the caller's span as parent.
      const callerTrace = randomBytes(16).toString('hex');
      const callerSpan = randomBytes(8).toString('hex');
      const continued = await fetch(`${s.url}/api/v1/x/leads/${LEAD_ID}`, {
        headers: { ...auth, 'x-request-id': 'trace-continued', traceparent: `00-${callerTrace}-${callerSpan}-01` },
      });
      expect(continued.status).toBe(200);
      const child = await waitFor('the continued span', () => receiver.spans.find((x) => x.traceId === callerTrace && x.kind === 2), 10_000);
      expect(child.parentSpanId).toBe(callerSpan);
      expect(child.name).toBe('HTTP GET /api/v1/x/leads/:id');
      await waitFor(
        'the continued request log line',
        () => s.logLines().find((l) => l.reqId === 'trace-continued' && l.msg === 'request completed' && l.trace_id === callerTrace),
        10_000,
      );

      // A path no route has: a span without a route, the raw path nowhere.
      expect((await fetch(`${s.url}/api/v1/nowhere/${LEAD_ID}`, { headers: auth })).status).toBe(404);
      const notFound = await waitFor(
        'the 404 span',
        () => receiver.spans.find((x) => x.kind === 2 && x.attributes['http.response.status_code'] === 404),
        10_000,
      );
      expect(notFound.name).toBe('HTTP GET');
      expect(notFound.attributes['http.route']).toBeUndefined();

      // Engine passes: engine.pass spans, with SQL statements (and channel calls, when a step is due) as children.
      const pass = await waitFor(
        'an engine.pass span with children',
        () => receiver.spans.find((x) => x.name === 'engine.pass' && receiver.spans.some((c) => c.parentSpanId === x.spanId)),
        20_000,
        () => JSON.stringify([...new Set(receiver.spans.map((x) => x.name))]),
      );
      expect(pass.parentSpanId).toBe('');
      expect(pass.attributes['outreach.pass.actions']).toEqual(expect.any(Number));
      for (const c of receiver.spans.filter((x) => x.name.startsWith('channel.'))) {
        expect(Object.keys(c.attributes).every((k) => ['outreach.channel', 'outreach.action.kind', 'outreach.outcome', 'outreach.delivery'].includes(k))).toBe(
          true,
        );
      }

      // Nothing in any span names the lead, the key, or carries SQL text or a literal.
      const everything = JSON.stringify(receiver.spans);
      expect(everything).not.toContain(LEAD_ID);
      expect(everything).not.toContain(s.key);
      expect(everything).not.toMatch(/db\.query\.text|db\.statement|\bselect\b.*\bfrom\b/i);

      // The collector stops answering (accepts, never replies; the exporter's own timeout is 10 s): requests still answer
      // at once, one after another.
      receiver.hang();
      const timings: number[] = [];
      for (let i = 0; i < 40; i++) {
        const started = performance.now();
        const res = await fetch(`${s.url}/api/v1/x/leads/${LEAD_ID}`, { headers: auth });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
        timings.push(performance.now() - started);
        if (i % 10 === 9) await sleep(200); // let the batch processor try (and hang on) a few exports meanwhile
      }
      timings.sort((a, b) => a - b);
      expect(timings[timings.length - 1]).toBeLessThan(1_000);
      expect(timings[Math.floor(timings.length / 2)]).toBeLessThan(100);

      // And a stop does not wait on the hanging collector past the tracing shutdown's bound (2 s) and the drain time.
      const stopAt = Date.now();
      s.server.kill('SIGTERM');
      expect(await s.exited).toBe(0);
      expect(Date.now() - stopAt).toBeLessThan(3_000 + 2_000 + 2_000);
    },
  );

  it(
    'rule: OTEL_TRACES_SAMPLER=parentbased_traceidratio with OTEL_TRACES_SAMPLER_ARG=0 records no request of its own choosing, and still follows a sampled caller',
    { timeout: 180_000 },
    async () => {
      const { receiver, s, auth } = await startTracedServer({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
      for (let i = 0; i < 5; i++)
        expect((await fetch(`${s.url}/api/v1/x/leads/${LEAD_ID}`, { headers: { ...auth, 'x-request-id': `unsampled-${i}` } })).status).toBe(200);
      const callerTrace = randomBytes(16).toString('hex');
      const sampled = await fetch(`${s.url}/api/v1/x/leads/${LEAD_ID}`, {
        headers: { ...auth, 'x-request-id': 'sampled', traceparent: `00-${callerTrace}-${randomBytes(8).toString('hex')}-01` },
      });
      expect(sampled.status).toBe(200);
      const span = await waitFor('the sampled span', () => receiver.spans.find((x) => x.traceId === callerTrace && x.kind === 2), 10_000);
      expect(span.resource['service.name']).toBe('workspace-outreach');

      // Sampled and unsampled requests at once: the async context is on only while a kept span is open (src/lib/tracing.ts),
      // and each kept request still gets its own statements, and only those.
      const traces = Array.from({ length: 8 }, () => randomBytes(16).toString('hex'));
      const answers = await Promise.all([
        ...traces.map((t) =>
          fetch(`${s.url}/api/v1/x/leads/${LEAD_ID}`, { headers: { ...auth, traceparent: `00-${t}-${randomBytes(8).toString('hex')}-01` } }),
        ),
        ...Array.from({ length: 16 }, () => fetch(`${s.url}/api/v1/x/leads/${LEAD_ID}`, { headers: auth })),
      ]);
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      for (const t of traces) {
        const server = await waitFor('a concurrent sampled span', () => receiver.spans.find((x) => x.traceId === t && x.kind === 2), 10_000);
        const sql = await waitFor(
          'its SQL child',
          () => {
            const found = receiver.spans.filter((x) => x.traceId === t && x.kind === 3);
            return found.length > 0 && found;
          },
          10_000,
        );
        expect(sql.every((x) => x.parentSpanId === server.spanId)).toBe(true);
      }
      await sleep(300);
      // Only the callers' traces reached the collector; the unsampled requests' log lines have no trace id.
      expect(new Set(receiver.spans.map((x) => x.traceId))).toEqual(new Set([callerTrace, ...traces]));
      const unsampled = s.logLines().filter((l) => String(l.reqId).startsWith('unsampled-'));
      expect(unsampled.length).toBeGreaterThanOrEqual(10);
      expect(unsampled.every((l) => l.trace_id === undefined)).toBe(true);
      s.server.kill('SIGTERM');
      await s.exited;
    },
  );
});

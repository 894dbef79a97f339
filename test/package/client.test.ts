import http from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createRetryingFetch, isRetrySafe, parseRetryAfter, type RetryEvent } from '../../src/index.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertReviewPlay, setWorkspaceState } from '../helpers/factories.js';

// The typed client against the real server on a real port, with a small proxy in front of it that can answer
// 503 or 429 instead of the server (the request never arrives) or after it (the server acted; the answer is lost).

interface Fault {
  method: string;
  path: RegExp;
  status: number;
  headers?: Record<string, string>;
  /** 'after': forward, let the server act, then drop its answer and send the fault instead. */
  when: 'before' | 'after';
}

function startProxy(target: number) {
  const faults: Fault[] = [];
  const seen: { method: string; path: string }[] = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    seen.push({ method: req.method ?? '', path });
    const i = faults.findIndex((f) => f.method === req.method && f.path.test(path));
    const fault = i >= 0 ? faults.splice(i, 1)[0] : undefined;
    const answerFault = () =>
      res.writeHead(fault!.status, { 'content-type': 'application/json', ...fault!.headers }).end(JSON.stringify({ error: 'injected' }));
    if (fault?.when === 'before') {
      req.resume();
      req.on('end', answerFault);
      return;
    }
    const upstream = http.request({ host: '127.0.0.1', port: target, method: req.method, path, headers: req.headers }, (up) => {
      if (fault) {
        up.resume();
        up.on('end', answerFault);
        return;
      }
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    req.pipe(upstream);
  });
  return new Promise<{ url: string; faults: Fault[]; seen: typeof seen; close: () => Promise<void> }>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, faults, seen, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

let t: TestApp;
let proxy: Awaited<ReturnType<typeof startProxy>>;
let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
const retries: RetryEvent[] = [];

beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  proxy = await startProxy((t.app.server.address() as AddressInfo).port);
  ws = await createWorkspaceWithKey(t, 'Client test');
});
afterAll(async () => {
  await proxy?.close();
  await t?.close();
});

const clientOf = (extra: Partial<Parameters<typeof createClient>[0]> = {}) =>
  createClient({ baseUrl: proxy.url, apiKey: ws.key, retry: { baseDelayMs: 10 }, onRetry: (e) => retries.push(e), ...extra });

const countOf = (method: string, path: RegExp) => proxy.seen.filter((s) => s.method === method && path.test(s.path)).length;

describe('typed client (issue 17: generated types, openapi-fetch runtime, the spec retry rules)', () => {
  it('reads through the typed paths with the key, and a trailing /api/v1 in baseUrl is accepted', async () => {
    const client = createClient({ baseUrl: `${proxy.url}/api/v1/`, apiKey: ws.key });
    const { data, error, response } = await client.GET('/api/v1/workspaces');
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    expect(data!.workspaces.map((w) => w.id)).toContain(ws.workspaceId);
  });

  it('an error answer comes back as `error` with the spec body, not as an exception', async () => {
    const client = createClient({ baseUrl: proxy.url, apiKey: 'ows_not_a_real_key' });
    const { data, error, response } = await client.GET('/api/v1/workspaces');
    expect(data).toBeUndefined();
    expect(response.status).toBe(401);
    expect(error).toMatchObject({ error: 'unauthorized' });
  });

  it('the Team selector option sends X-Workspace-Client on every call', async () => {
    const other = await createWorkspaceWithKey(t, 'Team client');
    await setWorkspaceState(t.db, other.workspaceId, { xChannelEnabled: true });
    await t.services.workspaces.addTeamLink({ ownerWorkspaceId: ws.workspaceId, clientWorkspaceId: other.workspaceId, role: 'admin' });
    const asClient = clientOf({ workspaceClient: other.workspaceId });
    const { data, response } = await asClient.GET('/api/v1/x/readiness');
    expect(response.status).toBe(200);
    expect(data!.workspaceId).toBe(other.workspaceId);
  });

  it('a read is retried after a 503 and succeeds; onRetry reports the status', async () => {
    retries.length = 0;
    const before = countOf('GET', /^\/api\/v1\/workspaces$/);
    proxy.faults.push({ method: 'GET', path: /^\/api\/v1\/workspaces$/, status: 503, when: 'before' });
    const { data, response } = await clientOf().GET('/api/v1/workspaces');
    expect(response.status).toBe(200);
    expect(data!.workspaces.length).toBeGreaterThan(0);
    expect(countOf('GET', /^\/api\/v1\/workspaces$/) - before).toBe(2);
    expect(retries).toEqual([expect.objectContaining({ method: 'GET', attempt: 1, status: 503 })]);
  });

  it('a 429 is retried no sooner than its Retry-After', async () => {
    retries.length = 0;
    proxy.faults.push({ method: 'GET', path: /^\/api\/v1\/workspaces$/, status: 429, headers: { 'retry-after': '1' }, when: 'before' });
    const started = Date.now();
    const { response } = await clientOf().GET('/api/v1/workspaces');
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(retries).toEqual([expect.objectContaining({ status: 429, delayMs: 1000 })]);
  });

  it('a Retry-After longer than maxRetryAfterMs is not waited for: the 429 is returned', async () => {
    proxy.faults.push({ method: 'GET', path: /^\/api\/v1\/workspaces$/, status: 429, headers: { 'retry-after': '120' }, when: 'before' });
    const { response, error } = await clientOf().GET('/api/v1/workspaces');
    expect(response.status).toBe(429);
    expect(error).toMatchObject({ error: 'injected' });
  });

  it('reads give up after maxRetries and return the last answer', async () => {
    for (let i = 0; i < 3; i++) proxy.faults.push({ method: 'GET', path: /^\/api\/v1\/sequences$/, status: 502, when: 'before' });
    const before = countOf('GET', /^\/api\/v1\/sequences$/);
    const { response } = await clientOf({ retry: { maxRetries: 2, baseDelayMs: 1 } }).GET('/api/v1/sequences');
    expect(response.status).toBe(502);
    expect(countOf('GET', /^\/api\/v1\/sequences$/) - before).toBe(3);
    proxy.faults.length = 0;
  });

  it('a mutation without an idempotency guarantee is sent once: a 503 on creating a webhook is returned, not retried', async () => {
    proxy.faults.push({ method: 'POST', path: /^\/api\/v1\/webhooks$/, status: 503, when: 'before' });
    const before = countOf('POST', /^\/api\/v1\/webhooks$/);
    const { response } = await clientOf().POST('/api/v1/webhooks', { body: { url: 'https://receiver.example.com/hook', events: ['lead.enrolled'] } as never });
    expect(response.status).toBe(503);
    expect(countOf('POST', /^\/api\/v1\/webhooks$/) - before).toBe(1);
  });

  it('an import (idempotent by its requestId) whose answer was lost is retried and answers replayed: true', async () => {
    await setWorkspaceState(t.db, ws.workspaceId, { xChannelEnabled: true });
    const { play } = await insertReviewPlay(t.db, ws.workspaceId);
    proxy.faults.push({ method: 'POST', path: /\/import$/, status: 503, when: 'after' });
    const before = countOf('POST', /\/import$/);
    const { data, response } = await clientOf().POST('/api/v1/plays/{id}/import', {
      params: { path: { id: play.id } },
      body: { requestId: 'client-retry-0001', expectedRevision: play.revision, leads: [{ xUserId: '4242424242', name: 'Ada' }] },
    });
    expect(response.status).toBe(200);
    expect(countOf('POST', /\/import$/) - before).toBe(2);
    expect(data).toMatchObject({ requestId: 'client-retry-0001', replayed: true, enrolled: false });
    expect(data!.results).toEqual([expect.objectContaining({ xUserId: '4242424242', result: 'imported' })]);
  });

  it('a per-attempt timeout: a read that hangs is retried, and the last timeout is an error naming the limit', async () => {
    const hang = http.createServer(() => undefined);
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', () => r()));
    try {
      const events: RetryEvent[] = [];
      const client = createClient({
        baseUrl: `http://127.0.0.1:${(hang.address() as AddressInfo).port}`,
        apiKey: ws.key,
        timeoutMs: 200,
        retry: { maxRetries: 1, baseDelayMs: 1 },
        onRetry: (e) => events.push(e),
      });
      await expect(client.GET('/api/v1/workspaces')).rejects.toThrow(/timed out after 200 ms/);
      expect(events).toHaveLength(1);
    } finally {
      hang.closeAllConnections();
      await new Promise<void>((r) => hang.close(() => r()));
    }
  });

  // nodejs/undici#4068: a signal handed to a copied Request is followed through weak references, and after a
  // garbage collection its abort was lost and the read hung (a CI run on Node 22 waited 60 s). The collector runs
  // every 10 ms here so that it certainly runs between the send and the deadline.
  it("the per-attempt timeout and the caller's abort still end a hanging read when the garbage collector runs meanwhile", async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const hang = http.createServer(() => undefined);
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', () => r()));
    const collecting = setInterval(gc, 10);
    try {
      const url = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/api/v1/workspaces`;
      const fetchWithTimeout = createRetryingFetch({ timeoutMs: 300, retry: false });
      const started = Date.now();
      await expect(fetchWithTimeout(new Request(url))).rejects.toThrow(/timed out after 300 ms/);
      expect(Date.now() - started).toBeLessThan(3000);

      const caller = new AbortController();
      setTimeout(() => caller.abort(new Error('the caller gave up')), 100);
      const fetchWithoutTimeout = createRetryingFetch({ timeoutMs: 60_000, retry: false });
      await expect(fetchWithoutTimeout(new Request(url, { signal: caller.signal }))).rejects.toThrow('the caller gave up');
    } finally {
      clearInterval(collecting);
      hang.closeAllConnections();
      await new Promise<void>((r) => hang.close(() => r()));
    }
  }, 10_000);
});

describe('retry rules in isolation', () => {
  const h = (init: Record<string, string> = {}) => new Headers(init);
  it('reads and read-only POSTs are retry-safe; mutations only when idempotent', () => {
    const base = 'http://x/api/v1';
    expect(isRetrySafe('GET', `${base}/leads`, h())).toBe(true);
    expect(isRetrySafe('POST', `${base}/plays/p/candidates/lookup`, h())).toBe(true);
    expect(isRetrySafe('POST', `${base}/x/eligibility`, h())).toBe(true);
    expect(isRetrySafe('POST', `${base}/plays/p/import`, h())).toBe(true);
    expect(isRetrySafe('POST', `${base}/x/leads/l/stop`, h())).toBe(true);
    expect(isRetrySafe('POST', `${base}/replies/r/decide`, h({ 'idempotency-key': 'k-1' }))).toBe(true);
    expect(isRetrySafe('POST', `${base}/replies/r/decide`, h())).toBe(false);
    expect(isRetrySafe('POST', `${base}/plays/p/enroll`, h())).toBe(false);
    expect(isRetrySafe('POST', `${base}/webhooks`, h())).toBe(false);
    expect(isRetrySafe('DELETE', `${base}/webhooks/w`, h())).toBe(false);
    expect(isRetrySafe('PATCH', `${base}/sequences/s/status`, h())).toBe(false);
  });

  it('Retry-After is read as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
  });
});

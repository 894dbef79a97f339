import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp } from '../../src/app/build-app.js';
import { redactUrl } from '../../src/app/plugins/http-edge.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';

let t: TestApp;
let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let base: string;
let port: number;
const logLines: string[] = [];
let logged: Awaited<ReturnType<typeof buildApp>>;

beforeAll(async () => {
  t = await buildTestApp();
  ws = await createWorkspaceWithKey(t, 'Edge Co');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as net.AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  // The same app with a real logger, to read every line it writes.
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: 'trace' }, sink);
  logged = await buildApp({ config: t.config, db: t.db, services: t.services, clock: t.clock, logger });
  await logged.ready();
});
afterAll(async () => {
  await logged?.close();
  await t?.close();
});

const resolve = (contentType: string, body: string, headers: Record<string, string> = ws.auth) =>
  fetch(`${base}/api/v1/x/users/resolve`, { method: 'POST', headers: { ...headers, 'content-type': contentType }, body });

describe('JSON media types (issue 13 defect 3)', () => {
  it('accepts application/json with any parameters and application/*+json; the body is parsed and validated', async () => {
    for (const ct of [
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'Application/JSON ; charset="utf-8"',
      'application/json; foo=bar; charset=utf-8',
      'application/vnd.api+json',
      'application/merge-patch+json; charset=utf-8',
    ]) {
      const res = await resolve(ct, '{"username":"someone","bogus":1}');
      expect(res.status, ct).toBe(400);
      const body = await res.json();
      expect(body.error, ct).toBe('invalid_request');
      expect(body.message, ct).toContain('bogus');
    }
  });
  it('still refuses other media types with 400 unsupported_content_type, as documented', async () => {
    for (const ct of ['text/plain', 'application/jsonp', 'application/x-www-form-urlencoded', 'text/json; charset=utf-8']) {
      const res = await resolve(ct, '{"username":"someone"}');
      expect(res.status, ct).toBe(400);
      expect((await res.json()).error, ct).toBe('unsupported_content_type');
    }
  });
});

describe('the auth scheme is case-insensitive (issue 13 defect 4, RFC 9110 §11.1)', () => {
  it('bearer, BEARER and Bearer all work; another scheme still answers 401', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer', 'bEaReR']) {
      const res = await fetch(`${base}/api/v1/workspaces`, { headers: { authorization: `${scheme} ${ws.key}` } });
      expect(res.status, scheme).toBe(200);
    }
    expect((await fetch(`${base}/api/v1/workspaces`, { headers: { authorization: `Token ${ws.key}` } })).status).toBe(401);
  });
});

/** A client that writes its whole request before it reads anything (curl, many SDKs): it only sees what survives. */
function sendWholeRequestThenRead(head: string, bodyBytes: number): Promise<{ response: string; error?: string }> {
  return new Promise((resolveResult) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.pause();
    socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    socket.on('close', () => resolveResult({ response: Buffer.concat(chunks).toString('latin1'), error }));
    socket.on('data', (c) => chunks.push(c));
    socket.on('connect', async () => {
      const write = (b: Buffer | string) => new Promise<void>((r) => (socket.write(b) ? r() : socket.once('drain', () => r())));
      await write(head);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      for (let sent = 0; sent < bodyBytes && !socket.destroyed; sent += chunk.length) {
        await write(chunk);
        await new Promise((r) => setTimeout(r, 1));
      }
      await new Promise((r) => setTimeout(r, 100));
      socket.resume();
      socket.end();
    });
  });
}

describe('refused requests: the client reads the answer (issue 13 defect 5)', () => {
  it('413 reaches a client that sends its whole 3 MB body before reading', async () => {
    const size = 3 * 1024 * 1024;
    const head = `POST /api/v1/x/users/resolve HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${ws.key}\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\n\r\n`;
    const { response, error } = await sendWholeRequestThenRead(head, size);
    expect(error).toBeUndefined();
    expect(response).toMatch(/^HTTP\/1\.1 413 /);
    expect(response).toContain('"error":"body_too_large"');
  });

  it('413 reaches fetch (undici) for a buffered and for a streamed body', async () => {
    const buffered = await resolve('application/json', JSON.stringify({ username: 'x'.repeat(2_000_000) }));
    expect(buffered.status).toBe(413);
    expect(await buffered.json()).toMatchObject({ error: 'body_too_large' });
    const chunk = new Uint8Array(64 * 1024).fill(97);
    let sent = 0;
    const body = new ReadableStream({
      pull(c) {
        if (sent >= 3_000_000) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    const streamed = await fetch(`${base}/api/v1/x/users/resolve`, {
      method: 'POST',
      headers: { ...ws.auth, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toMatchObject({ error: 'body_too_large' });
  });

  it('414 with the JSON error body, for a long URL and for one past the 16 KiB header limit', async () => {
    for (const length of [10_000, 20_000]) {
      const res = await fetch(`${base}/api/v1/workspaces?filler=${'a'.repeat(length)}`, { headers: ws.auth });
      expect(res.status, String(length)).toBe(414);
      expect(await res.json(), String(length)).toMatchObject({ error: 'uri_too_long', message: expect.stringContaining('URL') });
    }
  });

  it('431 with the JSON error body for headers past the limit', async () => {
    const res = await fetch(`${base}/api/v1/workspaces`, { headers: { ...ws.auth, 'x-filler': 'a'.repeat(20_000) } });
    expect(res.status).toBe(431);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({ error: 'headers_too_large' });
  });

  it('431 reaches a client that keeps sending after its oversized headers', async () => {
    const head = `POST /api/v1/x/users/resolve HTTP/1.1\r\nhost: x\r\nx-filler: ${'a'.repeat(20_000)}\r\ncontent-length: 1000000\r\n\r\n`;
    const { response } = await sendWholeRequestThenRead(head, 1_000_000);
    expect(response).toMatch(/^HTTP\/1\.1 431 /);
    expect(response).toContain('"error":"headers_too_large"');
  });
});

describe('a key in the query string (issue 13 defect 6, issue 17 finding 6)', () => {
  it('answers 400 credentials_in_query for api_key, key, access_token and a key under any name, without echoing it', async () => {
    for (const query of [`api_key=${ws.key}`, `key=${ws.key}`, `access_token=${ws.key}`, `API_KEY=${ws.key}`, `x=${ws.key}`, `apikey=anything`]) {
      const res = await fetch(`${base}/api/v1/workspaces?${query}`, { headers: ws.auth });
      const text = await res.text();
      expect(res.status, query).toBe(400);
      expect(JSON.parse(text).error, query).toBe('credentials_in_query');
      expect(text).not.toContain(ws.key);
    }
    // Also without a header, on public and unknown routes: the key is refused before anything else.
    expect((await fetch(`${base}/api/v1/openapi.json?api_key=${ws.key}`)).status).toBe(400);
    expect((await fetch(`${base}/nowhere?access_token=${ws.key}`)).status).toBe(400);
  });

  it('never writes such a parameter to a log line', async () => {
    logLines.length = 0;
    const res = await logged.inject({ method: 'GET', url: `/api/v1/workspaces?api_key=${ws.key}&token=secret-one&limit=5`, headers: ws.auth });
    expect(res.statusCode).toBe(400);
    await logged.inject({ method: 'GET', url: `/api/v1/workspaces?x=${ws.key}`, headers: ws.auth });
    const all = logLines.join('');
    expect(logLines.length).toBeGreaterThan(0);
    expect(all).not.toContain(ws.key);
    expect(all).not.toContain('secret-one');
    expect(all).toContain('api_key=[redacted]');
    expect(all).toContain('limit=5');
  });

  it('redactUrl keeps other parameters as sent', () => {
    expect(redactUrl('/a?b=1&c=2')).toBe('/a?b=1&c=2');
    expect(redactUrl('/a?b=1&api_key=zzz&c')).toBe('/a?b=1&api_key=[redacted]&c');
    expect(redactUrl('/a?password=p')).toBe('/a?password=[redacted]');
    // A search names people and companies: personal data stays out of the request log.
    expect(redactUrl('/api/v1/leads?q=Ada%20Lovelace&limit=5')).toBe('/api/v1/leads?q=[redacted]&limit=5');
    // An OAuth callback's authorization code and single-use state (Connect X account) are secrets while they live.
    expect(redactUrl('/console/accounts/x/callback?state=s3cr3t&code=c0de')).toBe('/console/accounts/x/callback?state=[redacted]&code=[redacted]');
  });
});

describe('X-Request-Id', () => {
  it('is on every answer, errors from the edge and from the auth hook included', async () => {
    for (const [url, headers] of [
      ['/api/v1/workspaces', ws.auth],
      ['/api/v1/workspaces', {}],
      [`/api/v1/workspaces?api_key=${ws.key}`, {}],
      ['/nowhere', {}],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url, headers: { ...headers, 'x-request-id': 'abc-123' } });
      expect(res.headers['x-request-id'], url).toBe('abc-123');
    }
  });
});

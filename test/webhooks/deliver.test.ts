import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildDeliveryRequest,
  classifyStatus,
  createReceiverAgents,
  deliverOnce,
  MAX_ATTEMPTS,
  RETRY_DELAYS_MS,
  WEBHOOK_USER_AGENT,
} from '../../src/webhooks/deliver.js';
import { verifyWebhook } from '../../src/webhooks/sign.js';
import { selfSignedCert } from './receiver.js';

// Neither name resolves through the system resolver (.test is reserved), so a
// successful delivery proves the socket went to the pinned address.
const HOOK_HOST = 'hooks.test';
const OTHER_HOST = 'other.test';
const SECRET = 'whsec_deliver_test';

type Recorded = {
  method: string | undefined;
  path: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
  remote: string | undefined;
  servername: string | false | null | undefined;
};

interface Fixture {
  server: Server;
  port: number;
  requests: Recorded[];
  hugeClosed: Promise<number>;
}

let redirectTargetHits = 0;
let redirectTarget: Server;
let redirectTargetPort: number;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

function makeHandler(fixture: Pick<Fixture, 'requests'>, onHugeClosed: (bytes: number) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      fixture.requests.push({
        method: req.method,
        path: req.url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        remote: req.socket.remoteAddress,
        servername: (req.socket as TLSSocket).servername,
      });
      const path = (req.url ?? '/').split('?')[0];
      const status = /^\/status\/(\d{3})$/.exec(path);
      if (status) {
        res.writeHead(Number(status[1]), { 'content-type': 'text/plain' }).end('receiver says hi');
        return;
      }
      const redirect = /^\/redirect\/(\d{3})$/.exec(path);
      if (redirect) {
        res.writeHead(Number(redirect[1]), { location: `http://127.0.0.1:${redirectTargetPort}/target` }).end();
        return;
      }
      switch (path) {
        case '/hang':
          return; // never answer
        case '/hang-body':
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('partial');
          return; // headers sent, body never finishes
        case '/big': {
          res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(1024 * 1024, 0x61));
          return;
        }
        case '/huge': {
          // Streams until the client goes away; only the client-side cap ends it.
          let written = 0;
          const chunk = Buffer.alloc(64 * 1024, 0x62);
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          const pump = () => {
            while (!res.destroyed && res.write(chunk)) written += chunk.length;
          };
          res.on('drain', pump);
          res.on('close', () => onHugeClosed(written));
          pump();
          return;
        }
        default:
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
      }
    });
  };
}

async function startFixture(kind: 'http' | 'https', tls?: { key: Buffer; cert: Buffer }): Promise<Fixture> {
  const requests: Recorded[] = [];
  let resolveHuge!: (bytes: number) => void;
  const hugeClosed = new Promise<number>((resolve) => (resolveHuge = resolve));
  const handler = makeHandler({ requests }, (bytes) => resolveHuge(bytes));
  const server = kind === 'https' ? createHttpsServer({ key: tls!.key, cert: tls!.cert }, handler) : createHttpServer(handler);
  const port = await listen(server);
  return { server, port, requests, hugeClosed };
}

let httpFixture: Fixture;
let httpsFixture: Fixture;
let certPem: Buffer;
let certDir: string;
let refusedPort: number;

beforeAll(async () => {
  certDir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
  const pem = selfSignedCert(certDir, HOOK_HOST);
  certPem = pem.cert;
  const keyPem = pem.key;

  redirectTarget = createHttpServer((_req, res) => {
    redirectTargetHits += 1;
    res.writeHead(200).end();
  });
  redirectTargetPort = await listen(redirectTarget);

  httpFixture = await startFixture('http');
  httpsFixture = await startFixture('https', { key: keyPem, cert: certPem });

  const probe = createHttpServer();
  refusedPort = await listen(probe);
  await closeServer(probe);
});

afterAll(async () => {
  await Promise.all([closeServer(httpFixture.server), closeServer(httpsFixture.server), closeServer(redirectTarget)]);
  rmSync(certDir, { recursive: true, force: true });
});

function httpUrl(path: string, port = httpFixture.port): URL {
  return new URL(`http://${HOOK_HOST}:${port}${path}`);
}

function httpsUrl(path: string, host = HOOK_HOST): URL {
  return new URL(`https://${host}:${httpsFixture.port}${path}`);
}

function sampleRequest() {
  return buildDeliveryRequest({
    deliveryId: '3f2b8f4e-5d1c-4b7a-9e0f-8a1b2c3d4e5f',
    event: 'lead.accepted',
    createdAt: '2025-01-02T03:04:05.000Z',
    data: { lead: { id: 'lead_1', person: 'Ada' } },
    secret: SECRET,
    nowSeconds: Math.floor(Date.now() / 1000),
  });
}

/** One delivery of the sample request to `url`, pinned to the loopback address. */
const deliverTo = (url: URL, over: Partial<Parameters<typeof deliverOnce>[0]> = {}) => deliverOnce({ url, address: '127.0.0.1', ...sampleRequest(), ...over });

describe('buildDeliveryRequest', () => {
  it('builds the spec body and headers with a verifiable signature', () => {
    const nowSeconds = 1_700_000_000;
    const { body, headers } = buildDeliveryRequest({
      deliveryId: 'd-1',
      event: 'ping',
      createdAt: '2025-01-01T00:00:00.000Z',
      data: { webhookId: 'w-1', message: 'hello' },
      secret: SECRET,
      nowSeconds,
    });
    expect(JSON.parse(body)).toEqual({
      id: 'd-1',
      event: 'ping',
      createdAt: '2025-01-01T00:00:00.000Z',
      data: { webhookId: 'w-1', message: 'hello' },
    });
    expect(Object.keys(JSON.parse(body))).toEqual(['id', 'event', 'createdAt', 'data']);
    expect(headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'OutreachService-Webhooks/1',
      'x-service-event': 'ping',
      'x-service-delivery': 'd-1',
      'x-service-signature': expect.stringMatching(new RegExp(`^t=${nowSeconds},v1=[0-9a-f]{64}$`)),
    });
    expect(verifyWebhook(body, headers['x-service-signature'], SECRET, { now: () => nowSeconds * 1000 })).toEqual({ ok: true, timestamp: nowSeconds });
  });

  it('keeps the data key when data is undefined', () => {
    const { body } = buildDeliveryRequest({
      deliveryId: 'd-2',
      event: 'ping',
      createdAt: '2025-01-01T00:00:00.000Z',
      data: undefined,
      secret: SECRET,
      nowSeconds: 1,
    });
    expect(JSON.parse(body)).toEqual({ id: 'd-2', event: 'ping', createdAt: '2025-01-01T00:00:00.000Z', data: null });
  });

  it('uses the same delivery id header as the body id', () => {
    const { body, headers } = sampleRequest();
    expect(headers['x-service-delivery']).toBe(JSON.parse(body).id);
  });
});

describe('retry policy constants', () => {
  it('matches the spec: three attempts, retries after 1 s and 4 s', () => {
    expect(RETRY_DELAYS_MS).toEqual([1000, 4000]);
    expect(MAX_ATTEMPTS).toBe(3);
    expect(RETRY_DELAYS_MS.length).toBe(MAX_ATTEMPTS - 1);
    expect(WEBHOOK_USER_AGENT).toBe('OutreachService-Webhooks/1');
  });

  it.each([
    [200, 'success'],
    [201, 'success'],
    [202, 'success'],
    [204, 'success'],
    [299, 'success'],
    [429, 'retry'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [504, 'retry'],
    [599, 'retry'],
    [300, 'fail'],
    [301, 'fail'],
    [302, 'fail'],
    [304, 'fail'],
    [307, 'fail'],
    [308, 'fail'],
    [400, 'fail'],
    [401, 'fail'],
    [403, 'fail'],
    [404, 'fail'],
    [408, 'fail'],
    [410, 'fail'],
    [422, 'fail'],
  ] as const)('classifies HTTP %i as %s', (status, outcome) => {
    expect(classifyStatus(status)).toBe(outcome);
  });
});

describe('deliverOnce over http', () => {
  it('POSTs the exact body and headers to the pinned address and reports success', async () => {
    const { body, headers } = sampleRequest();
    const before = httpFixture.requests.length;
    const result = await deliverOnce({ url: httpUrl('/hook?x=1'), address: '127.0.0.1', body, headers });
    expect(result).toMatchObject({ outcome: 'success', status: 200, error: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);

    const seen = httpFixture.requests[before];
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe('/hook?x=1');
    expect(seen.remote).toBe('127.0.0.1');
    expect(seen.body).toBe(body);
    expect(seen.headers.host).toBe(`${HOOK_HOST}:${httpFixture.port}`);
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['user-agent']).toBe(WEBHOOK_USER_AGENT);
    expect(seen.headers['x-service-event']).toBe('lead.accepted');
    expect(seen.headers['x-service-delivery']).toBe(headers['x-service-delivery']);
    expect(Number(seen.headers['content-length'])).toBe(Buffer.byteLength(body));
    expect(verifyWebhook(seen.body, seen.headers['x-service-signature'] as string, SECRET).ok).toBe(true);
  });

  it.each([200, 201, 202, 204])('treats %i as success', async (status) => {
    const result = await deliverTo(httpUrl(`/status/${status}`));
    expect(result).toMatchObject({ outcome: 'success', status, error: null });
  });

  it.each([500, 502, 503, 429])('retries on %i', async (status) => {
    const result = await deliverTo(httpUrl(`/status/${status}`));
    expect(result).toMatchObject({ outcome: 'retry', status, error: `HTTP ${status}` });
  });

  it.each([404, 400, 401, 410])('fails on %i', async (status) => {
    const result = await deliverTo(httpUrl(`/status/${status}`));
    expect(result).toMatchObject({ outcome: 'fail', status, error: `HTTP ${status}` });
  });

  it.each([301, 302, 303, 307, 308])('fails on a %i redirect without following it', async (status) => {
    const hitsBefore = redirectTargetHits;
    const result = await deliverTo(httpUrl(`/redirect/${status}`));
    expect(result).toMatchObject({ outcome: 'fail', status });
    expect(result.error).toMatch(/redirect_not_followed/);
    // Give a hypothetical follow-up request time to arrive before asserting it never did.
    await new Promise((r) => setTimeout(r, 50));
    expect(redirectTargetHits).toBe(hitsBefore);
  });

  it('never returns the response body', async () => {
    const result = await deliverTo(httpUrl('/status/500'));
    expect(JSON.stringify(result)).not.toContain('receiver says hi');
  });

  it('retries when the receiver never answers within timeoutMs', async () => {
    const result = await deliverTo(httpUrl('/hang'), { timeoutMs: 300 });
    expect(result).toMatchObject({ outcome: 'retry', status: null });
    expect(result.error).toMatch(/timeout/);
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    expect(result.durationMs).toBeLessThan(3000);
  });

  it('keeps the status outcome when only the body stalls past the deadline', async () => {
    const result = await deliverTo(httpUrl('/hang-body'), { timeoutMs: 300 });
    expect(result).toMatchObject({ outcome: 'success', status: 200, error: null });
    expect(result.durationMs).toBeLessThan(3000);
  });

  it('retries on connection refused', async () => {
    const result = await deliverTo(httpUrl('/hook', refusedPort), { timeoutMs: 2000 });
    expect(result).toMatchObject({ outcome: 'retry', status: null });
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it('reads a finite large body only up to the cap', async () => {
    const result = await deliverTo(httpUrl('/big'), { maxResponseBytes: 1024 });
    expect(result).toMatchObject({ outcome: 'success', status: 200, error: null });
  });

  it('stops reading an endless body at the cap and closes the connection', async () => {
    const result = await deliverTo(httpUrl('/huge'), { timeoutMs: 10_000, maxResponseBytes: 64 * 1024 });
    expect(result).toMatchObject({ outcome: 'success', status: 200, error: null });
    // Without the cap this would run into the 10 s deadline.
    expect(result.durationMs).toBeLessThan(5000);
    const writtenBeforeClose = await httpFixture.hugeClosed;
    // Socket buffers absorb some data, but nowhere near an unbounded stream.
    expect(writtenBeforeClose).toBeLessThan(32 * 1024 * 1024);
  });

  it('refuses a pinned address that is not an IP', async () => {
    const result = await deliverOnce({ url: httpUrl('/hook'), address: 'hooks.test', ...sampleRequest() });
    expect(result).toMatchObject({ outcome: 'fail', status: null, error: 'invalid_pinned_address' });
  });
});

describe('deliverOnce over https', () => {
  it('verifies the certificate against the URL hostname while connecting to the pinned address', async () => {
    const before = httpsFixture.requests.length;
    const result = await deliverTo(httpsUrl('/hook'), { ca: certPem });
    expect(result).toMatchObject({ outcome: 'success', status: 200, error: null });
    const seen = httpsFixture.requests[before];
    expect(seen.servername).toBe(HOOK_HOST);
    expect(seen.remote).toBe('127.0.0.1');
    expect(seen.headers.host).toBe(`${HOOK_HOST}:${httpsFixture.port}`);
  });

  it('rejects a certificate that does not cover the URL hostname', async () => {
    const before = httpsFixture.requests.length;
    const result = await deliverTo(httpsUrl('/hook', OTHER_HOST), { ca: certPem, timeoutMs: 2000 });
    expect(result).toMatchObject({ outcome: 'retry', status: null });
    expect(result.error).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
    expect(httpsFixture.requests.length).toBe(before);
  });

  it('rejects an untrusted self-signed certificate', async () => {
    const result = await deliverTo(httpsUrl('/hook'), { timeoutMs: 2000 });
    expect(result).toMatchObject({ outcome: 'retry', status: null });
    expect(result.error).toMatch(/SELF_SIGNED|self-signed|self signed/i);
  });

  it('uses tlsServername for SNI and verification when given', async () => {
    const before = httpsFixture.requests.length;
    const result = await deliverTo(httpsUrl('/hook', OTHER_HOST), { ca: certPem, tlsServername: HOOK_HOST });
    expect(result).toMatchObject({ outcome: 'success', status: 200 });
    expect(httpsFixture.requests[before].servername).toBe(HOOK_HOST);
  });

  it('does not follow an https redirect', async () => {
    const hitsBefore = redirectTargetHits;
    const result = await deliverTo(httpsUrl('/redirect/302'), { ca: certPem });
    expect(result).toMatchObject({ outcome: 'fail', status: 302 });
    expect(redirectTargetHits).toBe(hitsBefore);
  });

  it('retries on 503 over TLS', async () => {
    const result = await deliverTo(httpsUrl('/status/503'), { ca: certPem });
    expect(result).toMatchObject({ outcome: 'retry', status: 503 });
  });
});

describe('keep-alive connections to receivers (a delivery worker shares them across attempts)', () => {
  /** A receiver answering 200 to everything, counting the TCP connections it accepts. */
  async function countingReceiver() {
    const count = { value: 0 };
    const server = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end('ok'));
    });
    server.on('connection', () => count.value++);
    return { server, port: await listen(server), connections: () => count.value };
  }

  it('attempts to one receiver reuse one connection; each attempt still goes to its pinned address', async () => {
    const { server, port, connections } = await countingReceiver();
    const agents = createReceiverAgents();
    try {
      const url = new URL(`http://${HOOK_HOST}:${port}/hook`);
      for (let i = 0; i < 10; i++) {
        const result = await deliverOnce({ url, address: '127.0.0.1', body: '{}', headers: { 'content-type': 'application/json' }, agents });
        expect(result.outcome).toBe('success');
      }
      // undici may open a second socket when the next request comes before the first socket is marked idle.
      expect(connections()).toBeLessThanOrEqual(2);
      // The pin is part of the key: the same origin checked to another address never reuses the first socket.
      const pinned = { url, servername: HOOK_HOST, timeoutMs: 1000 };
      expect(agents.agentFor({ ...pinned, address: '127.0.0.1' })).toBe(agents.agentFor({ ...pinned, address: '127.0.0.1' }));
      expect(agents.agentFor({ ...pinned, address: '127.0.0.2' })).not.toBe(agents.agentFor({ ...pinned, address: '127.0.0.1' }));
    } finally {
      await agents.close();
      server.close();
    }
  });

  it('without shared agents an attempt opens and closes its own connection', async () => {
    const { server, port, connections } = await countingReceiver();
    try {
      const url = new URL(`http://${HOOK_HOST}:${port}/hook`);
      for (let i = 0; i < 3; i++) await deliverOnce({ url, address: '127.0.0.1', body: '{}', headers: {} });
      expect(connections()).toBe(3);
    } finally {
      server.close();
    }
  });
});

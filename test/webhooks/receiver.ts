import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { TextCipher } from '../../src/lib/crypto.js';
import type { Resolver } from '../../src/webhooks/safe-url.js';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';

/** One request as the receiver saw it, body kept as the exact raw bytes. */
export interface Received {
  at: number;
  method: string | undefined;
  path: string;
  headers: IncomingMessage['headers'];
  raw: Buffer;
  body: string;
  remote: string | undefined;
}

export interface Receiver {
  port: number;
  requests: Received[];
  /** Requests whose path starts with the prefix. */
  on(pathPrefix: string): Received[];
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  /** Releases every request parked on /hold/... with the given status. */
  release(status?: number): void;
  close(): Promise<void>;
}

/**
 * A real HTTP(S) receiver on 127.0.0.1. Paths choose the behavior:
 * /ok (and anything unknown) 200, /status/NNN, /redirect/NNN, /hang (never answers),
 * /flaky/N/NNN (each delivery id gets NNN for its first N attempts, then 200),
 * /hold (parks the request until release()),
 * /slow/MS (answers 200 after MS ms; 503 instead on the first attempt of a delivery whose body has "failFirst":true).
 */
export async function startReceiver(tls?: { key: Buffer; cert: Buffer }): Promise<Receiver> {
  const requests: Received[] = [];
  const perDelivery = new Map<string, number>();
  let held: ServerResponse[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = req.url ?? '/';
      requests.push({
        at: performance.now(),
        method: req.method,
        path,
        headers: req.headers,
        raw,
        body: raw.toString('utf8'),
        remote: req.socket.remoteAddress,
      });
      const bare = path.split('?')[0];
      const delivery = String(req.headers['x-service-delivery'] ?? '');
      const seen = (perDelivery.get(delivery) ?? 0) + 1;
      perDelivery.set(delivery, seen);
      let m: RegExpExecArray | null;
      if ((m = /^\/status\/(\d{3})$/.exec(bare))) return void res.writeHead(Number(m[1])).end('receiver body');
      if ((m = /^\/redirect\/(\d{3})$/.exec(bare))) return void res.writeHead(Number(m[1]), { location: '/ok' }).end();
      if ((m = /^\/flaky\/(\d+)\/(\d{3})$/.exec(bare))) return void res.writeHead(seen <= Number(m[1]) ? Number(m[2]) : 200).end();
      if ((m = /^\/slow\/(\d+)(\/.*)?$/.exec(bare))) {
        const status = seen === 1 && raw.includes('"failFirst":true') ? 503 : 200;
        return void setTimeout(() => res.writeHead(status).end(), Number(m[1]));
      }
      if (bare === '/hang') return;
      if (bare.startsWith('/hold')) {
        held.push(res);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  };
  const server: Server = tls ? createHttpsServer({ key: tls.key, cert: tls.cert }, handler) : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    requests,
    on: (prefix) => requests.filter((r) => r.path.startsWith(prefix)),
    async waitFor(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate()) {
        if (Date.now() > deadline) throw new Error('receiver: condition not met in time');
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    release(status = 200) {
      const current = held;
      held = [];
      for (const res of current) if (!res.destroyed) res.writeHead(status).end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A resolver that answers from a table (and can be changed between calls, for rebinding tests). */
export function tableResolver(table: Record<string, string[]>): Resolver & { table: Record<string, string[]> } {
  const fn = (async (hostname: string) => {
    const answer = fn.table[hostname.toLowerCase()];
    if (!answer) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return [...answer];
  }) as Resolver & { table: Record<string, string[]> };
  fn.table = table;
  return fn;
}

/**
 * A self-signed certificate for `host` (CN and subjectAltName), valid two days, made by `openssl` in `dir`: the key and
 * certificate as PEM, for an HTTPS receiver and for the agent that trusts it.
 */
export function selfSignedCert(dir: string, host: string): { key: Buffer; cert: Buffer } {
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-subj',
      `/CN=${host}`,
      '-addext',
      `subjectAltName=DNS:${host}`,
      '-days',
      '2',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyPath), cert: readFileSync(certPath) };
}

/**
 * The delivery tests' app (webhook URL checks through `resolver`, loopback receivers allowed, sealed with `cipher`)
 * and a local receiver; `close()` stops the receiver, then the app.
 */
export async function startWebhookApp(o: { resolver: Resolver; cipher: TextCipher }): Promise<{ t: TestApp; rx: Receiver; close: () => Promise<void> }> {
  const t = await buildTestApp({ resolver: o.resolver, cipher: o.cipher, env: { OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1' } });
  const rx = await startReceiver();
  return {
    t,
    rx,
    close: async () => {
      await rx.close();
      await t.close();
    },
  };
}

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, dbEngine } from '../helpers/test-database.js';
import { childProcesses, demoServeEnv } from '../helpers/cli-process.js';

// SIGTERM to the real server (`outreach serve`, a child process) while clients hold things open: an `outreach
// listen` stream, a plain event stream, a connection that never sent a request, a request whose body is still
// coming (it finishes and is answered), and one whose body never comes (cut when the drain time is up).

const bin = path.resolve('bin/outreach.js');
const SHUTDOWN_TIMEOUT_SECONDS = 3;
const MARGIN_MS = 2_000;
const { children, cleanups } = childProcesses();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, check: () => boolean, timeoutMs: number, child?: ChildProcess, output?: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (child && child.exitCode !== null) throw new Error(`${what}: the process exited (${child.exitCode}): ${output?.()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${output?.()}`);
    await sleep(50);
  }
}

/** Writes `head` on a fresh connection and collects what the server answers. */
function rawConnection(port: number, head: string) {
  const socket = net.connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (d: Buffer) => (answer += d.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  if (head) socket.write(head);
  return { socket, answer: () => answer, closed };
}

describe('SIGTERM with open streams (issue 26)', () => {
  it(
    `rule: SIGTERM ends the server within OUTREACH_SHUTDOWN_TIMEOUT (${SHUTDOWN_TIMEOUT_SECONDS} s here, + ${MARGIN_MS} ms margin) with an outreach listen stream open; streams end, a request in flight is answered, what clients hold is cut`,
    { timeout: 180_000 },
    async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-shutdown-'));
      cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const pg = dbEngine() === 'postgres' ? await createTestDatabase() : null;
      if (pg) cleanups.push(() => pg.close());
      const server = spawn(process.execPath, [bin, 'serve'], {
        env: demoServeEnv(dataDir, {
          OUTREACH_SHUTDOWN_TIMEOUT: String(SHUTDOWN_TIMEOUT_SECONDS),
          LOG_LEVEL: 'silent',
          ...(pg ? { DATABASE_URL: pg.url!, OUTREACH_ENCRYPTION_KEY: randomBytes(32).toString('hex') } : { DATABASE_URL: '' }),
        }),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.add(server);
      let serverOut = '';
      server.stderr.on('data', (d: Buffer) => (serverOut += d.toString()));
      const serverExit = new Promise<{ code: number | null; at: number }>((r) => server.once('exit', (code) => r({ code, at: Date.now() })));
      await waitFor(
        'the server to listen and show the demo key',
        () => /shown this once[^\n]*\n\s+\S+/.test(serverOut),
        120_000,
        server,
        () => serverOut,
      );
      const port = Number(/Listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(serverOut)![1]);
      const key = /shown this once[^\n]*\n\s+(\S+)/.exec(serverOut)![1];
      const url = `http://127.0.0.1:${port}`;
      const auth = { authorization: `Bearer ${key}` };

      // outreach listen, holding a stream.
      const listen = spawn(process.execPath, [bin, 'listen', '--forward-to', 'http://127.0.0.1:9/hooks', '--url', url], {
        env: { ...process.env, OUTREACH_API_KEY: key, LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.add(listen);
      let listenOut = '';
      listen.stderr.on('data', (d: Buffer) => (listenOut += d.toString()));
      await waitFor(
        'listen to start',
        () => listenOut.includes('Ready!'),
        60_000,
        listen,
        () => listenOut,
      );

      // A plain stream, read here.
      const res = await fetch(`${url}/api/v1/events/stream`, { headers: auth });
      expect(res.status).toBe(200);
      let streamed = '';
      let streamEndedAt = 0;
      const streamEnded = (async () => {
        const decoder = new TextDecoder();
        try {
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) streamed += decoder.decode(chunk, { stream: true });
        } catch {
          // cut
        }
        streamEndedAt = Date.now();
      })();

      // A connection that never sends a request; a request whose body arrives after SIGTERM; one whose body never does.
      const spare = rawConnection(port, '');
      const body = JSON.stringify({ event: 'ping' });
      const head = (n: number) =>
        `POST /api/v1/events/trigger HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${n}\r\n\r\n`;
      const slow = rawConnection(port, head(body.length) + body.slice(0, 5));
      const stuck = rawConnection(port, head(body.length) + body.slice(0, 5));
      await sleep(300);

      const sentAt = Date.now();
      server.kill('SIGTERM');
      await sleep(300);
      slow.socket.write(body.slice(5));

      const exit = await Promise.race([serverExit, sleep(SHUTDOWN_TIMEOUT_SECONDS * 1000 + MARGIN_MS + 5_000).then(() => null)]);
      expect(exit, `the server did not exit: ${serverOut}`).not.toBeNull();
      const took = exit!.at - sentAt;
      console.info(`[serve-shutdown] ${dbEngine()}: SIGTERM to exit ${took} ms (OUTREACH_SHUTDOWN_TIMEOUT=${SHUTDOWN_TIMEOUT_SECONDS})`);
      expect(exit!.code).toBe(0);
      expect(took).toBeLessThan(SHUTDOWN_TIMEOUT_SECONDS * 1000 + MARGIN_MS);

      // The stream was ended by the server, saying why; the request in flight was answered; the rest were cut.
      await streamEnded;
      console.info(`[serve-shutdown] ${dbEngine()}: the open stream ended ${streamEndedAt - sentAt} ms after SIGTERM`);
      expect(streamEndedAt - sentAt).toBeLessThan(1_000);
      expect(streamed).toContain(': the server is shutting down; reconnect with Last-Event-ID to resume');
      await Promise.all([slow.closed, stuck.closed, spare.closed]);
      expect(slow.answer()).toMatch(/^HTTP\/1\.1 202 /);
      expect(stuck.answer()).toBe('');
      expect(spare.answer()).toBe('');

      // listen saw its stream end and tries to reconnect (to a server that is gone) until it is stopped.
      await waitFor(
        'listen to notice',
        () => /the server ended the event stream; reconnecting/.test(listenOut),
        10_000,
        listen,
        () => listenOut,
      );
      const listenExit = new Promise<number | null>((r) => listen.once('exit', r));
      listen.kill('SIGINT');
      expect(await listenExit).toBe(0);
    },
  );
});

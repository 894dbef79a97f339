import { execFile, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/index.js';
import { enqueueEvent } from '../../src/webhooks/outbox.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';

// `outreach listen` + `outreach trigger` against the real server on a real port, forwarding to a local receiver
// that verifies the signature with the package's verifyWebhook. No public URL, no insecure-webhook setting.

const run = promisify(execFile);
const bin = path.resolve('bin/outreach.js');
let t: TestApp;
let url: string;
let a: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let b: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
const received: { body: string; headers: http.IncomingHttpHeaders }[] = [];
let receiver: http.Server;
let receiverUrl: string;

beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  a = await createWorkspaceWithKey(t, 'Listen Co');
  b = await createWorkspaceWithKey(t, 'Other Co');
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ body, headers: req.headers });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  await new Promise((r) => receiver?.close(r));
  await t?.close();
});

const cliTrigger = (event: string, key: string) =>
  run(process.execPath, [bin, 'trigger', event, '--url', url, '--key', key, '--json'], { env: { ...process.env, LOG_LEVEL: 'silent' }, timeout: 60_000 });

describe('outreach listen / trigger (issue 17)', { timeout: 180_000 }, () => {
  it('listen forwards a triggered event of its own workspace, signed with the secret it printed; filtered and foreign events are not forwarded', async () => {
    const child = spawn(
      process.execPath,
      [bin, 'listen', '--forward-to', receiverUrl, '--events', 'reply.received,ping', '--url', url, '--max-events', '1', '--json'],
      {
        env: { ...process.env, OUTREACH_API_KEY: a.key, LOG_LEVEL: 'silent' },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    try {
      const until = Date.now() + 60_000;
      while (!stderr.includes('Ready!')) {
        if (Date.now() > until || child.exitCode !== null) throw new Error(`listen did not start: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const secret = /signing secret is (whsec_[A-Za-z0-9_-]+)/.exec(stderr)![1];

      // An event dated a day ahead (a pass run with `engine tick --now` in the future, a host whose clock is ahead):
      // the events after it still reach listen (docs/webhooks.md "Event stream order"). Not in --events.
      const ahead = new Date(Date.now() + 24 * 3600_000);
      await t.db
        .transaction()
        .execute((trx) => enqueueEvent(trx, { workspaceId: a.workspaceId, event: 'lead.accepted', data: { ahead: true }, createdAt: ahead }));
      await cliTrigger('reply.received', b.key); // another workspace
      await cliTrigger('lead.invited', a.key); // not in --events
      const mine = JSON.parse((await cliTrigger('reply.received', a.key)).stdout);
      expect(mine).toMatchObject({ ok: true, event: 'reply.received', data: { test: true } });

      expect(await exited).toBe(0);
      expect(received).toHaveLength(1);
      const [hit] = received;
      expect(verifyWebhook(hit.body, hit.headers['x-service-signature'] as string, secret)).toMatchObject({ ok: true });
      expect(verifyWebhook(hit.body, hit.headers['x-service-signature'] as string, 'whsec_wrong')).toMatchObject({ ok: false, reason: 'signature_mismatch' });
      const body = JSON.parse(hit.body);
      expect(body).toMatchObject({ id: mine.id, event: 'reply.received', data: { test: true, workspaceId: a.workspaceId } });
      expect(hit.headers['x-service-event']).toBe('reply.received');
      expect(JSON.parse(stdout.trim())).toMatchObject({ id: mine.id, event: 'reply.received', status: 204 });
    } finally {
      if (child.exitCode === null) child.kill('SIGINT');
    }
  });

  it('trigger goes through the outbox (so subscriptions get it too); bad event names are clear 400s; the routes are marked extensions', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/events/trigger', headers: a.auth, payload: { event: 'x.followed' } });
    expect(res.statusCode).toBe(202);
    const row = await t.db
      .selectFrom('outbox_events')
      .select(['workspace_id', 'event', 'webhook_id'])
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ workspace_id: a.workspaceId, event: 'x.followed', webhook_id: null });
    const bad = await t.app.inject({ method: 'POST', url: '/api/v1/events/trigger', headers: a.auth, payload: { event: 'lead.exploded' } });
    expect(bad.statusCode).toBe(400);
    const badStream = await t.app.inject({ method: 'GET', url: '/api/v1/events/stream?events=ping,nope', headers: a.auth });
    expect(badStream.statusCode).toBe(400);
    expect(badStream.json()).toMatchObject({ error: 'invalid_event' });
    expect(badStream.json().message).toContain('"nope"');
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/events/stream' })).statusCode).toBe(401);
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.paths['/api/v1/events/stream'].get['x-extension']).toBe(true);
    expect(doc.paths['/api/v1/events/trigger'].post['x-extension']).toBe(true);
  });

  it('the CLI refuses an unknown event before calling the server', async () => {
    const err = await cliTrigger('lead.exploded', a.key).catch((e: { code: number; stderr: string }) => e);
    expect((err as { code: number }).code).toBe(1);
    expect((err as { stderr: string }).stderr).toContain('unknown event lead.exploded');
  });
});

describe('outreach listen across server-ended streams (issue 26)', { timeout: 180_000 }, () => {
  // Streams end after 2 s and a key holds one: every reconnect needs the slot the ended stream gave back.
  let s: TestApp;
  let surl: string;
  beforeAll(async () => {
    s = await buildTestApp({ env: { OUTREACH_STREAM_MAX_AGE: 2, OUTREACH_STREAMS_PER_KEY: 1 } });
    await s.app.listen({ port: 0, host: '127.0.0.1' });
    surl = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await s?.close();
  });

  function startListen(key: string, maxEvents: number, server = surl) {
    const child = spawn(process.execPath, [bin, 'listen', '--forward-to', receiverUrl, '--url', server, '--max-events', String(maxEvents), '--json'], {
      env: { ...process.env, OUTREACH_API_KEY: key, LOG_LEVEL: 'silent' },
    });
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d) => (out.stdout += d));
    child.stderr.on('data', (d) => (out.stderr += d));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    const ready = async () => {
      const until = Date.now() + 60_000;
      while (!out.stderr.includes('Ready!')) {
        if (Date.now() > until || child.exitCode !== null) throw new Error(`listen did not start: ${out.stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    return { child, out, exited, ready };
  }

  it('rule: a stream ends at its maximum age (OUTREACH_STREAM_MAX_AGE) and listen reconnects with Last-Event-ID: every event forwarded once, in order, none lost across the reconnects', async () => {
    const w = await createWorkspaceWithKey(s, 'Max Age Co');
    const N = 40;
    const l = startListen(w.key, N);
    try {
      await l.ready();
      const firstDelivery = received.length;
      const ids: string[] = [];
      const events = ['reply.received', 'lead.invited', 'lead.accepted', 'x.followed'];
      // One event every 150 ms for 6 s: the stream ends three times meanwhile, and some events are committed
      // while listen is between two streams.
      for (let i = 0; i < N; i++) {
        const res = await s.app.inject({ method: 'POST', url: '/api/v1/events/trigger', headers: w.auth, payload: { event: events[i % events.length] } });
        ids.push(res.json().id);
        await new Promise((r) => setTimeout(r, 150));
      }
      expect(await l.exited).toBe(0);
      const printed = l.out.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { id: string }).id);
      expect(printed).toEqual(ids);
      const delivered = received.slice(firstDelivery).map((r) => (JSON.parse(r.body) as { id: string }).id);
      expect(delivered).toEqual(ids);
      const reconnects = l.out.stderr.match(/the server ended the event stream; reconnecting/g) ?? [];
      expect(reconnects.length).toBeGreaterThanOrEqual(2);
      expect(l.out.stderr).toMatch(/event stream reconnected, resuming after event [0-9a-f-]{36}/);
      // The ended stream gave its slot back before the reconnect came: never refused.
      expect(l.out.stderr).not.toContain('refused');
    } finally {
      if (l.child.exitCode === null) l.child.kill('SIGINT');
    }
  });

  describe('with a key at its stream limit', () => {
    // Streams of the default age here: the held stream stays open until the test lets it go.
    let busy: TestApp;
    let busyUrl: string;
    beforeAll(async () => {
      busy = await buildTestApp({ env: { OUTREACH_STREAMS_PER_KEY: 1 } });
      await busy.app.listen({ port: 0, host: '127.0.0.1' });
      busyUrl = `http://127.0.0.1:${(busy.app.server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await busy?.close();
    });

    it('rule: a refused stream (429 too_many_streams) is retried after Retry-After; listen starts once the slot is free', async () => {
      const w = await createWorkspaceWithKey(busy, 'Busy Co');
      const holder = new AbortController();
      const held = await fetch(`${busyUrl}/api/v1/events/stream`, { headers: w.auth, signal: holder.signal });
      expect(held.status).toBe(200);
      const l = startListen(w.key, 1, busyUrl);
      try {
        const until = Date.now() + 30_000;
        while (!l.out.stderr.includes('refused (429 too_many_streams); retrying in')) {
          if (Date.now() > until || l.child.exitCode !== null) throw new Error(`listen was not refused: ${l.out.stderr}`);
          await new Promise((r) => setTimeout(r, 50));
        }
        // The wait follows Retry-After (10 s), not the first backoff step (0.5 s).
        expect(l.out.stderr).toMatch(/retrying in (9|10)\.\d s/);
        holder.abort();
        await l.ready();
        await busy.app.inject({ method: 'POST', url: '/api/v1/events/trigger', headers: w.auth, payload: { event: 'ping' } });
        expect(await l.exited).toBe(0);
        expect(l.out.stdout).toContain('"event":"ping"');
      } finally {
        holder.abort();
        if (l.child.exitCode === null) l.child.kill('SIGINT');
      }
    });
  });
});

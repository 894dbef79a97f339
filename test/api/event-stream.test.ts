import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { dbEngine } from '../helpers/test-database.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { ENGINE_ENV, insertAccount, step, steps } from '../engine/helpers.js';
import { enqueueEvent } from '../../src/webhooks/outbox.js';
import type { Database } from '../../src/db/database.js';

// GET /api/v1/events/stream over a real port (a stream never ends by itself, so inject cannot read one): the
// per-key and per-process caps, the key re-check at every heartbeat (revocation, expiry, a removed Team link),
// resuming with Last-Event-ID, and a closing app ending every stream. Heartbeat 1 s so that closes show in seconds.
// Then the stream's order (docs/webhooks.md "Event stream order"): events dated by any clock (a pass at a future
// `now`, a writer whose clock is behind) keep flowing, and on PostgreSQL a transaction that commits late is not lost.

const HEARTBEAT_SECONDS = 1;
const PER_PROCESS = 8;
const CONTROL_TOKEN = 'control-token-for-event-stream-test';
let t: TestApp;
let url: string;
const opened = new Set<Stream>();

beforeAll(async () => {
  t = await buildTestApp({
    env: { ...ENGINE_ENV, OUTREACH_STREAM_HEARTBEAT: HEARTBEAT_SECONDS, OUTREACH_STREAMS_PER_PROCESS: PER_PROCESS },
    controlToken: CONTROL_TOKEN,
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of opened) s.close();
  await t?.close();
});

interface Stream {
  status: number;
  headers: Headers;
  /** The error body of a refused stream. */
  body: Record<string, unknown> | null;
  /** Everything the stream has sent so far. */
  text(): string;
  /** Resolves with the time (Date.now()) the server ended the stream. */
  ended: Promise<number>;
  close(): void;
}

async function openStream(headers: Record<string, string>, query = ''): Promise<Stream> {
  const abort = new AbortController();
  const res = await fetch(`${url}/api/v1/events/stream${query}`, { headers: { ...headers, accept: 'text/event-stream' }, signal: abort.signal });
  if (res.status !== 200) {
    return {
      status: res.status,
      headers: res.headers,
      body: (await res.json()) as Record<string, unknown>,
      text: () => '',
      ended: Promise.resolve(0),
      close() {},
    };
  }
  let text = '';
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
    } catch {
      // aborted by the test
    }
    return Date.now();
  })();
  const stream: Stream = {
    status: 200,
    headers: res.headers,
    body: null,
    text: () => text,
    ended,
    close: () => {
      abort.abort();
      opened.delete(stream);
    },
  };
  opened.add(stream);
  return stream;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Opens a stream once a slot is free (a closed stream gives its slot back when the server sees the close). */
const openWhenFree = (headers: Record<string, string>) =>
  until('a free stream slot', async () => {
    const s = await openStream(headers);
    return s.status === 200 ? s : null;
  });

/** Resolves with how long after `from` the stream ended; fails when it is still open after `withinMs`. */
async function endsWithin(s: Stream, from: number, withinMs: number): Promise<number> {
  const at = await Promise.race([s.ended, sleep(withinMs).then(() => null)]);
  if (at === null) throw new Error(`stream still open ${withinMs} ms later:\n${s.text()}`);
  return at - from;
}

/** The `id:`s a stream has sent so far, in order. */
const idsOf = (s: Stream) => [...s.text().matchAll(/^id: (.+)$/gm)].map((m) => m[1]);
/** Waits until the stream has sent every one of `ids` (in any order); answers all the ids it sent. */
const receives = (s: Stream, ids: string[], what: string) =>
  until(what, async () => {
    const sent = idsOf(s);
    return ids.every((id) => sent.includes(id)) ? sent : null;
  });

async function trigger(auth: Record<string, string>, event = 'reply.received'): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/events/trigger', headers: auth, payload: { event } });
  expect(res.statusCode).toBe(202);
  return res.json<{ id: string }>().id;
}

/** A transaction that runs in steps the test releases one by one (two writers interleaved on PostgreSQL). */
function steppedTransaction(db: Database) {
  const queue: { run: (trx: Database) => Promise<unknown>; done: (v: unknown) => void; fail: (e: unknown) => void }[] = [];
  let wake: () => void = () => undefined;
  let finished = false;
  const ended = db.transaction().execute(async (trx) => {
    for (;;) {
      while (queue.length === 0 && !finished) await new Promise<void>((r) => (wake = r));
      const next = queue.shift();
      if (!next) return;
      await next.run(trx).then(next.done, next.fail);
    }
  });
  return {
    run<T>(fn: (trx: Database) => Promise<T>): Promise<T> {
      return new Promise<T>((done, fail) => {
        queue.push({ run: fn, done: done as (v: unknown) => void, fail });
        wake();
      });
    },
    async commit() {
      finished = true;
      wake();
      await ended;
    },
  };
}

describe('GET /events/stream reads the outbox’s order, not its clocks', { timeout: 30_000 }, () => {
  // A failed case leaves no stream holding a slot the next cases need.
  afterEach(() => {
    for (const s of opened) s.close();
  });

  it('rule: after an engine pass at a future `now` emits an event dated ahead of the clock, later events still reach an open stream, a new stream and a stream resumed after the future event', async () => {
    const w = await createWorkspaceWithKey(t, 'Future pass');
    const open = await openWhenFree(w.auth);
    // A pass "as of" a day ahead of this machine's clock (engine tick --now): its lead.invited is dated then.
    const future = new Date(Date.now() + 24 * 3600_000);
    const account = await insertAccount(t.db, w.workspaceId);
    const sequence = await insertSequence(t.db, w.workspaceId, { steps: steps(step('connect')) });
    await insertLead(t.db, w.workspaceId, { account_id: account, sequence_id: sequence, next_action_at: new Date(future.getTime() - 60_000) });
    const tick = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/engine/tick',
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
      payload: { now: future.toISOString() },
    });
    expect(tick.json()).toMatchObject({ actions: 1 });
    const dated = await until('the pass’s event on the open stream', async () => {
      const m = /^data: (.*"lead\.invited".*)$/m.exec(open.text());
      return m && (JSON.parse(m[1]) as { id: string; createdAt: string });
    });
    expect(dated.createdAt).toBe(future.toISOString());

    const later = await trigger(w.auth);
    await receives(open, [later], 'an event after the future-dated one on the open stream');
    const fresh = await openWhenFree(w.auth);
    const resumed = await openWhenFree({ ...w.auth, 'last-event-id': dated.id });
    const last = await trigger(w.auth, 'lead.accepted');
    expect(await receives(open, [later, last], 'the next event on the open stream')).toEqual([dated.id, later, last]);
    expect(await receives(fresh, [last], 'the next event on a new stream')).toEqual([last]);
    expect(await receives(resumed, [later, last], 'the events after the future one on a resumed stream')).toEqual([later, last]);
    for (const s of [open, fresh, resumed]) s.close();
  });

  it('rule: events from a writer whose clock is hours behind arrive after later-dated ones, in the order they were written', async () => {
    const w = await createWorkspaceWithKey(t, 'Clock behind');
    const s = await openWhenFree(w.auth);
    const first = await trigger(w.auth);
    await receives(s, [first], 'the first event');
    // Another host, three hours behind: its events are dated before the ones already streamed.
    const behind = new Date(Date.now() - 3 * 3600_000);
    const written: string[] = [first];
    for (const event of ['lead.invited', 'lead.accepted'] as const) {
      const { id } = await t.db
        .transaction()
        .execute((trx) => enqueueEvent(trx, { workspaceId: w.workspaceId, event, data: { clock: 'behind' }, createdAt: behind }));
      written.push(id);
    }
    written.push(await trigger(w.auth, 'lead.messaged'));
    expect(await receives(s, written, 'the late-dated events and the one after them')).toEqual(written);
    s.close();
  });

  it.skipIf(dbEngine() !== 'postgres')(
    'rule (PostgreSQL): a transaction that took its event’s sequence number before another’s and commits after it is read is still streamed, once',
    async () => {
      const w = await createWorkspaceWithKey(t, 'Late commit');
      const s = await openWhenFree(w.auth);
      const enqueue = (trx: Database, event: 'lead.invited' | 'lead.accepted') =>
        enqueueEvent(trx, { workspaceId: w.workspaceId, event, data: { late: event === 'lead.invited' } }).then((r) => r.id);
      // Writer A starts first (its transaction id is older), then takes a higher sequence number than B, and commits
      // first; B, holding the lower number, commits only after A's event has been streamed.
      const a = steppedTransaction(t.db);
      const b = steppedTransaction(t.db);
      await a.run((trx) => sql`SELECT pg_current_xact_id()`.execute(trx));
      const lateId = await b.run((trx) => enqueue(trx, 'lead.invited'));
      const earlyId = await a.run((trx) => enqueue(trx, 'lead.accepted'));
      await a.commit();
      await receives(s, [earlyId], 'the event committed first');
      await sleep(600); // a poll or two past it
      await b.commit();
      expect(await receives(s, [earlyId, lateId], 'the event committed late')).toEqual([earlyId, lateId]);
      await sleep(600);
      expect(idsOf(s)).toEqual([earlyId, lateId]);
      s.close();
    },
  );
});

describe('GET /events/stream limits and lifetime (issue 26)', { timeout: 60_000 }, () => {
  it('rule: a key holds at most OUTREACH_STREAMS_PER_KEY (5) streams; the 6th is 429 too_many_streams with Retry-After in the error body shape; closing one frees a slot; other keys are not affected', async () => {
    const a = await createWorkspaceWithKey(t, 'Cap A');
    const b = await createWorkspaceWithKey(t, 'Cap B');
    const five = await Promise.all([1, 2, 3, 4, 5].map(() => openStream(a.auth)));
    expect(five.map((s) => s.status)).toEqual([200, 200, 200, 200, 200]);

    const sixth = await openStream(a.auth);
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get('retry-after')).toBe('10');
    expect(sixth.headers.get('content-type')).toMatch(/^application\/json/);
    expect(sixth.body).toMatchObject({ error: 'too_many_streams', reason: 'key', limit: 5 });
    expect(sixth.body!.message).toContain('OUTREACH_STREAMS_PER_KEY');

    const other = await openStream(b.auth);
    expect(other.status).toBe(200);
    other.close();

    five[0].close();
    const again = await openWhenFree(a.auth);
    expect(again.status).toBe(200);
    expect((await openStream(a.auth)).status).toBe(429);
    for (const s of [...five, again]) s.close();
  });

  it('rule: the process holds at most OUTREACH_STREAMS_PER_PROCESS streams (429 reason process); a stream ended by revocation gives its slot back', async () => {
    const a = await createWorkspaceWithKey(t, 'Process A');
    const b = await createWorkspaceWithKey(t, 'Process B');
    const c = await createWorkspaceWithKey(t, 'Process C');
    // Slots of the previous test's streams come back as the server sees their close.
    const held = [];
    for (let i = 0; i < 5; i++) held.push(await openWhenFree(a.auth));
    const revoked = [];
    for (let i = 0; i < PER_PROCESS - 5; i++) revoked.push(await openWhenFree(b.auth));

    const refused = await openStream(c.auth);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('10');
    expect(refused.body).toMatchObject({ error: 'too_many_streams', reason: 'process', limit: PER_PROCESS });
    expect(refused.body!.message).toContain('OUTREACH_STREAMS_PER_PROCESS');

    const revokedAt = Date.now();
    await t.services.workspaces.revokeApiKey(b.keyId);
    for (const s of revoked) await endsWithin(s, revokedAt, HEARTBEAT_SECONDS * 1000 + 2_000);
    const freed = await openStream(c.auth);
    expect(freed.status).toBe(200);
    for (const s of [...held, freed]) s.close();
  });

  it('rule: the key is re-checked at every heartbeat; a revoked key ends its stream within the heartbeat interval, and reconnecting is 401', async () => {
    const r = await createWorkspaceWithKey(t, 'Revoked');
    const s = await openWhenFree(r.auth);
    await until('a keep-alive', async () => s.text().includes(': keep-alive'));
    const revokedAt = Date.now();
    await t.services.workspaces.revokeApiKey(r.keyId);
    const took = await endsWithin(s, revokedAt, HEARTBEAT_SECONDS * 1000 + 2_000);
    expect(took).toBeLessThanOrEqual(HEARTBEAT_SECONDS * 1000 + 1_000);
    expect(s.text()).toMatch(/: closed: unauthorized/);
    console.info(`[event-stream] revoked key: stream ended ${took} ms after revocation (heartbeat ${HEARTBEAT_SECONDS} s)`);
    expect((await openStream(r.auth)).status).toBe(401);
  });

  it('rule: a key that expires while its stream is open ends the stream at the next heartbeat', async () => {
    const ws = await t.services.workspaces.createWorkspace({ name: 'Expiring' });
    const key = await t.services.workspaces.createApiKey({ workspaceId: ws.id, expiresAt: new Date(t.clock.now().getTime() + 60_000) });
    const s = await openWhenFree({ authorization: `Bearer ${key.key}` });
    const expiredAt = Date.now();
    t.clock.advance(120_000);
    try {
      await endsWithin(s, expiredAt, HEARTBEAT_SECONDS * 1000 + 2_000);
    } finally {
      t.clock.advance(-120_000);
    }
    expect(s.text()).toMatch(/: closed: unauthorized/);
  });

  it('rule: a stream opened with X-Workspace-Client ends when its Team link is removed; the key’s home stream stays open', async () => {
    const owner = await createWorkspaceWithKey(t, 'Agency');
    const client = await t.services.workspaces.createWorkspace({ name: 'Client' });
    await t.services.workspaces.addTeamLink({ ownerWorkspaceId: owner.workspaceId, clientWorkspaceId: client.id, role: 'member' });
    const linked = await openWhenFree({ ...owner.auth, 'x-workspace-client': client.id });
    const home = await openWhenFree(owner.auth);
    expect(linked.text()).toContain(`workspace ${client.id}`);

    const removedAt = Date.now();
    await t.db.deleteFrom('team_links').where('owner_workspace_id', '=', owner.workspaceId).execute();
    // What a removal through the services does (the same message other processes get by NOTIFY).
    t.services.workspaces.authCache.invalidate(`team:${owner.workspaceId}`);
    await endsWithin(linked, removedAt, HEARTBEAT_SECONDS * 1000 + 2_000);
    expect(linked.text()).toMatch(/: closed: workspace_forbidden/);

    await sleep(HEARTBEAT_SECONDS * 1000 + 500);
    expect(await Promise.race([home.ended.then(() => 'ended'), sleep(10).then(() => 'open')])).toBe('open');
    expect(home.text()).toContain(': keep-alive');
    home.close();
  });

  it('rule: Last-Event-ID resumes after that event, in order, nothing repeated; an id that is not the workspace’s streams from now', async () => {
    const w = await createWorkspaceWithKey(t, 'Resume');
    const ids: string[] = [];
    for (const event of ['lead.invited', 'reply.received', 'lead.accepted']) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/events/trigger', headers: w.auth, payload: { event } });
      ids.push(res.json().id);
    }
    const s = await openWhenFree({ ...w.auth, 'last-event-id': ids[0] });
    await until('the two later events', async () => (s.text().match(/^id: /gm) ?? []).length >= 2);
    await sleep(1_200); // a few more polls: nothing else comes
    const sent = [...s.text().matchAll(/^id: (.+)$/gm)].map((m) => m[1]);
    expect(sent).toEqual(ids.slice(1));
    expect(s.text()).toContain(`: resuming after event ${ids[0]}`);
    s.close();

    const fresh = await openWhenFree({ ...w.auth, 'last-event-id': '00000000-0000-4000-8000-000000000000' });
    await sleep(1_200);
    expect(fresh.text()).toContain('Last-Event-ID is not an event of this workspace; streaming from now');
    expect(fresh.text()).not.toMatch(/^id: /m);
    fresh.close();
  });

  it('the OpenAPI document states the limits, the re-check and the maximum age, and lists the 429', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const op = doc.paths['/api/v1/events/stream'].get;
    expect(op['x-extension']).toBe(true);
    for (const words of ['OUTREACH_STREAMS_PER_KEY', 'OUTREACH_STREAMS_PER_PROCESS', 'too_many_streams', 'Retry-After', 'Last-Event-ID', 'revoked']) {
      expect(op.description).toContain(words);
    }
    expect(op.responses['429'].description).toContain('too_many_streams');
    expect(op.parameters.map((p: { name: string }) => p.name)).toContain('last-event-id');
  });

  // Last: it closes the app.
  it('rule: closing the app ends every open stream at once (close does not wait on them)', async () => {
    const w = await createWorkspaceWithKey(t, 'Closing');
    const streams = [await openWhenFree(w.auth), await openWhenFree(w.auth)];
    const closingAt = Date.now();
    await t.app.close();
    const closeTook = Date.now() - closingAt;
    for (const s of streams) {
      await endsWithin(s, closingAt, 2_000);
      expect(s.text()).toContain(': the server is shutting down; reconnect with Last-Event-ID to resume');
    }
    expect(closeTook).toBeLessThan(2_000);
    console.info(`[event-stream] app.close() with 2 open streams took ${closeTook} ms`);
  });
});

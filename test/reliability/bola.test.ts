import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import type { TestApp } from '../helpers/build-test-app.js';
import { createMemoryChannels } from '../helpers/memory-channels.js';
import { captureServiceLogs, findSecrets } from '../helpers/log-capture.js';
import { buildLoggedTestApp } from '../helpers/reliability-app.js';
import { createWebhooks, seedReliabilityWorld, WEBHOOK_HOST, type ReliabilityWorld, type Tenant } from '../helpers/reliability-world.js';
import { tableResolver } from '../webhooks/receiver.js';

// The BOLA matrix (broken object-level authorization): every id-taking route × every id kind of three
// workspaces (a Team owner, its Team client, a stranger) × every way of calling (each key bare, the owner's
// key selecting its client, and selections the Team rules refuse). Rules (SPEC Authentication 3, docs/foundation.md):
//   - an object of another workspace than the selected one answers 404, byte for byte the answer for an id
//     that never existed (so existence cannot be probed), and no answer ever carries another workspace's data;
//   - the owner's key with X-Workspace-Client: <client> works on the client's objects as the client's own key does;
//   - a selection the key may not make (stranger → client, client → owner) is 403 workspace_forbidden, whatever the id.

let t: TestApp;
let w: ReliabilityWorld;
const logs = captureServiceLogs('debug');

beforeAll(async () => {
  t = await buildLoggedTestApp({
    logger: logs.logger,
    env: { OUTREACH_RATE_LIMIT_PER_MINUTE: 100_000_000 },
    resolver: tableResolver({ [WEBHOOK_HOST]: ['93.184.216.34'] }),
    drivers: createMemoryChannels().drivers,
  });
  w = await seedReliabilityWorld(t);
  await createWebhooks(t, w, 2);
}, 120_000);
afterAll(async () => t?.close());

type Kind = 'play' | 'sequence' | 'xLead' | 'linkedinLead' | 'reply' | 'xReply' | 'webhook' | 'candidate' | 'workspace' | 'autopilotPlay' | 'closedPlay';

function idsOf(x: Tenant): [Kind, string][] {
  return [
    ['play', x.plays.review],
    ['autopilotPlay', x.plays.autopilot],
    ['closedPlay', x.plays.noReview],
    ['sequence', x.sequences.active],
    ['xLead', x.leads.x],
    ['linkedinLead', x.leads.linkedin],
    ['reply', x.replies.linkedin],
    ['xReply', x.replies.x],
    ['webhook', x.webhooks[0]],
    ['candidate', x.candidates[0].id],
    ['workspace', x.id],
  ];
}

interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: (id: string) => string;
  kind: Kind;
  body?: (x: Tenant) => object;
  /** What the selected workspace's own object of `kind` answers. */
  found: number;
}

const routes: Route[] = [
  { method: 'GET', path: (id) => `/plays/${id}/candidates`, kind: 'play', found: 200 },
  {
    method: 'POST',
    path: (id) => `/plays/${id}/candidates/lookup`,
    kind: 'play',
    body: (x) => ({ identities: [{ xUserId: x.candidates[0].xUserId }] }),
    found: 200,
  },
  // Stale revisions: a found Play answers 409 and nothing is written.
  {
    method: 'POST',
    path: (id) => `/plays/${id}/import`,
    kind: 'play',
    body: () => ({ requestId: 'bola-import-1', expectedRevision: 99, leads: [{ xUserId: '123456' }] }),
    found: 409,
  },
  {
    method: 'POST',
    path: (id) => `/plays/${id}/enroll`,
    kind: 'play',
    body: (x) => ({ expectedRevision: 99, sequenceId: x.sequences.active, sequenceRevision: 1, candidateIds: [x.candidates[1].id] }),
    found: 409,
  },
  {
    method: 'POST',
    path: (id) => `/plays/${id}/leads`,
    kind: 'play',
    body: (x) => ({ expectedRevision: 99, sequenceId: x.sequences.active, sequenceRevision: 1, candidateIds: [x.candidates[1].id] }),
    found: 409,
  },
  { method: 'GET', path: (id) => `/plays/${id}/leads`, kind: 'play', found: 200 },
  { method: 'GET', path: (id) => `/x/leads/${id}`, kind: 'xLead', found: 200 },
  { method: 'POST', path: (id) => `/x/leads/${id}/stop`, kind: 'xLead', found: 200 },
  // Setting the status a sequence already has is a no-op 200.
  { method: 'PATCH', path: (id) => `/sequences/${id}/status`, kind: 'sequence', body: () => ({ status: 'active' }), found: 200 },
  // A snooze leaves the reply pending, so it can be repeated by every caller.
  { method: 'POST', path: (id) => `/replies/${id}/decide`, kind: 'reply', body: () => ({ decision: 'snooze', days: 1 }), found: 200 },
  { method: 'POST', path: (id) => `/webhooks/${id}/test`, kind: 'webhook', found: 202 },
];

interface Caller {
  name: string;
  headers: Record<string, string>;
  /** The workspace the call works in, or null when the selection is refused. */
  selected: Tenant | null;
}

function callers(): Caller[] {
  const sel = (key: Tenant, target: Tenant) => ({ ...key.auth, 'x-workspace-client': target.id });
  return [
    { name: 'owner key', headers: w.owner.auth, selected: w.owner },
    { name: 'owner key selecting its client', headers: sel(w.owner, w.client), selected: w.client },
    { name: 'owner key selecting itself', headers: sel(w.owner, w.owner), selected: w.owner },
    { name: 'client key', headers: w.client.auth, selected: w.client },
    { name: 'stranger key', headers: w.stranger.auth, selected: w.stranger },
    { name: 'stranger key selecting the client', headers: sel(w.stranger, w.client), selected: null },
    { name: 'client key selecting its owner', headers: sel(w.client, w.owner), selected: null },
    { name: 'owner key selecting the stranger', headers: sel(w.owner, w.stranger), selected: null },
  ];
}

async function call(route: Route, id: string, caller: Caller, bodyOf: Tenant) {
  const res = await t.app.inject({
    method: route.method,
    url: `/api/v1${route.path(id)}`,
    headers: caller.headers,
    ...(route.body ? { payload: route.body(bodyOf) } : {}),
  });
  return { status: res.statusCode, body: res.body };
}

/** Other tenants' private texts, ids of their workspace and names that appear in `body`. */
function leaksInto(body: string, reader: Tenant | null) {
  return w.tenants
    .filter((x) => x !== reader)
    .flatMap((x) => [...x.privateTexts, x.name, x.key, ...x.webhookSecrets])
    .filter((secret) => body.includes(secret));
}

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

describe('BOLA matrix: every id-taking route × three workspaces × every id kind', () => {
  it('another workspace’s object answers exactly what a never-existing id answers (404), and nothing leaks', async () => {
    const problems: string[] = [];
    const unknownAnswers = new Map<string, Promise<{ id: string; body: string }>>();
    let checked = 0;
    const cases = callers()
      .filter((c) => c.selected)
      .flatMap((caller) =>
        routes.flatMap((route) =>
          w.tenants.filter((x) => x !== caller.selected).flatMap((owner) => idsOf(owner).map(([kind, id]) => ({ caller, route, owner, kind, id }))),
        ),
      );
    await inBatches(cases, 8, async ({ caller, route, owner, kind, id }) => {
      const foreign = await call(route, id, caller, caller.selected!);
      // One never-existing id per caller and route is enough to compare against.
      const cacheKey = `${caller.name} ${route.method} ${route.path('')}`;
      if (!unknownAnswers.has(cacheKey)) {
        const unknownId = newId();
        unknownAnswers.set(
          cacheKey,
          call(route, unknownId, caller, caller.selected!).then((r) => ({ id: unknownId, body: r.body })),
        );
      }
      const { id: unknownId, body: unknownBody } = await unknownAnswers.get(cacheKey)!;
      const unknown = { body: unknownBody };
      checked++;
      const where = `${caller.name}: ${route.method} ${route.path('{id}')} with ${owner.label}'s ${kind}`;
      if (foreign.status !== 404) problems.push(`${where} → ${foreign.status} ${foreign.body.slice(0, 200)} (expected 404)`);
      const normalized = foreign.body.split(id).join('<id>');
      if (normalized !== unknown.body.split(unknownId).join('<id>'))
        problems.push(`${where}: answer differs from a never-existing id's: ${foreign.body.slice(0, 200)} vs ${unknown.body.slice(0, 200)}`);
      const leaks = leaksInto(foreign.body, caller.selected);
      if (leaks.length) problems.push(`${where} leaks ${leaks.join(', ')}`);
    });
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(5 * routes.length * 2 * 11);
  }, 300_000);

  it('a refused selection is 403 workspace_forbidden for every route and id, saying nothing about the id', async () => {
    const problems: string[] = [];
    const refused = callers().filter((c) => !c.selected);
    const cases = refused.flatMap((caller) =>
      routes.flatMap((route) =>
        w.tenants.flatMap((owner) =>
          idsOf(owner)
            .slice(0, 5)
            .map(([kind, id]) => ({ caller, route, owner, kind, id })),
        ),
      ),
    );
    const bodies = new Set<string>();
    await inBatches(cases, 8, async ({ caller, route, owner, kind, id }) => {
      const res = await call(route, id, caller, owner);
      const where = `${caller.name}: ${route.method} ${route.path('{id}')} with ${owner.label}'s ${kind}`;
      if (res.status !== 403 || JSON.parse(res.body).error !== 'workspace_forbidden') problems.push(`${where} → ${res.status} ${res.body.slice(0, 200)}`);
      bodies.add(res.body);
    });
    expect(problems).toEqual([]);
    expect(bodies.size).toBe(1);
  }, 120_000);

  it('the selected workspace’s own objects answer as the rules say, through its own key and through the Team selector alike', async () => {
    const problems: string[] = [];
    const byRoute = new Map<string, Map<string, string>>();
    for (const caller of callers().filter((c) => c.selected)) {
      const home = caller.selected!;
      for (const route of routes) {
        const id = idsOf(home).find(([kind]) => kind === route.kind)![1];
        const res = await call(route, id, caller, home);
        const where = `${caller.name}: ${route.method} ${route.path('{id}')} with its own ${route.kind}`;
        if (res.status !== route.found) problems.push(`${where} → ${res.status} ${res.body.slice(0, 300)} (expected ${route.found})`);
        const leaks = leaksInto(res.body, home);
        if (leaks.length) problems.push(`${where} leaks ${leaks.join(', ')}`);
        // The client's objects answer the same status through its own key and through the owner's selector.
        const key = `${route.method} ${route.path('{id}')} ${home.label}`;
        if (!byRoute.has(key)) byRoute.set(key, new Map());
        byRoute.get(key)!.set(caller.name, String(res.status));
      }
    }
    expect(problems).toEqual([]);
    for (const [key, statuses] of byRoute) expect(new Set(statuses.values()).size, `${key}: ${JSON.stringify([...statuses])}`).toBe(1);
  }, 120_000);

  it('own-workspace special cases: a Play without the review API is 404; an autopilot Play refuses import; an X reply refuses decisions (409)', async () => {
    for (const caller of [callers()[0], callers()[1]]) {
      const home = caller.selected!;
      const closed = await call(routes[0], home.plays.noReview, caller, home);
      expect(closed.status, caller.name).toBe(404);
      const autopilot = await t.app.inject({
        method: 'POST',
        url: `/api/v1/plays/${home.plays.autopilot}/import`,
        headers: caller.headers,
        payload: { requestId: 'bola-autopilot', expectedRevision: 1, leads: [{ xUserId: '123456' }] },
      });
      expect(autopilot.statusCode, caller.name).toBe(409);
      expect(autopilot.json().error).toBe('play_autopilot');
      const xReply = await t.app.inject({
        method: 'POST',
        url: `/api/v1/replies/${home.replies.x}/decide`,
        headers: caller.headers,
        payload: { decision: 'dismiss' },
      });
      expect(xReply.statusCode, caller.name).toBe(409);
      expect(xReply.json().error).toBe('answered_on_x');
    }
  });

  it('ids inside bodies and queries: foreign candidates, sequences, cursors and accounts are not found and never echoed back with data', async () => {
    for (const caller of [callers()[0], callers()[1], callers()[4]]) {
      const home = caller.selected!;
      const others = w.tenants.filter((x) => x !== home);
      for (const other of others) {
        const label = `${caller.name} with ${other.label}'s ids`;
        // Enrolls into the caller's own review Play, at revision 1 of the Play and of the sequence.
        const enroll = (sequenceId: string, candidateId: string) =>
          t.app.inject({
            method: 'POST',
            url: `/api/v1/plays/${home.plays.review}/enroll`,
            headers: caller.headers,
            payload: { expectedRevision: 1, sequenceId, sequenceRevision: 1, candidateIds: [candidateId] },
          });
        const enrollForeignCandidate = await enroll(home.sequences.active, other.candidates[1].id);
        expect(enrollForeignCandidate.statusCode, label).toBe(404);
        expect(enrollForeignCandidate.json().error, label).toBe('candidate not found');
        const enrollForeignSequence = await enroll(other.sequences.active, home.candidates[1].id);
        expect(enrollForeignSequence.statusCode, label).toBe(409);
        expect(enrollForeignSequence.json().error, label).toBe('sequence_mismatch');
        const lookup = await t.app.inject({
          method: 'POST',
          url: `/api/v1/plays/${home.plays.review}/candidates/lookup`,
          headers: caller.headers,
          payload: { identities: [{ xUserId: other.candidates[0].xUserId }, { username: other.candidates[1].username }] },
        });
        expect(lookup.statusCode, label).toBe(200);
        expect(
          lookup.json().results.map((r: { exists: boolean }) => r.exists),
          label,
        ).toEqual([false, false]);
        const cursor = await t.app.inject({
          method: 'GET',
          url: `/api/v1/plays/${home.plays.review}/candidates?after=${other.candidates[0].id}`,
          headers: caller.headers,
        });
        expect(cursor.statusCode, label).toBeLessThan(500);
        const activity = await t.app.inject({ method: 'GET', url: `/api/v1/activity?account=${other.messagingAccountId}`, headers: caller.headers });
        expect(activity.statusCode, label).toBe(200);
        expect(activity.json().count, label).toBe(0);
        const search = await t.app.inject({ method: 'GET', url: `/api/v1/leads?q=${encodeURIComponent(other.privateTexts[3])}`, headers: caller.headers });
        expect(search.json().count, label).toBe(0);
        const sentIds = new Set([
          other.candidates[0].id,
          other.candidates[1].id,
          other.sequences.active,
          other.messagingAccountId,
          other.candidates[0].xUserId,
        ]);
        for (const res of [enrollForeignCandidate, enrollForeignSequence, lookup, cursor, activity, search]) {
          expect(leaksInto(res.body, home), label).toEqual([]);
          // Ids the caller did not send itself never come back: the other workspace's id, its other candidates.
          for (const id of [other.id, other.candidates[2].id, other.candidates[3].id, other.candidates[2].xUserId, other.leads.x, other.plays.review].filter(
            (v) => !sentIds.has(v),
          )) {
            expect(res.body.includes(id), `${label}: answer echoes ${id}`).toBe(false);
          }
        }
      }
    }
  });

  it('lists through the selector show the client’s objects only, and a bare owner key never shows them', async () => {
    const viaSelector = { ...w.owner.auth, 'x-workspace-client': w.client.id };
    for (const [path, pick] of [
      ['/sequences', (b: any) => b.sequences.map((s: { id: string }) => s.id)],
      ['/x/plays', (b: any) => b.plays.map((p: { id: string }) => p.id)],
      ['/webhooks', (b: any) => b.webhooks.map((h: { id: string }) => h.id)],
      ['/replies', (b: any) => b.replies.map((r: { id: string }) => r.id)],
      ['/leads', (b: any) => b.leads.map((l: { id: string }) => l.id)],
    ] as const) {
      const client = pick((await t.app.inject({ method: 'GET', url: `/api/v1${path}`, headers: viaSelector })).json());
      const own = pick((await t.app.inject({ method: 'GET', url: `/api/v1${path}`, headers: w.owner.auth })).json());
      const clientKey = pick((await t.app.inject({ method: 'GET', url: `/api/v1${path}`, headers: w.client.auth })).json());
      expect(client.length, path).toBeGreaterThan(0);
      expect(new Set(client), path).toEqual(new Set(clientKey));
      expect(
        own.filter((id: string) => client.includes(id)),
        path,
      ).toEqual([]);
    }
  });

  it('DELETE /webhooks/{id}: foreign ids 404 and leave the hook enabled; the owner via the selector deletes the client’s, and a repeat is 404', async () => {
    for (const caller of callers().filter((c) => c.selected)) {
      for (const other of w.tenants.filter((x) => x !== caller.selected)) {
        const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${other.webhooks[1]}`, headers: caller.headers });
        expect(res.statusCode, `${caller.name} deleting ${other.label}'s hook`).toBe(404);
        expect(res.json()).toEqual({ error: 'webhook not found' });
      }
    }
    const listed = (await t.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: w.client.auth })).json().webhooks.map((h: { id: string }) => h.id);
    expect(listed).toContain(w.client.webhooks[1]);
    const viaSelector = { ...w.owner.auth, 'x-workspace-client': w.client.id };
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${w.client.webhooks[1]}`, headers: viaSelector })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${w.client.webhooks[1]}`, headers: w.client.auth })).statusCode).toBe(404);
  });

  it('the server logged none of the keys, secrets or private texts, not even the company names searched for in `?q=`', () => {
    const secrets = w.tenants.flatMap((x) => [x.key, ...x.webhookSecrets, ...x.privateTexts]);
    expect(findSecrets(logs.text(), secrets)).toEqual([]);
  });
});

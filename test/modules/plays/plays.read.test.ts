import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { client, startPlayTest, type Client, type TestWorkspace } from '../../helpers/http-client.js';
import * as seed from '../../helpers/factories.js';
import { newId } from '../../../src/lib/ids.js';
import { snapshot, walkPages } from './plays.test-support.js';

let t: TestApp, acme: TestWorkspace, other: TestWorkspace, api: Client;

beforeAll(async () => ({ t, acme, other, api } = await startPlayTest()));
afterAll(async () => t?.close());

describe('GET /x/accounts', () => {
  it('lists the saved connected identities of the workspace as {userId, handle}', async () => {
    const ws = await createWorkspaceWithKey(t, 'Accounts');
    await seed.insertXAccount(t.db, ws.workspaceId, { userId: '2001', handle: 'acme_hq', createdAt: new Date('2026-01-01T00:00:00Z') });
    await seed.insertXAccount(t.db, ws.workspaceId, { userId: '2002', handle: 'acme_sales', createdAt: new Date('2026-02-01T00:00:00Z') });
    await seed.insertXAccount(t.db, other.workspaceId, { userId: '2003', handle: 'not_yours' });
    const res = await client(t, ws.auth).get('/x/accounts');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      accounts: [
        { userId: '2001', handle: 'acme_hq' },
        { userId: '2002', handle: 'acme_sales' },
      ],
    });
  });

  it('answers an empty list for a workspace without connected accounts', async () => {
    const ws = await createWorkspaceWithKey(t, 'No accounts');
    expect((await client(t, ws.auth).get('/x/accounts')).json()).toEqual({ accounts: [] });
  });

  it('X-Workspace-Client selects a Team client workspace and its accounts', async () => {
    const owner = await createWorkspaceWithKey(t, 'Agency');
    const clientWs = await createWorkspaceWithKey(t, 'Agency client');
    await t.services.workspaces.addTeamLink({ ownerWorkspaceId: owner.workspaceId, clientWorkspaceId: clientWs.workspaceId, role: 'admin' });
    await seed.insertXAccount(t.db, clientWs.workspaceId, { userId: '3001', handle: 'client_hq' });
    const c = client(t, owner.auth);
    expect((await c.get('/x/accounts')).json()).toEqual({ accounts: [] });
    expect((await c.get('/x/accounts', { 'x-workspace-client': clientWs.workspaceId })).json()).toEqual({
      accounts: [{ userId: '3001', handle: 'client_hq' }],
    });
    expect((await c.get('/x/accounts', { 'x-workspace-client': other.workspaceId })).statusCode).toBe(403);
  });

  it('answers 401 without a key', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/x/accounts' })).statusCode).toBe(401);
  });
});

describe('GET /x/plays', () => {
  it('lists every Play of the workspace with all spec fields, oldest first', async () => {
    const ws = await createWorkspaceWithKey(t, 'Plays');
    const seq = await seed.insertSequence(t.db, ws.workspaceId, seed.X_SEQUENCE);
    const a = await seed.insertPlay(t.db, ws.workspaceId, {
      name: 'Followers of acme_hq',
      revision: 4,
      sequenceId: seq,
      accountUserId: '2001',
      createdAt: new Date('2026-01-01T00:00:00Z'),
    });
    const b = await seed.insertPlay(t.db, ws.workspaceId, {
      name: 'Old',
      status: 'archived',
      reviewApiEnabled: false,
      autopilot: true,
      createdAt: new Date('2026-02-01T00:00:00Z'),
    });
    await seed.insertPlay(t.db, other.workspaceId, { name: 'Not yours' });
    const res = await client(t, ws.auth).get('/x/plays');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      plays: [
        {
          id: a.id,
          name: 'Followers of acme_hq',
          status: 'active',
          revision: 4,
          sequenceId: seq,
          accountUserId: '2001',
          reviewApiEnabled: true,
          autopilot: false,
        },
        { id: b.id, name: 'Old', status: 'archived', revision: 1, sequenceId: null, accountUserId: null, reviewApiEnabled: false, autopilot: true },
      ],
    });
  });
});

describe('social-network channel disabled', () => {
  it('GET /x/accounts and GET /x/plays answer 403 channel_disabled; /plays/* operations keep working', async () => {
    const ws = await createWorkspaceWithKey(t, 'Channel off');
    const { play, sequence } = await seed.insertReviewPlay(t.db, ws.workspaceId);
    const [cand] = await seed.insertCandidates(t.db, ws.workspaceId, play.id, [{}]);
    await seed.setWorkspaceState(t.db, ws.workspaceId, { xChannelEnabled: false });
    const c = client(t, ws.auth);
    for (const url of ['/x/accounts', '/x/plays']) {
      const res = await c.get(url);
      expect(res.statusCode, url).toBe(403);
      expect(res.json()).toMatchObject({ error: 'channel_disabled' });
    }
    expect((await c.get(`/plays/${play.id}/candidates`)).statusCode).toBe(200);
    expect((await c.post(`/plays/${play.id}/candidates/lookup`, { identities: [{ xUserId: cand.xUserId }] })).statusCode).toBe(200);
    expect(
      (await c.post(`/plays/${play.id}/import`, { requestId: 'channel-off-1', expectedRevision: 1, leads: [{ xUserId: seed.nextXUserId() }] })).statusCode,
    ).toBe(200);
    const enroll = await c.post(`/plays/${play.id}/enroll`, { expectedRevision: 1, sequenceId: sequence.id, sequenceRevision: 1, candidateIds: [cand.id] });
    expect(enroll.statusCode).toBe(200);
    expect((await c.get(`/plays/${play.id}/leads`)).statusCode).toBe(200);
    await seed.setWorkspaceState(t.db, ws.workspaceId, { xChannelEnabled: true });
    expect((await c.get('/x/plays')).statusCode).toBe(200);
  });
});

describe('tenancy: another workspace’s Play answers 404 exactly like an unknown id', () => {
  it('on every /plays route, and for a Play without the review API', async () => {
    const foreign = await seed.insertReviewPlay(t.db, other.workspaceId);
    const [foreignCandidate] = await seed.insertCandidates(t.db, other.workspaceId, foreign.play.id, [{}]);
    const disabled = await seed.insertReviewPlay(t.db, acme.workspaceId, { play: { reviewApiEnabled: false } });
    const routes = (id: string, sequenceId: string) =>
      [
        ['GET', `/plays/${id}/candidates`],
        ['POST', `/plays/${id}/candidates/lookup`, { identities: [{ xUserId: foreignCandidate.xUserId }] }],
        ['POST', `/plays/${id}/import`, { requestId: 'tenancy-0001', expectedRevision: 1, leads: [{ xUserId: '42' }] }],
        ['POST', `/plays/${id}/enroll`, { expectedRevision: 1, sequenceId, sequenceRevision: 1, candidateIds: [foreignCandidate.id] }],
        ['POST', `/plays/${id}/leads`, { expectedRevision: 1, sequenceId, sequenceRevision: 1, candidateIds: [foreignCandidate.id] }],
        ['GET', `/plays/${id}/leads`],
      ] as const;
    const before = await snapshot(t.db);
    for (const id of [foreign.play.id, newId(), disabled.play.id]) {
      const seqId = id === disabled.play.id ? disabled.sequence.id : foreign.sequence.id;
      for (const [method, url, body] of routes(id, seqId)) {
        const res = method === 'GET' ? await api.get(url) : await api.post(url, body);
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json()).toEqual({ error: 'play not found' });
      }
    }
    expect(await snapshot(t.db)).toEqual(before);
    // The owner of the foreign Play reads it normally.
    expect((await client(t, other.auth).get(`/plays/${foreign.play.id}/candidates`)).statusCode).toBe(200);
  });

  it('a Team owner reaches a client workspace’s Play only with X-Workspace-Client', async () => {
    const owner = await createWorkspaceWithKey(t, 'Team owner');
    const clientWs = await createWorkspaceWithKey(t, 'Team client');
    await t.services.workspaces.addTeamLink({ ownerWorkspaceId: owner.workspaceId, clientWorkspaceId: clientWs.workspaceId, role: 'member' });
    const { play } = await seed.insertReviewPlay(t.db, clientWs.workspaceId);
    const c = client(t, owner.auth);
    expect((await c.get(`/plays/${play.id}/candidates`)).statusCode).toBe(404);
    expect((await c.get(`/plays/${play.id}/candidates`, { 'x-workspace-client': clientWs.workspaceId })).statusCode).toBe(200);
  });

  it('a malformed Play id is invalid input (400), not a lookup', async () => {
    for (const id of ['nope', '123', `${newId()}x`]) {
      const res = await api.get(`/plays/${id}/candidates`);
      expect(res.statusCode, id).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
  });

  it('an upper-case Play id names the same Play', async () => {
    const { play } = await seed.insertReviewPlay(t.db, acme.workspaceId);
    const res = await api.get(`/plays/${play.id.toUpperCase()}/candidates`);
    expect(res.statusCode).toBe(200);
    expect(res.json().play.id).toBe(play.id);
  });
});

describe('GET /plays/{id}/leads', () => {
  let playId: string;
  let sequenceId: string;
  let leadIds: string[];

  beforeAll(async () => {
    const r = await seed.insertReviewPlay(t.db, acme.workspaceId);
    playId = r.play.id;
    sequenceId = r.sequence.id;
    leadIds = [];
    for (let i = 0; i < 12; i++) {
      const id = await seed.insertLead(t.db, acme.workspaceId, {
        play_id: playId,
        sequence_id: sequenceId,
        x_user_id: seed.nextXUserId(),
        username: `lead_${i}`,
        person: i === 0 ? null : `Lead ${i}`,
        stage: i % 3 === 0 ? 'messaged' : 'queued',
        created_at: new Date(Date.UTC(2026, 10, 1, 0, i)),
      });
      leadIds.push(id);
    }
    // Leads of the same workspace outside this Play and another workspace's leads are not listed.
    await seed.insertLead(t.db, acme.workspaceId, { x_user_id: seed.nextXUserId(), sequence_id: sequenceId });
    const foreign = await seed.insertPlay(t.db, other.workspaceId);
    await seed.insertLead(t.db, other.workspaceId, { play_id: foreign.id });
  });

  it('lists the Play’s leads as {id, name, xUserId, username, sequenceId, stage, createdAt}', async () => {
    const res = await api.get(`/plays/${playId}/leads`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ playId, nextCursor: null, hasMore: false });
    expect(body.leads.map((l: { id: string }) => l.id)).toEqual([...leadIds].sort());
    const first = body.leads.find((l: { id: string }) => l.id === leadIds[1]);
    expect(first).toEqual({
      id: leadIds[1],
      name: 'Lead 1',
      xUserId: expect.any(String),
      username: 'lead_1',
      sequenceId,
      stage: 'queued',
      createdAt: '2026-11-01T00:01:00.000Z',
    });
    expect(body.leads.find((l: { id: string }) => l.id === leadIds[0]).name).toBeNull();
  });

  it('pagination: limit, nextCursor and hasMore walk every lead exactly once', async () => {
    for (const limit of [1, 5, 12, 200]) {
      const pages: { hasMore: boolean; count: number }[] = [];
      const rows = await walkPages<{ id: string }>(async (after) => {
        const body = (await api.get(`/plays/${playId}/leads?limit=${limit}${after ? `&after=${after}` : ''}`)).json();
        pages.push({ hasMore: body.hasMore, count: body.leads.length });
        expect(body.hasMore).toBe(body.nextCursor !== null);
        return { items: body.leads, nextCursor: body.nextCursor };
      });
      expect(
        rows.map((r) => r.id),
        String(limit),
      ).toEqual([...leadIds].sort());
      expect(pages.at(-1)!.hasMore).toBe(false);
    }
  });

  it('limit defaults to 100; 400 for a bad limit or cursor', async () => {
    const play = await seed.insertPlay(t.db, acme.workspaceId);
    for (let i = 0; i < 101; i++) await seed.insertLead(t.db, acme.workspaceId, { play_id: play.id });
    const body = (await api.get(`/plays/${play.id}/leads`)).json();
    expect(body.leads).toHaveLength(100);
    expect(body.hasMore).toBe(true);
    for (const query of ['limit=0', 'limit=201', 'limit=x', 'after=nope']) {
      expect((await api.get(`/plays/${playId}/leads?${query}`)).statusCode, query).toBe(400);
    }
  });
});

describe('OpenAPI description', () => {
  it('describes every Play operation with its real response schema and the X-Workspace-Client header', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const ops: [string, string, string[]][] = [
      ['/api/v1/x/accounts', 'get', ['accounts']],
      ['/api/v1/x/plays', 'get', ['plays']],
      ['/api/v1/plays/{id}/candidates', 'get', ['counts', 'candidates', 'nextCursor', 'play', 'sequence', 'reviewUrl']],
      ['/api/v1/plays/{id}/candidates/lookup', 'post', ['playId', 'results']],
      ['/api/v1/plays/{id}/import', 'post', ['playId', 'batchId', 'requestId', 'replayed', 'results', 'enrolled', 'sendsMessages']],
      ['/api/v1/plays/{id}/enroll', 'post', ['results', 'sequenceStatus', 'sequenceStatusChanged', 'reviewUrl']],
      ['/api/v1/plays/{id}/leads', 'post', ['results', 'sequenceStatus', 'sequenceStatusChanged', 'reviewUrl']],
      ['/api/v1/plays/{id}/leads', 'get', ['playId', 'leads', 'nextCursor', 'hasMore']],
    ];
    for (const [path, method, required] of ops) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      const schema = op.responses['200'].content['application/json'].schema;
      expect(schema.required?.slice().sort(), path).toEqual(required.slice().sort());
      expect(
        op.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'x-workspace-client'),
        path,
      ).toBe(true);
      if (path.includes('{id}')) expect(op.responses['404'], path).toBeDefined();
    }
    const importBody = doc.paths['/api/v1/plays/{id}/import'].post.requestBody.content['application/json'].schema;
    expect(importBody.additionalProperties).toBe(false);
    expect(importBody.properties.requestId.pattern).toBe('^[A-Za-z0-9][A-Za-z0-9._:-]{7,119}$');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../../test/helpers/build-test-app.js';
import {
  addBatch,
  addCandidates,
  addLead,
  addPlay,
  addReviewPlay,
  addSequence,
  addXAccount,
  nextXUserId,
  setXChannel,
} from '../../../test/helpers/fixtures.js';
import { newId } from '../../lib/ids.js';
import { client, snapshot, walkPages, type Client } from './plays.test-support.js';

let t: TestApp;
let acme: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let other: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let api: Client;

beforeAll(async () => {
  t = await buildTestApp();
  acme = await createWorkspaceWithKey(t, 'Acme');
  other = await createWorkspaceWithKey(t, 'Other');
  api = client(t, acme.auth);
});
afterAll(async () => t?.close());

type CandidateOut = { id: string; xUserId: string; username: string | null; name: string | null; status: string; review: unknown };
type CandidatesPage = {
  counts: { total: number; unreviewed: number; goodFit: number; notAGoodFit: number };
  candidates: CandidateOut[];
  nextCursor: string | null;
  play: unknown;
  sequence: unknown;
  reviewUrl: string;
};

async function listAll(playId: string, query: string, c: Client = api) {
  return walkPages<CandidateOut>(async (after) => {
    const res = await c.get(`/plays/${playId}/candidates?${query}${after ? `&after=${after}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as CandidatesPage;
    return { items: body.candidates, nextCursor: body.nextCursor };
  });
}

const sortedIds = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

describe('GET /x/accounts', () => {
  it('lists the saved connected identities of the workspace as {userId, handle}', async () => {
    const ws = await createWorkspaceWithKey(t, 'Accounts');
    await addXAccount(t.db, ws.workspaceId, { userId: '2001', handle: 'acme_hq', createdAt: new Date('2026-01-01T00:00:00Z') });
    await addXAccount(t.db, ws.workspaceId, { userId: '2002', handle: 'acme_sales', createdAt: new Date('2026-02-01T00:00:00Z') });
    await addXAccount(t.db, other.workspaceId, { userId: '2003', handle: 'not_yours' });
    const res = await client(t, ws.auth).get('/x/accounts');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ accounts: [{ userId: '2001', handle: 'acme_hq' }, { userId: '2002', handle: 'acme_sales' }] });
  });

  it('answers an empty list for a workspace without connected accounts', async () => {
    const ws = await createWorkspaceWithKey(t, 'No accounts');
    expect((await client(t, ws.auth).get('/x/accounts')).json()).toEqual({ accounts: [] });
  });

  it('X-Workspace-Client selects a Team client workspace and its accounts', async () => {
    const owner = await createWorkspaceWithKey(t, 'Agency');
    const clientWs = await createWorkspaceWithKey(t, 'Agency client');
    await t.services.workspaces.addTeamLink({ ownerWorkspaceId: owner.workspaceId, clientWorkspaceId: clientWs.workspaceId, role: 'admin' });
    await addXAccount(t.db, clientWs.workspaceId, { userId: '3001', handle: 'client_hq' });
    const c = client(t, owner.auth);
    expect((await c.get('/x/accounts')).json()).toEqual({ accounts: [] });
    expect((await c.get('/x/accounts', { 'x-workspace-client': clientWs.workspaceId })).json()).toEqual({ accounts: [{ userId: '3001', handle: 'client_hq' }] });
    expect((await c.get('/x/accounts', { 'x-workspace-client': other.workspaceId })).statusCode).toBe(403);
  });

  it('answers 401 without a key', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/x/accounts' })).statusCode).toBe(401);
  });
});

describe('GET /x/plays', () => {
  it('lists every Play of the workspace with all spec fields, oldest first', async () => {
    const ws = await createWorkspaceWithKey(t, 'Plays');
    const seq = await addSequence(t.db, ws.workspaceId);
    const a = await addPlay(t.db, ws.workspaceId, {
      name: 'Followers of acme_hq',
      revision: 4,
      sequenceId: seq.id,
      accountUserId: '2001',
      createdAt: new Date('2026-01-01T00:00:00Z'),
    });
    const b = await addPlay(t.db, ws.workspaceId, {
      name: 'Old',
      status: 'archived',
      reviewApiEnabled: false,
      autopilot: true,
      createdAt: new Date('2026-02-01T00:00:00Z'),
    });
    await addPlay(t.db, other.workspaceId, { name: 'Not yours' });
    const res = await client(t, ws.auth).get('/x/plays');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      plays: [
        { id: a.id, name: 'Followers of acme_hq', status: 'active', revision: 4, sequenceId: seq.id, accountUserId: '2001', reviewApiEnabled: true, autopilot: false },
        { id: b.id, name: 'Old', status: 'archived', revision: 1, sequenceId: null, accountUserId: null, reviewApiEnabled: false, autopilot: true },
      ],
    });
  });
});

describe('social-network channel disabled', () => {
  it('GET /x/accounts and GET /x/plays answer 403 channel_disabled; /plays/* operations keep working', async () => {
    const ws = await createWorkspaceWithKey(t, 'Channel off');
    const { play, sequence } = await addReviewPlay(t.db, ws.workspaceId);
    const [cand] = await addCandidates(t.db, ws.workspaceId, play.id, [{}]);
    await setXChannel(t.db, ws.workspaceId, false);
    const c = client(t, ws.auth);
    for (const url of ['/x/accounts', '/x/plays']) {
      const res = await c.get(url);
      expect(res.statusCode, url).toBe(403);
      expect(res.json()).toMatchObject({ error: 'channel_disabled' });
    }
    expect((await c.get(`/plays/${play.id}/candidates`)).statusCode).toBe(200);
    expect((await c.post(`/plays/${play.id}/candidates/lookup`, { identities: [{ xUserId: cand.xUserId }] })).statusCode).toBe(200);
    expect((await c.post(`/plays/${play.id}/import`, { requestId: 'channel-off-1', expectedRevision: 1, leads: [{ xUserId: nextXUserId() }] })).statusCode).toBe(200);
    const enroll = await c.post(`/plays/${play.id}/enroll`, { expectedRevision: 1, sequenceId: sequence.id, sequenceRevision: 1, candidateIds: [cand.id] });
    expect(enroll.statusCode).toBe(200);
    expect((await c.get(`/plays/${play.id}/leads`)).statusCode).toBe(200);
    await setXChannel(t.db, ws.workspaceId, true);
    expect((await c.get('/x/plays')).statusCode).toBe(200);
  });
});

describe('tenancy: another workspace’s Play answers 404 exactly like an unknown id', () => {
  it('on every /plays route, and for a Play without the review API', async () => {
    const foreign = await addReviewPlay(t.db, other.workspaceId);
    const [foreignCandidate] = await addCandidates(t.db, other.workspaceId, foreign.play.id, [{}]);
    const disabled = await addReviewPlay(t.db, acme.workspaceId, { play: { reviewApiEnabled: false } });
    const routes = (id: string, sequenceId: string) => [
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
    const { play } = await addReviewPlay(t.db, clientWs.workspaceId);
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
    const { play } = await addReviewPlay(t.db, acme.workspaceId);
    const res = await api.get(`/plays/${play.id.toUpperCase()}/candidates`);
    expect(res.statusCode).toBe(200);
    expect(res.json().play.id).toBe(play.id);
  });
});

describe('GET /plays/{id}/candidates', () => {
  let playId: string;
  const groups = { proposed: [] as string[], imported: [] as string[], good: [] as string[], bad: [] as string[] };

  beforeAll(async () => {
    const { play } = await addReviewPlay(t.db, acme.workspaceId, { play: { name: 'Review me', revision: 3 }, sequence: { name: 'Founders', revision: 5 } });
    playId = play.id;
    const rows = await addCandidates(t.db, acme.workspaceId, playId, [
      ...Array.from({ length: 10 }, () => ({})),
      ...Array.from({ length: 3 }, () => ({ status: 'imported' as const, username: null })),
      ...Array.from({ length: 6 }, () => ({ review: { decision: 'good_fit' as const } })),
      ...Array.from({ length: 4 }, () => ({ review: { decision: 'not_a_good_fit' as const } })),
    ]);
    groups.proposed = rows.slice(0, 10).map((r) => r.id);
    groups.imported = rows.slice(10, 13).map((r) => r.id);
    groups.good = rows.slice(13, 19).map((r) => r.id);
    groups.bad = rows.slice(19).map((r) => r.id);
    // Candidates of another Play and of another workspace never show up here.
    const sibling = await addPlay(t.db, acme.workspaceId);
    await addCandidates(t.db, acme.workspaceId, sibling.id, [{}, { review: { decision: 'good_fit' } }]);
    const foreign = await addPlay(t.db, other.workspaceId);
    await addCandidates(t.db, other.workspaceId, foreign.id, [{}, {}]);
  });

  it('counts: total = all, unreviewed = no review, goodFit / notAGoodFit by decision', async () => {
    const res = await api.get(`/plays/${playId}/candidates`);
    expect(res.statusCode).toBe(200);
    expect(res.json().counts).toEqual({ total: 23, unreviewed: 13, goodFit: 6, notAGoodFit: 4 });
  });

  it('counts are the same on every page and under every filter', async () => {
    for (const filter of ['all', 'unreviewed', 'good_fit', 'not_a_good_fit']) {
      const res = await api.get(`/plays/${playId}/candidates?filter=${filter}&limit=2`);
      expect(res.json().counts, filter).toEqual({ total: 23, unreviewed: 13, goodFit: 6, notAGoodFit: 4 });
    }
  });

  it('each filter returns exactly the candidates of its definition (unreviewed includes imported ones)', async () => {
    expect(sortedIds(await listAll(playId, 'filter=all&limit=200'))).toEqual([...groups.proposed, ...groups.imported, ...groups.good, ...groups.bad].sort());
    expect(sortedIds(await listAll(playId, 'filter=unreviewed'))).toEqual([...groups.proposed, ...groups.imported].sort());
    expect(sortedIds(await listAll(playId, 'filter=good_fit'))).toEqual([...groups.good].sort());
    expect(sortedIds(await listAll(playId, 'filter=not_a_good_fit'))).toEqual([...groups.bad].sort());
  });

  it('the default filter is all', async () => {
    const res = await api.get(`/plays/${playId}/candidates`);
    expect(res.json().candidates).toHaveLength(23);
    expect(res.json().nextCursor).toBeNull();
  });

  it('pagination walks every row exactly once, in id order, under every filter', async () => {
    for (const [filter, expected] of [
      ['all', 23],
      ['unreviewed', 13],
      ['good_fit', 6],
      ['not_a_good_fit', 4],
    ] as const) {
      for (const limit of [1, 3, 7]) {
        const rows = await listAll(playId, `filter=${filter}&limit=${limit}`);
        const ids = rows.map((r) => r.id);
        expect(ids.length, `${filter} ${limit}`).toBe(expected);
        expect(new Set(ids).size).toBe(expected);
        expect(ids).toEqual([...ids].sort());
      }
    }
  });

  it('a full page exactly at the end still answers one more, empty page with nextCursor null', async () => {
    const first = (await api.get(`/plays/${playId}/candidates?filter=not_a_good_fit&limit=2`)).json();
    const second = (await api.get(`/plays/${playId}/candidates?filter=not_a_good_fit&limit=2&after=${first.nextCursor}`)).json();
    expect(second.candidates).toHaveLength(2);
    expect(second.nextCursor).toBeNull();
  });

  it('candidate objects carry id, xUserId, username, name, status and review (null until a decision)', async () => {
    const rows = await listAll(playId, 'limit=200');
    const good = rows.find((r) => r.id === groups.good[0])!;
    expect(good).toEqual({
      id: groups.good[0],
      xUserId: expect.stringMatching(/^[1-9][0-9]*$/),
      username: expect.stringMatching(/^user_/),
      name: expect.stringMatching(/^Person /),
      status: 'approved',
      review: { decision: 'good_fit', reviewedAt: '2026-11-10T10:00:00.000Z', by: 'reviewer@example.com' },
    });
    expect(rows.find((r) => r.id === groups.bad[0])).toMatchObject({ status: 'rejected', review: { decision: 'not_a_good_fit' } });
    expect(rows.find((r) => r.id === groups.proposed[0])).toMatchObject({ status: 'proposed', review: null });
    expect(rows.find((r) => r.id === groups.imported[0])).toMatchObject({ status: 'imported', review: null, username: null });
  });

  it('returns the Play summary, the sequence summary with its approval and the review URL', async () => {
    const body = (await api.get(`/plays/${playId}/candidates?limit=1`)).json();
    expect(body.play).toEqual({ id: playId, name: 'Review me', revision: 3, status: 'active' });
    expect(body.sequence).toEqual({ id: expect.any(String), name: 'Founders', revision: 5, status: 'active', approved: true });
    expect(body.reviewUrl).toBe(`http://localhost:8080/review/plays/${playId}`);
    expect(Object.keys(body).sort()).toEqual(['candidates', 'counts', 'nextCursor', 'play', 'reviewUrl', 'sequence']);
  });

  it('sequence.approved is false when the current revision is not the approved one', async () => {
    const { play } = await addReviewPlay(t.db, acme.workspaceId, { sequence: { status: 'draft', revision: 3, approvedRevision: 2 } });
    expect((await api.get(`/plays/${play.id}/candidates`)).json().sequence).toMatchObject({ revision: 3, status: 'draft', approved: false });
    const { play: never } = await addReviewPlay(t.db, acme.workspaceId, { sequence: { approvedRevision: null } });
    expect((await api.get(`/plays/${never.id}/candidates`)).json().sequence.approved).toBe(false);
  });

  it('counts stay exact whoever writes: direct inserts, review changes, edits, moves and deletes', async () => {
    const { play } = await addReviewPlay(t.db, acme.workspaceId);
    const sibling = await addPlay(t.db, acme.workspaceId);
    const counts = async (id: string) => (await api.get(`/plays/${id}/candidates?limit=1`)).json().counts;
    const rows = await addCandidates(t.db, acme.workspaceId, play.id, [{}, {}, {}, { review: { decision: 'good_fit' } }]);
    expect(await counts(play.id)).toEqual({ total: 4, unreviewed: 3, goodFit: 1, notAGoodFit: 0 });
    await t.db.updateTable('candidates').set({ review_decision: 'not_a_good_fit', status: 'rejected' }).where('id', 'in', [rows[0].id, rows[3].id]).execute();
    await t.db.updateTable('candidates').set({ name: 'Renamed' }).where('play_id', '=', play.id).execute();
    expect(await counts(play.id)).toEqual({ total: 4, unreviewed: 2, goodFit: 0, notAGoodFit: 2 });
    await t.db.updateTable('candidates').set({ play_id: sibling.id }).where('id', '=', rows[0].id).execute();
    await t.db.deleteFrom('candidates').where('id', '=', rows[1].id).execute();
    expect(await counts(play.id)).toEqual({ total: 2, unreviewed: 1, goodFit: 0, notAGoodFit: 1 });
    expect(await counts(sibling.id)).toEqual({ total: 1, unreviewed: 0, goodFit: 0, notAGoodFit: 1 });
  });

  it('sequence is null for a Play without a sequence; an empty Play has zero counts', async () => {
    const play = await addPlay(t.db, acme.workspaceId);
    const body = (await api.get(`/plays/${play.id}/candidates`)).json();
    expect(body).toMatchObject({ sequence: null, candidates: [], nextCursor: null, counts: { total: 0, unreviewed: 0, goodFit: 0, notAGoodFit: 0 } });
  });

  it('reviewUrl is built on OUTREACH_PUBLIC_URL when it is set', async () => {
    const other = await buildTestApp({ handle: t.handle, env: { OUTREACH_PUBLIC_URL: 'https://outreach.example.com/' } });
    try {
      const res = await client(other, acme.auth).get(`/plays/${playId}/candidates?limit=1`);
      expect(res.json().reviewUrl).toBe(`https://outreach.example.com/review/plays/${playId}`);
    } finally {
      await other.close();
    }
  });

  it('limit defaults to 100 and accepts 1..200', async () => {
    const play = await addPlay(t.db, acme.workspaceId);
    await addCandidates(t.db, acme.workspaceId, play.id, Array.from({ length: 230 }, () => ({})));
    const first = (await api.get(`/plays/${play.id}/candidates`)).json();
    expect(first.candidates).toHaveLength(100);
    expect(first.nextCursor).toBe(first.candidates[99].id);
    expect((await api.get(`/plays/${play.id}/candidates?limit=200`)).json().candidates).toHaveLength(200);
    expect((await api.get(`/plays/${play.id}/candidates?limit=1`)).json().candidates).toHaveLength(1);
  });

  it('400 for a bad limit, filter or cursor', async () => {
    for (const query of ['limit=0', 'limit=201', 'limit=-1', 'limit=1.5', 'limit=abc', 'filter=rejected', 'filter=ALL', 'after=nope', 'after=123', 'after=']) {
      const res = await api.get(`/plays/${playId}/candidates?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
  });

  it('archived, paused and autopilot Plays stay readable', async () => {
    for (const play of [{ status: 'archived' as const }, { status: 'paused' as const }, { autopilot: true }]) {
      const { play: p } = await addReviewPlay(t.db, acme.workspaceId, { play });
      expect((await api.get(`/plays/${p.id}/candidates`)).statusCode).toBe(200);
    }
  });

  it('walking every page while candidates are being added returns every earlier row exactly once', async () => {
    const { play } = await addReviewPlay(t.db, acme.workspaceId);
    const original = await addCandidates(t.db, acme.workspaceId, play.id, Array.from({ length: 40 }, () => ({})));
    const added: string[] = [];
    const rows = await walkPages<CandidateOut>(
      async (after) => {
        const body = (await api.get(`/plays/${play.id}/candidates?limit=6${after ? `&after=${after}` : ''}`)).json() as CandidatesPage;
        return { items: body.candidates, nextCursor: body.nextCursor };
      },
      async () => {
        const more = await addCandidates(t.db, acme.workspaceId, play.id, [{}, {}, {}]);
        added.push(...more.map((m) => m.id));
      },
    );
    const ids = rows.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const o of original) expect(ids.filter((id) => id === o.id), o.id).toHaveLength(1);
    expect(ids.every((id) => original.some((o) => o.id === id) || added.includes(id))).toBe(true);
    expect(ids).toEqual([...ids].sort());
  });
});

describe('POST /plays/{id}/candidates/lookup', () => {
  let playId: string;
  let sequenceId: string;
  const ids = { alice: '', bob: '', carol: '', twinA: '', twinB: '', dora: '' };
  const candidateIds: Record<string, string> = {};
  const leads: Record<string, string> = {};

  beforeAll(async () => {
    const r = await addReviewPlay(t.db, acme.workspaceId);
    playId = r.play.id;
    sequenceId = r.sequence.id;
    for (const k of Object.keys(ids) as (keyof typeof ids)[]) ids[k] = nextXUserId();
    const batch1 = await addBatch(t.db, acme.workspaceId, playId);
    const batch2 = await addBatch(t.db, acme.workspaceId, playId);
    const [alice] = await addCandidates(t.db, acme.workspaceId, playId, [{ xUserId: ids.alice, username: 'Alice_X', name: 'Alice', batchId: batch1 }]);
    const [bob, carol, twinA, twinB] = await addCandidates(t.db, acme.workspaceId, playId, [
      { xUserId: ids.bob, username: 'bob', review: { decision: 'good_fit' }, batchId: batch2 },
      { xUserId: ids.carol, username: null, status: 'imported' },
      { xUserId: ids.twinA, username: 'Twin' },
      { xUserId: ids.twinB, username: 'twin' },
    ]);
    Object.assign(candidateIds, { alice: alice.id, bob: bob.id, carol: carol.id, twinA: twinA.id, twinB: twinB.id });
    // The same identity as a candidate of another Play is not a match here.
    const sibling = await addPlay(t.db, acme.workspaceId);
    await addCandidates(t.db, acme.workspaceId, sibling.id, [{ xUserId: ids.dora, username: 'dora' }]);
    const otherSeq = await addSequence(t.db, acme.workspaceId);
    leads.aliceElsewhere = (await addLead(t.db, acme.workspaceId, { x_user_id: ids.alice, sequence_id: otherSeq.id, stage: 'messaged', created_at: new Date('2026-01-01T00:00:00Z') })).id;
    leads.aliceHere = (await addLead(t.db, acme.workspaceId, { x_user_id: ids.alice, sequence_id: sequenceId, play_id: playId, candidate_id: alice.id, stage: 'queued', created_at: new Date('2026-02-01T00:00:00Z') })).id;
    leads.bobReplied = (await addLead(t.db, acme.workspaceId, { x_user_id: ids.bob, username: 'bob', sequence_id: otherSeq.id, stage: 'replied', automation_stopped: true })).id;
    leads.dora = (await addLead(t.db, acme.workspaceId, { x_user_id: ids.dora, username: 'Dora', stage: 'skipped', automation_stopped: true })).id;
    // Another workspace's lead for the same identity is never listed.
    await addLead(t.db, other.workspaceId, { x_user_id: ids.bob, username: 'bob', stage: 'queued' });
  });

  const lookup = (identities: unknown, c: Client = api) => c.post(`/plays/${playId}/candidates/lookup`, { identities });

  it('exact match by xUserId returns the candidate; currentFollowerStatus is always unknown', async () => {
    const res = await lookup([{ xUserId: ids.alice }]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      playId,
      results: [
        {
          exists: true,
          candidate: { id: candidateIds.alice, xUserId: ids.alice, username: 'Alice_X', name: 'Alice', status: 'proposed', review: null },
          enrolledInPlay: true,
          currentFollowerStatus: 'unknown',
          existingLeads: [
            { id: leads.aliceElsewhere, sequenceId: expect.any(String), playId: null, stage: 'messaged' },
            { id: leads.aliceHere, sequenceId, playId, stage: 'queued' },
          ],
        },
      ],
    });
  });

  it('handles match case-insensitively with the leading @ optional', async () => {
    const res = await lookup([{ username: '@ALICE_x' }, { username: 'alice_X' }, { username: 'BOB' }]);
    expect(res.statusCode).toBe(200);
    const results = res.json().results;
    expect(results.map((r: { candidate: { id: string } }) => r.candidate.id)).toEqual([candidateIds.alice, candidateIds.alice, candidateIds.bob]);
  });

  it('matches across every saved batch of the Play, whatever its review state', async () => {
    const res = await lookup([{ xUserId: ids.alice }, { xUserId: ids.bob }, { xUserId: ids.carol }]);
    const results = res.json().results;
    expect(results.map((r: { exists: boolean }) => r.exists)).toEqual([true, true, true]);
    expect(results[1].candidate).toMatchObject({ status: 'approved', review: { decision: 'good_fit' } });
    expect(results[2].candidate).toMatchObject({ status: 'imported', username: null });
  });

  it('no match: exists false, candidate null, enrolledInPlay false, existingLeads empty', async () => {
    const res = await lookup([{ xUserId: nextXUserId() }, { username: 'nobody_here' }]);
    expect(res.json().results).toEqual([
      { exists: false, candidate: null, enrolledInPlay: false, currentFollowerStatus: 'unknown', existingLeads: [] },
      { exists: false, candidate: null, enrolledInPlay: false, currentFollowerStatus: 'unknown', existingLeads: [] },
    ]);
  });

  it('existingLeads lists the workspace’s leads for the identity in any sequence, stopped or replied, never another workspace’s', async () => {
    const [bob] = (await lookup([{ xUserId: ids.bob }])).json().results;
    expect(bob.existingLeads).toEqual([{ id: leads.bobReplied, sequenceId: expect.any(String), playId: null, stage: 'replied' }]);
    expect(bob.enrolledInPlay).toBe(false);
  });

  it('a candidate of another Play is not a match, but the identity’s leads are still listed (by id, or by saved handle)', async () => {
    const res = await lookup([{ xUserId: ids.dora }, { username: '@dora' }]);
    const expected = { exists: false, candidate: null, enrolledInPlay: false, currentFollowerStatus: 'unknown', existingLeads: [{ id: leads.dora, sequenceId: null, playId: null, stage: 'skipped' }] };
    expect(res.json().results).toEqual([expected, expected]);
  });

  it('one result per identity in request order, repeated identities included', async () => {
    const res = await lookup([{ username: 'bob' }, { xUserId: nextXUserId() }, { xUserId: ids.alice }, { username: 'bob' }]);
    const results = res.json().results;
    expect(results).toHaveLength(4);
    expect(results.map((r: { candidate: { id: string } | null }) => r.candidate?.id ?? null)).toEqual([candidateIds.bob, null, candidateIds.alice, candidateIds.bob]);
  });

  it('409 ambiguous_identity when a handle matches candidates with different user ids; numeric ids still resolve', async () => {
    const res = await lookup([{ xUserId: ids.alice }, { username: '@TWIN' }]);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error: 'ambiguous_identity', usernames: ['twin'] });
    expect(res.json().candidates.map((c: { xUserId: string }) => c.xUserId).sort()).toEqual([ids.twinA, ids.twinB].sort());
    const byId = await lookup([{ xUserId: ids.twinA }, { xUserId: ids.twinB }]);
    expect(byId.json().results.map((r: { candidate: { id: string } }) => r.candidate.id)).toEqual([candidateIds.twinA, candidateIds.twinB]);
  });

  it('accepts 200 identities', async () => {
    const res = await lookup(Array.from({ length: 200 }, (_, i) => (i % 2 ? { xUserId: nextXUserId() } : { username: `u${i}` })));
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toHaveLength(200);
  });

  it('400 for bad input of every shape, and nothing changes', async () => {
    const before = await snapshot(t.db);
    const bodies: unknown[] = [
      {},
      { identities: [] },
      { identities: Array.from({ length: 201 }, () => ({ xUserId: '1' })) },
      { identities: 'alice' },
      { identities: [{}] },
      { identities: [{ xUserId: ids.alice, username: 'alice_x' }] },
      { identities: [{ xUserId: Number(ids.alice) }] },
      { identities: [{ xUserId: '0123' }] },
      { identities: [{ xUserId: '123456789012345678901' }] },
      { identities: [{ username: 'has space' }] },
      { identities: [{ username: 'waytoolonghandle_x' }] },
      { identities: [{ username: '@' }] },
      { identities: [{ username: 'bob', reference: 'x' }] },
      { identities: [{ handle: 'bob' }] },
      { identities: [{ xUserId: ids.alice }], extra: true },
      [{ xUserId: ids.alice }],
      'not json',
    ];
    for (const body of bodies) {
      const res = await api.post(`/plays/${playId}/candidates/lookup`, body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(typeof res.json().error).toBe('string');
    }
    const noBody = await t.app.inject({ method: 'POST', url: `/api/v1/plays/${playId}/candidates/lookup`, headers: acme.auth });
    expect(noBody.statusCode).toBe(400);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('an identity with both or neither field answers a message naming the item and the rule', async () => {
    for (const identity of [{ xUserId: ids.alice, username: 'alice_x' }, {}]) {
      const res = await lookup([{ xUserId: ids.bob }, identity]);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_request', message: 'identities[1] must have exactly one of xUserId or username' });
    }
  });
});

describe('GET /plays/{id}/leads', () => {
  let playId: string;
  let sequenceId: string;
  let leadIds: string[];

  beforeAll(async () => {
    const r = await addReviewPlay(t.db, acme.workspaceId);
    playId = r.play.id;
    sequenceId = r.sequence.id;
    leadIds = [];
    for (let i = 0; i < 12; i++) {
      const { id } = await addLead(t.db, acme.workspaceId, {
        play_id: playId,
        sequence_id: sequenceId,
        x_user_id: nextXUserId(),
        username: `lead_${i}`,
        person: i === 0 ? null : `Lead ${i}`,
        stage: i % 3 === 0 ? 'messaged' : 'queued',
        created_at: new Date(Date.UTC(2026, 10, 1, 0, i)),
      });
      leadIds.push(id);
    }
    // Leads of the same workspace outside this Play and another workspace's leads are not listed.
    await addLead(t.db, acme.workspaceId, { x_user_id: nextXUserId(), sequence_id: sequenceId });
    const foreign = await addPlay(t.db, other.workspaceId);
    await addLead(t.db, other.workspaceId, { play_id: foreign.id });
  });

  it('lists the Play’s leads as {id, name, xUserId, username, sequenceId, stage, createdAt}', async () => {
    const res = await api.get(`/plays/${playId}/leads`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ playId, nextCursor: null, hasMore: false });
    expect(body.leads.map((l: { id: string }) => l.id)).toEqual([...leadIds].sort());
    const first = body.leads.find((l: { id: string }) => l.id === leadIds[1]);
    expect(first).toEqual({ id: leadIds[1], name: 'Lead 1', xUserId: expect.any(String), username: 'lead_1', sequenceId, stage: 'queued', createdAt: '2026-11-01T00:01:00.000Z' });
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
      expect(rows.map((r) => r.id), String(limit)).toEqual([...leadIds].sort());
      expect(pages.at(-1)!.hasMore).toBe(false);
    }
  });

  it('limit defaults to 100; 400 for a bad limit or cursor', async () => {
    const play = await addPlay(t.db, acme.workspaceId);
    for (let i = 0; i < 101; i++) await addLead(t.db, acme.workspaceId, { play_id: play.id });
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
      expect(op.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'x-workspace-client'), path).toBe(true);
      if (path.includes('{id}')) expect(op.responses['404'], path).toBeDefined();
    }
    const importBody = doc.paths['/api/v1/plays/{id}/import'].post.requestBody.content['application/json'].schema;
    expect(importBody.additionalProperties).toBe(false);
    expect(importBody.properties.requestId.pattern).toBe('^[A-Za-z0-9][A-Za-z0-9._:-]{7,119}$');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import { client, startPlayTest, type Client, type TestWorkspace } from '../../helpers/http-client.js';
import { insertCandidates, insertPlay, insertReviewPlay } from '../../helpers/factories.js';
import { walkPages } from './plays.test-support.js';

let t: TestApp, acme: TestWorkspace, other: TestWorkspace, api: Client;

beforeAll(async () => ({ t, acme, other, api } = await startPlayTest()));
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
    const body = res.json<CandidatesPage>();
    return { items: body.candidates, nextCursor: body.nextCursor };
  });
}

const sortedIds = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

describe('GET /plays/{id}/candidates', () => {
  let playId: string;
  const groups = { proposed: [] as string[], imported: [] as string[], good: [] as string[], bad: [] as string[] };

  beforeAll(async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId, { play: { name: 'Review me', revision: 3 }, sequence: { name: 'Founders', revision: 5 } });
    playId = play.id;
    const rows = await insertCandidates(t.db, acme.workspaceId, playId, [
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
    const sibling = await insertPlay(t.db, acme.workspaceId);
    await insertCandidates(t.db, acme.workspaceId, sibling.id, [{}, { review: { decision: 'good_fit' } }]);
    const foreign = await insertPlay(t.db, other.workspaceId);
    await insertCandidates(t.db, other.workspaceId, foreign.id, [{}, {}]);
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
    const { play } = await insertReviewPlay(t.db, acme.workspaceId, { sequence: { status: 'draft', revision: 3, approvedRevision: 2 } });
    expect((await api.get(`/plays/${play.id}/candidates`)).json().sequence).toMatchObject({ revision: 3, status: 'draft', approved: false });
    const { play: never } = await insertReviewPlay(t.db, acme.workspaceId, { sequence: { approvedRevision: null } });
    expect((await api.get(`/plays/${never.id}/candidates`)).json().sequence.approved).toBe(false);
  });

  it('counts stay exact whoever writes: direct inserts, review changes, edits, moves and deletes', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const sibling = await insertPlay(t.db, acme.workspaceId);
    const counts = async (id: string) => (await api.get(`/plays/${id}/candidates?limit=1`)).json().counts;
    const rows = await insertCandidates(t.db, acme.workspaceId, play.id, [{}, {}, {}, { review: { decision: 'good_fit' } }]);
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
    const play = await insertPlay(t.db, acme.workspaceId);
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
    const play = await insertPlay(t.db, acme.workspaceId);
    await insertCandidates(
      t.db,
      acme.workspaceId,
      play.id,
      Array.from({ length: 230 }, () => ({})),
    );
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
      const { play: p } = await insertReviewPlay(t.db, acme.workspaceId, { play });
      expect((await api.get(`/plays/${p.id}/candidates`)).statusCode).toBe(200);
    }
  });

  it('walking every page while candidates are being added returns every earlier row exactly once', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const original = await insertCandidates(
      t.db,
      acme.workspaceId,
      play.id,
      Array.from({ length: 40 }, () => ({})),
    );
    const added: string[] = [];
    const rows = await walkPages<CandidateOut>(
      async (after) => {
        const body = (await api.get(`/plays/${play.id}/candidates?limit=6${after ? `&after=${after}` : ''}`)).json<CandidatesPage>();
        return { items: body.candidates, nextCursor: body.nextCursor };
      },
      async () => {
        const more = await insertCandidates(t.db, acme.workspaceId, play.id, [{}, {}, {}]);
        added.push(...more.map((m) => m.id));
      },
    );
    const ids = rows.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const o of original)
      expect(
        ids.filter((id) => id === o.id),
        o.id,
      ).toHaveLength(1);
    expect(ids.every((id) => original.some((o) => o.id === id) || added.includes(id))).toBe(true);
    expect(ids).toEqual([...ids].sort());
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/build-test-app.js';
import { client, startPlayTest, type Client, type TestWorkspace } from '../../helpers/http-client.js';
import { type CandidateFixture, type PlayFixture, insertCandidates, insertPlay, insertReviewPlay } from '../../helpers/factories.js';
import { newId } from '../../../src/lib/ids.js';
import { snapshot } from './plays.test-support.js';

let t: TestApp, acme: TestWorkspace, other: TestWorkspace, team: TestWorkspace, api: Client;

beforeAll(async () => ({ t, acme, other, team, api } = await startPlayTest({ team: true })));
afterAll(async () => t?.close());

const NOW = '2026-11-21T12:00:00.000Z';
type Decision = 'good_fit' | 'not_a_good_fit';

async function setup(candidates: CandidateFixture[] = [{}], f: { play?: PlayFixture; workspaceId?: string } = {}) {
  const world = await insertReviewPlay(t.db, f.workspaceId ?? acme.workspaceId, f);
  const rows = await insertCandidates(t.db, f.workspaceId ?? acme.workspaceId, world.play.id, candidates);
  const review = (decisions: { candidateId: string; decision: Decision }[], over: Record<string, unknown> = {}, as: Client = api) =>
    as.post(`/plays/${world.play.id}/candidates/review`, { expectedRevision: world.play.revision, decisions, ...over });
  return { ...world, candidates: rows, review };
}

const candidateRow = (id: string) => t.db.selectFrom('candidates').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const countsOf = async (playId: string) => (await api.get(`/plays/${playId}/candidates?limit=1`)).json().counts;

describe('POST /plays/{id}/candidates/review: decisions', () => {
  it('saves good_fit and not_a_good_fit with reviewedAt, the deciding key and the matching status; counts follow', async () => {
    const s = await setup([{}, { status: 'imported' }, {}]);
    const [a, b, c] = s.candidates;
    const res = await s.review([
      { candidateId: a.id, decision: 'good_fit' },
      { candidateId: b.id, decision: 'not_a_good_fit' },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.playId).toBe(s.play.id);
    expect(body.results).toEqual([
      {
        candidateId: a.id,
        result: 'reviewed',
        candidate: expect.objectContaining({ id: a.id, status: 'approved', review: { decision: 'good_fit', reviewedAt: NOW, by: acme.keyId } }),
      },
      {
        candidateId: b.id,
        result: 'reviewed',
        candidate: expect.objectContaining({ id: b.id, status: 'rejected', review: { decision: 'not_a_good_fit', reviewedAt: NOW, by: acme.keyId } }),
      },
    ]);
    expect(body.counts).toEqual({ total: 3, unreviewed: 1, goodFit: 1, notAGoodFit: 1 });
    expect(body.counts).toEqual(await countsOf(s.play.id));
    expect(await candidateRow(a.id)).toMatchObject({ status: 'approved', review_decision: 'good_fit', reviewed_by: acme.keyId });
    expect((await candidateRow(a.id)).reviewed_at?.toISOString()).toBe(NOW);
    expect(await candidateRow(c.id)).toMatchObject({ status: 'proposed', review_decision: null });
    // A good-fit decision records the decision only: no lead is queued.
    expect(await t.db.selectFrom('leads').select('id').where('play_id', '=', s.play.id).execute()).toEqual([]);
  });

  it('repeating the same decision is idempotent: already_reviewed, the first review kept, nothing written', async () => {
    const s = await setup([{}, { review: { decision: 'not_a_good_fit', by: 'product' } }]);
    const decisions = [
      { candidateId: s.candidates[0].id, decision: 'good_fit' as const },
      { candidateId: s.candidates[1].id, decision: 'not_a_good_fit' as const },
    ];
    const first = (await s.review(decisions)).json();
    expect(first.results.map((r: { result: string }) => r.result)).toEqual(['reviewed', 'already_reviewed']);
    expect(first.results[1].candidate.review.by).toBe('product');
    const before = await snapshot(t.db);
    const again = await s.review(decisions);
    expect(again.statusCode).toBe(200);
    expect(again.json().results.map((r: { result: string }) => r.result)).toEqual(['already_reviewed', 'already_reviewed']);
    expect(again.json().results.map((r: { candidate: unknown }) => r.candidate)).toEqual(first.results.map((r: { candidate: unknown }) => r.candidate));
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('409 review_conflict for a candidate that already has the other decision, listing it; nothing is saved', async () => {
    const s = await setup([{}, { review: { decision: 'good_fit', by: 'api' } }]);
    const before = await snapshot(t.db);
    const res = await s.review([
      { candidateId: s.candidates[0].id, decision: 'good_fit' },
      { candidateId: s.candidates[1].id, decision: 'not_a_good_fit' },
    ]);
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error: 'review_conflict', candidateIds: [s.candidates[1].id] });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('a later enrollment of a candidate reviewed not a good fit answers rejected', async () => {
    const s = await setup([{}]);
    await s.review([{ candidateId: s.candidates[0].id, decision: 'not_a_good_fit' }]);
    const res = await api.post(`/plays/${s.play.id}/enroll`, {
      expectedRevision: s.play.revision,
      sequenceId: s.sequence.id,
      sequenceRevision: s.sequence.revision,
      candidateIds: [s.candidates[0].id],
    });
    expect(res.json().results).toEqual([{ candidateId: s.candidates[0].id, result: 'rejected', leadId: null }]);
  });

  it('candidate ids in upper case name the same candidates', async () => {
    const s = await setup([{}]);
    const res = await s.review([{ candidateId: s.candidates[0].id.toUpperCase(), decision: 'good_fit' }]);
    expect(res.json().results[0]).toMatchObject({ candidateId: s.candidates[0].id, result: 'reviewed' });
  });

  it('a Team client key decides in the selected workspace, recorded as that key', async () => {
    const s = await setup([{}], { workspaceId: team.workspaceId });
    const viaOwner = client(t, { ...acme.auth, 'x-workspace-client': team.workspaceId });
    const res = await s.review([{ candidateId: s.candidates[0].id, decision: 'not_a_good_fit' }], {}, viaOwner);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results[0].candidate.review.by).toBe(acme.keyId);
    // Without the selector the same key is in its home workspace, where this Play does not exist.
    expect((await s.review([{ candidateId: s.candidates[0].id, decision: 'not_a_good_fit' }])).statusCode).toBe(404);
    expect(
      (
        await s.review(
          [{ candidateId: s.candidates[0].id, decision: 'not_a_good_fit' }],
          {},
          client(t, { ...other.auth, 'x-workspace-client': team.workspaceId }),
        )
      ).statusCode,
    ).toBe(403);
  });
});

describe('POST /plays/{id}/candidates/review: enrollment’s Play rules (409, nothing changes)', () => {
  it('stale_play_revision with currentRevision', async () => {
    const s = await setup([{}], { play: { revision: 3 } });
    const before = await snapshot(t.db);
    for (const expectedRevision of [2, 4]) {
      const res = await s.review([{ candidateId: s.candidates[0].id, decision: 'good_fit' }], { expectedRevision });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error: 'stale_play_revision', currentRevision: 3 });
    }
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('play_archived and play_autopilot', async () => {
    for (const [play, error] of [
      [{ status: 'archived' }, 'play_archived'],
      [{ autopilot: true }, 'play_autopilot'],
    ] as const) {
      const s = await setup([{}], { play });
      const before = await snapshot(t.db);
      const res = await s.review([{ candidateId: s.candidates[0].id, decision: 'good_fit' }]);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error, playId: s.play.id });
      expect(await snapshot(t.db)).toEqual(before);
    }
  });

  it('a paused Play accepts decisions', async () => {
    const s = await setup([{}], { play: { status: 'paused' } });
    expect((await s.review([{ candidateId: s.candidates[0].id, decision: 'good_fit' }])).statusCode).toBe(200);
  });
});

describe('POST /plays/{id}/candidates/review: ids and input', () => {
  it('404 play not found for an unknown Play, another workspace’s Play and one without the review API', async () => {
    const s = await setup([{}]);
    const foreign = await insertReviewPlay(t.db, other.workspaceId);
    const disabled = await insertReviewPlay(t.db, acme.workspaceId, { play: { reviewApiEnabled: false } });
    const before = await snapshot(t.db);
    for (const playId of [newId(), foreign.play.id, disabled.play.id]) {
      const res = await api.post(`/plays/${playId}/candidates/review`, {
        expectedRevision: 1,
        decisions: [{ candidateId: s.candidates[0].id, decision: 'good_fit' }],
      });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'play not found' });
    }
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('404 candidate not found, listing every id that is not a candidate of this Play; nothing is reviewed', async () => {
    const s = await setup([{}]);
    const sibling = await insertPlay(t.db, acme.workspaceId);
    const [siblingCandidate] = await insertCandidates(t.db, acme.workspaceId, sibling.id, [{}]);
    const foreignPlay = await insertPlay(t.db, other.workspaceId);
    const [foreignCandidate] = await insertCandidates(t.db, other.workspaceId, foreignPlay.id, [{}]);
    const unknown = newId();
    const before = await snapshot(t.db);
    const res = await s.review(
      [s.candidates[0].id, siblingCandidate.id, foreignCandidate.id, unknown].map((candidateId) => ({ candidateId, decision: 'good_fit' as const })),
    );
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'candidate not found', candidateIds: [siblingCandidate.id, foreignCandidate.id, unknown] });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('400 naming the field for bad input of every shape; nothing changes', async () => {
    const s = await setup([{}]);
    const id = s.candidates[0].id;
    const good = { candidateId: id, decision: 'good_fit' };
    const ok = { expectedRevision: 1, decisions: [good] };
    const before = await snapshot(t.db);
    const cases: [unknown, RegExp][] = [
      [{}, /expectedRevision|decisions/],
      [{ decisions: [good] }, /expectedRevision/],
      [{ expectedRevision: 1 }, /decisions/],
      [{ ...ok, expectedRevision: 0 }, /expectedRevision/],
      [{ ...ok, expectedRevision: '1' }, /expectedRevision/],
      [{ ...ok, decisions: [] }, /decisions/],
      [{ ...ok, decisions: Array.from({ length: 201 }, () => ({ candidateId: newId(), decision: 'good_fit' })) }, /decisions/],
      [{ ...ok, decisions: good }, /decisions/],
      [{ ...ok, decisions: [{ ...good, decision: 'maybe' }] }, /decision/],
      [{ ...ok, decisions: [{ decision: 'good_fit' }] }, /candidateId/],
      [{ ...ok, decisions: [{ candidateId: id }] }, /decision/],
      [{ ...ok, decisions: [{ ...good, candidateId: 'not-a-uuid' }] }, /candidateId/],
      [{ ...ok, decisions: [{ ...good, note: 'x' }] }, /decisions|note/],
      [{ ...ok, decisions: [good, { candidateId: id.toUpperCase(), decision: 'not_a_good_fit' }] }, /candidateId/],
      [{ ...ok, enroll: true }, /enroll|additional/],
      [[ok], /body/],
    ];
    for (const [body, field] of cases) {
      const res = await api.post(`/plays/${s.play.id}/candidates/review`, body);
      const label = JSON.stringify(body).slice(0, 120);
      expect(res.statusCode, label).toBe(400);
      expect(res.json().error, label).toBe('invalid_request');
      expect(res.json().message, label).toMatch(field);
    }
    const badPath = await api.post('/plays/not-a-uuid/candidates/review', ok);
    expect(badPath.statusCode).toBe(400);
    expect(await snapshot(t.db)).toEqual(before);
  });
});

describe('POST /plays/{id}/candidates/review in the OpenAPI document', () => {
  it('is published and marked as an extension of the spec', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const op = doc.paths['/api/v1/plays/{id}/candidates/review'].post;
    expect(op['x-extension']).toBe(true);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '409']));
    // Every extension is marked, and nothing else is: the review route, the CLI's event stream and trigger, the leads
    // import, the task queue (issue 28), a mailbox's inbound records and the suppression list (issue 38),
    // two leads of one person (issue 39) and a channel's pushed inbound (issue 41).
    const extensions = Object.entries<Record<string, Record<string, unknown>>>(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, o]) => o['x-extension'] === true)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(extensions.sort()).toEqual([
      'DELETE /api/v1/meetings/endpoints/{id}',
      'DELETE /api/v1/meetings/endpoints/{id}/subscription',
      'DELETE /api/v1/suppressions/{address}',
      'GET /api/v1/audit',
      'GET /api/v1/events/stream',
      'GET /api/v1/leads/twins',
      'GET /api/v1/mailboxes/{mailbox}/inbound',
      'GET /api/v1/meetings/endpoints',
      'GET /api/v1/meetings/events',
      'GET /api/v1/suppressions',
      'GET /api/v1/tasks',
      'POST /api/v1/channels/{channel}/inbound',
      'POST /api/v1/events/trigger',
      'POST /api/v1/leads/import',
      'POST /api/v1/leads/twins/distinct',
      'POST /api/v1/leads/twins/merge',
      'POST /api/v1/leads/{id}/meeting',
      'POST /api/v1/meetings/endpoints',
      'POST /api/v1/meetings/endpoints/{id}/rotate',
      'POST /api/v1/meetings/endpoints/{id}/subscription',
      'POST /api/v1/plays/{id}/candidates/review',
      'POST /api/v1/replies/{id}/handled',
      'POST /api/v1/sequences/{id}/forecast',
      'POST /api/v1/tasks/{id}/complete',
      'POST /api/v1/tasks/{id}/mark-sent',
      'POST /api/v1/tasks/{id}/send-anyway',
      'POST /api/v1/tasks/{id}/skip',
    ]);
  });
});

describe('plays.review: dry run and concurrency', () => {
  it('a dry run runs every check and answers what would be saved, and saves nothing', async () => {
    const s = await setup([{}, {}]);
    const before = await snapshot(t.db);
    const input = { expectedRevision: 1, decisions: [{ candidateId: s.candidates[0].id, decision: 'not_a_good_fit' as const }] };
    const dry = await t.services.plays.review(acme.workspaceId, s.play.id, input, { by: acme.keyId, dryRun: true });
    expect(dry.results[0]).toMatchObject({ result: 'reviewed', candidate: { status: 'rejected' } });
    expect(dry.counts).toEqual({ total: 2, unreviewed: 1, goodFit: 0, notAGoodFit: 1 });
    expect(await snapshot(t.db)).toEqual(before);
    await expect(
      t.services.plays.review(acme.workspaceId, s.play.id, { ...input, expectedRevision: 2 }, { by: acme.keyId, dryRun: true }),
    ).rejects.toMatchObject({
      code: 'stale_play_revision',
    });
    const real = await t.services.plays.review(acme.workspaceId, s.play.id, input, { by: acme.keyId });
    expect(real).toEqual(dry);
  });

  it('20 concurrent conflicting decisions on one candidate: exactly one wins, the rest repeat it or answer 409', async () => {
    const s = await setup([{}]);
    const candidateId = s.candidates[0].id;
    const decisions: Decision[] = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? 'good_fit' : 'not_a_good_fit'));
    const responses = await Promise.all(decisions.map((decision) => s.review([{ candidateId, decision }])));
    const won = responses.filter((r) => r.statusCode === 200 && r.json().results[0].result === 'reviewed');
    expect(won).toHaveLength(1);
    const winner = won[0].json().results[0].candidate.review.decision as Decision;
    responses.forEach((r, i) => {
      if (decisions[i] === winner) expect(r.statusCode, r.body).toBe(200);
      else expect([r.statusCode, r.json().error], r.body).toEqual([409, 'review_conflict']);
    });
    expect(await candidateRow(candidateId)).toMatchObject({ review_decision: winner, status: winner === 'good_fit' ? 'approved' : 'rejected' });
    expect(await countsOf(s.play.id)).toEqual({ total: 1, unreviewed: 0, goodFit: winner === 'good_fit' ? 1 : 0, notAGoodFit: winner === 'good_fit' ? 0 : 1 });
  });
});

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/build-test-app.js';
import { startPlayTest, type Client, type TestWorkspace } from '../../helpers/http-client.js';
import { dbEngine } from '../../helpers/test-database.js';
import * as seed from '../../helpers/factories.js';
import { newId } from '../../../src/lib/ids.js';
import { snapshot, untilSomeoneWaitsOnALock } from './plays.test-support.js';

let t: TestApp, acme: TestWorkspace, other: TestWorkspace, api: Client;

beforeAll(async () => ({ t, acme, other, api } = await startPlayTest()));
afterAll(async () => t?.close());

const NOW = '2026-11-21T12:00:00.000Z';

/** A Play ready for enrollment with the given candidates; `path` picks the route or its alias. */
async function setup(candidates: seed.CandidateFixture[] = [{}], f: { play?: seed.PlayFixture; sequence?: seed.SequenceFixture } = {}) {
  const world = await seed.insertReviewPlay(t.db, acme.workspaceId, f);
  const rows = await seed.insertCandidates(t.db, acme.workspaceId, world.play.id, candidates);
  const enroll = (candidateIds: string[], over: Record<string, unknown> = {}, path: 'enroll' | 'leads' = 'enroll') =>
    api.post(`/plays/${world.play.id}/${path}`, {
      expectedRevision: world.play.revision,
      sequenceId: world.sequence.id,
      sequenceRevision: world.sequence.revision,
      candidateIds,
      ...over,
    });
  return { ...world, candidates: rows, enroll };
}

const leadRow = (id: string) => t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const candidateRow = (id: string) => t.db.selectFrom('candidates').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const leadsOfPlay = (playId: string) => t.db.selectFrom('leads').selectAll().where('play_id', '=', playId).execute();

describe('POST /plays/{id}/enroll: results', () => {
  it('enrolled: an unreviewed candidate becomes good fit (by api, now) and gets a new queued lead', async () => {
    const s = await setup([{ username: 'ada', name: 'Ada Lovelace' }]);
    const [c] = s.candidates;
    const res = await s.enroll([c.id]);
    expect(res.statusCode, res.body).toBe(200);
    const { results } = res.json();
    expect(results).toEqual([{ candidateId: c.id, result: 'enrolled', leadId: expect.any(String) }]);
    const lead = await leadRow(results[0].leadId);
    expect(lead).toMatchObject({
      workspace_id: acme.workspaceId,
      x_user_id: c.xUserId,
      username: 'ada',
      person: 'Ada Lovelace',
      account_user_id: s.account.userId,
      sequence_id: s.sequence.id,
      play_id: s.play.id,
      candidate_id: c.id,
      stage: 'queued',
      current_step: 0,
      automation_stopped: false,
    });
    expect(lead.next_action_at?.toISOString()).toBe(NOW);
    expect(lead.created_at.toISOString()).toBe(NOW);
    const cand = await candidateRow(c.id);
    expect([cand.status, cand.review_decision, cand.reviewed_at?.toISOString(), cand.reviewed_by]).toEqual(['approved', 'good_fit', NOW, 'api']);
    const listed = (await api.get(`/plays/${s.play.id}/candidates`)).json().candidates[0];
    expect(listed.review).toEqual({ decision: 'good_fit', reviewedAt: NOW, by: 'api' });
  });

  it('an imported candidate enrolls the same way', async () => {
    const s = await setup([{ status: 'imported', username: null, name: null }]);
    const res = await s.enroll([s.candidates[0].id]);
    expect(res.json().results[0].result).toBe('enrolled');
    expect(await candidateRow(s.candidates[0].id)).toMatchObject({ status: 'approved', review_decision: 'good_fit' });
  });

  it('existing_lead: an identity with a lead anywhere in the workspace (other sequence, stopped, replied) keeps it untouched', async () => {
    const s = await setup([{}, {}, {}]);
    const otherSeq = await seed.insertSequence(t.db, acme.workspaceId, { ...seed.X_SEQUENCE, status: 'paused' });
    const otherPlay = await seed.insertPlay(t.db, acme.workspaceId, { sequenceId: otherSeq });
    const leads = [
      await seed.insertLead(t.db, acme.workspaceId, {
        x_user_id: s.candidates[0].xUserId,
        sequence_id: otherSeq,
        play_id: otherPlay.id,
        stage: 'messaged',
        current_step: 2,
      }),
      await seed.insertLead(t.db, acme.workspaceId, { x_user_id: s.candidates[1].xUserId, sequence_id: otherSeq, stage: 'skipped', automation_stopped: true }),
      await seed.insertLead(t.db, acme.workspaceId, {
        x_user_id: s.candidates[2].xUserId,
        stage: 'replied',
        automation_stopped: true,
        replied_at: new Date('2026-11-02T00:00:00Z'),
      }),
    ];
    const before = await snapshot(t.db);
    const res = await s.enroll(s.candidates.map((c) => c.id));
    expect(res.json().results).toEqual(s.candidates.map((c, i) => ({ candidateId: c.id, result: 'existing_lead', leadId: leads[i] })));
    const after = await snapshot(t.db);
    expect(after.leads).toEqual(before.leads);
    for (const c of s.candidates) expect(await candidateRow(c.id)).toMatchObject({ status: 'approved', review_decision: 'good_fit', reviewed_by: 'api' });
  });

  it('a lead in another workspace for the same identity does not count: the candidate is enrolled', async () => {
    const s = await setup([{}]);
    await seed.insertLead(t.db, other.workspaceId, { x_user_id: s.candidates[0].xUserId, stage: 'messaged' });
    expect((await s.enroll([s.candidates[0].id])).json().results[0].result).toBe('enrolled');
  });

  it('already_reviewed: a good-fit candidate is reported with its lead (or null) and nothing changes', async () => {
    const s = await setup([{ review: { decision: 'good_fit' } }, { review: { decision: 'good_fit' } }]);
    const lead = await seed.insertLead(t.db, acme.workspaceId, { x_user_id: s.candidates[0].xUserId, play_id: s.play.id, sequence_id: s.sequence.id });
    const before = await snapshot(t.db);
    const res = await s.enroll(s.candidates.map((c) => c.id));
    expect(res.json().results).toEqual([
      { candidateId: s.candidates[0].id, result: 'already_reviewed', leadId: lead },
      { candidateId: s.candidates[1].id, result: 'already_reviewed', leadId: null },
    ]);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('rejected: a not-a-good-fit candidate stays as it is and gets no lead', async () => {
    const s = await setup([{ review: { decision: 'not_a_good_fit', by: 'sam' } }]);
    const before = await snapshot(t.db);
    const res = await s.enroll([s.candidates[0].id]);
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([{ candidateId: s.candidates[0].id, result: 'rejected', leadId: null }]);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('one request mixing every kind answers per candidate, in request order', async () => {
    const s = await setup([{}, { review: { decision: 'not_a_good_fit' } }, {}, { review: { decision: 'good_fit' } }]);
    const existing = await seed.insertLead(t.db, acme.workspaceId, { x_user_id: s.candidates[2].xUserId, stage: 'invited' });
    const order = [3, 0, 2, 1].map((i) => s.candidates[i].id);
    const res = await s.enroll(order);
    expect(res.json().results.map((r: { candidateId: string; result: string }) => [r.candidateId, r.result])).toEqual([
      [order[0], 'already_reviewed'],
      [order[1], 'enrolled'],
      [order[2], 'existing_lead'],
      [order[3], 'rejected'],
    ]);
    expect(res.json().results[2].leadId).toBe(existing);
    expect(await leadsOfPlay(s.play.id)).toHaveLength(1);
  });

  it('repeating an enrollment answers already_reviewed with the same lead ids and creates nothing', async () => {
    const s = await setup([{}, {}]);
    const ids = s.candidates.map((c) => c.id);
    const first = (await s.enroll(ids)).json();
    const before = await snapshot(t.db);
    const second = (await s.enroll(ids)).json();
    expect(second.results).toEqual(first.results.map((r: { candidateId: string; leadId: string }) => ({ ...r, result: 'already_reviewed' })));
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('accepts 200 candidates in one call', async () => {
    const s = await setup(Array.from({ length: 200 }, () => ({})));
    const res = await s.enroll(s.candidates.map((c) => c.id));
    expect(res.statusCode).toBe(200);
    expect(res.json().results.every((r: { result: string }) => r.result === 'enrolled')).toBe(true);
    expect(await leadsOfPlay(s.play.id)).toHaveLength(200);
  });

  it('enrolled leads are listed by GET /plays/{id}/leads and counts move from unreviewed to goodFit', async () => {
    const s = await setup([{ name: 'Ada' }, {}, {}]);
    const res = (await s.enroll([s.candidates[0].id])).json();
    const leads = (await api.get(`/plays/${s.play.id}/leads`)).json();
    expect(leads).toEqual({
      playId: s.play.id,
      leads: [
        {
          id: res.results[0].leadId,
          name: 'Ada',
          xUserId: s.candidates[0].xUserId,
          username: s.candidates[0].username,
          sequenceId: s.sequence.id,
          stage: 'queued',
          createdAt: NOW,
        },
      ],
      nextCursor: null,
      hasMore: false,
    });
    expect((await api.get(`/plays/${s.play.id}/candidates`)).json().counts).toEqual({ total: 3, unreviewed: 2, goodFit: 1, notAGoodFit: 0 });
  });
});

describe('POST /plays/{id}/enroll: the sequence is never changed', () => {
  it('active, paused and draft sequences keep their status, revision and approval; sequenceStatus reports it; sequenceStatusChanged is false', async () => {
    for (const sequence of [{ status: 'active' as const }, { status: 'paused' as const }, { status: 'draft' as const, revision: 2, approvedRevision: 1 }]) {
      const s = await setup([{}], { sequence });
      const before = await snapshot(t.db);
      const res = await s.enroll([s.candidates[0].id]);
      expect(res.statusCode, sequence.status).toBe(200);
      expect(res.json()).toMatchObject({
        sequenceStatus: sequence.status,
        sequenceStatusChanged: false,
        reviewUrl: `http://localhost:8080/review/plays/${s.play.id}`,
      });
      expect((await snapshot(t.db)).sequences).toEqual(before.sequences);
    }
  });

  it('the response has exactly results, sequenceStatus, sequenceStatusChanged and reviewUrl', async () => {
    const s = await setup();
    expect(Object.keys((await s.enroll([s.candidates[0].id])).json()).sort()).toEqual(['results', 'reviewUrl', 'sequenceStatus', 'sequenceStatusChanged']);
  });
});

describe('POST /plays/{id}/enroll: conflicts (409, nothing changes)', () => {
  async function expectConflict(res: Awaited<ReturnType<Client['post']>>, error: string, extra: Record<string, unknown> = {}) {
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error, ...extra });
  }

  it('stale_play_revision with currentRevision', async () => {
    const s = await setup([{}], { play: { revision: 3 } });
    const before = await snapshot(t.db);
    await expectConflict(await s.enroll([s.candidates[0].id], { expectedRevision: 2 }), 'stale_play_revision', { currentRevision: 3 });
    await expectConflict(await s.enroll([s.candidates[0].id], { expectedRevision: 4 }), 'stale_play_revision', { currentRevision: 3 });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('stale_sequence_revision with currentSequenceRevision', async () => {
    const s = await setup([{}], { sequence: { revision: 7 } });
    const before = await snapshot(t.db);
    await expectConflict(await s.enroll([s.candidates[0].id], { sequenceRevision: 6 }), 'stale_sequence_revision', { currentSequenceRevision: 7 });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('sequence_mismatch for another sequence of the workspace, another workspace’s sequence, an unknown one, or a Play without a sequence', async () => {
    const s = await setup();
    const mine = await seed.insertSequence(t.db, acme.workspaceId, seed.X_SEQUENCE);
    const foreign = await seed.insertSequence(t.db, other.workspaceId, seed.X_SEQUENCE);
    const before = await snapshot(t.db);
    for (const sequenceId of [mine, foreign, newId()]) {
      await expectConflict(await s.enroll([s.candidates[0].id], { sequenceId }), 'sequence_mismatch', { playSequenceId: s.sequence.id });
    }
    const account = await seed.insertXAccount(t.db, acme.workspaceId);
    const bare = await seed.insertPlay(t.db, acme.workspaceId, { accountUserId: account.userId });
    const [c] = await seed.insertCandidates(t.db, acme.workspaceId, bare.id, [{}]);
    const res = await api.post(`/plays/${bare.id}/enroll`, { expectedRevision: 1, sequenceId: mine, sequenceRevision: 1, candidateIds: [c.id] });
    await expectConflict(res, 'sequence_mismatch', { playSequenceId: null });
    expect((await snapshot(t.db)).leads).toEqual(before.leads);
  });

  it('no_connected_sender when the Play’s account is missing, not connected, or connected only to another workspace', async () => {
    const foreignAccount = await seed.insertXAccount(t.db, other.workspaceId);
    for (const accountUserId of [null, seed.nextXUserId(), foreignAccount.userId]) {
      const s = await setup([{}], { play: { accountUserId } });
      const before = await snapshot(t.db);
      await expectConflict(await s.enroll([s.candidates[0].id]), 'no_connected_sender', { accountUserId });
      expect(await snapshot(t.db)).toEqual(before);
    }
  });

  it('play_archived and play_autopilot', async () => {
    const archived = await setup([{}], { play: { status: 'archived' } });
    await expectConflict(await archived.enroll([archived.candidates[0].id]), 'play_archived');
    const autopilot = await setup([{}], { play: { autopilot: true } });
    const before = await snapshot(t.db);
    await expectConflict(await autopilot.enroll([autopilot.candidates[0].id]), 'play_autopilot');
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('archived_sequence_is_read_only when the Play’s sequence is archived', async () => {
    const s = await setup([{}], { sequence: { status: 'archived' } });
    const before = await snapshot(t.db);
    await expectConflict(await s.enroll([s.candidates[0].id]), 'archived_sequence_is_read_only');
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('sequence_has_no_step_for_lead when the Play’s sequence has no X step: its X followers could take none of them; nothing changes', async () => {
    const s = await setup([{}], { sequence: { channels: ['email'], steps: [seed.stepRow({ index: 0, kind: 'email', subject: 'Hi', message: 'Hello' })] } });
    const before = await snapshot(t.db);
    await expectConflict(await s.enroll([s.candidates[0].id]), 'sequence_has_no_step_for_lead', { sequenceId: s.sequence.id });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('a paused Play can enroll', async () => {
    const s = await setup([{}], { play: { status: 'paused' } });
    expect((await s.enroll([s.candidates[0].id])).json().results[0].result).toBe('enrolled');
  });
});

describe('POST /plays/{id}/enroll: candidates and input', () => {
  it('404 candidate not found, listing every id that is not a candidate of this Play; nothing is enrolled', async () => {
    const s = await setup([{}, {}]);
    const sibling = await seed.insertPlay(t.db, acme.workspaceId);
    const [siblingCandidate] = await seed.insertCandidates(t.db, acme.workspaceId, sibling.id, [{}]);
    const foreignPlay = await seed.insertPlay(t.db, other.workspaceId);
    const [foreignCandidate] = await seed.insertCandidates(t.db, other.workspaceId, foreignPlay.id, [{}]);
    const unknown = newId();
    const before = await snapshot(t.db);
    const res = await s.enroll([s.candidates[0].id, siblingCandidate.id, foreignCandidate.id, s.candidates[1].id, unknown]);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'candidate not found', candidateIds: [siblingCandidate.id, foreignCandidate.id, unknown] });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('404 play not found for an unknown Play, another workspace’s Play and one without the review API', async () => {
    const s = await setup();
    const foreign = await seed.insertReviewPlay(t.db, other.workspaceId);
    const disabled = await seed.insertReviewPlay(t.db, acme.workspaceId, { play: { reviewApiEnabled: false } });
    for (const playId of [newId(), foreign.play.id, disabled.play.id]) {
      const res = await api.post(`/plays/${playId}/enroll`, {
        expectedRevision: 1,
        sequenceId: s.sequence.id,
        sequenceRevision: 1,
        candidateIds: [s.candidates[0].id],
      });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'play not found' });
    }
  });

  it('400 for bad input of every shape; nothing changes', async () => {
    const s = await setup([{}]);
    const id = s.candidates[0].id;
    const ok = { expectedRevision: 1, sequenceId: s.sequence.id, sequenceRevision: 1, candidateIds: [id] };
    const before = await snapshot(t.db);
    const bodies: unknown[] = [
      {},
      { ...ok, candidateIds: [] },
      { ...ok, candidateIds: Array.from({ length: 201 }, () => newId()) },
      { ...ok, candidateIds: [id, id] },
      { ...ok, candidateIds: [id, id.toUpperCase()] },
      { ...ok, candidateIds: ['not-a-uuid'] },
      { ...ok, candidateIds: id },
      { ...ok, expectedRevision: 0 },
      { ...ok, expectedRevision: '1' },
      { ...ok, sequenceRevision: 0 },
      { ...ok, sequenceRevision: 1.5 },
      { ...ok, sequenceId: 'nope' },
      { ...ok, sequenceId: null },
      { expectedRevision: 1, sequenceId: s.sequence.id, candidateIds: [id] },
      { expectedRevision: 1, sequenceRevision: 1, candidateIds: [id] },
      { sequenceId: s.sequence.id, sequenceRevision: 1, candidateIds: [id] },
      { ...ok, extra: true },
      { ...ok, activate: true },
      [ok],
    ];
    for (const b of bodies) {
      for (const path of ['enroll', 'leads']) {
        const res = await api.post(`/plays/${s.play.id}/${path}`, b);
        expect(res.statusCode, `${path} ${JSON.stringify(b).slice(0, 120)}`).toBe(400);
      }
    }
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('candidate ids in upper case name the same candidates', async () => {
    const s = await setup([{}]);
    const res = await s.enroll([s.candidates[0].id.toUpperCase()]);
    expect(res.json().results).toEqual([{ candidateId: s.candidates[0].id, result: 'enrolled', leadId: expect.any(String) }]);
  });
});

describe('POST /plays/{id}/leads is the same operation as POST /plays/{id}/enroll', () => {
  it('answers the same results for the same situation, and the same errors', async () => {
    const runs = [];
    for (const path of ['enroll', 'leads'] as const) {
      const s = await setup([{}, { review: { decision: 'good_fit' } }, { review: { decision: 'not_a_good_fit' } }, {}]);
      await seed.insertLead(t.db, acme.workspaceId, { x_user_id: s.candidates[3].xUserId });
      const res = await s.enroll(
        s.candidates.map((c) => c.id),
        {},
        path,
      );
      const stale = await s.enroll([s.candidates[0].id], { expectedRevision: 9 }, path);
      const leads = await leadsOfPlay(s.play.id);
      runs.push({
        status: res.statusCode,
        results: res.json().results.map((r: { result: string; leadId: string | null }) => [r.result, r.leadId === null]),
        sequenceStatus: res.json().sequenceStatus,
        stale: [stale.statusCode, { ...stale.json() }],
        leads: leads.map((l) => [l.stage, l.current_step, l.candidate_id === s.candidates[0].id]),
      });
    }
    expect(runs[1]).toEqual(runs[0]);
    expect(runs[0].results).toEqual([
      ['enrolled', false],
      ['already_reviewed', true],
      ['rejected', true],
      ['existing_lead', false],
    ]);
  });
});

describe('POST /plays/{id}/enroll: concurrency', () => {
  it('parallel enrollments of the same candidates create one lead per identity', async () => {
    const s = await setup([{}, {}, {}]);
    const ids = s.candidates.map((c) => c.id);
    const responses = await Promise.all([s.enroll(ids), s.enroll(ids), s.enroll(ids, {}, 'leads')]);
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    const enrolled = responses.flatMap((r) => r.json().results.filter((x: { result: string }) => x.result === 'enrolled'));
    expect(enrolled).toHaveLength(3);
    expect(await leadsOfPlay(s.play.id)).toHaveLength(3);
  });

  it('one identity enrolled through two Plays at the same time gets one lead', async () => {
    const x = seed.nextXUserId();
    const one = await setup([{ xUserId: x }]);
    const two = await setup([{ xUserId: x }]);
    const [a, b] = await Promise.all([one.enroll([one.candidates[0].id]), two.enroll([two.candidates[0].id])]);
    const results = [a.json().results[0], b.json().results[0]];
    expect(results.map((r) => r.result).sort()).toEqual(['enrolled', 'existing_lead']);
    expect(results[0].leadId).toBe(results[1].leadId);
    const leads = await t.db.selectFrom('leads').select('id').where('workspace_id', '=', acme.workspaceId).where('x_user_id', '=', x).execute();
    expect(leads).toHaveLength(1);
  });

  it.runIf(dbEngine() === 'postgres')(
    '409 review_conflict when a review saved elsewhere commits between reading a candidate and marking it; nothing is enrolled',
    async () => {
      const s = await setup([{}, {}]);
      const writer = new pg.Client({ connectionString: (t.handle as { url?: string }).url! });
      await writer.connect();
      try {
        await writer.query('BEGIN');
        await writer.query(`UPDATE candidates SET review_decision = 'not_a_good_fit', status = 'rejected', reviewed_by = 'product' WHERE id = $1`, [
          s.candidates[1].id,
        ]);
        const pending = s.enroll(s.candidates.map((c) => c.id));
        // The enrollment reads the candidate as unreviewed (the change is not committed) and then waits on its row.
        await untilSomeoneWaitsOnALock(writer);
        await writer.query('COMMIT');
        const res = await pending;
        expect(res.statusCode, res.body).toBe(409);
        expect(res.json()).toMatchObject({ ok: false, error: 'review_conflict' });
        expect(await leadsOfPlay(s.play.id)).toHaveLength(0);
        expect(await candidateRow(s.candidates[0].id)).toMatchObject({ review_decision: null });
        expect(await candidateRow(s.candidates[1].id)).toMatchObject({ review_decision: 'not_a_good_fit', reviewed_by: 'product' });
        // Read again, the same request answers per candidate.
        const again = await s.enroll(s.candidates.map((c) => c.id));
        expect(again.json().results.map((r: { result: string }) => r.result)).toEqual(['enrolled', 'rejected']);
      } finally {
        await writer.end();
      }
    },
  );
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp } from '../../helpers/build-test-app.js';
import { startPlayTest, type Client, type TestWorkspace } from '../../helpers/http-client.js';
import * as seed from '../../helpers/factories.js';
import { snapshot } from './plays.test-support.js';

let t: TestApp, acme: TestWorkspace, other: TestWorkspace, api: Client;

beforeAll(async () => ({ t, acme, other, api } = await startPlayTest()));
afterAll(async () => t?.close());

describe('POST /plays/{id}/candidates/lookup', () => {
  let playId: string;
  let sequenceId: string;
  const ids = { alice: '', bob: '', carol: '', twinA: '', twinB: '', dora: '' };
  const candidateIds: Record<string, string> = {};
  const leads: Record<string, string> = {};

  beforeAll(async () => {
    const r = await seed.insertReviewPlay(t.db, acme.workspaceId);
    playId = r.play.id;
    sequenceId = r.sequence.id;
    for (const k of Object.keys(ids) as (keyof typeof ids)[]) ids[k] = seed.nextXUserId();
    const batch1 = await seed.insertBatch(t.db, acme.workspaceId, playId);
    const batch2 = await seed.insertBatch(t.db, acme.workspaceId, playId);
    const [alice] = await seed.insertCandidates(t.db, acme.workspaceId, playId, [{ xUserId: ids.alice, username: 'Alice_X', name: 'Alice', batchId: batch1 }]);
    const [bob, carol, twinA, twinB] = await seed.insertCandidates(t.db, acme.workspaceId, playId, [
      { xUserId: ids.bob, username: 'bob', review: { decision: 'good_fit' }, batchId: batch2 },
      { xUserId: ids.carol, username: null, status: 'imported' },
      { xUserId: ids.twinA, username: 'Twin' },
      { xUserId: ids.twinB, username: 'twin' },
    ]);
    Object.assign(candidateIds, { alice: alice.id, bob: bob.id, carol: carol.id, twinA: twinA.id, twinB: twinB.id });
    // The same identity as a candidate of another Play is not a match here.
    const sibling = await seed.insertPlay(t.db, acme.workspaceId);
    await seed.insertCandidates(t.db, acme.workspaceId, sibling.id, [{ xUserId: ids.dora, username: 'dora' }]);
    const otherSeq = await seed.insertSequence(t.db, acme.workspaceId, seed.X_SEQUENCE);
    leads.aliceElsewhere = await seed.insertLead(t.db, acme.workspaceId, {
      x_user_id: ids.alice,
      sequence_id: otherSeq,
      stage: 'messaged',
      created_at: new Date('2026-01-01T00:00:00Z'),
    });
    leads.aliceHere = await seed.insertLead(t.db, acme.workspaceId, {
      x_user_id: ids.alice,
      sequence_id: sequenceId,
      play_id: playId,
      candidate_id: alice.id,
      stage: 'queued',
      created_at: new Date('2026-02-01T00:00:00Z'),
    });
    leads.bobReplied = await seed.insertLead(t.db, acme.workspaceId, {
      x_user_id: ids.bob,
      username: 'bob',
      sequence_id: otherSeq,
      stage: 'replied',
      automation_stopped: true,
    });
    leads.dora = await seed.insertLead(t.db, acme.workspaceId, { x_user_id: ids.dora, username: 'Dora', stage: 'skipped', automation_stopped: true });
    // Another workspace's lead for the same identity is never listed.
    await seed.insertLead(t.db, other.workspaceId, { x_user_id: ids.bob, username: 'bob', stage: 'queued' });
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
    const res = await lookup([{ xUserId: seed.nextXUserId() }, { username: 'nobody_here' }]);
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
    const expected = {
      exists: false,
      candidate: null,
      enrolledInPlay: false,
      currentFollowerStatus: 'unknown',
      existingLeads: [{ id: leads.dora, sequenceId: null, playId: null, stage: 'skipped' }],
    };
    expect(res.json().results).toEqual([expected, expected]);
  });

  it('one result per identity in request order, repeated identities included', async () => {
    const res = await lookup([{ username: 'bob' }, { xUserId: seed.nextXUserId() }, { xUserId: ids.alice }, { username: 'bob' }]);
    const results = res.json().results;
    expect(results).toHaveLength(4);
    expect(results.map((r: { candidate: { id: string } | null }) => r.candidate?.id ?? null)).toEqual([
      candidateIds.bob,
      null,
      candidateIds.alice,
      candidateIds.bob,
    ]);
  });

  it('409 ambiguous_identity when a handle matches candidates with different user ids; numeric ids still resolve', async () => {
    const res = await lookup([{ xUserId: ids.alice }, { username: '@TWIN' }]);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error: 'ambiguous_identity', usernames: ['twin'] });
    expect(
      res
        .json()
        .candidates.map((c: { xUserId: string }) => c.xUserId)
        .sort(),
    ).toEqual([ids.twinA, ids.twinB].sort());
    const byId = await lookup([{ xUserId: ids.twinA }, { xUserId: ids.twinB }]);
    expect(byId.json().results.map((r: { candidate: { id: string } }) => r.candidate.id)).toEqual([candidateIds.twinA, candidateIds.twinB]);
  });

  it('accepts 200 identities', async () => {
    const res = await lookup(Array.from({ length: 200 }, (_, i) => (i % 2 ? { xUserId: seed.nextXUserId() } : { username: `u${i}` })));
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

import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/build-test-app.js';
import { client, startPlayTest, type Client, type TestWorkspace } from '../../helpers/http-client.js';
import { dbEngine } from '../../helpers/test-database.js';
import { insertCandidates, insertPlay, insertReviewPlay, nextXUserId } from '../../helpers/factories.js';
import { newId } from '../../../src/lib/ids.js';
import { snapshot, untilSomeoneWaitsOnALock } from './plays.test-support.js';

let t: TestApp, acme: TestWorkspace, other: TestWorkspace, api: Client;

beforeAll(async () => ({ t, acme, other, api } = await startPlayTest()));
afterAll(async () => t?.close());

let requestSerial = 0;
const newRequestId = () => `req-${Date.now()}-${++requestSerial}`;

type ImportBody = { requestId: string; expectedRevision: number; leads: { xUserId: string; name?: string; reference?: string }[] };
const body = (leads: ImportBody['leads'], over: Partial<ImportBody> = {}): ImportBody => ({ requestId: newRequestId(), expectedRevision: 1, leads, ...over });
const importInto = (playId: string, b: unknown, c: Client = api) => c.post(`/plays/${playId}/import`, b);

async function candidatesOf(playId: string) {
  return t.db.selectFrom('candidates').selectAll().where('play_id', '=', playId).orderBy('x_user_id').execute();
}
async function batchesOf(playId: string) {
  return t.db.selectFrom('candidate_batches').selectAll().where('play_id', '=', playId).execute();
}

describe('POST /plays/{id}/import: staging candidates', () => {
  it('stages new identities as imported candidates without a review, in one new batch', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const a = nextXUserId();
    const b = nextXUserId();
    const res = await importInto(play.id, body([{ xUserId: a, name: 'Ada Lovelace', reference: 'crm-1' }, { xUserId: b }]));
    expect(res.statusCode).toBe(200);
    const { batchId } = res.json();
    const rows = await candidatesOf(play.id);
    expect(rows.map((r) => [r.x_user_id, r.name, r.username, r.status, r.review_decision, r.reviewed_at, r.batch_id, r.workspace_id])).toEqual([
      [a, 'Ada Lovelace', null, 'imported', null, null, batchId, acme.workspaceId],
      [b, null, null, 'imported', null, null, batchId, acme.workspaceId],
    ]);
    const batches = await batchesOf(play.id);
    expect(batches.map((x) => [x.id, x.source, x.workspace_id])).toEqual([[batchId, 'import', acme.workspaceId]]);
  });

  it('answers playId, batchId, requestId, replayed false, results in request order, enrolled false and sendsMessages false', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const [a, b, c] = [nextXUserId(), nextXUserId(), nextXUserId()];
    const req = body([{ xUserId: c, reference: 'third' }, { xUserId: a }, { xUserId: b, name: 'B', reference: '' }]);
    const res = await importInto(play.id, req);
    const rows = await candidatesOf(play.id);
    const idOf = (x: string) => rows.find((r) => r.x_user_id === x)!.id;
    expect(res.json()).toEqual({
      playId: play.id,
      batchId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      requestId: req.requestId,
      replayed: false,
      results: [
        { xUserId: c, reference: 'third', candidateId: idOf(c), result: 'imported' },
        { xUserId: a, reference: null, candidateId: idOf(a), result: 'imported' },
        { xUserId: b, reference: '', candidateId: idOf(b), result: 'imported' },
      ],
      enrolled: false,
      sendsMessages: false,
    });
  });

  it('existing candidates keep their review state, name and batch, and are reported existing_candidate', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const existing = await insertCandidates(t.db, acme.workspaceId, play.id, [
      { name: 'Proposed' },
      { name: 'Good', review: { decision: 'good_fit' } },
      { name: 'Bad', review: { decision: 'not_a_good_fit' } },
      { name: 'Imported before', status: 'imported' },
    ]);
    const before = await candidatesOf(play.id);
    const fresh = nextXUserId();
    const res = await importInto(play.id, body([...existing.map((e) => ({ xUserId: e.xUserId, name: 'Renamed' })), { xUserId: fresh }]));
    expect(res.statusCode).toBe(200);
    expect(res.json().results.map((r: { result: string; candidateId: string }) => [r.result, r.candidateId])).toEqual([
      ...existing.map((e) => ['existing_candidate', e.id]),
      ['imported', expect.any(String)],
    ]);
    const after = await candidatesOf(play.id);
    for (const row of before) expect(after.find((r) => r.id === row.id)).toEqual(row);
    expect(after).toHaveLength(before.length + 1);
  });

  it('an identity that is a candidate of another Play is a new candidate of this one', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const sibling = await insertPlay(t.db, acme.workspaceId);
    const [elsewhere] = await insertCandidates(t.db, acme.workspaceId, sibling.id, [{}]);
    const res = await importInto(play.id, body([{ xUserId: elsewhere.xUserId }]));
    expect(res.json().results[0]).toMatchObject({ result: 'imported' });
    expect(res.json().results[0].candidateId).not.toBe(elsewhere.id);
  });

  it('accepts 100 leads in one request', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const res = await importInto(play.id, body(Array.from({ length: 100 }, (_, i) => ({ xUserId: nextXUserId(), name: `N${i}`, reference: 'r'.repeat(200) }))));
    expect(res.statusCode).toBe(200);
    expect(await candidatesOf(play.id)).toHaveLength(100);
  });

  it('a paused Play accepts imports', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId, { play: { status: 'paused' } });
    expect((await importInto(play.id, body([{ xUserId: nextXUserId() }]))).statusCode).toBe(200);
  });

  it('never enrolls, never creates leads, never changes the sequence or the Play', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId, { sequence: { status: 'paused' } });
    const before = await snapshot(t.db);
    await importInto(play.id, body([{ xUserId: nextXUserId() }, { xUserId: nextXUserId() }]));
    const after = await snapshot(t.db);
    expect(after.leads).toEqual(before.leads);
    expect(after.sequences).toEqual(before.sequences);
    expect(after.plays).toEqual(before.plays);
  });

  it('candidate counts follow imports (imported candidates are unreviewed)', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    await insertCandidates(t.db, acme.workspaceId, play.id, [{ review: { decision: 'good_fit' } }]);
    await importInto(play.id, body([{ xUserId: nextXUserId() }, { xUserId: nextXUserId() }]));
    expect((await api.get(`/plays/${play.id}/candidates`)).json().counts).toEqual({ total: 3, unreviewed: 2, goodFit: 1, notAGoodFit: 0 });
  });
});

describe('POST /plays/{id}/import: Play rules', () => {
  it('404 for an unknown Play, another workspace’s Play and a Play without the review API; nothing changes', async () => {
    const foreign = await insertReviewPlay(t.db, other.workspaceId);
    const disabled = await insertReviewPlay(t.db, acme.workspaceId, { play: { reviewApiEnabled: false } });
    const before = await snapshot(t.db);
    for (const id of [newId(), foreign.play.id, disabled.play.id]) {
      const res = await importInto(id, body([{ xUserId: nextXUserId() }]));
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'play not found' });
    }
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('409 play_archived and 409 play_autopilot; nothing changes', async () => {
    const archived = await insertReviewPlay(t.db, acme.workspaceId, { play: { status: 'archived' } });
    const autopilot = await insertReviewPlay(t.db, acme.workspaceId, { play: { autopilot: true } });
    const before = await snapshot(t.db);
    const a = await importInto(archived.play.id, body([{ xUserId: nextXUserId() }]));
    expect(a.statusCode).toBe(409);
    expect(a.json()).toMatchObject({ ok: false, error: 'play_archived' });
    const b = await importInto(autopilot.play.id, body([{ xUserId: nextXUserId() }]));
    expect(b.statusCode).toBe(409);
    expect(b.json()).toMatchObject({ ok: false, error: 'play_autopilot' });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('409 stale_play_revision with the current revision when expectedRevision differs; nothing changes', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId, { play: { revision: 4 } });
    const before = await snapshot(t.db);
    for (const expectedRevision of [3, 5, 1]) {
      const res = await importInto(play.id, body([{ xUserId: nextXUserId() }], { expectedRevision }));
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error: 'stale_play_revision', currentRevision: 4 });
    }
    expect(await snapshot(t.db)).toEqual(before);
    expect((await importInto(play.id, body([{ xUserId: nextXUserId() }], { expectedRevision: 4 }))).statusCode).toBe(200);
  });
});

describe('POST /plays/{id}/import: input', () => {
  it('400 for duplicate xUserIds in one request, naming them; nothing changes', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const dup = nextXUserId();
    const before = await snapshot(t.db);
    const res = await importInto(play.id, body([{ xUserId: dup }, { xUserId: nextXUserId() }, { xUserId: dup, name: 'again' }]));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request', duplicates: [dup] });
    expect(res.json().message).toContain(dup);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('400 for bad input of every shape; nothing changes', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const ok = { xUserId: nextXUserId() };
    const before = await snapshot(t.db);
    const bodies: unknown[] = [
      {},
      { expectedRevision: 1, leads: [ok] },
      { requestId: 'request-1', leads: [ok] },
      { requestId: 'request-1', expectedRevision: 1 },
      { requestId: 'short', expectedRevision: 1, leads: [ok] },
      { requestId: 'r'.repeat(121), expectedRevision: 1, leads: [ok] },
      { requestId: '-leading-dash', expectedRevision: 1, leads: [ok] },
      { requestId: 'has space 123', expectedRevision: 1, leads: [ok] },
      { requestId: 12345678, expectedRevision: 1, leads: [ok] },
      { requestId: 'request-1', expectedRevision: 0, leads: [ok] },
      { requestId: 'request-1', expectedRevision: '1', leads: [ok] },
      { requestId: 'request-1', expectedRevision: 1.5, leads: [ok] },
      { requestId: 'request-1', expectedRevision: 1, leads: [] },
      { requestId: 'request-1', expectedRevision: 1, leads: Array.from({ length: 101 }, () => ({ xUserId: nextXUserId() })) },
      { requestId: 'request-1', expectedRevision: 1, leads: [{}] },
      { requestId: 'request-1', expectedRevision: 1, leads: [{ xUserId: 123 }] },
      { requestId: 'request-1', expectedRevision: 1, leads: [{ xUserId: '0123' }] },
      { requestId: 'request-1', expectedRevision: 1, leads: [{ xUserId: '1'.repeat(21) }] },
      { requestId: 'request-1', expectedRevision: 1, leads: [{ username: 'alice' }] },
      { requestId: 'request-1', expectedRevision: 1, leads: [{ ...ok, name: '' }] },
      { requestId: 'request-1', expectedRevision: 1, leads: [{ ...ok, name: 'n'.repeat(201) }] },
      { requestId: 'request-1', expectedRevision: 1, leads: [{ ...ok, name: null }] },
      { requestId: 'request-1', expectedRevision: 1, leads: [{ ...ok, reference: 'r'.repeat(201) }] },
      { requestId: 'request-1', expectedRevision: 1, leads: [{ ...ok, email: 'a@b.c' }] },
      { requestId: 'request-1', expectedRevision: 1, leads: [ok], enroll: true },
      { requestId: 'request-1', expectedRevision: 1, leads: ok },
      [ok],
      '{"requestId": ',
    ];
    for (const b of bodies) {
      const res = await importInto(play.id, b);
      expect(res.statusCode, JSON.stringify(b).slice(0, 100)).toBe(400);
      expect(typeof res.json().error).toBe('string');
    }
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('requestId accepts 8 and 120 characters of the allowed alphabet', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    for (const requestId of ['abcd1234', `A${'b._:-'.repeat(23)}1234`.slice(0, 120)]) {
      const res = await importInto(play.id, body([{ xUserId: nextXUserId() }], { requestId }));
      expect(res.statusCode, requestId).toBe(200);
    }
  });
});

describe('POST /plays/{id}/import: atomicity and idempotency', () => {
  it('atomic: a failure while saving leaves no batch, no candidate and no request record', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    // The last write of an import fails, after the batch and the candidates were written in the same transaction.
    await sql
      .raw(`CREATE OR REPLACE FUNCTION test_fail_import() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'simulated failure'; END $$`)
      .execute(t.db);
    await sql
      .raw(
        `CREATE TRIGGER test_fail_import BEFORE INSERT ON import_requests FOR EACH ROW WHEN (NEW.request_id LIKE 'explode%') EXECUTE FUNCTION test_fail_import()`,
      )
      .execute(t.db);
    try {
      const before = await snapshot(t.db);
      const leads = [{ xUserId: nextXUserId() }, { xUserId: nextXUserId() }];
      const res = await importInto(play.id, body(leads, { requestId: 'explode-0001' }));
      expect(res.statusCode).toBe(500);
      expect(await snapshot(t.db)).toEqual(before);
      await sql.raw('DROP TRIGGER test_fail_import ON import_requests').execute(t.db);
      // The requestId was never recorded, so the retry is a first import, not a replay.
      const retry = await importInto(play.id, body(leads, { requestId: 'explode-0001' }));
      expect(retry.json()).toMatchObject({ replayed: false, results: [{ result: 'imported' }, { result: 'imported' }] });
    } finally {
      await sql.raw('DROP TRIGGER IF EXISTS test_fail_import ON import_requests').execute(t.db);
    }
  });

  it('replay: the same requestId with the same payload returns the stored response with replayed true and writes nothing', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const req = body([{ xUserId: nextXUserId(), name: 'Ada', reference: 'r1' }, { xUserId: nextXUserId() }]);
    const first = await importInto(play.id, req);
    const before = await snapshot(t.db);
    const second = await importInto(play.id, req);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual({ ...first.json(), replayed: true });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('replay compares the normalized payload: key order and JSON formatting do not matter', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const x = nextXUserId();
    const first = await importInto(play.id, { requestId: 'normalized-1', expectedRevision: 1, leads: [{ xUserId: x, name: 'Ada', reference: 'r' }] });
    const reordered = `{ "leads": [ { "reference": "r", "name": "Ada", "xUserId": "${x}" } ],\n  "expectedRevision": 1, "requestId": "normalized-1" }`;
    const second = await importInto(play.id, reordered);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual({ ...first.json(), replayed: true });
  });

  it('replay still answers the stored result after the Play moved to a new revision or was archived', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const req = body([{ xUserId: nextXUserId() }]);
    const first = await importInto(play.id, req);
    await t.db.updateTable('plays').set({ revision: 2, status: 'archived' }).where('id', '=', play.id).execute();
    const second = await importInto(play.id, req);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual({ ...first.json(), replayed: true });
  });

  it('409 request_id_reused for the same requestId with any change (leads, name, reference, revision, order); nothing changes', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const [a, b] = [nextXUserId(), nextXUserId()];
    const req = body([{ xUserId: a, name: 'Ada', reference: 'r1' }, { xUserId: b }]);
    expect((await importInto(play.id, req)).statusCode).toBe(200);
    await t.db.updateTable('plays').set({ revision: 2 }).where('id', '=', play.id).execute();
    const before = await snapshot(t.db);
    const changes: ImportBody[] = [
      { ...req, leads: [...req.leads, { xUserId: nextXUserId() }] },
      { ...req, leads: [req.leads[0]] },
      { ...req, leads: [{ ...req.leads[0], name: 'Ada L.' }, req.leads[1]] },
      { ...req, leads: [{ xUserId: a, reference: 'r1' }, req.leads[1]] },
      { ...req, leads: [{ ...req.leads[0], reference: 'r2' }, req.leads[1]] },
      { ...req, leads: [req.leads[0], { xUserId: b, reference: '' }] },
      { ...req, expectedRevision: 2 },
      { ...req, leads: [req.leads[1], req.leads[0]] },
    ];
    for (const changed of changes) {
      const res = await importInto(play.id, changed);
      expect(res.statusCode, JSON.stringify(changed)).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error: 'request_id_reused', requestId: req.requestId });
    }
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('requestId is scoped to workspace and Play: the same id on another Play is a separate import', async () => {
    const one = await insertReviewPlay(t.db, acme.workspaceId);
    const two = await insertReviewPlay(t.db, acme.workspaceId);
    const foreign = await insertReviewPlay(t.db, other.workspaceId);
    const req = body([{ xUserId: nextXUserId() }]);
    const a = await importInto(one.play.id, req);
    const b = await importInto(two.play.id, req);
    const c = await importInto(foreign.play.id, req, client(t, other.auth));
    for (const res of [a, b, c]) expect(res.json()).toMatchObject({ replayed: false, results: [{ result: 'imported' }] });
    expect(new Set([a.json().batchId, b.json().batchId, c.json().batchId]).size).toBe(3);
  });

  it('two identical imports in parallel make one batch and answer the same (one replayed), never a 500 or a duplicate', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const req = body(Array.from({ length: 20 }, () => ({ xUserId: nextXUserId() })));
    const responses = await Promise.all([importInto(play.id, req), importInto(play.id, req), importInto(play.id, req)]);
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    const bodies = responses.map((r) => r.json());
    expect(bodies.filter((b) => !b.replayed)).toHaveLength(1);
    for (const b of bodies) expect({ ...b, replayed: false }).toEqual(bodies.find((x) => !x.replayed));
    expect(await batchesOf(play.id)).toHaveLength(1);
    expect(await candidatesOf(play.id)).toHaveLength(20);
  });

  it('two different payloads racing on one requestId: one is imported, the other answers 409', async () => {
    const { play } = await insertReviewPlay(t.db, acme.workspaceId);
    const requestId = newRequestId();
    const responses = await Promise.all([
      importInto(play.id, body([{ xUserId: nextXUserId() }], { requestId })),
      importInto(play.id, body([{ xUserId: nextXUserId() }], { requestId })),
    ]);
    expect(responses.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(await batchesOf(play.id)).toHaveLength(1);
  });

  it.runIf(dbEngine() === 'postgres')(
    'a writer that bypasses the Play lock and commits the same identity first: the import retries in a fresh transaction',
    async () => {
      const { play } = await insertReviewPlay(t.db, acme.workspaceId);
      const x = nextXUserId();
      const url = (t.handle as { url?: string }).url!;
      const writer = new pg.Client({ connectionString: url });
      await writer.connect();
      try {
        await writer.query('BEGIN');
        await writer.query(`INSERT INTO candidates (id, workspace_id, play_id, x_user_id, status) VALUES ($1, $2, $3, $4, 'proposed')`, [
          newId(),
          acme.workspaceId,
          play.id,
          x,
        ]);
        const pending = importInto(play.id, body([{ xUserId: x }, { xUserId: nextXUserId() }]));
        // Let the import reach the unique index and wait on the uncommitted row before the writer commits.
        await untilSomeoneWaitsOnALock(writer);
        await writer.query('COMMIT');
        const res = await pending;
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().results.map((r: { result: string }) => r.result)).toEqual(['existing_candidate', 'imported']);
        expect(await batchesOf(play.id)).toHaveLength(1);
      } finally {
        await writer.end();
      }
    },
  );
});

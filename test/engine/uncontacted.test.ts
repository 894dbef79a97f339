import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LeadStage } from '../../src/db/schema.js';
import { CONTACT_MILESTONES, isUncontacted, uncontactedSql } from '../../src/domain/uncontacted.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { ENGINE_ENV, insertAccount, step, steps } from './helpers.js';

// "Uncontacted" (src/domain/uncontacted.ts) decides whether a lane ends `skipped`, on a stop (SQL, x-leads) and at
// the end of a sequence (TypeScript, engine). The two copies used to disagree on replied_at: only the SQL counted a
// reply as contact. The spec's stop keeps "contacted history", and a reply is contact, so the SQL was right. The first
// test fails on the old TypeScript copy. The engine's lead update (sql/recordLeads.ts) keeps the stage of any lead with
// replied_at, which hid that drift end to end; the second test pins the behaviour both paths must keep.

let t: TestApp;
const T0 = new Date('2026-11-02T09:00:00.000Z');
const REPLIED = new Date('2026-11-01T12:00:00.000Z');

beforeAll(async () => {
  t = await buildTestApp({ env: ENGINE_ENV, now: T0.toISOString() });
});
afterAll(async () => t?.close());

const stageOf = async (id: string) => (await t.db.selectFrom('leads').select('stage').where('id', '=', id).executeTakeFirstOrThrow()).stage;

describe('uncontacted: one rule for the stop and for the end of a sequence', () => {
  it('the predicate and the SQL fragment agree on every stage and contact milestone; a reply counts as contact', async () => {
    const ws = (await createWorkspaceWithKey(t, 'Grid')).workspaceId;
    const stages: LeadStage[] = ['queued', 'resolving', 'invited', 'accepted', 'messaged', 'followed_up', 'replied', 'failed', 'skipped'];
    const expected = new Map<string, boolean>();
    for (const stage of stages) {
      for (const milestone of [null, ...CONTACT_MILESTONES]) {
        const id = await insertLead(t.db, ws, { stage, ...(milestone && { [milestone]: REPLIED }) });
        expected.set(id, (stage === 'queued' || stage === 'resolving') && milestone === null);
      }
    }
    const { rows } = await sql<{ id: string; uncontacted: boolean }>`
      SELECT l.id, ${uncontactedSql('l')} AS uncontacted FROM leads l WHERE l.workspace_id = ${ws}::uuid`.execute(t.db);
    const leads = await t.db.selectFrom('leads').selectAll().where('workspace_id', '=', ws).execute();
    expect(rows).toHaveLength(expected.size);
    const bySql = Object.fromEntries(rows.map((r) => [r.id, r.uncontacted]));
    const byTs = Object.fromEntries(leads.map((l) => [l.id, isUncontacted(l)]));
    expect(bySql).toEqual(Object.fromEntries(expected));
    expect(byTs).toEqual(Object.fromEntries(expected));
  });

  it('a queued lane with only a reply on record keeps its stage on a stop (HTTP) and at the end of its sequence (engine); one without ends skipped', async () => {
    const ws = await createWorkspaceWithKey(t, 'Lanes');
    const account = await insertAccount(t.db, ws.workspaceId);
    // One e-mail step; the leads have no address, so the step is skipped and the sequence ends without contact.
    const seq = await insertSequence(t.db, ws.workspaceId, { channels: ['email'], steps: steps(step('email', { subject: 'Hi', message: 'Hello' })) });
    const lane = (f: { replied: boolean; due: boolean }) =>
      insertLead(t.db, ws.workspaceId, {
        stage: 'queued',
        account_id: account,
        sequence_id: seq,
        next_action_at: f.due ? T0 : null,
        ...(f.replied && { replied_at: REPLIED }),
      });
    const stoppedReplied = await lane({ replied: true, due: false });
    const stoppedFresh = await lane({ replied: false, due: false });
    const endedReplied = await lane({ replied: true, due: true });
    const endedFresh = await lane({ replied: false, due: true });

    for (const id of [stoppedReplied, stoppedFresh]) {
      const res = await t.app.inject({ method: 'POST', url: `/api/v1/x/leads/${id}/stop`, headers: ws.auth });
      expect(res.statusCode).toBe(200);
    }
    const summary = await t.services.engine.runPass({ now: T0 });
    expect(summary).toMatchObject({ actions: 0, skipped: 2 });

    expect(await stageOf(stoppedReplied)).toBe('queued');
    expect(await stageOf(endedReplied)).toBe('queued');
    expect(await stageOf(stoppedFresh)).toBe('skipped');
    expect(await stageOf(endedFresh)).toBe('skipped');
  });
});

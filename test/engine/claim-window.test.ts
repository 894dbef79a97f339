import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { engineTick } from '../helpers/worlds/common.js';
import { ADMIN } from '../helpers/world-fixtures.js';
import { ENGINE_ENV, insertAccount, step, steps } from './helpers.js';
import { sql } from 'kysely';
import { parseSendingDays } from '../../src/config/config.js';
import { claimDue, withSequenceSteps } from '../../src/engine/sql/claimDue.js';
import type { ClaimedRow } from '../../src/engine/sql/rows.js';

// The claim reads the first batch of due leads from the due index and runs its full statement on those only
// (docs/engine.md "Exactly once"). Leads held by an admission rule that stand first in claim order must not keep the
// claim from the leads behind them. Batches of 3 here; through the operator's tick route, on both databases.

const T0 = new Date('2026-12-01T09:00:00.000Z');
const H = 3_600_000;

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { ...ENGINE_ENV, OUTREACH_ENGINE_BATCH_SIZE: 3 }, controlToken: ADMIN, now: T0.toISOString() });
});
afterAll(async () => t?.close());

const sent = async (ids: string[]) =>
  (await t.db.selectFrom('activity').select('lead_id').where('lead_id', 'in', ids).where('outcome', '=', 'ok').execute()).map((r) => r.lead_id).sort();

describe('the claim’s window of due leads', () => {
  it('leads held first in claim order (a paused sequence) do not stand in front of the leads due after them', async () => {
    const ws = await createWorkspaceWithKey(t, 'Claim window');
    const account = await insertAccount(t.db, ws.workspaceId);
    const invite = steps(step('connect', { message: 'Hi {{firstName}}' }));
    const paused = await insertSequence(t.db, ws.workspaceId, { status: 'paused', steps: invite });
    const active = await insertSequence(t.db, ws.workspaceId, { steps: invite });
    const lead = (person: string, sequence: string, hoursBefore: number) =>
      insertLead(t.db, ws.workspaceId, { person, account_id: account, sequence_id: sequence, next_action_at: new Date(T0.getTime() - hoursBefore * H) });
    // Seven held leads due first: more than two batches of them.
    const held = await Promise.all(Array.from({ length: 7 }, (_, i) => lead(`Held Person${i}`, paused, 3 + i / 10)));
    const due = await Promise.all(Array.from({ length: 4 }, (_, i) => lead(`Due Person${i}`, active, 1 + i / 10)));

    await engineTick(t, T0.getTime());

    expect(await sent(due)).toEqual([...due].sort());
    expect(await sent(held)).toEqual([]);
    const heldRows = await t.db.selectFrom('leads').select(['next_action_at', 'current_step', 'inflight_key']).where('id', 'in', held).execute();
    for (const r of heldRows) expect(r).toMatchObject({ current_step: 0, inflight_key: null });
    // Still due where they were: they run when the sequence is resumed.
    expect(heldRows.every((r) => r.next_action_at!.getTime() < T0.getTime())).toBe(true);
  });

  it('nothing due: the pass sends nothing and changes no lead', async () => {
    const ws = await createWorkspaceWithKey(t, 'Claim window, nothing due');
    const account = await insertAccount(t.db, ws.workspaceId);
    const seq = await insertSequence(t.db, ws.workspaceId, { steps: steps(step('connect', { message: 'Hi' })) });
    const later = await insertLead(t.db, ws.workspaceId, {
      person: 'Later Person',
      account_id: account,
      sequence_id: seq,
      next_action_at: new Date(T0.getTime() + 48 * H),
    });
    await engineTick(t, T0.getTime() + H);
    expect(await sent([later])).toEqual([]);
    const row = await t.db.selectFrom('leads').select(['next_action_at', 'updated_at']).where('id', '=', later).executeTakeFirstOrThrow();
    expect(row.next_action_at?.toISOString()).toBe(new Date(T0.getTime() + 48 * H).toISOString());
  });

  it('a batch reads its sequence’s steps once, shared and frozen; a lead whose sequence changed revision since its claim is left due', async () => {
    const ws = await createWorkspaceWithKey(t, 'Claim window, steps once');
    const account = await insertAccount(t.db, ws.workspaceId);
    const text = 'A long message. '.repeat(200);
    const seq = await insertSequence(t.db, ws.workspaceId, { steps: steps(step('connect', { message: 'Hi' }), step('message', { message: text })) });
    const ids = await Promise.all(
      [1, 2, 3].map((i) =>
        insertLead(t.db, ws.workspaceId, { person: `Once Person${i}`, account_id: account, sequence_id: seq, next_action_at: new Date(T0.getTime() - i * H) }),
      ),
    );
    const admission = { now: T0, unitsPerAction: 1, sendingWindow: { hoursStart: 0, hoursEnd: 24 * 60, days: parseSendingDays('sun-sat') } };
    const outcome = await t.db
      .transaction()
      .execute(async (trx) => {
        const rows = (await claimDue(trx, { now: T0, staleBefore: new Date(T0.getTime() - H), limit: 100, admission })).filter(
          (r) => r.workspace_id === ws.workspaceId,
        );
        // Edited by someone else after the claim read the leads: the claim's steps are no longer the sequence's.
        await sql`UPDATE sequences SET revision = revision + 1 WHERE id = ${seq}::uuid`.execute(trx);
        const afterEdit = await withSequenceSteps(trx, rows);
        throw Object.assign(new Error('rollback'), { rows, afterEdit });
      })
      .catch((e: { rows?: ClaimedRow[]; afterEdit?: ClaimedRow[] }) => e);
    const { rows, afterEdit } = outcome as { rows: ClaimedRow[]; afterEdit: ClaimedRow[] };
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(rows[1].steps).toBe(rows[0].steps);
    const second = (rows[0].steps as unknown as { message: string }[])[1];
    expect(second.message).toBe(text);
    expect(Object.isFrozen(second)).toBe(true);
    expect(() => Object.assign(second, { message: 'changed' })).toThrow(TypeError);
    expect(afterEdit).toEqual([]);
  });

  it('steps stored as JSON text, not an array, read as no steps: the claim’s rules and the send agree, and nothing is sent', async () => {
    // A damaged row (the array encoded twice). The admission rules read the steps' kinds from step_kinds, which sees no
    // step there; the step sent must be the step they judged, so nobody is contacted on rules that never ran.
    const ws = await createWorkspaceWithKey(t, 'Claim window, damaged steps');
    const account = await insertAccount(t.db, ws.workspaceId);
    const seq = await insertSequence(t.db, ws.workspaceId, { steps: steps(step('connect', { message: 'Hi' })) });
    await sql`UPDATE sequences SET steps = to_jsonb(steps::text) WHERE id = ${seq}::uuid`.execute(t.db);
    const id = await insertLead(t.db, ws.workspaceId, { person: 'Dana Damaged', account_id: account, sequence_id: seq, next_action_at: T0 });
    await engineTick(t, T0.getTime());
    expect(await sent([id])).toEqual([]);
  });
});

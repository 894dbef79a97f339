import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import { ACME, ADMIN, L1, L2, SEQ1, rowCounts, seed, smallWorld } from '../../helpers/world-fixtures.js';

// Issue 27 §8: what the console shows of a loaded world. An approved sequence keeps its approved revision's steps (a
// changed one carries them as approvedSteps), and a lead's A/B arm is the variant its ledger entries say went out.

let t: TestApp;
beforeEach(async () => {
  await t?.close();
  t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
});
afterAll(async () => t?.close());

const approvedSteps = async (id: string) =>
  (await t.db.selectFrom('sequences').select('approved_steps').where('id', '=', id).executeTakeFirstOrThrow()).approved_steps;
const variantOf = async (id: string) => (await t.db.selectFrom('leads').select('variant_key').where('id', '=', id).executeTakeFirstOrThrow()).variant_key;

async function refused(world: unknown, path: string, message: RegExp) {
  const before = await rowCounts(t);
  const res = await seed(t, world);
  expect(res.statusCode, res.body).toBe(400);
  expect(res.json()).toMatchObject({ error: 'invalid_world', path });
  expect(res.json().message).toMatch(message);
  expect(await rowCounts(t)).toEqual(before);
}

describe('approved steps', () => {
  it('a sequence approved at its current revision records those steps as approved', async () => {
    expect((await seed(t, smallWorld())).statusCode).toBe(200);
    expect(await approvedSteps(SEQ1)).toHaveLength(2);
    const review = await t.services.sequences.getSequenceForReview(ACME, SEQ1);
    expect(review.approvedStepsKnown).toBe(true);
    expect(review.changes.every((c: { change: string }) => c.change === 'unchanged')).toBe(true);
  });

  it('a changed sequence records the approvedSteps the file gives, and its review compares them', async () => {
    const world = smallWorld();
    Object.assign(world.workspaces[0].sequences[0], {
      revision: 4,
      approvedRevision: 3,
      approvedSteps: [{ kind: 'connect', delayDays: 0, message: 'Hello {{firstName}}' }],
    });
    expect((await seed(t, world)).statusCode).toBe(200);
    const review = await t.services.sequences.getSequenceForReview(ACME, SEQ1);
    expect(review.approvedStepsKnown).toBe(true);
    expect(review.changes.map((c: { change: string }) => c.change)).toEqual(['changed', 'added']);
  });

  it('without approvedSteps a changed sequence says they were not recorded (as before)', async () => {
    const world = smallWorld();
    Object.assign(world.workspaces[0].sequences[0], { revision: 4, approvedRevision: 3 });
    expect((await seed(t, world)).statusCode).toBe(200);
    expect(await approvedSteps(SEQ1)).toBeNull();
  });

  it('refuses approvedSteps without approvedRevision, beside the current approved revision, or with a bad step', async () => {
    const noApproval = smallWorld();
    Object.assign(noApproval.workspaces[0].sequences[0], { approvedRevision: null, approvedSteps: [{ kind: 'connect' }] });
    await refused(noApproval, '/workspaces/0/sequences/0/approvedSteps', /needs approvedRevision/);
    const current = smallWorld();
    Object.assign(current.workspaces[0].sequences[0], { approvedSteps: [{ kind: 'connect' }] });
    await refused(current, '/workspaces/0/sequences/0/approvedSteps', /must be left out/);
    const bad = smallWorld();
    Object.assign(bad.workspaces[0].sequences[0], { revision: 4, approvedSteps: [{ kind: 'sms' }] });
    await refused(bad, '/workspaces/0/sequences/0/approvedSteps/0/kind', /must be one of/);
  });
});

describe("a lead's A/B arm from its ledger", () => {
  it('takes the variant of the latest ledger entry that names one (as the engine writes it)', async () => {
    const world = smallWorld();
    world.workspaces[0].activity.push(
      { action: 'message', leadId: L1, createdAt: '2026-11-02T10:00:00Z', detail: JSON.stringify({ step: 1, kind: 'message', variant: 'B' }) },
      { action: 'message', leadId: L1, createdAt: '2026-11-01T12:00:00Z', detail: JSON.stringify({ step: 1, variant: 'A' }) },
    );
    expect((await seed(t, world)).statusCode).toBe(200);
    expect(await variantOf(L1)).toBe('B');
    expect(await variantOf(L2)).toBeNull();
    const report = await t.services.reports.funnelReport(ACME, 'sequence');
    // L1 was messaged and replied: arm B counts its send and its reply, arm A nothing.
    const arm = (key: string) => report.experimentArms.find((a) => a.sequenceId === SEQ1 && a.variantKey === key);
    expect(arm('B')).toMatchObject({ sent: 1, replied: 1 });
    expect(arm('A')).toMatchObject({ sent: 0, replied: 0 });
  });

  it("refuses a ledger entry naming a variant the lead's sequence does not define", async () => {
    const world = smallWorld();
    world.workspaces[0].activity.push({ action: 'message', leadId: L1, detail: JSON.stringify({ variant: 'Z' }) });
    await refused(world, '/workspaces/0/activity/3/detail', /variant "Z"/);
  });
});

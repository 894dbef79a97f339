import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertSequence } from '../helpers/factories.js';
import { newId } from '../../src/lib/ids.js';
import { ENGINE_ENV, insertAccount, step, steps } from './helpers.js';

// Preview launch (docs/sequences-and-leads.md "Forecast"): the forecast of a 500-lead branching sequence, through
// POST /api/v1/sequences/{id}/forecast, equals the engine's own sandbox run on the same seed and schedule, lead by lead:
// every step attempt on its day, every edge taken, every outcome. The forecast changes nothing of the workspace.

const T0 = new Date('2026-11-02T09:00:00.000Z');
const DAYS = 8;
const PASS_MINUTES = 120;
const LEADS = 500;
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({
    env: {
      ...ENGINE_ENV,
      OUTREACH_SANDBOX_SEED: 'forecast-equals-run',
      OUTREACH_SANDBOX_ACCEPT_RATE: 0.45,
      OUTREACH_SANDBOX_ACCEPT_MAX_HOURS: 120,
      OUTREACH_SANDBOX_REPLY_RATE: 0.25,
      OUTREACH_PACING_INVITE_CAP: 60,
      OUTREACH_PACING_MESSAGE_CAP: 120,
      // A whole batch of leads at a branch at once (a long row list once crashed the embedded database).
      OUTREACH_ENGINE_BATCH_SIZE: 500,
      // One claim loop: with several, which of the leads competing for a cap's last slots goes first depends on
      // which loop's claim commits first on PostgreSQL (docs/sequences-and-leads.md "Forecast").
      OUTREACH_ENGINE_CONCURRENCY: 1,
    },
    now: T0.toISOString(),
  });
}, 60_000);
afterAll(async () => t?.close());

/** LinkedIn first: accepted within 3 days → a message (then a reply within 4 days is the goal); else e-mail, split in two. */
const SEQUENCE = steps(
  step('connect', { id: 'invite', message: 'Hi {{firstName}}', next: [{ if: { accepted: true }, withinDays: 3, goto: 'li' }], else: 'route' }),
  step('message', {
    id: 'li',
    delayDays: 1,
    message: 'Thanks for connecting, {{firstName}}',
    next: [{ if: { replied: true }, withinDays: 4, goto: 'goal' }],
    else: 'exit',
  }),
  step('email', {
    id: 'route',
    subject: 'Hello',
    message: 'Hello {{firstName}}',
    next: [
      { if: { lacksAddress: 'email' }, goto: 'exit' },
      { if: { split: 50 }, goto: 'a' },
    ],
    else: 'b',
  }),
  step('email', { id: 'a', delayDays: 2, subject: 'Re: Hello', message: 'Short follow-up', else: 'exit' }),
  step('email', { id: 'b', delayDays: 3, subject: 'Re: Hello', message: 'Longer follow-up, {{firstName}}', else: 'exit' }),
);

interface Course {
  id: string;
  steps: { day: number; step: number; action: string; outcome: string }[];
  path: { day: number; fromStep: number; edge: number | null; goto: string; toStep: number | null }[];
  outcome: 'goal' | 'exit' | null;
  stage: string;
  currentStep: number;
  sequenceDone: boolean;
}

/** The engine's own run, read back the way the forecast reports it. */
async function coursesOf(sequenceId: string): Promise<Course[]> {
  const dayOf = (at: Date) => Math.floor((new Date(at).getTime() - T0.getTime()) / 86_400_000);
  const leads = await t.db
    .selectFrom('leads')
    .select(['id', 'stage', 'current_step', 'automation_stopped'])
    .where('sequence_id', '=', sequenceId)
    .orderBy('id')
    .execute();
  const acts = await sql<{ lead_id: string; action: string; outcome: string; step: number | null; created_at: Date }>`
    SELECT a.lead_id, a.action, a.outcome, (a.detail::jsonb ->> 'step')::int AS step, a.created_at FROM activity a JOIN leads l ON l.id = a.lead_id
    WHERE l.sequence_id = ${sequenceId}::uuid ORDER BY a.created_at, a.id`.execute(t.db);
  const paths = await t.db.selectFrom('lead_paths').selectAll().where('sequence_id', '=', sequenceId).orderBy('lead_id').orderBy('ordinal').execute();
  const by = new Map<string, Course>(
    leads.map((l) => [l.id, { id: l.id, steps: [], path: [], outcome: null, stage: l.stage, currentStep: l.current_step, sequenceDone: l.automation_stopped }]),
  );
  for (const a of acts.rows)
    if (a.step !== null) by.get(a.lead_id)!.steps.push({ day: dayOf(a.created_at), step: a.step, action: a.action, outcome: a.outcome });
  for (const p of paths) {
    const c = by.get(p.lead_id)!;
    c.path.push({ day: dayOf(p.taken_at), fromStep: p.from_step, edge: p.edge, goto: p.goto, toStep: p.to_step });
    if (p.outcome) c.outcome = p.outcome;
  }
  return [...by.values()];
}

describe('a forecast equals the run', () => {
  it(`${LEADS} leads of a branching LinkedIn → e-mail sequence: the forecast, then the engine on the same seed, agree to the lead`, async () => {
    const ws = await createWorkspaceWithKey(t, 'Forecast');
    const accounts = [await insertAccount(t.db, ws.workspaceId), await insertAccount(t.db, ws.workspaceId)];
    const seq = await insertSequence(t.db, ws.workspaceId, { channels: ['linkedin', 'email'], steps: SEQUENCE, status: 'draft', approvedRevision: null });
    await t.db
      .insertInto('leads')
      .values(
        Array.from({ length: LEADS }, (_, i) => ({
          id: newId(),
          workspace_id: ws.workspaceId,
          person: `Person${i} Example`,
          company: `Company ${i % 37}`,
          email: i % 9 === 0 ? null : `person${i}@example.com`,
          linkedin_url: `https://www.linkedin.com/in/person-${i}`,
          account_id: accounts[i % 2],
          sequence_id: seq,
          next_action_at: T0,
        })),
      )
      .execute();

    const began = Date.now();
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/sequences/${seq}/forecast`,
      headers: ws.auth,
      payload: { days: DAYS, passMinutes: PASS_MINUTES, includeLeads: true },
    });
    expect(res.statusCode, res.body).toBe(200);
    console.log(`forecast of ${LEADS} leads over ${DAYS} days: ${Date.now() - began} ms`);
    const forecast = res.json();
    expect(forecast).toMatchObject({ leads: LEADS, days: DAYS, seed: 'forecast-equals-run', estimate: false, revision: 1 });
    // Nothing of the workspace changed: no ledger, no path, every lead still due at its first step.
    expect(await t.db.selectFrom('activity').select('id').where('workspace_id', '=', ws.workspaceId).execute()).toHaveLength(0);
    expect(await t.db.selectFrom('lead_paths').select('id').where('workspace_id', '=', ws.workspaceId).execute()).toHaveLength(0);
    expect((await t.db.selectFrom('sequences').select('status').where('id', '=', seq).executeTakeFirstOrThrow()).status).toBe('draft');

    // Launch: approve and activate, then the engine on the same schedule.
    await t.db.updateTable('sequences').set({ status: 'active', approved_revision: 1 }).where('id', '=', seq).execute();
    const ran = Date.now();
    for (let k = 0; k * PASS_MINUTES * 60_000 < DAYS * 86_400_000; k++) {
      await t.services.engine.runPass({ now: new Date(T0.getTime() + k * PASS_MINUTES * 60_000) });
    }
    console.log(`the engine's run of the same: ${Date.now() - ran} ms`);
    const run = await coursesOf(seq);
    const predicted = [...(forecast.leadCourses as Course[])].sort((a, b) => a.id.localeCompare(b.id));
    const actual = [...run].sort((a, b) => a.id.localeCompare(b.id));
    expect(predicted.length).toBe(LEADS);
    for (let i = 0; i < LEADS; i++) expect(predicted[i], `lead ${actual[i].id}`).toEqual(actual[i]);

    // The world was not trivial: every kind of move happened, and the caps spread the invitations over days.
    const totals = forecast.totals;
    expect(totals.goals).toBeGreaterThan(0);
    expect(totals.exits).toBeGreaterThan(0);
    // Leads with no e-mail address skip the e-mail step and fall to its exit edge.
    expect(totals.fallThroughs).toBeGreaterThan(0);
    const invitesByDay = (forecast.steps[0].days as { sends: number }[]).map((d) => d.sends);
    expect(invitesByDay.reduce((a, b) => a + b, 0)).toBe(LEADS);
    expect(invitesByDay.filter((n) => n > 0).length).toBeGreaterThan(1);
    const tookEdge = new Set(run.flatMap((c) => c.path.map((p) => p.goto)));
    for (const g of ['li', 'route', 'a', 'b', 'goal', 'exit']) expect(tookEdge).toContain(g);
  }, 600_000);

  it('a foreign or unknown sequence is 404; bad bodies are 400 naming the field; a sequence without steps is 409', async () => {
    const ws = await createWorkspaceWithKey(t, 'Forecast errors');
    const other = await createWorkspaceWithKey(t, 'Other');
    const foreign = await insertSequence(t.db, other.workspaceId, {});
    const empty = await insertSequence(t.db, ws.workspaceId, { steps: [] });
    const post = (id: string, payload: unknown) =>
      t.app.inject({ method: 'POST', url: `/api/v1/sequences/${id}/forecast`, headers: ws.auth, payload: payload as object });
    expect((await post(foreign, { days: 3 })).statusCode).toBe(404);
    expect((await post(newId(), { days: 3 })).statusCode).toBe(404);
    const bad = await post(foreign, { days: 0 });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/days/);
    expect((await post(foreign, { days: 3, colour: 'red' })).statusCode).toBe(400);
    const noSteps = await post(empty, { days: 3 });
    expect(noSteps.statusCode).toBe(409);
    expect(noSteps.json().error).toBe('sequence_has_no_steps');
  });
});

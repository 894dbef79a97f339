import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertReply, insertSequence } from '../helpers/factories.js';
import { splitDraw } from '../../src/domain/branches.js';
import type { SequenceStepRow } from '../../src/db/schema.js';
import { activityOf, ENGINE_ENV, insertAccount, step, steps } from './helpers.js';

// Sequences that branch (docs/sequences-and-leads.md "Branches"), through the engine on a real database: each
// condition true, false, not yet known and timed out, with the path each lead took read back through GET /leads.

const T0 = new Date('2026-11-02T09:00:00.000Z');
const H = 3_600_000;
const DAY = 24 * H;
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ env: ENGINE_ENV, now: T0.toISOString() });
});
afterAll(async () => t?.close());

const at = (ms: number) => new Date(T0.getTime() + ms);
const pass = (ms: number) => t.services.engine.runPass({ now: at(ms) });
const lead = (id: string) => t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

type Branchy = SequenceStepRow;

async function world(name: string, list: Branchy[]) {
  const ws = await createWorkspaceWithKey(t, name);
  const account = await insertAccount(t.db, ws.workspaceId);
  const seq = await insertSequence(t.db, ws.workspaceId, { channels: ['linkedin', 'email'], steps: steps(...list) });
  const add = (f: { person: string; email?: string | null; title?: string; sandbox?: object }) =>
    insertLead(t.db, ws.workspaceId, {
      person: f.person,
      title: f.title ?? null,
      email: f.email === undefined ? `${f.person.split(' ')[0].toLowerCase()}@example.com` : f.email,
      linkedin_url: `https://www.linkedin.com/in/${f.person.split(' ')[0].toLowerCase()}`,
      account_id: account,
      sequence_id: seq,
      next_action_at: T0,
      ...(f.sandbox && { sandbox: JSON.stringify(f.sandbox) }),
    });
  return { ws, seq, add };
}

/** The lead as GET /leads answers it (path and outcome are x-extensions there). */
async function viewOf(auth: { authorization: string }, id: string) {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/leads?limit=500', headers: auth });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().leads as Record<string, any>[]).find((l) => l.id === id)!;
}

/** LinkedIn first; an invitation accepted within 3 days gets a LinkedIn message, otherwise the lead goes to e-mail. */
const LINKEDIN_THEN_EMAIL: Branchy[] = [
  step('connect', { id: 'invite', message: 'Hi {{firstName}}', next: [{ if: { accepted: true }, withinDays: 3, goto: 'li' }], else: 'mail' }),
  step('message', { id: 'li', delayDays: 1, message: 'Thanks for connecting, {{firstName}}', else: 'exit' }),
  step('email', { id: 'mail', subject: 'Hello', message: 'Hello {{firstName}}' }),
];

describe('accepted within N days', () => {
  it('not yet known: the lead waits at the branch until the window closes; then accepted: the LinkedIn edge, the wait counted from the edge', async () => {
    const w = await world('Accepts', LINKEDIN_THEN_EMAIL);
    const id = await w.add({ person: 'Ada Accept', sandbox: { acceptsInviteAfterHours: 30 } });

    await pass(0);
    let l = await lead(id);
    expect(l).toMatchObject({ current_step: 0, waiting_for: 'branch', stage: 'invited', automation_stopped: false });
    expect(l.next_action_at?.toISOString()).toBe(at(3 * DAY).toISOString());
    expect(l.branch_at?.toISOString()).toBe(T0.toISOString());

    // Accepted at +30h: the acceptance wakes the branch and the edge is taken in the same pass.
    await pass(31 * H);
    l = await lead(id);
    expect(l).toMatchObject({ current_step: 1, waiting_for: null, branch_at: null });
    // The message step's delayDays counts from the moment the edge was taken.
    expect(l.next_action_at?.toISOString()).toBe(at(31 * H + DAY).toISOString());

    await pass(31 * H + DAY);
    l = await lead(id);
    expect(l).toMatchObject({ automation_stopped: true, stage: 'messaged', next_action_at: null });
    expect((await activityOf(t.db, id)).map((a) => `${a.action}:${a.outcome}`)).toEqual(['invite:ok', 'accepted:ok', 'message:ok']);

    const view = await viewOf(w.ws.auth, id);
    expect(view.sequenceDone).toBe(true);
    expect(view.outcome).toBe('exit');
    expect(view.path).toMatchObject([
      { fromStep: 0, edge: 0, goto: 'li', toStep: 1, values: { accepted: true, at: at(30 * H).toISOString(), withinDays: 3 } },
      { fromStep: 1, edge: null, goto: 'exit', toStep: null, values: {} },
    ]);
  });

  it('timed out: never accepted within 3 days, the lead takes else to e-mail and the e-mail goes at once', async () => {
    const w = await world('Never accepts', LINKEDIN_THEN_EMAIL);
    const id = await w.add({ person: 'Nils Never' });
    await pass(0);
    await pass(2 * DAY);
    expect(await lead(id)).toMatchObject({ current_step: 0, waiting_for: 'branch' });
    await pass(3 * DAY + H);
    const l = await lead(id);
    expect(l).toMatchObject({ current_step: 3, automation_stopped: true });
    expect((await activityOf(t.db, id)).map((a) => `${a.action}:${a.outcome}`)).toEqual(['invite:ok', 'email_sent:ok']);
    const view = await viewOf(w.ws.auth, id);
    expect(view.path).toMatchObject([{ fromStep: 0, edge: null, goto: 'mail', toStep: 2 }]);
    // Past the last step without `else` the run is done as a linear one: no outcome of its own.
    expect(view.outcome).toBeUndefined();
  });

  it('accepted before the step was left counts, and a linear sequence beside it records no path', async () => {
    const w = await world('Linear beside', [step('connect', { message: 'Hi' }), step('email', { subject: 'S', message: 'M' })]);
    const id = await w.add({ person: 'Lena Linear' });
    await pass(0);
    await pass(H);
    expect(await lead(id)).toMatchObject({ automation_stopped: true, current_step: 2, waiting_for: null, branch_at: null });
    const view = await viewOf(w.ws.auth, id);
    expect(view).not.toHaveProperty('path');
    expect(view).not.toHaveProperty('outcome');
  });
});

describe('conditions read at once: addresses, fields, the split, the platform rules', () => {
  const ROUTER: Branchy[] = [
    step('email', {
      subject: 'Hi',
      message: 'Hi {{firstName}}',
      next: [
        { if: { lacksAddress: 'email' }, goto: 'exit' },
        { if: { field: 'title', contains: 'founder' }, goto: 'goal' },
        { if: { split: 50 }, goto: 'a' },
      ],
      else: 'b',
    }),
    step('email', { id: 'a', subject: 'A', message: 'Arm A', else: 'exit' }),
    step('email', { id: 'b', subject: 'B', message: 'Arm B', else: 'exit' }),
  ];

  it('no address: the skipped e-mail falls to the exit edge; a founder title to the goal; the rest split by their fixed draw', async () => {
    const w = await world('Router', ROUTER);
    const none = await w.add({ person: 'Nora None', email: null });
    const founder = await w.add({ person: 'Fay Founder', title: 'Co-Founder & CEO' });
    const others = await Promise.all(Array.from({ length: 12 }, (_, i) => w.add({ person: `Sam${i} Split` })));
    await pass(0);

    const noneView = await viewOf(w.ws.auth, none);
    expect(noneView).toMatchObject({ outcome: 'exit', sequenceDone: true, stage: 'skipped' });
    expect(noneView.path).toMatchObject([{ edge: 0, goto: 'exit', values: { lacksAddress: false } }]);
    expect((await activityOf(t.db, none)).map((a) => `${a.action}:${a.outcome}`)).toEqual(['email_sent:skipped']);

    const founderView = await viewOf(w.ws.auth, founder);
    expect(founderView).toMatchObject({ outcome: 'goal', sequenceDone: true });
    expect(founderView.path).toMatchObject([{ edge: 1, goto: 'goal', values: { title: 'Co-Founder & CEO' } }]);

    const arms = new Set<string>();
    for (const id of others) {
      const view = await viewOf(w.ws.auth, id);
      const draw = splitDraw(id, w.seq, 0);
      const expected = draw < 50 ? 'a' : 'b';
      arms.add(expected);
      expect(view.path[0]).toMatchObject({ fromStep: 0, goto: expected, edge: draw < 50 ? 2 : null });
      if (draw < 50) expect(view.path[0].values).toEqual({ split: draw });
      // Each arm's own e-mail went in the same pass, then its else ended the run.
      expect(view).toMatchObject({ outcome: 'exit', sequenceDone: true });
      expect((await activityOf(t.db, id)).map((a) => `${a.action}:${a.outcome}`)).toEqual(['email_sent:ok', 'email_sent:ok']);
    }
    expect(arms.size).toBe(2);
  });

  it('a step the platform rules give to a person falls through its allowed:false edge to e-mail, and no task opens', async () => {
    const w = await world('Falls through', [
      step('instagram_dm', { message: 'Hi {{firstName}}', next: [{ if: { allowed: false }, goto: 'mail' }], else: 'exit' }),
      step('email', { id: 'mail', subject: 'Hello', message: 'Hello {{firstName}}' }),
    ]);
    const id = await w.add({ person: 'Ines Insta' });
    // An account whose people act by hand (LinkedIn delivery `tasks`): Instagram never takes a cold DM from the engine.
    await t.db.updateTable('messaging_accounts').set({ linkedin_delivery: 'tasks' }).where('workspace_id', '=', w.ws.workspaceId).execute();
    await pass(0);
    const acts = await activityOf(t.db, id);
    expect(acts.map((a) => `${a.action}:${a.outcome}`)).toEqual(['message:skipped', 'email_sent:ok']);
    expect(JSON.parse(acts[0].detail)).toMatchObject({ step: 0, reason: 'instagram_no_cold_dm' });
    const tasks = await t.db.selectFrom('tasks').select('id').where('lead_id', '=', id).execute();
    expect(tasks).toHaveLength(0);
    const view = await viewOf(w.ws.auth, id);
    expect(view.path).toMatchObject([{ fromStep: 0, edge: 0, goto: 'mail', toStep: 1, values: { allowed: false } }]);
  });
  it('a record retried after a serialization failure in its edges counts its step and its edge once in the pass', async () => {
    const w = await world('Retried', [
      step('email', { subject: 'Hi', message: 'Hi {{firstName}}', next: [{ if: { field: 'title', contains: 'founder' }, goto: 'goal' }], else: 'exit' }),
    ]);
    const founder = await w.add({ person: 'Fay Founder', title: 'Founder' });
    // The first path written for this workspace fails as a serialization failure would (SQLSTATE 40001), once: a
    // sequence counts the tries, as it is not rolled back with them. The record's transaction is tried again whole.
    await sql`CREATE SEQUENCE branch_retry_tries`.execute(t.db);
    await sql
      .raw(
        `CREATE FUNCTION branch_retry_fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.workspace_id = '${w.ws.workspaceId}' AND nextval('branch_retry_tries') = 1 THEN
            RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001';
          END IF;
          RETURN NEW;
        END $$`,
      )
      .execute(t.db);
    await sql`CREATE TRIGGER branch_retry_fail_once BEFORE INSERT ON lead_paths FOR EACH ROW EXECUTE FUNCTION branch_retry_fail_once()`.execute(t.db);
    try {
      const report = (await pass(0)) as unknown as { actions: number; branched?: number };
      expect(Number((await sql<{ n: string }>`SELECT last_value AS n FROM branch_retry_tries`.execute(t.db)).rows[0].n)).toBe(2);
      expect(report).toMatchObject({ actions: 1, branched: 1 });
    } finally {
      await sql`DROP TRIGGER branch_retry_fail_once ON lead_paths`.execute(t.db);
      await sql`DROP FUNCTION branch_retry_fail_once()`.execute(t.db);
      await sql`DROP SEQUENCE branch_retry_tries`.execute(t.db);
    }
    expect((await activityOf(t.db, founder)).map((a) => `${a.action}:${a.outcome}`)).toEqual(['email_sent:ok']);
    expect(await viewOf(w.ws.auth, founder)).toMatchObject({ outcome: 'goal', path: [{ edge: 0, goto: 'goal' }] });
  });

  it('a step a person did, recorded through the API, reads its edges in that request: no engine pass in between', async () => {
    const w = await world('By hand', [
      step('connect', { id: 'invite', message: 'Hi {{firstName}}', next: [{ if: { field: 'title', contains: 'founder' }, goto: 'goal' }], else: 'mail' }),
      step('email', { id: 'mail', delayDays: 2, subject: 'Hello', message: 'Hello {{firstName}}' }),
    ]);
    // LinkedIn on tasks (docs/policy.md): the invitation is a person's task.
    await t.db.updateTable('messaging_accounts').set({ linkedin_delivery: 'tasks' }).where('workspace_id', '=', w.ws.workspaceId).execute();
    const founder = await w.add({ person: 'Fay Founder', title: 'Founder' });
    const other = await w.add({ person: 'Otto Other', title: 'Engineer' });
    await pass(0);
    for (const id of [founder, other]) {
      const task = await t.db.selectFrom('tasks').select('id').where('lead_id', '=', id).where('status', '=', 'open').executeTakeFirstOrThrow();
      const res = await t.app.inject({ method: 'POST', url: `/api/v1/tasks/${task.id}/complete`, headers: w.ws.auth, payload: { by: 'sam' } });
      expect(res.statusCode, res.body).toBe(200);
    }
    const founderView = await viewOf(w.ws.auth, founder);
    expect(founderView).toMatchObject({ outcome: 'goal', sequenceDone: true });
    expect(founderView.path).toMatchObject([{ edge: 0, goto: 'goal', values: { title: 'Founder' } }]);
    const otherView = await viewOf(w.ws.auth, other);
    expect(otherView.path).toMatchObject([{ edge: null, goto: 'mail', toStep: 1 }]);
    expect(otherView).toMatchObject({ currentStep: 1, sequenceDone: false });
    // The target's delayDays count from the edge, taken when the person's step was recorded.
    expect((await lead(other)).next_action_at?.getTime()).toBeGreaterThanOrEqual(T0.getTime() + 2 * DAY);
  });

  it('a step a person did while the sequence is paused leaves the lead at its branch; the engine reads the edges once it runs again', async () => {
    const w = await world('Paused by hand', [
      step('connect', { id: 'invite', message: 'Hi {{firstName}}', next: [{ if: { field: 'title', contains: 'founder' }, goto: 'goal' }], else: 'exit' }),
    ]);
    await t.db.updateTable('messaging_accounts').set({ linkedin_delivery: 'tasks' }).where('workspace_id', '=', w.ws.workspaceId).execute();
    const founder = await w.add({ person: 'Fay Founder', title: 'Founder' });
    await pass(0);
    const setStatus = async (status: string) => {
      const res = await t.app.inject({ method: 'PATCH', url: `/api/v1/sequences/${w.seq}/status`, headers: w.ws.auth, payload: { status } });
      expect(res.statusCode, res.body).toBe(200);
    };
    await setStatus('paused');
    const task = await t.db.selectFrom('tasks').select('id').where('lead_id', '=', founder).where('status', '=', 'open').executeTakeFirstOrThrow();
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/tasks/${task.id}/complete`, headers: w.ws.auth, payload: { by: 'sam' } });
    expect(res.statusCode, res.body).toBe(200);
    expect((await viewOf(w.ws.auth, founder)).path).toBeUndefined();
    expect(await lead(founder)).toMatchObject({ waiting_for: 'branch', current_step: 0, automation_stopped: false });
    await pass(H);
    expect((await viewOf(w.ws.auth, founder)).path).toBeUndefined();
    await setStatus('active');
    await pass(2 * H);
    expect(await viewOf(w.ws.auth, founder)).toMatchObject({ outcome: 'goal', sequenceDone: true, path: [{ edge: 0, goto: 'goal' }] });
  });

  it('a custom field equals (any case), and a field that does not exist: each edge records the value it read', async () => {
    const w = await world('Fields', [
      step('email', {
        subject: 'Hi',
        message: 'Hi {{firstName}}',
        next: [
          { if: { field: 'custom.plan', equals: 'Enterprise' }, goto: 'goal' },
          { if: { field: 'company', exists: false }, goto: 'exit' },
        ],
        else: 'b',
      }),
      step('email', { id: 'b', subject: 'B', message: 'Arm B', else: 'exit' }),
    ]);
    const big = await w.add({ person: 'Ella Enterprise' });
    const bare = await w.add({ person: 'Nico Nocompany' });
    const plain = await w.add({ person: 'Pia Plain' });
    await t.db
      .updateTable('leads')
      .set({ custom: JSON.stringify({ plan: ' enterprise ' }) as never, company: 'Acme' })
      .where('id', '=', big)
      .execute();
    await t.db
      .updateTable('leads')
      .set({ company: 'Initech', custom: JSON.stringify({ plan: 'starter' }) as never })
      .where('id', '=', plain)
      .execute();
    await pass(0);
    expect((await viewOf(w.ws.auth, big)).path).toMatchObject([{ edge: 0, goto: 'goal', values: { 'custom.plan': 'enterprise' } }]);
    expect((await viewOf(w.ws.auth, bare)).path).toMatchObject([{ edge: 1, goto: 'exit', values: { company: false } }]);
    expect((await viewOf(w.ws.auth, plain)).path).toMatchObject([{ edge: null, goto: 'b' }, { goto: 'exit' }]);
  });

  it('the edges are read as the step is recorded: a send that spent the last energy still ends at its goal, and an open window is set at once', async () => {
    // Reading an edge spends nothing, so a workspace out of energy (the admission rule energy_exhausted, which holds a
    // claim) does not leave a lead that just sent undecided. Read at the record, the founder's goal ends the run and the
    // other lead's acceptance window is its next action, both in the pass that sent; a claim would have waited for energy.
    const w = await world('Last energy', [
      step('connect', {
        id: 'invite',
        message: 'Hi {{firstName}}',
        next: [
          { if: { field: 'title', contains: 'founder' }, goto: 'goal' },
          { if: { accepted: true }, withinDays: 3, goto: 'mail' },
        ],
        else: 'exit',
      }),
      step('email', { id: 'mail', subject: 'Hello', message: 'Hello {{firstName}}' }),
    ]);
    await t.db
      .updateTable('workspaces')
      .set({ energy_balance: 2, energy_daily_refill: 0, energy_refilled_at: T0 })
      .where('id', '=', w.ws.workspaceId)
      .execute();
    const founder = await w.add({ person: 'Fay Founder', title: 'Founder' });
    const other = await w.add({ person: 'Otto Other', title: 'Engineer' });
    await pass(0);

    const energy = await t.db.selectFrom('workspaces').select('energy_balance').where('id', '=', w.ws.workspaceId).executeTakeFirstOrThrow();
    expect(Number(energy.energy_balance)).toBe(0);
    expect((await activityOf(t.db, founder)).map((a) => `${a.action}:${a.outcome}`)).toEqual(['invite:ok']);
    const founderView = await viewOf(w.ws.auth, founder);
    expect(founderView).toMatchObject({ outcome: 'goal', sequenceDone: true });
    expect(founderView.path).toMatchObject([{ edge: 0, goto: 'goal', values: { title: 'Founder' } }]);
    const waiting = await lead(other);
    expect(waiting).toMatchObject({ waiting_for: 'branch', current_step: 0, automation_stopped: false });
    expect(waiting.next_action_at?.toISOString()).toBe(at(3 * DAY).toISOString());
    expect((await viewOf(w.ws.auth, other)).path).toBeUndefined();
  });

  it('a window that closes while the workspace is out of energy: the edge is taken all the same, and the step it leads to waits for energy', async () => {
    // The claim's energy rule holds a lead only when it has a step to send; at its branch it is due to take an edge.
    const w = await world('Window without energy', LINKEDIN_THEN_EMAIL);
    await t.db
      .updateTable('workspaces')
      .set({ energy_balance: 1, energy_daily_refill: 0, energy_refilled_at: T0 })
      .where('id', '=', w.ws.workspaceId)
      .execute();
    const id = await w.add({ person: 'Nia Never', sandbox: { acceptsInviteAfterHours: null } });
    await pass(0);
    expect(await lead(id)).toMatchObject({ waiting_for: 'branch', current_step: 0 });

    await pass(3 * DAY);
    const l = await lead(id);
    expect(l).toMatchObject({ waiting_for: null, current_step: 2, automation_stopped: false });
    expect((await viewOf(w.ws.auth, id)).path).toMatchObject([{ fromStep: 0, edge: null, goto: 'mail', toStep: 2 }]);
    // The e-mail needs energy: nothing went out, and it stays due.
    expect((await activityOf(t.db, id)).map((a) => `${a.action}:${a.outcome}`)).toEqual(['invite:ok']);
    expect(l.next_action_at!.getTime()).toBeLessThanOrEqual(at(3 * DAY).getTime());
  });
});

describe('replies and bookings', () => {
  const REPLY_ROUTES: Branchy[] = [
    step('email', {
      subject: 'Hi',
      message: 'Hi {{firstName}}',
      next: [
        { if: { replied: true, intent: 'positive' }, withinDays: 5, goto: 'goal' },
        { if: { replied: true, intent: 'negative' }, withinDays: 5, goto: 'exit' },
      ],
      else: 'bump',
    }),
    step('email', { id: 'bump', subject: 'Re: Hi', message: 'Bumping this, {{firstName}}' }),
  ];

  it('a positive reply takes the goal edge at once; the lead stays frozen in replied', async () => {
    const w = await world('Reply goal', REPLY_ROUTES);
    const id = await w.add({ person: 'Gina Goal', sandbox: { replyAfterHours: 5, replyText: 'Sounds good, can we meet Tuesday?' } });
    await pass(0);
    expect((await lead(id)).next_action_at?.toISOString()).toBe(at(5 * DAY).toISOString());
    await pass(6 * H);
    const view = await viewOf(w.ws.auth, id);
    expect(view).toMatchObject({ stage: 'replied', sequenceDone: true, outcome: 'goal' });
    expect(view.path).toMatchObject([{ fromStep: 0, edge: 0, goto: 'goal', values: { replied: true, withinDays: 5 } }]);
    // Nothing is sent after it, not even at the window's end.
    await pass(6 * DAY);
    expect((await activityOf(t.db, id)).map((a) => a.action)).toEqual(['email_sent', 'reply_detected']);
  });

  it('a negative reply freezes the lead until a person dismisses it; then its edge is decided (exit)', async () => {
    const w = await world('Reply dismissed', REPLY_ROUTES);
    const id = await w.add({ person: 'Ned Nope', sandbox: { replyAfterHours: 5, replyText: 'Not interested, thanks.' } });
    await pass(0);
    await pass(6 * H);
    let view = await viewOf(w.ws.auth, id);
    expect(view).toMatchObject({ stage: 'replied', sequenceDone: true });
    expect(view).not.toHaveProperty('path');
    const reply = await t.db.selectFrom('replies').select(['id', 'classification']).where('lead_id', '=', id).executeTakeFirstOrThrow();
    expect(reply.classification).toBe('negative');
    t.clock.set(at(7 * H));
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/replies/${reply.id}/decide`, headers: w.ws.auth, payload: { decision: 'dismiss' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await lead(id)).toMatchObject({ waiting_for: 'branch', automation_stopped: false });
    await pass(7 * H);
    view = await viewOf(w.ws.auth, id);
    expect(view).toMatchObject({ outcome: 'exit', sequenceDone: true });
    expect(view.path).toMatchObject([{ fromStep: 0, edge: 1, goto: 'exit', values: { replied: true } }]);
    expect((await activityOf(t.db, id)).map((a) => a.action)).toEqual(['email_sent', 'reply_detected', 'reply_dismissed']);
  });

  it('no reply within the window: else (the bump) goes at the window end', async () => {
    const w = await world('No reply', REPLY_ROUTES);
    const id = await w.add({ person: 'Quinn Quiet' });
    await pass(0);
    await pass(4 * DAY);
    expect((await activityOf(t.db, id)).map((a) => a.action)).toEqual(['email_sent']);
    await pass(5 * DAY);
    expect((await activityOf(t.db, id)).map((a) => a.action)).toEqual(['email_sent', 'email_sent']);
    expect((await viewOf(w.ws.auth, id)).path).toMatchObject([{ edge: null, goto: 'bump', toStep: 1 }]);
  });

  it('no booking within 2 days (meetingBooked: false): waits while not yet known, then takes the edge when the window closes', async () => {
    const w = await world('Not booked', [
      step('email', { subject: 'Hi', message: 'Hi {{firstName}}', next: [{ if: { meetingBooked: false }, withinDays: 2, goto: 'nudge' }], else: 'exit' }),
      step('email', { id: 'nudge', subject: 'Re: Hi', message: 'A time that suits you, {{firstName}}?' }),
    ]);
    const id = await w.add({ person: 'Una Unbooked' });
    await pass(0);
    await pass(DAY);
    expect(await lead(id)).toMatchObject({ waiting_for: 'branch', current_step: 0 });
    expect((await viewOf(w.ws.auth, id)).path).toBeUndefined();
    await pass(2 * DAY);
    expect((await viewOf(w.ws.auth, id)).path).toMatchObject([{ edge: 0, goto: 'nudge', toStep: 1, values: { meetingBooked: false, withinDays: 2 } }]);
    expect((await activityOf(t.db, id)).map((a) => a.action)).toEqual(['email_sent', 'email_sent']);
  });

  it('a booking is the goal of a branching sequence: the run ends with it, from wherever the lead stood', async () => {
    const w = await world('Booked', REPLY_ROUTES);
    const id = await w.add({ person: 'Bea Booked' });
    await pass(0);
    t.clock.set(at(DAY));
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/leads/${id}/meeting`,
      headers: w.ws.auth,
      payload: { bookedAt: at(3 * DAY).toISOString() },
    });
    expect(res.statusCode, res.body).toBe(200);
    const view = await viewOf(w.ws.auth, id);
    expect(view).toMatchObject({ sequenceDone: true, outcome: 'goal' });
    expect(view.path).toMatchObject([{ fromStep: 0, edge: null, goto: 'goal', values: { meetingBooked: true, reason: 'meeting_booked' } }]);
    await pass(6 * DAY);
    expect((await activityOf(t.db, id)).map((a) => a.action)).toEqual(['email_sent', 'meeting_booked']);
  });
});

describe('a lane stopped while its branching step is in flight', () => {
  it('is not put at the branch, so dismissing a reply later cannot set it going again', async () => {
    // A driver that holds the send until the test lets it go, then answers ok.
    let entered!: () => void;
    const inFlight = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const drivers = {
      forChannel: (channel: string) => ({
        channel,
        async perform() {
          entered();
          await gate;
          return { outcome: 'ok' as const, externalId: 'held-1' };
        },
      }),
    };
    const app = await buildTestApp({ env: ENGINE_ENV, now: T0.toISOString(), drivers: drivers });
    try {
      const ws = await createWorkspaceWithKey(app, 'Stopped in flight');
      const account = await insertAccount(app.db, ws.workspaceId);
      const seq = await insertSequence(app.db, ws.workspaceId, {
        channels: ['email'],
        steps: steps(
          step('email', { subject: 'Hi', message: 'Hi', next: [{ if: { replied: true }, withinDays: 5, goto: 'goal' }], else: 'bump' }),
          step('email', { id: 'bump', subject: 'Re: Hi', message: 'Bump' }),
        ),
      });
      const id = await insertLead(app.db, ws.workspaceId, {
        person: 'Sid Stopped',
        email: 'sid@example.com',
        account_id: account,
        sequence_id: seq,
        next_action_at: T0,
      });
      const pass = app.services.engine.runPass({ now: T0 });
      await inFlight;
      // Meanwhile the person answers and someone presses Stop.
      const stopped = await app.app.inject({ method: 'POST', url: `/api/v1/x/leads/${id}/stop`, headers: ws.auth });
      expect(stopped.statusCode, stopped.body).toBe(200);
      await app.db
        .updateTable('leads')
        .set({ replied_at: at(H) })
        .where('id', '=', id)
        .execute();
      const replyId = await insertReply(app.db, app.cipher, ws.workspaceId, { leadId: id, classification: 'question', theirMessage: 'What is it?' });
      release();
      await pass;
      expect(await app.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow()).toMatchObject({
        automation_stopped: true,
        waiting_for: null,
        branch_at: null,
      });
      const dismissed = await app.app.inject({ method: 'POST', url: `/api/v1/replies/${replyId}/decide`, headers: ws.auth, payload: { decision: 'dismiss' } });
      expect(dismissed.statusCode, dismissed.body).toBe(200);
      expect(await app.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow()).toMatchObject({
        automation_stopped: true,
        next_action_at: null,
      });
    } finally {
      await app.close();
    }
  });
});

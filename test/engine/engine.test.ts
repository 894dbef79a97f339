import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSealedData } from '../../src/webhooks/outbox.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence, insertXAccount, setWorkspaceState } from '../helpers/factories.js';
import { activityOf, countBy, ENGINE_ENV, eventsOf, insertAccount, step, steps } from './helpers.js';

let t: TestApp;
const T0 = new Date('2026-11-02T09:00:00.000Z');
const H = 3_600_000;

beforeAll(async () => {
  t = await buildTestApp({ env: ENGINE_ENV, now: T0.toISOString() });
});
afterAll(async () => t?.close());

async function workspace(name: string, booking: string | null = null) {
  const ws = await createWorkspaceWithKey(t, name);
  if (booking) await t.db.updateTable('workspaces').set({ booking_link: booking }).where('id', '=', ws.workspaceId).execute();
  return ws.workspaceId;
}

const lead = (id: string) => t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** A fresh workspace with an e-mail account, a two-step e-mail sequence (the second step 2 days on), and one lead due at T0 on it. */
async function twoEmailLead(name: string, f: { person: string; email: string; sandbox: object }) {
  const ws = await createWorkspaceWithKey(t, name);
  const account = await insertAccount(t.db, ws.workspaceId);
  const seq = await insertSequence(t.db, ws.workspaceId, {
    channels: ['email'],
    steps: steps(
      step('email', { subject: 'Hi', message: 'First {{firstName}}' }),
      step('email', { delayDays: 2, subject: 'Re: Hi', message: 'Second {{firstName}}' }),
    ),
  });
  const id = await insertLead(t.db, ws.workspaceId, {
    person: f.person,
    email: f.email,
    account_id: account,
    sequence_id: seq,
    next_action_at: T0,
    sandbox: JSON.stringify(f.sandbox),
  });
  return { ws, id };
}

describe('a LinkedIn sequence end to end', () => {
  it('invites, waits for the scripted accept, messages its variant, detects and drafts the reply', async () => {
    const ws = await workspace('E2E', 'https://cal.example/acme');
    const account = await insertAccount(t.db, ws, { timeZone: 'Europe/Paris' });
    const seq = await insertSequence(t.db, ws, {
      steps: steps(
        step('connect', { message: 'Hi {{firstName}}' }),
        step('message', {
          delayDays: 1,
          variants: [
            { key: 'A', weight: 50, messageTmpl: 'A {{company}}' },
            { key: 'B', weight: 50, messageTmpl: 'B {{company}}' },
          ],
        }),
        step('message', { delayDays: 3, message: 'Following up, {{firstName}}' }),
      ),
    });
    const id = await insertLead(t.db, ws, {
      person: 'Bob Builder',
      company: 'Initech',
      title: 'CTO',
      linkedin_url: 'https://www.linkedin.com/in/bob',
      account_id: account,
      sequence_id: seq,
      next_action_at: T0,
      sandbox: JSON.stringify({ acceptsInviteAfterHours: 30, replyAfterHours: 5, replyText: 'Sounds good, can we meet Tuesday?' }),
    });

    const s1 = await t.services.engine.runPass({ now: T0 });
    expect(s1).toMatchObject({ actions: 1, skipped: 0, failed: 0, repliesDetected: 0 });
    let l = await lead(id);
    expect(l).toMatchObject({ stage: 'invited', current_step: 1 });
    expect(l.invited_at?.toISOString()).toBe(T0.toISOString());

    // Message step due after one day, but the invite is still pending: the lead waits for the accept.
    const s2 = await t.services.engine.runPass({ now: new Date(T0.getTime() + 25 * H) });
    expect(s2.actions).toBe(0);
    l = await lead(id);
    expect(l.next_action_at).toBeNull();

    // Accepted at +30h; the waiting message goes in the same pass.
    const s3 = await t.services.engine.runPass({ now: new Date(T0.getTime() + 31 * H) });
    expect(s3).toMatchObject({ observations: 1, actions: 1 });
    l = await lead(id);
    expect(l.stage).toBe('messaged');
    expect(['A', 'B']).toContain(l.variant_key);
    expect(l.connected_at?.toISOString()).toBe(new Date(T0.getTime() + 30 * H).toISOString());

    // Reply 5h after the first message freezes the sequence before the follow-up.
    const s4 = await t.services.engine.runPass({ now: new Date(T0.getTime() + 37 * H) });
    expect(s4.repliesDetected).toBe(1);
    l = await lead(id);
    expect(l).toMatchObject({ stage: 'replied', automation_stopped: true, next_action_at: null, reply_sentiment: 'positive' });
    const s5 = await t.services.engine.runPass({ now: new Date(T0.getTime() + 200 * H) });
    expect(s5).toMatchObject({ actions: 0, repliesDetected: 0 });

    const reply = await t.db.selectFrom('replies').selectAll().where('lead_id', '=', id).executeTakeFirstOrThrow();
    expect(reply.classification).toBe('meeting_intent');
    expect(reply.their_message).not.toContain('Tuesday');
    expect(t.services.engine && reply.their_message?.startsWith('v1:')).toBe(true);

    const actions = (await activityOf(t.db, id)).map((a) => `${a.action}:${a.outcome}`);
    expect(actions).toEqual(['invite:ok', 'accepted:ok', 'message:ok', 'reply_detected:ok']);
    const events = await eventsOf(t.db, ws);
    expect(events.map((e) => e.event)).toEqual(['lead.invited', 'lead.accepted', 'lead.messaged', 'reply.received']);
    // The outbox keeps the reply text sealed like the reply itself; deliveries open it.
    expect(JSON.stringify(events[3].data)).not.toMatch(/Tuesday|cal\.example/);
    const opened = openSealedData(events[3].data, t.cipher) as Record<string, string>;
    expect(opened).toMatchObject({ classification: 'meeting_intent', theirMessage: 'Sounds good, can we meet Tuesday?' });
    expect(opened.draft).toContain('https://cal.example/acme');
    expect(events[0].data.lead).toMatchObject({ id, person: 'Bob Builder', company: 'Initech', account, sequenceId: seq, stage: 'invited' });
  });

  it('skips a step whose template needs a missing value, with the reason in detail, and never sends it', async () => {
    const ws = await workspace('Templates');
    const account = await insertAccount(t.db, ws);
    const seq = await insertSequence(t.db, ws, {
      steps: steps(step('connect', { message: 'Hi {{firstName}} at {{company}}' }), step('engage', { actions: [{ type: 'like', count: 1, reaction: null }] })),
    });
    const id = await insertLead(t.db, ws, { person: 'Ann', company: null, account_id: account, sequence_id: seq, next_action_at: T0 });
    const s = await t.services.engine.runPass({ now: T0 });
    expect(s).toMatchObject({ actions: 1, skipped: 1 });
    const acts = await activityOf(t.db, id);
    expect(acts.map((a) => `${a.action}:${a.outcome}`)).toEqual(['invite:skipped', 'like:ok']);
    expect(JSON.parse(acts[0].detail)).toMatchObject({ reason: 'missing_template_value', field: 'company' });
    const l = await lead(id);
    // The sequence ended without reaching the person (a like is not contact): the lead ends `skipped`.
    expect(l).toMatchObject({ stage: 'skipped', automation_stopped: true, current_step: 2 });
  });

  it('records a send left in flight by a crash as failed uncertain_delivery and moves on, never repeating it', async () => {
    const ws = await workspace('Crash');
    const account = await insertAccount(t.db, ws);
    const seq = await insertSequence(t.db, ws, { steps: steps(step('connect'), step('engage', { delayDays: 2 })) });
    const id = await insertLead(t.db, ws, { account_id: account, sequence_id: seq, next_action_at: T0 });
    await sql`UPDATE leads SET inflight_key = ${`${id}:${seq}:0`}, inflight_step = 0, inflight_at = ${new Date(T0.getTime() - 2 * H).toISOString()}::timestamptz WHERE id = ${id}::uuid`.execute(
      t.db,
    );
    const s = await t.services.engine.runPass({ now: T0 });
    expect(s).toMatchObject({ actions: 0, failed: 1 });
    const acts = await activityOf(t.db, id);
    expect(acts.map((a) => `${a.action}:${a.outcome}`)).toEqual(['invite:failed']);
    expect(JSON.parse(acts[0].detail).reason).toBe('uncertain_delivery');
    const l = await lead(id);
    expect(l.current_step).toBe(1);
    expect(l.next_action_at?.toISOString()).toBe(new Date(T0.getTime() + 48 * H).toISOString());
  });

  it('retries a retryable failure later and fails the lead after a permanent one', async () => {
    const ws = await workspace('Failures');
    const account = await insertAccount(t.db, ws);
    const seq = await insertSequence(t.db, ws, { steps: steps(step('connect')) });
    const limited = await insertLead(t.db, ws, {
      account_id: account,
      sequence_id: seq,
      next_action_at: T0,
      sandbox: JSON.stringify({ rateLimited: 1, retryAfterSeconds: 1800 }),
    });
    const broken = await insertLead(t.db, ws, {
      account_id: account,
      sequence_id: seq,
      next_action_at: T0,
      sandbox: JSON.stringify({ failWith: 'profile_unavailable' }),
    });
    const s1 = await t.services.engine.runPass({ now: T0 });
    expect(s1).toMatchObject({ actions: 0, failed: 2 });
    expect(await lead(broken)).toMatchObject({ stage: 'failed', automation_stopped: true, last_error: 'profile_unavailable' });
    expect((await lead(limited)).next_action_at?.toISOString()).toBe(new Date(T0.getTime() + 1800_000).toISOString());
    const s2 = await t.services.engine.runPass({ now: new Date(T0.getTime() + H) });
    expect(s2).toMatchObject({ actions: 1, failed: 0 });
    expect(await lead(limited)).toMatchObject({ stage: 'invited' });
    // Failed sends gave their pacing reservation back.
    const pacing = await t.services.engine.accountPacing(account, new Date(T0.getTime() + H));
    expect(pacing?.invitesSentToday).toBe(1);
  });
});

describe('gating', () => {
  async function setup(name: string, seqOpts: Parameters<typeof insertSequence>[2] = {}) {
    const ws = await workspace(name);
    const account = await insertAccount(t.db, ws);
    const seq = await insertSequence(t.db, ws, { steps: steps(step('connect')), ...seqOpts });
    const id = await insertLead(t.db, ws, {
      account_id: account,
      sequence_id: seq,
      next_action_at: T0,
      linkedin_url: `https://linkedin.example/${name}`,
      email: `${name}@x.example`,
    });
    return { ws, account, seq, id };
  }

  it('a paused sequence does nothing until resumed', async () => {
    const { ws, seq, id } = await setup('paused', { status: 'paused' });
    expect((await t.services.engine.runPass({ now: T0 })).actions).toBe(0);
    expect(await activityOf(t.db, id)).toHaveLength(0);
    await t.db.updateTable('sequences').set({ status: 'active' }).where('id', '=', seq).execute();
    expect((await t.services.engine.runPass({ now: T0 })).actions).toBe(1);
    expect(await countBy(t.db, ws)).toEqual({ 'invite:ok': 1 });
  });

  it('an unapproved revision does nothing', async () => {
    const { id } = await setup('unapproved', { revision: 3, approvedRevision: 2 });
    await t.services.engine.runPass({ now: T0 });
    expect(await activityOf(t.db, id)).toHaveLength(0);
    expect((await lead(id)).stage).toBe('queued');
  });

  it('canceled or past-due billing does nothing; trialing runs', async () => {
    const { ws, id } = await setup('billing');
    await setWorkspaceState(t.db, ws, { billingStatus: 'canceled' });
    await t.services.engine.runPass({ now: T0 });
    await setWorkspaceState(t.db, ws, { billingStatus: 'past_due' });
    await t.services.engine.runPass({ now: T0 });
    expect(await activityOf(t.db, id)).toHaveLength(0);
    await setWorkspaceState(t.db, ws, { billingStatus: 'trialing' });
    await t.services.engine.runPass({ now: T0 });
    expect(await activityOf(t.db, id)).toHaveLength(1);
  });

  it('no energy, no send; each send costs its units', async () => {
    const { ws, id } = await setup('energy');
    await t.db.updateTable('workspaces').set({ energy_balance: 0, energy_daily_refill: 0 }).where('id', '=', ws).execute();
    await t.services.engine.runPass({ now: T0 });
    expect(await activityOf(t.db, id)).toHaveLength(0);
    await t.db.updateTable('workspaces').set({ energy_balance: 5 }).where('id', '=', ws).execute();
    await t.services.engine.runPass({ now: T0 });
    const acts = await activityOf(t.db, id);
    expect(acts.map((a) => [a.action, a.units])).toEqual([['invite', 1]]);
    const w = await t.db.selectFrom('workspaces').select('energy_balance').where('id', '=', ws).executeTakeFirstOrThrow();
    expect(w.energy_balance).toBe(4);
  });

  it('a disconnected sending account does nothing; X steps need the Play account', async () => {
    const ws = await workspace('accounts');
    const account = await insertAccount(t.db, ws, { storedStatus: 'disconnected' });
    const seq = await insertSequence(t.db, ws, { steps: steps(step('connect')) });
    const id = await insertLead(t.db, ws, { account_id: account, sequence_id: seq, next_action_at: T0 });
    const xseq = await insertSequence(t.db, ws, {
      channels: ['x'],
      steps: steps(step('x_engage', { actions: [{ type: 'follow', count: 1, reaction: null }] }), step('x_dm', { message: 'hey {{username}}' })),
    });
    const xl = await insertLead(t.db, ws, { sequence_id: xseq, next_action_at: T0, x_user_id: '5550001', username: 'carol', account_user_id: '7770001' });
    await t.services.engine.runPass({ now: T0 });
    expect(await activityOf(t.db, id)).toHaveLength(0);
    expect(await activityOf(t.db, xl)).toHaveLength(0);
    await insertXAccount(t.db, ws, { userId: '7770001', handle: 'acme_x' });
    const s = await t.services.engine.runPass({ now: T0 });
    expect(s.actions).toBe(2);
    expect((await activityOf(t.db, xl)).map((a) => [a.action, a.account_id])).toEqual([
      ['x_follow', null],
      ['x_dm', null],
    ]);
    expect(await lead(xl)).toMatchObject({ stage: 'messaged' });
    const events = await eventsOf(t.db, ws);
    expect(events.map((e) => [e.event, e.data.channel])).toEqual([['lead.messaged', 'x']]);
  });

  it('no X step goes out while the workspace X channel is off; it resumes when switched on', async () => {
    const ws = await workspace('x-switch');
    await insertXAccount(t.db, ws, { userId: '7770002', handle: 'acme_switch' });
    await t.db.updateTable('workspaces').set({ x_channel_enabled: false }).where('id', '=', ws).execute();
    const xseq = await insertSequence(t.db, ws, { channels: ['x'], steps: steps(step('x_dm', { message: 'hey {{username}}' })) });
    const xl = await insertLead(t.db, ws, { sequence_id: xseq, next_action_at: T0, x_user_id: '5550002', username: 'dave', account_user_id: '7770002' });
    await t.services.engine.runPass({ now: T0 });
    expect(await activityOf(t.db, xl)).toHaveLength(0);
    await t.db.updateTable('workspaces').set({ x_channel_enabled: true }).where('id', '=', ws).execute();
    await t.services.engine.runPass({ now: T0 });
    expect((await activityOf(t.db, xl)).map((a) => [a.action, a.outcome])).toEqual([['x_dm', 'ok']]);
  });

  it('an identity that opted out anywhere in the workspace is never contacted', async () => {
    const { ws, account, seq, id } = await setup('optout');
    await insertLead(t.db, ws, { email: 'OPTOUT@x.example', opted_out_at: new Date('2026-10-01T00:00:00Z'), stage: 'replied' });
    const s = await t.services.engine.runPass({ now: T0 });
    expect(s).toMatchObject({ actions: 0, skipped: 1 });
    expect(await lead(id)).toMatchObject({ stage: 'skipped', automation_stopped: true, next_action_at: null });
    expect(JSON.parse((await activityOf(t.db, id))[0].detail).reason).toBe('identity_opted_out');
    void account;
    void seq;
  });

  it('snoozed and stopped leads wait', async () => {
    const { id } = await setup('snoozed');
    await t.db
      .updateTable('leads')
      .set({ snoozed_until: new Date(T0.getTime() + 5 * H) })
      .where('id', '=', id)
      .execute();
    await t.services.engine.runPass({ now: T0 });
    expect(await activityOf(t.db, id)).toHaveLength(0);
    await t.services.engine.runPass({ now: new Date(T0.getTime() + 6 * H) });
    expect(await activityOf(t.db, id)).toHaveLength(1);
  });
});

describe('out-of-office replies', () => {
  it('an auto-reply snoozes the lead for OUTREACH_ENGINE_OOO_RESUME_DAYS and the sequence resumes; it never enters the pending queue', async () => {
    const { ws, id } = await twoEmailLead('OOO', {
      person: 'Olga Away',
      email: 'olga@x.example',
      sandbox: { replyAfterHours: 3, replyText: 'I am out of office until 20 November with limited access to email.' },
    });
    await t.services.engine.runPass({ now: T0 });
    const s = await t.services.engine.runPass({ now: new Date(T0.getTime() + 4 * H) });
    expect(s.repliesDetected).toBe(1);
    const resumeAt = new Date(T0.getTime() + 3 * H + t.config.engine.outOfOfficeResumeDays * 24 * H);
    let l = await lead(id);
    // Not a reply: no repliedAt, stage unchanged, automation running, the next step pushed to the return date.
    expect(l).toMatchObject({ stage: 'messaged', replied_at: null, automation_stopped: false, current_step: 1 });
    expect(l.snoozed_until?.toISOString()).toBe(resumeAt.toISOString());
    expect(l.next_action_at?.toISOString()).toBe(resumeAt.toISOString());
    const queue = await t.app.inject({ method: 'GET', url: '/api/v1/replies', headers: ws.auth });
    expect(queue.json().replies).toEqual([]);
    // The driver reports the same auto-reply on every poll; it is recorded once.
    for (const hours of [5, 30, 100]) expect((await t.services.engine.runPass({ now: new Date(T0.getTime() + hours * H) })).repliesDetected).toBe(0);
    expect(await activityOf(t.db, id).then((a) => a.map((x) => `${x.action}:${x.outcome}`))).toEqual(['email_sent:ok', 'reply_detected:ok']);

    // Back at the return date: the follow-up goes out, and no reply.received was emitted for the auto-reply.
    expect((await t.services.engine.runPass({ now: new Date(resumeAt.getTime() + H) })).actions).toBe(1);
    l = await lead(id);
    expect(l).toMatchObject({ stage: 'followed_up', automation_stopped: true, current_step: 2 });
    const detail = JSON.parse((await activityOf(t.db, id))[1].detail);
    expect(detail).toMatchObject({ channel: 'email', classification: 'out_of_office', resumeAt: resumeAt.toISOString() });
    expect((await eventsOf(t.db, ws.workspaceId)).map((e) => e.event)).toEqual(['lead.emailed', 'lead.emailed']);
    const stored = await t.db.selectFrom('replies').selectAll().where('lead_id', '=', id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ classification: 'out_of_office', state: 'decided', decision: 'snooze', decided_by: 'engine' });
    expect(stored.their_message?.startsWith('v1:')).toBe(true);
  });
});

describe('long replies', () => {
  it('a long reply is stored up to 20,000 characters and marked cut; its event carries the first 16 KiB and says it was cut', async () => {
    const ws = await workspace('Long reply');
    const account = await insertAccount(t.db, ws);
    const seq = await insertSequence(t.db, ws, { channels: ['email'], steps: steps(step('email', { subject: 'Hi', message: 'Hello {{firstName}}' })) });
    // 2-byte characters throughout, so the cut falls inside one; 40,000 bytes sealed would break the event bound.
    const text = `Sounds good, can we meet? ${'é'.repeat(20_000)}`;
    const id = await insertLead(t.db, ws, {
      person: 'Long Writer',
      email: 'long@x.example',
      account_id: account,
      sequence_id: seq,
      next_action_at: T0,
      sandbox: JSON.stringify({ replyAfterHours: 1, replyText: text }),
    });
    await t.services.engine.runPass({ now: T0 });
    expect((await t.services.engine.runPass({ now: new Date(T0.getTime() + 2 * H) })).repliesDetected).toBe(1);
    const stored = await t.db.selectFrom('replies').selectAll().where('lead_id', '=', id).executeTakeFirstOrThrow();
    expect(t.cipher.decrypt(stored.their_message)).toBe(text.slice(0, 20_000));
    expect(stored.their_message_truncated).toBe(true);
    const event = (await eventsOf(t.db, ws)).find((e) => e.event === 'reply.received')!;
    const opened = openSealedData(event.data, t.cipher) as { theirMessage: string; theirMessageTruncated?: boolean };
    expect(opened.theirMessageTruncated).toBe(true);
    expect(Buffer.byteLength(opened.theirMessage)).toBeLessThanOrEqual(16_384);
    expect(Buffer.byteLength(opened.theirMessage)).toBeGreaterThan(16_000);
    expect(text.startsWith(opened.theirMessage)).toBe(true);
  });
});

describe('sandbox inbox with several messages', () => {
  it('an out-of-office reply, then the real answer once they are back: the lane resumes, then freezes on the answer', async () => {
    const { ws, id } = await twoEmailLead('OOO then answer', {
      person: 'Vera Back',
      email: 'vera@x.example',
      sandbox: {
        replyAfterHours: 3,
        replyText: 'I am out of office until next week.',
        laterReplies: [{ afterHours: 240, text: 'Back now. Can we talk Thursday?' }],
      },
    });
    for (let h = 0; h <= 260; h += 2) await t.services.engine.runPass({ now: new Date(T0.getTime() + h * H) });
    expect((await activityOf(t.db, id)).map((a) => `${a.action}:${JSON.parse(a.detail).classification ?? ''}`)).toEqual([
      'email_sent:',
      'reply_detected:out_of_office',
      'email_sent:',
      'reply_detected:meeting_intent',
    ]);
    const l = await lead(id);
    expect(l).toMatchObject({ stage: 'replied', automation_stopped: true });
    expect(l.replied_at?.toISOString()).toBe(new Date(T0.getTime() + 240 * H).toISOString());
    const queue = (await t.app.inject({ method: 'GET', url: '/api/v1/replies', headers: ws.auth })).json().replies;
    expect(queue.map((r: { classification: string; theirMessage: string }) => [r.classification, r.theirMessage])).toEqual([
      ['meeting_intent', 'Back now. Can we talk Thursday?'],
    ]);
    expect((await eventsOf(t.db, ws.workspaceId)).map((e) => e.event)).toEqual(['lead.emailed', 'lead.emailed', 'reply.received']);
  });
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertReply, insertSequence } from '../helpers/factories.js';
import { buildEngineTestApp, type MemoryChannels } from '../helpers/memory-channels.js';
import { activityOf, insertAccount, step, steps } from './helpers.js';

// Rule (reply decision start_sequence): the lead is enrolled in the follow-up sequence at step 0, automation
// resumed. The whole follow-up must run: every step once, each under its own idempotency key (a provider that
// refuses repeats must not take the follow-up's first step for the first sequence's).
const T0 = new Date('2026-11-02T09:00:00.000Z');
const H = 3_600_000;
let t: TestApp, channels: MemoryChannels;
beforeAll(async () => ({ t, channels } = await buildEngineTestApp(T0)));
afterAll(async () => t?.close());

/** A lead of a one-step e-mail sequence, due at T0, in a workspace whose follow-up sequence has two e-mail steps. */
async function followUpWorld(name: string, person: string) {
  const ws = await createWorkspaceWithKey(t, name);
  const account = await insertAccount(t.db, ws.workspaceId);
  const first = await insertSequence(t.db, ws.workspaceId, { channels: ['email'], steps: steps(step('email', { subject: 'Hi', message: 'First touch' })) });
  const followUp = await insertSequence(t.db, ws.workspaceId, {
    name: 'Follow-up',
    channels: ['email'],
    steps: steps(step('email', { subject: 'Next', message: 'Follow-up one' }), step('email', { delayDays: 1, subject: 'Next', message: 'Follow-up two' })),
  });
  await t.db.updateTable('workspaces').set({ follow_up_sequence_id: followUp }).where('id', '=', ws.workspaceId).execute();
  const email = `${person.split(' ')[0].toLowerCase()}@x.example`;
  const id = await insertLead(t.db, ws.workspaceId, { person, email, account_id: account, sequence_id: first, next_action_at: T0 });
  return { ws, followUp, id };
}

it('a replied lead put into the follow-up sequence receives all of its steps, then stops', async () => {
  const { ws, followUp, id } = await followUpWorld('Follow-up', 'Rita Reply');

  expect((await t.services.engine.runPass({ now: T0 })).actions).toBe(1);
  // She answers; the engine froze the lead as it does on any reply.
  await t.db
    .updateTable('leads')
    .set({ replied_at: new Date(T0.getTime() + H), stage: 'replied', automation_stopped: true, next_action_at: null })
    .where('id', '=', id)
    .execute();
  const replyId = await insertReply(t.db, t.cipher, ws.workspaceId, { leadId: id, classification: 'positive', theirMessage: 'Tell me more', draft: 'Sure' });

  t.clock.set(new Date(T0.getTime() + 2 * H));
  const decided = await t.app.inject({ method: 'POST', url: `/api/v1/replies/${replyId}/decide`, headers: ws.auth, payload: { decision: 'start_sequence' } });
  expect(decided.statusCode, decided.body).toBe(200);

  for (let h = 2; h <= 60; h += 1) await t.services.engine.runPass({ now: new Date(T0.getTime() + h * H) });
  const texts = channels.delivered.filter((a) => a.recipient.leadId === id).map((a) => a.text);
  expect(texts).toEqual(['First touch', 'Follow-up one', 'Follow-up two']);
  expect((await activityOf(t.db, id)).map((a) => `${a.action}:${a.outcome}`)).toEqual([
    'email_sent:ok',
    'sequence_started:ok',
    'email_sent:ok',
    'email_sent:ok',
  ]);
  const lead = await t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  // She did reply: the stage keeps saying so while the follow-up runs; the lane ends when its steps do.
  expect(lead).toMatchObject({ sequence_id: followUp, current_step: 2, automation_stopped: true, stage: 'replied', next_action_at: null });
});

it('a new answer during the follow-up sequence freezes it again and enters the queue; the first answer is not counted twice', async () => {
  const { ws, id } = await followUpWorld('Second answer', 'Sam Twice');
  const at = (hours: number) => new Date(T0.getTime() + hours * H);
  const pending = async () =>
    (await t.app.inject({ method: 'GET', url: '/api/v1/replies', headers: ws.auth })).json().replies as { id: string; lead: { id: string } }[];

  await t.services.engine.runPass({ now: at(0) });
  channels.receive(id, { channel: 'email', text: 'Tell me more about pricing?', at: at(1) });
  expect((await t.services.engine.runPass({ now: at(2) })).repliesDetected).toBe(1);
  const [firstReply] = await pending();
  t.clock.set(at(3));
  expect(
    (await t.app.inject({ method: 'POST', url: `/api/v1/replies/${firstReply.id}/decide`, headers: ws.auth, payload: { decision: 'start_sequence' } }))
      .statusCode,
  ).toBe(200);
  expect((await t.services.engine.runPass({ now: at(3) })).actions).toBe(1);

  channels.receive(id, { channel: 'email', text: 'Yes, can we meet on Tuesday?', at: at(5) });
  const detected = await t.services.engine.runPass({ now: at(6) });
  expect(detected.repliesDetected).toBe(1);
  for (let h = 7; h <= 120; h += 4) expect((await t.services.engine.runPass({ now: at(h) })).repliesDetected).toBe(0);

  const texts = channels.delivered.filter((a) => a.recipient.leadId === id).map((a) => a.text);
  expect(texts).toEqual(['First touch', 'Follow-up one']);
  const lead = await t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  expect(lead).toMatchObject({ stage: 'replied', automation_stopped: true, next_action_at: null, current_step: 1 });
  // repliedAt is the milestone of the first answer; the queue holds the new one.
  expect(lead.replied_at?.toISOString()).toBe(at(1).toISOString());
  const queue = await pending();
  expect(queue.map((r) => r.lead.id)).toEqual([id]);
  expect(queue[0].id).not.toBe(firstReply.id);
  expect((await activityOf(t.db, id)).filter((a) => a.action === 'reply_detected')).toHaveLength(2);
});

it('after a reply is answered (decision send), the person’s next answer is detected and queued as a new reply', async () => {
  const ws = await createWorkspaceWithKey(t, 'Conversation');
  const account = await insertAccount(t.db, ws.workspaceId);
  const seq = await insertSequence(t.db, ws.workspaceId, { channels: ['email'], steps: steps(step('email', { subject: 'Hi', message: 'Opening line' })) });
  const id = await insertLead(t.db, ws.workspaceId, {
    person: 'Cora Chat',
    email: 'cora@x.example',
    account_id: account,
    sequence_id: seq,
    next_action_at: T0,
  });
  const at = (hours: number) => new Date(T0.getTime() + hours * H);
  const pending = async () =>
    (await t.app.inject({ method: 'GET', url: '/api/v1/replies', headers: ws.auth })).json().replies as { id: string; theirMessage: string }[];

  await t.services.engine.runPass({ now: at(0) });
  channels.receive(id, { channel: 'email', text: 'What does it cost?', at: at(1) });
  await t.services.engine.runPass({ now: at(2) });
  const [question] = await pending();
  t.clock.set(at(3));
  const answered = await t.app.inject({
    method: 'POST',
    url: `/api/v1/replies/${question.id}/decide`,
    headers: ws.auth,
    payload: { decision: 'send', text: 'It starts at 49 a month.' },
  });
  expect(answered.statusCode, answered.body).toBe(200);
  expect(await pending()).toEqual([]);

  channels.receive(id, { channel: 'email', text: 'Great, can we meet Thursday?', at: at(20) });
  for (let h = 4; h <= 30; h += 2) await t.services.engine.runPass({ now: at(h) });
  const queue = await pending();
  expect(queue.map((r) => r.theirMessage)).toEqual(['Great, can we meet Thursday?']);
  expect((await activityOf(t.db, id)).map((a) => a.action)).toEqual(['email_sent', 'reply_detected', 'reply_sent', 'reply_detected']);
  expect(channels.delivered.filter((a) => a.recipient.leadId === id).map((a) => a.text)).toEqual(['Opening line', 'It starts at 49 a month.']);
});

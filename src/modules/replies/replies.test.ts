import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceWithKey, type TestApp } from '../../../test/helpers/build-test-app.js';
import {
  addAccount,
  addLead,
  addReply,
  addSequence,
  buildCrmTestApp,
  createMemoryChannels,
  setSettings,
  type LeadRowFixture,
} from '../../../test/helpers/crm-fixtures.js';
import { createTextCipher, type TextCipher } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { randomBytes } from 'node:crypto';

let t: TestApp & { cipher: TextCipher };
const channels = createMemoryChannels();
type Ws = Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let a: Ws;
let foreign: Ws;
let client: Ws;
let bare: Ws;
let account: string;
let followUp: string;
const NOW = '2026-11-21T12:00:00.000Z';
const BOOKING = 'https://cal.example/acme/intro';

const list = (ws: Ws, query = '', headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: `/api/v1/replies${query}`, headers: { ...ws.auth, ...headers } });
const decide = (ws: Ws, id: string, body: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: `/api/v1/replies/${id}/decide`, headers: { ...ws.auth, 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });

const replyRow = (id: string) => t.db.selectFrom('replies').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const leadRow = (id: string) => t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const ledger = (leadId: string) => t.db.selectFrom('activity').selectAll().where('lead_id', '=', leadId).orderBy('created_at').execute();
const events = (leadId: string) =>
  t.db
    .selectFrom('outbox_events')
    .selectAll()
    .execute()
    .then((rows) => rows.filter((r) => (r.data as { lead?: { id?: string } }).lead?.id === leadId));
const deliveredTo = (leadId: string) => channels.delivered.filter((d) => d.recipient.leadId === leadId);

let seq = 0;
/** A fresh lead with one pending LinkedIn reply in workspace `ws` (default A). */
async function scenario(f: { ws?: Ws; lead?: LeadRowFixture; reply?: Partial<Parameters<typeof addReply>[3]> } = {}) {
  const ws = f.ws ?? a;
  seq += 1;
  const leadId = await addLead(t.db, ws.workspaceId, {
    person: `Person ${seq}`,
    company: 'Initech',
    title: 'CTO',
    email: `p${seq}@initech.example`,
    linkedin_url: `https://www.linkedin.com/in/p${seq}`,
    account_id: ws === a ? account : null,
    sequence_id: null,
    stage: 'replied',
    invited_at: new Date('2026-11-01T10:00:00.000Z'),
    connected_at: new Date('2026-11-02T10:00:00.000Z'),
    replied_at: new Date('2026-11-20T10:00:00.000Z'),
    ...f.lead,
  });
  const replyId = await addReply(t.db, t.cipher, ws.workspaceId, { leadId, ...f.reply });
  return { leadId, replyId };
}

beforeAll(async () => {
  t = await buildCrmTestApp({ channels, now: NOW });
  a = await createWorkspaceWithKey(t, 'Replies Co');
  foreign = await createWorkspaceWithKey(t, 'Foreign Co');
  client = await createWorkspaceWithKey(t, 'Client Co');
  bare = await createWorkspaceWithKey(t, 'Bare Co');
  await t.services.workspaces.addTeamLink({ ownerWorkspaceId: a.workspaceId, clientWorkspaceId: client.workspaceId, role: 'admin' });
  account = await addAccount(t.db, a.workspaceId);
  followUp = await addSequence(t.db, a.workspaceId, { name: 'Follow-up' });
  await setSettings(t.db, a.workspaceId, { bookingLink: BOOKING, followUpSequenceId: followUp });
});
afterAll(async () => t?.close());
beforeEach(() => t.clock.set(NOW));

describe('GET /replies', () => {
  it('answers the pending queue oldest first, with every field; x rows carry channel x and no draft or allowedDecisions', async () => {
    const q = await createWorkspaceWithKey(t, 'Queue Co');
    const qAccount = await addAccount(t.db, q.workspaceId);
    const seqId = await addSequence(t.db, q.workspaceId);
    const lead = await addLead(t.db, q.workspaceId, {
      person: 'Bob B.', company: 'Initech', title: 'CTO', email: 'bob@initech.example', linkedin_url: 'https://www.linkedin.com/in/bob',
      account_id: qAccount, sequence_id: seqId, stage: 'replied',
    });
    const xLead = await addLead(t.db, q.workspaceId, { x_user_id: '1234567', username: 'xperson', stage: 'replied' });
    const newer = await addReply(t.db, t.cipher, q.workspaceId, {
      leadId: lead, classification: 'meeting_intent', theirMessage: 'Sounds good, Tuesday?', draft: 'Great, here is my calendar.', repliedAt: '2026-11-20T10:00:00.000Z',
    });
    const older = await addReply(t.db, t.cipher, q.workspaceId, { leadId: xLead, channel: 'x', classification: 'positive', theirMessage: 'hey!', draft: null, repliedAt: '2026-11-19T10:00:00.000Z' });
    // Text written under another key, or tampered with, is unavailable rather than garbage.
    const unreadable = await addReply(t.db, t.cipher, q.workspaceId, {
      leadId: lead, rawTheirMessage: createTextCipher(randomBytes(32)).encrypt('secret'), rawDraft: 'not-ciphertext', repliedAt: '2026-11-20T11:00:00.000Z',
    });
    await addReply(t.db, t.cipher, q.workspaceId, { leadId: lead, state: 'decided', repliedAt: '2026-11-01T10:00:00.000Z' });
    await addReply(t.db, t.cipher, q.workspaceId, { leadId: lead, state: 'snoozed', snoozedUntil: new Date('2026-11-22T12:00:00.000Z'), repliedAt: '2026-11-02T10:00:00.000Z' });
    const due = await addReply(t.db, t.cipher, q.workspaceId, { leadId: lead, state: 'snoozed', snoozedUntil: new Date('2026-11-21T11:59:00.000Z'), repliedAt: '2026-11-03T10:00:00.000Z' });

    const res = await list(q);
    expect(res.statusCode).toBe(200);
    const replies = res.json().replies;
    expect(replies.map((r: { id: string }) => r.id)).toEqual([due, older, newer, unreadable]);
    const leadObject = { id: lead, person: 'Bob B.', company: 'Initech', title: 'CTO', linkedinUrl: 'https://www.linkedin.com/in/bob', email: 'bob@initech.example' };
    expect(replies[2]).toEqual({
      id: newer,
      channel: 'linkedin',
      lead: leadObject,
      account: qAccount,
      sequenceId: seqId,
      classification: 'meeting_intent',
      theirMessage: 'Sounds good, Tuesday?',
      draft: 'Great, here is my calendar.',
      repliedAt: '2026-11-20T10:00:00.000Z',
      snoozedUntil: null,
      allowedDecisions: ['send', 'invite', 'snooze', 'meeting_booked', 'dismiss', 'opt_out'],
    });
    expect(replies[1]).toEqual({
      id: older,
      channel: 'x',
      lead: { id: xLead, person: null, company: null, title: null, linkedinUrl: null, email: null },
      account: null,
      sequenceId: null,
      classification: 'positive',
      theirMessage: 'hey!',
      repliedAt: '2026-11-19T10:00:00.000Z',
      snoozedUntil: null,
    });
    expect(replies[3]).toMatchObject({ theirMessage: null, draft: null });
    // Nothing to send without a readable draft; the rest still applies.
    expect(replies[3].allowedDecisions).toEqual(['invite', 'snooze', 'meeting_booked', 'dismiss', 'opt_out']);
    expect(replies[0].snoozedUntil).toBe('2026-11-21T11:59:00.000Z');

    expect((await list(q, '?limit=2')).json().replies.map((r: { id: string }) => r.id)).toEqual([due, older]);
    t.clock.set('2026-11-22T12:00:00.000Z');
    expect((await list(q)).json().replies).toHaveLength(5);
  });

  it('400 for limit outside 1..200', async () => {
    for (const v of ['0', '201', 'x', '1.5']) expect((await list(a, `?limit=${v}`)).statusCode, v).toBe(400);
    expect((await list(a, '?limit=200')).statusCode).toBe(200);
  });

  it('allowedDecisions follow the rules: e-mail for invite, booking link, follow-up sequence, booked meeting, suppression', async () => {
    const noEmail = await scenario({ ws: bare, lead: { email: null } });
    const booked = await scenario({ ws: bare, lead: { meeting_booked_at: new Date('2026-11-20T00:00:00.000Z') } });
    const suppressed = await scenario({ lead: { opted_out_at: new Date('2026-11-20T00:00:00.000Z') } });
    const full = await scenario();
    const byId = new Map(
      [...(await list(bare)).json().replies, ...(await list(a, '?limit=200')).json().replies].map((r: { id: string; allowedDecisions: string[] }) => [r.id, r.allowedDecisions]),
    );
    expect(byId.get(noEmail.replyId)).toEqual(['send', 'snooze', 'meeting_booked', 'dismiss', 'opt_out']);
    expect(byId.get(booked.replyId)).toEqual(['send', 'invite', 'snooze', 'dismiss', 'opt_out']);
    expect(byId.get(suppressed.replyId)).toEqual(['snooze', 'meeting_booked', 'dismiss', 'opt_out']);
    expect(byId.get(full.replyId)).toEqual(['send', 'invite', 'booking_link', 'snooze', 'start_sequence', 'meeting_booked', 'dismiss', 'opt_out']);
    // An archived follow-up sequence cannot be started.
    const archived = await addSequence(t.db, bare.workspaceId, { status: 'archived' });
    await setSettings(t.db, bare.workspaceId, { followUpSequenceId: archived });
    expect((await list(bare)).json().replies[0].allowedDecisions).not.toContain('start_sequence');
  });
});

describe('POST /replies/{id}/decide: effects, ledger and events', () => {
  it('send delivers the draft through the channel, closes the reply, writes reply_sent and emits lead.messaged', async () => {
    const { leadId, replyId } = await scenario({ lead: { messaged_at: null } });
    const res = await decide(a, replyId, { decision: 'send' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ok: true, replyId, leadId, decision: 'send', state: 'decided', by: 'api', decidedAt: NOW, snoozedUntil: null, messaged: true, sequenceId: null, optedOutLeadIds: [],
    });
    const sent = deliveredTo(leadId);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ workspaceId: a.workspaceId, accountId: account, kind: 'reply', channel: 'linkedin', text: 'Great, here is a time.', idempotencyKey: `reply:${replyId}` });
    expect(sent[0].recipient).toMatchObject({ leadId, email: expect.stringMatching(/@initech/), linkedinUrl: expect.stringMatching(/linkedin/) });
    expect(await replyRow(replyId)).toMatchObject({ state: 'decided', decision: 'send', decided_by: 'api' });
    const lead = await leadRow(leadId);
    expect(lead.messaged_at?.toISOString()).toBe(NOW);
    const entries = await ledger(leadId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'reply_sent', outcome: 'ok', units: 1, account_id: account, workspace_id: a.workspaceId });
    expect(JSON.parse(entries[0].detail)).toMatchObject({ replyId, decision: 'send', by: 'api', channel: 'linkedin', externalId: expect.any(String), edited: false });
    expect(entries[0].detail).not.toContain('Great, here is a time.');
    const ev = await events(leadId);
    expect(ev.map((e) => e.event)).toEqual(['lead.messaged']);
    expect(ev[0].workspace_id).toBe(a.workspaceId);
    expect(ev[0].data).toEqual({
      lead: { id: leadId, person: lead.person, company: 'Initech', title: 'CTO', email: lead.email, linkedinUrl: lead.linkedin_url, account, sequenceId: null, stage: 'replied' },
    });
  });

  it('a send the provider already took under the reply’s key (its record lost in a crash) is recorded, not sent twice', async () => {
    const { leadId, replyId } = await scenario({ lead: { messaged_at: null } });
    // The first attempt reached the provider; the process died before its transaction committed.
    const lost = await channels.drivers.forChannel('linkedin').perform({
      workspaceId: a.workspaceId, accountId: account, accountUserId: null, kind: 'reply', channel: 'linkedin',
      recipient: { leadId, person: null, email: null, linkedinUrl: null, xUserId: null, username: null, sandbox: null },
      subject: null, text: 'Great, here is a time.', actions: [], idempotencyKey: `reply:${replyId}`, at: new Date(NOW),
    });
    expect(deliveredTo(leadId)).toHaveLength(1);
    const res = await decide(a, replyId, { decision: 'send' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ state: 'decided', messaged: true });
    expect(deliveredTo(leadId)).toHaveLength(1);
    const entries = await ledger(leadId);
    expect(entries.map((e) => `${e.action}:${e.outcome}`)).toEqual(['reply_sent:ok']);
    expect(JSON.parse(entries[0].detail)).toMatchObject({ recovered: 'confirmed_sent', externalId: lost.outcome === 'ok' ? lost.externalId : 'none' });
    expect((await events(leadId)).map((e) => e.event)).toEqual(['lead.messaged']);
  });

  it('send with text replaces the draft, sends the new text and keeps it out of the ledger; by is kept in the audit trail', async () => {
    const { leadId, replyId } = await scenario({ lead: { messaged_at: new Date('2026-11-03T00:00:00.000Z') } });
    const res = await decide(a, replyId, { decision: 'send', text: 'Tuesday 10:00 works, talk then!', by: 'dana@acme' });
    expect(res.json()).toMatchObject({ ok: true, by: 'dana@acme', messaged: true });
    expect(deliveredTo(leadId)[0].text).toBe('Tuesday 10:00 works, talk then!');
    const reply = await replyRow(replyId);
    expect(t.cipher.decrypt(reply.draft)).toBe('Tuesday 10:00 works, talk then!');
    expect(reply.decided_by).toBe('dana@acme');
    // The first-message milestone keeps its original time.
    expect((await leadRow(leadId)).messaged_at?.toISOString()).toBe('2026-11-03T00:00:00.000Z');
    const [entry] = await ledger(leadId);
    expect(JSON.parse(entry.detail)).toMatchObject({ by: 'dana@acme', edited: true });
    expect(entry.detail).not.toContain('Tuesday');
  });

  it('send with text works even when the stored draft is unreadable', async () => {
    const { replyId } = await scenario({ reply: { rawDraft: 'garbage' } });
    expect((await decide(a, replyId, { decision: 'send' })).json()).toMatchObject({ ok: false, error: 'decision_not_allowed' });
    expect((await decide(a, replyId, { decision: 'send', text: 'Hello again' })).statusCode).toBe(200);
  });

  it('invite sends a meeting invite through the channel, writes meeting_invited and emits lead.messaged', async () => {
    const { leadId, replyId } = await scenario();
    const res = await decide(a, replyId, { decision: 'invite' });
    expect(res.json()).toMatchObject({ ok: true, decision: 'invite', state: 'decided', messaged: true });
    const [sent] = deliveredTo(leadId);
    expect(sent.actions).toEqual([{ type: 'meeting_invite', count: null, reaction: null }]);
    expect(sent.recipient.email).toMatch(/@initech\.example$/);
    const entries = await ledger(leadId);
    expect(entries.map((e) => [e.action, e.outcome, e.units])).toEqual([['meeting_invited', 'ok', 1]]);
    expect((await events(leadId)).map((e) => e.event)).toEqual(['lead.messaged']);
  });

  it('booking_link sends the workspace booking link, writes reply_sent and emits lead.messaged', async () => {
    const { leadId, replyId } = await scenario();
    expect((await decide(a, replyId, { decision: 'booking_link' })).json()).toMatchObject({ ok: true, decision: 'booking_link', messaged: true });
    expect(deliveredTo(leadId)[0].text).toBe(`Great, here is a time.\n\n${BOOKING}`);
    const entries = await ledger(leadId);
    expect(entries.map((e) => e.action)).toEqual(['reply_sent']);
    expect(JSON.parse(entries[0].detail)).toMatchObject({ decision: 'booking_link' });
    expect((await events(leadId)).map((e) => e.event)).toEqual(['lead.messaged']);
  });

  it('snooze hides the reply for whole days, then it returns to the queue and can be decided', async () => {
    const { leadId, replyId } = await scenario();
    const res = await decide(a, replyId, { decision: 'snooze', days: 3 });
    expect(res.json()).toMatchObject({ ok: true, decision: 'snooze', state: 'snoozed', snoozedUntil: '2026-11-24T12:00:00.000Z', messaged: false });
    expect((await leadRow(leadId)).snoozed_until?.toISOString()).toBe('2026-11-24T12:00:00.000Z');
    expect(await replyRow(replyId)).toMatchObject({ state: 'snoozed' });
    const inQueue = async () => (await list(a, '?limit=200')).json().replies.some((r: { id: string }) => r.id === replyId);
    expect(await inQueue()).toBe(false);
    t.clock.set('2026-11-24T11:59:59.000Z');
    expect(await inQueue()).toBe(false);
    t.clock.set('2026-11-24T12:00:00.000Z');
    expect(await inQueue()).toBe(true);
    expect((await decide(a, replyId, { decision: 'dismiss' })).statusCode).toBe(200);
    expect((await ledger(leadId)).map((e) => e.action)).toEqual(['reply_snoozed', 'reply_dismissed']);
    expect(JSON.parse((await ledger(leadId))[0].detail)).toMatchObject({ days: 3, until: '2026-11-24T12:00:00.000Z' });
    expect(await events(leadId)).toEqual([]);
    expect(deliveredTo(leadId)).toEqual([]);
  });

  it(`snooze defaults to 7 days`, async () => {
    const { replyId } = await scenario();
    expect((await decide(a, replyId, { decision: 'snooze' })).json().snoozedUntil).toBe('2026-11-28T12:00:00.000Z');
  });

  it('start_sequence enrolls the lead in the follow-up sequence and writes sequence_started', async () => {
    const old = await addSequence(t.db, a.workspaceId);
    const { leadId, replyId } = await scenario({ lead: { sequence_id: old, current_step: 3, automation_stopped: true, next_action_at: null } });
    const res = await decide(a, replyId, { decision: 'start_sequence' });
    expect(res.json()).toMatchObject({ ok: true, decision: 'start_sequence', sequenceId: followUp, messaged: false });
    const lead = await leadRow(leadId);
    expect(lead).toMatchObject({ sequence_id: followUp, current_step: 0, automation_stopped: false });
    expect(lead.next_action_at?.toISOString()).toBe(NOW);
    const entries = await ledger(leadId);
    expect(entries.map((e) => e.action)).toEqual(['sequence_started']);
    expect(JSON.parse(entries[0].detail)).toMatchObject({ sequenceId: followUp, previousSequenceId: old });
    expect(deliveredTo(leadId)).toEqual([]);
  });

  it('meeting_booked records the meeting, writes meeting_booked and emits lead.meeting_booked', async () => {
    const { leadId, replyId } = await scenario();
    expect((await decide(a, replyId, { decision: 'meeting_booked' })).json()).toMatchObject({ ok: true, decision: 'meeting_booked', messaged: false });
    expect((await leadRow(leadId)).meeting_booked_at?.toISOString()).toBe(NOW);
    expect((await ledger(leadId)).map((e) => e.action)).toEqual(['meeting_booked']);
    const ev = await events(leadId);
    expect(ev.map((e) => e.event)).toEqual(['lead.meeting_booked']);
    expect((ev[0].data as { lead: { id: string } }).lead.id).toBe(leadId);
    expect(deliveredTo(leadId)).toEqual([]);
  });

  it('dismiss closes the reply and writes reply_dismissed, contacting nobody', async () => {
    const { leadId, replyId } = await scenario();
    expect((await decide(a, replyId, { decision: 'dismiss', by: 'agent-7' })).json()).toMatchObject({ ok: true, state: 'decided', by: 'agent-7' });
    expect((await replyRow(replyId)).state).toBe('decided');
    const entries = await ledger(leadId);
    expect(entries.map((e) => [e.action, e.units])).toEqual([['reply_dismissed', 0]]);
    expect(await events(leadId)).toEqual([]);
    expect(deliveredTo(leadId)).toEqual([]);
  });

  it('opt_out permanently suppresses every lead of the identity in the workspace and writes manual_override per lead', async () => {
    const { leadId, replyId } = await scenario({ lead: { email: 'Same@Person.example', linkedin_url: 'https://www.linkedin.com/in/same', next_action_at: new Date('2026-11-22T00:00:00.000Z') } });
    const sameEmail = await addLead(t.db, a.workspaceId, { email: 'same@person.example', stage: 'queued', next_action_at: new Date('2026-11-22T00:00:00.000Z') });
    const sameProfile = await addLead(t.db, a.workspaceId, { linkedin_url: 'HTTPS://www.linkedin.com/in/SAME', stage: 'messaged', account_id: account });
    const unrelated = await addLead(t.db, a.workspaceId, { email: 'other@person.example', stage: 'queued' });
    const otherWorkspace = await addLead(t.db, foreign.workspaceId, { email: 'same@person.example', stage: 'queued' });

    const res = await decide(a, replyId, { decision: 'opt_out' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, decision: 'opt_out', state: 'decided', messaged: false });
    expect(res.json().optedOutLeadIds).toEqual([leadId, sameEmail, sameProfile].sort());
    for (const id of [leadId, sameEmail, sameProfile]) {
      const lead = await leadRow(id);
      expect(lead.opted_out_at?.toISOString(), id).toBe(NOW);
      expect(lead).toMatchObject({ automation_stopped: true, next_action_at: null });
      const entries = await ledger(id);
      expect(entries.map((e) => e.action)).toEqual(['manual_override']);
      expect(JSON.parse(entries[0].detail)).toMatchObject({ op: 'opt_out', permanent: true, replyId });
    }
    expect((await ledger(sameProfile))[0].account_id).toBe(account);
    for (const id of [unrelated, otherWorkspace]) expect((await leadRow(id)).opted_out_at).toBeNull();
    expect(deliveredTo(leadId)).toEqual([]);

    // A later reply from the same person can no longer be answered or re-enrolled.
    const later = await addReply(t.db, t.cipher, a.workspaceId, { leadId: sameEmail });
    const row = (await list(a, '?limit=200')).json().replies.find((r: { id: string }) => r.id === later);
    expect(row.allowedDecisions).toEqual(['snooze', 'meeting_booked', 'dismiss', 'opt_out']);
    for (const decision of ['send', 'invite', 'booking_link', 'start_sequence']) {
      expect((await decide(a, later, { decision })).json(), decision).toMatchObject({ ok: false, error: 'decision_not_allowed' });
    }
    expect(deliveredTo(sameEmail)).toEqual([]);
  });
});

describe('POST /replies/{id}/decide: errors', () => {
  it('409 reply_already_decided once a reply is decided', async () => {
    const { replyId } = await scenario();
    expect((await decide(a, replyId, { decision: 'dismiss' })).statusCode).toBe(200);
    const res = await decide(a, replyId, { decision: 'send' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ ok: false, error: 'reply_already_decided', message: expect.any(String) });
  });

  it('409 decision_not_allowed for a decision the rules exclude, and for any decision on an x row', async () => {
    const { replyId, leadId } = await scenario({ ws: bare, lead: { email: null } });
    for (const decision of ['invite', 'booking_link']) {
      const res = await decide(bare, replyId, { decision });
      expect(res.statusCode, decision).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error: 'decision_not_allowed' });
    }
    expect((await replyRow(replyId)).state).toBe('pending');
    expect(await ledger(leadId)).toEqual([]);
    const x = await scenario({ reply: { channel: 'x', draft: null } });
    for (const decision of ['send', 'dismiss', 'opt_out']) {
      expect((await decide(a, x.replyId, { decision })).json(), decision).toMatchObject({ ok: false, error: 'decision_not_allowed' });
    }
  });

  it('404 reply not found for an unknown id or another workspace’s reply; 400 for a malformed id', async () => {
    const unknown = await decide(a, newId(), { decision: 'dismiss' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'reply not found' });
    const theirs = await scenario({ ws: foreign });
    const res = await decide(a, theirs.replyId, { decision: 'dismiss' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'reply not found' });
    expect((await replyRow(theirs.replyId)).state).toBe('pending');
    expect((await decide(a, 'not-a-uuid', { decision: 'dismiss' })).statusCode).toBe(400);
  });

  it('400 for a bad decision, days, text, by or extra properties', async () => {
    const { replyId } = await scenario();
    const bodies: unknown[] = [
      {},
      { decision: 'archive' },
      { decision: 'snooze', days: 0 },
      { decision: 'snooze', days: 91 },
      { decision: 'snooze', days: 1.5 },
      { decision: 'snooze', days: '3' },
      { decision: 'dismiss', text: 'hi' },
      { decision: 'send', days: 3 },
      { decision: 'send', text: '' },
      { decision: 'dismiss', by: '' },
      { decision: 'dismiss', by: 'x'.repeat(201) },
      { decision: 'dismiss', extra: true },
      [],
    ];
    for (const body of bodies) {
      const res = await decide(a, replyId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toEqual(expect.any(String));
    }
    expect((await replyRow(replyId)).state).toBe('pending');
    expect((await decide(a, replyId, { decision: 'snooze', days: 90 })).statusCode).toBe(200);
  });

  it('a channel failure answers 503 and leaves the reply pending with the failed attempt in the ledger; rate limits answer 429', async () => {
    const { leadId, replyId } = await scenario();
    channels.failNext({ outcome: 'failed', error: 'provider_down', retryable: true });
    const res = await decide(a, replyId, { decision: 'send' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'channel_send_failed', retryable: true });
    expect((await replyRow(replyId)).state).toBe('pending');
    expect((await ledger(leadId)).map((e) => [e.action, e.outcome, e.units])).toEqual([['reply_sent', 'failed', 0]]);
    expect(await events(leadId)).toEqual([]);

    channels.failNext({ outcome: 'rate_limited', retryAfterSeconds: 120 });
    const limited = await decide(a, replyId, { decision: 'send' });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('120');

    expect((await decide(a, replyId, { decision: 'send' })).statusCode).toBe(200);
    expect(deliveredTo(leadId)).toHaveLength(1);
    expect((await events(leadId)).map((e) => e.event)).toEqual(['lead.messaged']);
  });
});

describe('POST /replies/{id}/decide: concurrency and idempotency', () => {
  it('two concurrent decisions on one reply: exactly one wins, the other gets 409', async () => {
    for (let round = 0; round < 3; round++) {
      const { leadId, replyId } = await scenario();
      const [r1, r2] = await Promise.all([decide(a, replyId, { decision: 'send' }), decide(a, replyId, { decision: 'send', text: 'Other answer' })]);
      expect([r1.statusCode, r2.statusCode].sort()).toEqual([200, 409]);
      const loser = r1.statusCode === 409 ? r1 : r2;
      expect(loser.json()).toMatchObject({ ok: false, error: 'reply_already_decided' });
      expect(deliveredTo(leadId)).toHaveLength(1);
      expect((await ledger(leadId)).filter((e) => e.outcome === 'ok')).toHaveLength(1);
      expect(await events(leadId)).toHaveLength(1);
    }
    const { leadId, replyId } = await scenario();
    const results = await Promise.all([decide(a, replyId, { decision: 'dismiss' }), decide(a, replyId, { decision: 'opt_out' })]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(await ledger(leadId)).toHaveLength(1);
  });

  it('a retry with the same Idempotency-Key and body returns the first answer; a changed body answers 409 idempotency_key_reused', async () => {
    const { leadId, replyId } = await scenario();
    const key = { 'idempotency-key': `decide-${newId()}` };
    const first = await decide(a, replyId, { decision: 'send' }, key);
    expect(first.statusCode).toBe(200);
    t.clock.advance(60_000);
    const retry = await decide(a, replyId, { decision: 'send' }, key);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual(first.json());
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(deliveredTo(leadId)).toHaveLength(1);
    expect(await ledger(leadId)).toHaveLength(1);
    expect(await events(leadId)).toHaveLength(1);

    const changed = await decide(a, replyId, { decision: 'send', text: 'different' }, key);
    expect(changed.statusCode).toBe(409);
    expect(changed.json()).toMatchObject({ ok: false, error: 'idempotency_key_reused' });
    const other = await scenario();
    expect((await decide(a, other.replyId, { decision: 'send' }, key)).json()).toMatchObject({ ok: false, error: 'idempotency_key_reused' });
    // Without the key the same request is a second decision, which no longer applies.
    expect((await decide(a, replyId, { decision: 'send' })).json()).toMatchObject({ ok: false, error: 'reply_already_decided' });
    // Keys are per workspace.
    const theirs = await scenario({ ws: foreign });
    expect((await decide(foreign, theirs.replyId, { decision: 'dismiss' }, key)).statusCode).toBe(200);
  });

  it('concurrent requests with the same key both get the one answer', async () => {
    const { leadId, replyId } = await scenario();
    const key = { 'idempotency-key': `race-${newId()}` };
    const [r1, r2] = await Promise.all([decide(a, replyId, { decision: 'invite' }, key), decide(a, replyId, { decision: 'invite' }, key)]);
    expect([r1.statusCode, r2.statusCode]).toEqual([200, 200]);
    expect(r1.json()).toEqual(r2.json());
    expect(deliveredTo(leadId)).toHaveLength(1);
  });

  it('400 for a malformed Idempotency-Key', async () => {
    const { replyId } = await scenario();
    expect((await decide(a, replyId, { decision: 'dismiss' }, { 'idempotency-key': 'has space' })).statusCode).toBe(400);
    expect((await decide(a, replyId, { decision: 'dismiss' }, { 'idempotency-key': 'k'.repeat(201) })).statusCode).toBe(400);
  });
});

describe('X-Workspace-Client on the reply operations', () => {
  it('a Team owner key lists and decides a client workspace’s replies; a stranger key gets 403', async () => {
    const { leadId, replyId } = await scenario({ ws: client });
    const selector = { 'x-workspace-client': client.workspaceId };
    expect((await list(a, '', selector)).json().replies.map((r: { id: string }) => r.id)).toContain(replyId);
    expect((await list(a)).json().replies.map((r: { id: string }) => r.id)).not.toContain(replyId);
    expect((await decide(a, replyId, { decision: 'dismiss' })).statusCode).toBe(404);
    expect((await decide(foreign, replyId, { decision: 'dismiss' }, selector)).statusCode).toBe(403);
    expect((await decide(a, replyId, { decision: 'dismiss' }, selector)).statusCode).toBe(200);
    expect((await ledger(leadId))[0].workspace_id).toBe(client.workspaceId);
  });
});

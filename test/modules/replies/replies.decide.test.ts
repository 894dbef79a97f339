import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NOW, BOOKING, startRepliesWorld, type RepliesWorld } from '../../helpers/replies-world.js';
import { insertLead, insertReply, insertSequence } from '../../helpers/factories.js';
import { bookingRef, trackedBookingLink } from '../../../src/domain/booking-link.js';

let t: RepliesWorld['t'],
  channels: RepliesWorld['channels'],
  a: RepliesWorld['a'],
  foreign: RepliesWorld['foreign'],
  account: RepliesWorld['account'],
  followUp: RepliesWorld['followUp'],
  list: RepliesWorld['list'],
  decide: RepliesWorld['decide'],
  replyRow: RepliesWorld['replyRow'],
  leadRow: RepliesWorld['leadRow'],
  ledger: RepliesWorld['ledger'],
  events: RepliesWorld['events'],
  deliveredTo: RepliesWorld['deliveredTo'],
  scenario: RepliesWorld['scenario'];
beforeAll(
  async () =>
    ({ t, channels, a, foreign, account, followUp, list, decide, replyRow, leadRow, ledger, events, deliveredTo, scenario } = await startRepliesWorld()),
);
afterAll(async () => t?.close());
beforeEach(() => t.clock.set(NOW));

describe('POST /replies/{id}/decide: effects, ledger and events', () => {
  it('send delivers the draft through the channel, closes the reply, writes reply_sent and emits lead.messaged', async () => {
    const { leadId, replyId } = await scenario({ lead: { messaged_at: null } });
    const res = await decide(a, replyId, { decision: 'send' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ok: true,
      replyId,
      leadId,
      decision: 'send',
      state: 'decided',
      by: 'api',
      decidedAt: NOW,
      snoozedUntil: null,
      messaged: true,
      sequenceId: null,
      optedOutLeadIds: [],
    });
    const sent = deliveredTo(leadId);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      workspaceId: a.workspaceId,
      accountId: account,
      kind: 'reply',
      channel: 'linkedin',
      text: 'Great, here is a time.',
      idempotencyKey: `reply:${replyId}`,
    });
    expect(sent[0].recipient).toMatchObject({ leadId, email: expect.stringMatching(/@initech/), linkedinUrl: expect.stringMatching(/linkedin/) });
    expect(await replyRow(replyId)).toMatchObject({ state: 'decided', decision: 'send', decided_by: 'api' });
    const lead = await leadRow(leadId);
    expect(lead.messaged_at?.toISOString()).toBe(NOW);
    const entries = await ledger(leadId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'reply_sent', outcome: 'ok', units: 1, account_id: account, workspace_id: a.workspaceId });
    expect(JSON.parse(entries[0].detail)).toMatchObject({
      replyId,
      decision: 'send',
      by: 'api',
      channel: 'linkedin',
      externalId: expect.any(String),
      edited: false,
    });
    expect(entries[0].detail).not.toContain('Great, here is a time.');
    const ev = await events(leadId);
    expect(ev.map((e) => e.event)).toEqual(['lead.messaged']);
    expect(ev[0].workspace_id).toBe(a.workspaceId);
    expect(ev[0].data).toEqual({
      lead: {
        id: leadId,
        person: lead.person,
        company: 'Initech',
        title: 'CTO',
        email: lead.email,
        linkedinUrl: lead.linkedin_url,
        account,
        sequenceId: null,
        stage: 'replied',
      },
    });
  });

  it('a send the provider already took under the reply’s key (its record lost in a crash) is recorded, not sent twice', async () => {
    const { leadId, replyId } = await scenario({ lead: { messaged_at: null } });
    // The first attempt reached the provider; the process died before its transaction committed.
    const lost = await channels.drivers.forChannel('linkedin').perform({
      workspaceId: a.workspaceId,
      accountId: account,
      accountUserId: null,
      kind: 'reply',
      channel: 'linkedin',
      recipient: { leadId, person: null, email: null, linkedinUrl: null, xUserId: null, username: null, sandbox: null },
      subject: null,
      text: 'Great, here is a time.',
      actions: [],
      idempotencyKey: `reply:${replyId}`,
      at: new Date(NOW),
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

  it('booking_link sends the lead’s tracked booking link (the workspace’s here), writes reply_sent and emits lead.messaged', async () => {
    const { leadId, replyId } = await scenario();
    expect((await decide(a, replyId, { decision: 'booking_link' })).json()).toMatchObject({ ok: true, decision: 'booking_link', messaged: true });
    expect(deliveredTo(leadId)[0].text).toBe(`Great, here is a time.\n\n${trackedBookingLink(BOOKING, bookingRef(t.cipher, a.workspaceId, leadId))}`);
    const entries = await ledger(leadId);
    expect(entries.map((e) => e.action)).toEqual(['reply_sent']);
    expect(JSON.parse(entries[0].detail)).toMatchObject({ decision: 'booking_link' });
    expect((await events(leadId)).map((e) => e.event)).toEqual(['lead.messaged']);
  });

  it('booking_link and invite without a time send the lead’s account’s own link before the workspace’s', async () => {
    const own = 'https://cal.example/dana/own';
    await t.db.updateTable('messaging_accounts').set({ booking_link: own }).where('id', '=', account).execute();
    try {
      const first = await scenario();
      expect((await decide(a, first.replyId, { decision: 'booking_link' })).statusCode).toBe(200);
      const tracked = (leadId: string) => trackedBookingLink(own, bookingRef(t.cipher, a.workspaceId, leadId));
      expect(deliveredTo(first.leadId)[0].text).toBe(`Great, here is a time.\n\n${tracked(first.leadId)}`);
      const second = await scenario();
      expect((await decide(a, second.replyId, { decision: 'invite' })).statusCode).toBe(200);
      expect(deliveredTo(second.leadId)[0].text).toBe(`Great, here is a time.\n\n${tracked(second.leadId)}`);
    } finally {
      await t.db.updateTable('messaging_accounts').set({ booking_link: null }).where('id', '=', account).execute();
    }
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
    const old = await insertSequence(t.db, a.workspaceId);
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
    const { leadId, replyId } = await scenario({
      lead: { email: 'Same@Person.example', linkedin_url: 'https://www.linkedin.com/in/same', next_action_at: new Date('2026-11-22T00:00:00.000Z') },
    });
    const sameEmail = await insertLead(t.db, a.workspaceId, {
      email: 'same@person.example',
      stage: 'queued',
      next_action_at: new Date('2026-11-22T00:00:00.000Z'),
    });
    const sameProfile = await insertLead(t.db, a.workspaceId, { linkedin_url: 'HTTPS://www.linkedin.com/in/SAME', stage: 'messaged', account_id: account });
    const unrelated = await insertLead(t.db, a.workspaceId, { email: 'other@person.example', stage: 'queued' });
    const otherWorkspace = await insertLead(t.db, foreign.workspaceId, { email: 'same@person.example', stage: 'queued' });

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
      expect(JSON.parse(entries[0].detail)).toMatchObject({ op: 'opt_out', via: 'reply_decision', channel: 'linkedin', permanent: true, replyId });
    }
    expect((await ledger(sameProfile))[0].account_id).toBe(account);
    // The one opt-out (docs/opt-out.md) also suppresses the person's address.
    const suppressed = await t.db.selectFrom('suppressed_addresses').select(['address', 'reason']).where('workspace_id', '=', a.workspaceId).execute();
    expect(suppressed).toContainEqual({ address: 'same@person.example', reason: 'opted_out' });
    for (const id of [unrelated, otherWorkspace]) expect((await leadRow(id)).opted_out_at).toBeNull();
    expect(deliveredTo(leadId)).toEqual([]);

    // A later reply from the same person can no longer be answered or re-enrolled.
    const later = await insertReply(t.db, t.cipher, a.workspaceId, { leadId: sameEmail });
    const row = (await list(a, '?limit=200')).json().replies.find((r: { id: string }) => r.id === later);
    expect(row.allowedDecisions).toEqual(['snooze', 'meeting_booked', 'dismiss', 'opt_out']);
    for (const decision of ['send', 'invite', 'booking_link', 'start_sequence']) {
      expect((await decide(a, later, { decision })).json(), decision).toMatchObject({ ok: false, error: 'decision_not_allowed' });
    }
    expect(deliveredTo(sameEmail)).toEqual([]);
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceWithKey } from '../../helpers/build-test-app.js';
import { NOW, startRepliesWorld, type RepliesWorld } from '../../helpers/replies-world.js';
import { insertLead, insertMessagingAccount, insertReply, insertSequence, setWorkspaceState } from '../../helpers/factories.js';
import { createTextCipher } from '../../../src/lib/crypto.js';
import { randomBytes } from 'node:crypto';

let t: RepliesWorld['t'],
  a: RepliesWorld['a'],
  foreign: RepliesWorld['foreign'],
  client: RepliesWorld['client'],
  bare: RepliesWorld['bare'],
  list: RepliesWorld['list'],
  decide: RepliesWorld['decide'],
  ledger: RepliesWorld['ledger'],
  scenario: RepliesWorld['scenario'];
beforeAll(async () => ({ t, a, foreign, client, bare, list, decide, ledger, scenario } = await startRepliesWorld()));
afterAll(async () => t?.close());
beforeEach(() => t.clock.set(NOW));

describe('GET /replies', () => {
  it('answers the pending queue oldest first, with every field; x rows carry channel x and no draft or allowedDecisions', async () => {
    const q = await createWorkspaceWithKey(t, 'Queue Co');
    const qAccount = await insertMessagingAccount(t.db, q.workspaceId);
    const seqId = await insertSequence(t.db, q.workspaceId);
    const lead = await insertLead(t.db, q.workspaceId, {
      person: 'Bob B.',
      company: 'Initech',
      title: 'CTO',
      email: 'bob@initech.example',
      linkedin_url: 'https://www.linkedin.com/in/bob',
      account_id: qAccount,
      sequence_id: seqId,
      stage: 'replied',
    });
    const xLead = await insertLead(t.db, q.workspaceId, { x_user_id: '1234567', username: 'xperson', stage: 'replied' });
    const newer = await insertReply(t.db, t.cipher, q.workspaceId, {
      leadId: lead,
      classification: 'meeting_intent',
      theirMessage: 'Sounds good, Tuesday?',
      draft: 'Great, here is my calendar.',
      repliedAt: '2026-11-20T10:00:00.000Z',
    });
    const older = await insertReply(t.db, t.cipher, q.workspaceId, {
      leadId: xLead,
      channel: 'x',
      classification: 'positive',
      theirMessage: 'hey!',
      draft: null,
      repliedAt: '2026-11-19T10:00:00.000Z',
    });
    // Text written under another key, or tampered with, is unavailable rather than garbage.
    const unreadable = await insertReply(t.db, t.cipher, q.workspaceId, {
      leadId: lead,
      rawTheirMessage: createTextCipher(randomBytes(32)).encrypt('secret'),
      rawDraft: 'not-ciphertext',
      repliedAt: '2026-11-20T11:00:00.000Z',
    });
    await insertReply(t.db, t.cipher, q.workspaceId, { leadId: lead, state: 'decided', repliedAt: '2026-11-01T10:00:00.000Z' });
    await insertReply(t.db, t.cipher, q.workspaceId, {
      leadId: lead,
      state: 'snoozed',
      snoozedUntil: new Date('2026-11-22T12:00:00.000Z'),
      repliedAt: '2026-11-02T10:00:00.000Z',
    });
    const due = await insertReply(t.db, t.cipher, q.workspaceId, {
      leadId: lead,
      state: 'snoozed',
      snoozedUntil: new Date('2026-11-21T11:59:00.000Z'),
      repliedAt: '2026-11-03T10:00:00.000Z',
    });

    const res = await list(q);
    expect(res.statusCode).toBe(200);
    const replies = res.json().replies;
    expect(replies.map((r: { id: string }) => r.id)).toEqual([due, older, newer, unreadable]);
    const leadObject = {
      id: lead,
      person: 'Bob B.',
      company: 'Initech',
      title: 'CTO',
      linkedinUrl: 'https://www.linkedin.com/in/bob',
      email: 'bob@initech.example',
    };
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
      [...(await list(bare)).json().replies, ...(await list(a, '?limit=200')).json().replies].map((r: { id: string; allowedDecisions: string[] }) => [
        r.id,
        r.allowedDecisions,
      ]),
    );
    expect(byId.get(noEmail.replyId)).toEqual(['send', 'snooze', 'meeting_booked', 'dismiss', 'opt_out']);
    expect(byId.get(booked.replyId)).toEqual(['send', 'invite', 'snooze', 'dismiss', 'opt_out']);
    expect(byId.get(suppressed.replyId)).toEqual(['snooze', 'meeting_booked', 'dismiss', 'opt_out']);
    expect(byId.get(full.replyId)).toEqual(['send', 'invite', 'booking_link', 'snooze', 'start_sequence', 'meeting_booked', 'dismiss', 'opt_out']);
    // An archived follow-up sequence cannot be started.
    const archived = await insertSequence(t.db, bare.workspaceId, { status: 'archived' });
    await setWorkspaceState(t.db, bare.workspaceId, { followUpSequenceId: archived });
    expect((await list(bare)).json().replies[0].allowedDecisions).not.toContain('start_sequence');
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

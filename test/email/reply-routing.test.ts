import { describe, expect, it } from 'vitest';
import { dovecotAvailable } from '../helpers/dovecot.js';
import { insertSendingLead } from '../helpers/worlds/mailbox.js';
import { useBranchWorld } from '../helpers/worlds/branch-mail.js';
import { step, steps } from '../engine/helpers.js';

// A reply routes by the message it answers (docs/sequences-and-leads.md "Which step a reply answers"): the second
// e-mail's reply edge counts only a reply that answers the second e-mail. Threaded to our first e-mail, a reply
// answers the first (`thread`); a new message of theirs answers the latest e-mail step (`conversation`). Real Dovecot
// and SMTP; the lead's path read back through GET /leads.

const DAY = 86_400_000;

const ROUTED = steps(
  step('email', { id: 'first', subject: 'Quick question', message: 'Hi {{firstName}}' }),
  step('email', {
    id: 'second',
    delayDays: 1,
    subject: null,
    message: 'Following up, {{firstName}}',
    next: [{ if: { replied: true }, withinDays: 3, goto: 'goal' }],
    else: 'exit',
  }),
);

const YES = 'Yes, happy to talk. Tuesday at 10 works for me, send an invite.';

describe.skipIf(!dovecotAvailable())('a reply edge counts the replies that answer its step (real Dovecot and SMTP)', () => {
  const { world, now, tick, lead, view, answer } = useBranchWorld(ROUTED);

  /** A lead sent both e-mails (the second waits at its branch); answers the Message-IDs, first then second. */
  async function emailedTwice(local: string) {
    const email = `${local}@initech.example`;
    const id = await insertSendingLead(world(), email, new Date(now()));
    await tick();
    await tick(DAY + 60_000);
    const sent = await world()
      .t.db.selectFrom('email_messages')
      .select('message_id')
      .where('lead_id', '=', id)
      .where('direction', '=', 'out')
      .orderBy('sent_at')
      .execute();
    expect(sent).toHaveLength(2);
    expect(await lead(id)).toMatchObject({ current_step: 1, waiting_for: 'branch' });
    // They answer a little later (a Date header has whole seconds: never the second of our own send).
    await tick();
    return { id, email, first: sent[0].message_id, second: sent[1].message_id };
  }
  const replyOf = (id: string) =>
    world().t.db.selectFrom('replies').select(['id', 'answers_step', 'answer_match']).where('lead_id', '=', id).executeTakeFirstOrThrow();

  it('threaded to the second e-mail: it answers step 1, and the goal edge is taken at once', async () => {
    const { id, email, second } = await emailedTwice('second');
    await answer(email, YES, second);
    expect((await tick()).mailboxes?.[world().mailboxId]).toMatchObject({ replies: 1 });
    expect(await replyOf(id)).toMatchObject({ answers_step: 1, answer_match: 'thread' });
    const v = await view(id);
    expect(v).toMatchObject({ outcome: 'goal', sequenceDone: true });
    expect(v.path).toMatchObject([{ fromStep: 1, edge: 0, goto: 'goal', values: { replied: true, matchedBy: 'thread' } }]);
  });

  it('threaded to the first e-mail: it answers step 0, so once a person dismisses it the second e-mail’s edge waits out its window (exit)', async () => {
    const { id, email, first } = await emailedTwice('first');
    await answer(email, YES, first);
    expect((await tick()).mailboxes?.[world().mailboxId]).toMatchObject({ replies: 1 });
    const reply = await replyOf(id);
    expect(reply).toMatchObject({ answers_step: 0, answer_match: 'thread' });
    // The reply froze the lead; it is no answer to the second e-mail, so no goal was taken.
    expect((await view(id)).path ?? []).toEqual([]);
    const res = await world().t.app.inject({
      method: 'POST',
      url: `/api/v1/replies/${reply.id}/decide`,
      headers: world().ws.auth,
      payload: { decision: 'dismiss' },
    });
    expect(res.statusCode, res.body).toBe(200);
    await tick();
    expect(await lead(id)).toMatchObject({ current_step: 1, waiting_for: 'branch', automation_stopped: false });
    await tick(3 * DAY);
    const v = await view(id);
    expect(v).toMatchObject({ outcome: 'exit', sequenceDone: true });
    expect(v.path).toMatchObject([{ fromStep: 1, edge: null, goto: 'exit', values: {} }]);
  });

  it('a new message of theirs (no thread): it answers the latest e-mail step, step 1 (conversation)', async () => {
    const { id, email } = await emailedTwice('fresh');
    await answer(email, YES);
    expect((await tick()).mailboxes?.[world().mailboxId]).toMatchObject({ replies: 1 });
    expect(await replyOf(id)).toMatchObject({ answers_step: 1, answer_match: 'conversation' });
    expect((await view(id)).path).toMatchObject([{ fromStep: 1, edge: 0, goto: 'goal', values: { replied: true, matchedBy: 'conversation' } }]);
  });
});

import { describe, expect, it } from 'vitest';
import { dovecotAvailable } from '../helpers/dovecot.js';
import { deliveryReport, insertSendingLead } from '../helpers/worlds/mailbox.js';
import { RESUME_DAYS, useBranchWorld } from '../helpers/worlds/branch-mail.js';
import { step, steps } from '../engine/helpers.js';

// The two branch conditions only the inbox can make true (docs/sequences-and-leads.md "Branches"): `bounced` and
// `outOfOffice`, each heard from a real message in a real Dovecot INBOX after the engine sent the first e-mail over
// SMTP, then decided by the engine, and the lead's path read back through GET /leads. Each is also checked not yet
// known (the lead waits at the branch) and timed out (the else edge).

const DAY = 86_400_000;

/** Bounced: the run ends (exit). Out of office: a "welcome back" e-mail once they are back. Else: a bump. */
const BRANCHING = steps(
  step('email', {
    id: 'first',
    subject: 'Quick question',
    message: 'Hi {{firstName}}',
    next: [
      { if: { bounced: true }, withinDays: 3, goto: 'exit' },
      { if: { outOfOffice: true }, withinDays: 3, goto: 'back' },
    ],
    else: 'bump',
  }),
  step('email', { id: 'bump', subject: null, message: 'Following up, {{firstName}}', else: 'exit' }),
  step('email', { id: 'back', subject: null, message: 'Welcome back, {{firstName}}' }),
);

describe.skipIf(!dovecotAvailable())('branch conditions heard in the inbox (real Dovecot and SMTP)', () => {
  const { world, now, tick, lead, view, bodiesTo, outOfOffice } = useBranchWorld(BRANCHING);

  /** A lead the engine e-mails now (step "first", over SMTP); answers it with the Message-ID that e-mail carried. */
  async function emailed(local: string) {
    const email = `${local}@initech.example`;
    const id = await insertSendingLead(world(), email, new Date(now()));
    await tick();
    const sent = await world().t.db.selectFrom('email_messages').select('message_id').where('lead_id', '=', id).where('direction', '=', 'out').execute();
    expect(sent).toHaveLength(1);
    expect(await lead(id)).toMatchObject({ current_step: 0, waiting_for: 'branch' });
    return { id, email, messageId: sent[0].message_id };
  }

  it('bounced: a 5.x.x DSN routes the waiting lead to its exit edge; the address is suppressed and nothing more goes', async () => {
    const { id, email, messageId } = await emailed('gone');
    await world().dovecot.deliver('dana', deliveryReport({ original: messageId, recipient: email, status: '5.1.1' }));
    expect((await tick()).mailboxes?.[world().mailboxId]).toMatchObject({ bounces: 1 });
    const v = await view(id);
    expect(v).toMatchObject({ sequenceDone: true, outcome: 'exit' });
    expect(v.path).toMatchObject([{ fromStep: 0, edge: 0, goto: 'exit', toStep: null, values: { bounced: true, withinDays: 3 } }]);
    const sup = await world().t.db.selectFrom('suppressed_addresses').select('reason').where('address', '=', email).execute();
    expect(sup).toMatchObject([{ reason: 'bounced_hard' }]);
    await tick(4 * DAY);
    expect(bodiesTo(email)).toHaveLength(1);
  });

  it('out of office: the lead waits until they are back, then takes the outOfOffice edge (not the bump)', async () => {
    const { id, email, messageId } = await emailed('away');
    await outOfOffice(email, messageId);
    expect((await tick()).mailboxes?.[world().mailboxId]).toMatchObject({ outOfOffice: 1, replies: 0 });
    const snoozed = await lead(id);
    expect(snoozed).toMatchObject({ waiting_for: 'branch', automation_stopped: false });
    expect(new Date(snoozed.next_action_at!).getTime()).toBeGreaterThanOrEqual(now() + RESUME_DAYS * DAY - 5 * 60_000);
    // Not yet back: nothing is decided and nothing goes.
    await tick(DAY);
    expect((await view(id)).path ?? []).toEqual([]);
    await tick(RESUME_DAYS * DAY);
    const v = await view(id);
    expect(v.path).toMatchObject([{ fromStep: 0, edge: 1, goto: 'back', toStep: 2, values: { outOfOffice: true, withinDays: 3 } }]);
    expect(bodiesTo(email).map((b) => b.includes('Welcome back'))).toEqual([false, true]);
  });

  it('neither within 3 days: the lead waits at the branch (not yet known), then takes else (the bump) when the window closes', async () => {
    const { id, email } = await emailed('quiet');
    await tick(2 * DAY);
    expect(await lead(id)).toMatchObject({ current_step: 0, waiting_for: 'branch' });
    expect(bodiesTo(email)).toHaveLength(1);
    await tick(DAY + 60_000);
    // The bump goes, and its else ends the run (exit).
    expect(await view(id)).toMatchObject({ sequenceDone: true, outcome: 'exit' });
    expect((await view(id)).path).toMatchObject([
      { fromStep: 0, edge: null, goto: 'bump', toStep: 1, values: {} },
      { fromStep: 1, edge: null, goto: 'exit', toStep: null, values: {} },
    ]);
    expect(bodiesTo(email).map((b) => b.includes('Following up'))).toEqual([false, true]);
  });
});

/** The same two conditions asked the other way: `bounced: false` and `outOfOffice: false`, each within 2 days. */
const NEGATED = steps(
  step('email', {
    id: 'first',
    subject: 'Quick question',
    message: 'Hi {{firstName}}',
    next: [{ if: { bounced: false }, withinDays: 2, goto: 'check' }],
    else: 'exit',
  }),
  step('email', {
    id: 'check',
    subject: null,
    message: 'Still there, {{firstName}}?',
    next: [{ if: { outOfOffice: false }, withinDays: 2, goto: 'last' }],
    else: 'exit',
  }),
  step('email', { id: 'last', subject: null, message: 'Last note, {{firstName}}' }),
);

describe.skipIf(!dovecotAvailable())('bounced: false and outOfOffice: false, heard in the inbox (real Dovecot and SMTP)', () => {
  const { world, now, tick, lead, view, bodiesTo, outOfOffice } = useBranchWorld(NEGATED);
  const lastMessageId = async (id: string) =>
    (
      await world()
        .t.db.selectFrom('email_messages')
        .select('message_id')
        .where('lead_id', '=', id)
        .where('direction', '=', 'out')
        .orderBy('sent_at', 'desc')
        .executeTakeFirstOrThrow()
    ).message_id;

  it('no bounce, then no out-of-office: each false edge waits out its window (not yet known), then holds (timed out), to the last step', async () => {
    const email = 'steady@initech.example';
    const id = await insertSendingLead(world(), email, new Date(now()));
    await tick();
    await tick(DAY);
    expect(await lead(id)).toMatchObject({ current_step: 0, waiting_for: 'branch' });
    expect((await view(id)).path ?? []).toEqual([]);
    await tick(DAY + 60_000);
    await tick();
    expect((await view(id)).path).toMatchObject([{ fromStep: 0, edge: 0, goto: 'check', toStep: 1, values: { bounced: false, withinDays: 2 } }]);
    await tick(2 * DAY + 60_000);
    await tick();
    const v = await view(id);
    expect(v.path).toMatchObject([
      { fromStep: 0, edge: 0, goto: 'check' },
      { fromStep: 1, edge: 0, goto: 'last', toStep: 2, values: { outOfOffice: false, withinDays: 2 } },
    ]);
    expect(bodiesTo(email).map((b) => (b.includes('Last note') ? 'last' : b.includes('Still there') ? 'check' : 'first'))).toEqual(['first', 'check', 'last']);
  });

  it('a bounce within the window: bounced: false cannot hold, so else ends the run (exit) at once, and the address is suppressed', async () => {
    const email = 'bounces@initech.example';
    const id = await insertSendingLead(world(), email, new Date(now()));
    await tick();
    await world().dovecot.deliver('dana', deliveryReport({ original: await lastMessageId(id), recipient: email, status: '5.1.1' }));
    expect((await tick()).mailboxes?.[world().mailboxId]).toMatchObject({ bounces: 1 });
    const v = await view(id);
    expect(v).toMatchObject({ sequenceDone: true, outcome: 'exit' });
    expect(v.path).toMatchObject([{ fromStep: 0, edge: null, goto: 'exit', toStep: null }]);
    await tick(3 * DAY);
    expect(bodiesTo(email)).toHaveLength(1);
  });

  it('an out-of-office at the second step: outOfOffice: false cannot hold; once they are back, else ends the run (exit)', async () => {
    const email = 'traveler@initech.example';
    const id = await insertSendingLead(world(), email, new Date(now()));
    await tick();
    await tick(2 * DAY + 60_000);
    await tick();
    expect(await lead(id)).toMatchObject({ current_step: 1, waiting_for: 'branch' });
    await outOfOffice(email, await lastMessageId(id));
    expect((await tick()).mailboxes?.[world().mailboxId]).toMatchObject({ outOfOffice: 1 });
    await tick(RESUME_DAYS * DAY + 60_000);
    await tick();
    const v = await view(id);
    expect(v).toMatchObject({ sequenceDone: true, outcome: 'exit' });
    expect(v.path).toMatchObject([
      { fromStep: 0, edge: 0, goto: 'check' },
      { fromStep: 1, edge: null, goto: 'exit', toStep: null },
    ]);
    expect(bodiesTo(email).some((b) => b.includes('Last note'))).toBe(false);
  });
});

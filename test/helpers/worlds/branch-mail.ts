import { afterAll, beforeAll, expect } from 'vitest';
import { engineTick } from './common.js';
import { raw, startMailboxWorld, SENDING_ENV, type MailboxWorld } from './mailbox.js';

// A mailbox world for branching e-mail sequences (test/email/branch-events, reply-routing): a real Dovecot and SMTP
// receiver, the engine on a clock of its own, and what the person writes back, delivered to dana's INBOX.

/** Days an out-of-office snoozes the lead (OUTREACH_ENGINE_OOO_RESUME_DAYS) in these worlds. */
export const RESUME_DAYS = 2;

/**
 * A mailbox world running `branching` (its own Dovecot and SMTP receiver for the describe block), an engine clock of
 * its own, and readers of a lead: its row, its view in GET /leads (path, outcome) and the bodies sent to an address.
 */
export function useBranchWorld(branching: unknown[]) {
  let w: MailboxWorld;
  // The mailbox is due for its first read from when it was added, so the clock starts at the real time.
  let clock = Date.now();
  let written = 0;
  beforeAll(async () => {
    w = await startMailboxWorld({
      env: { ...SENDING_ENV, OUTREACH_INBOX_POLL_INTERVAL: 60, OUTREACH_ENGINE_OOO_RESUME_DAYS: RESUME_DAYS },
      energy: 1_000,
      steps: branching,
    });
  }, 60_000);
  afterAll(async () => w?.close());
  /** A message from `email` to dana, delivered now: threaded to `inReplyTo` when given, an automatic reply when `auto`. */
  const deliverFrom = (email: string, p: { subject: string; text: string; inReplyTo?: string; auto?: boolean }) =>
    w.dovecot.deliver(
      'dana',
      raw(
        {
          From: email,
          To: 'dana@acme.example',
          Subject: p.subject,
          ...(p.auto && { 'Auto-Submitted': 'auto-replied' }),
          ...(p.inReplyTo && { 'In-Reply-To': p.inReplyTo, References: p.inReplyTo }),
          'Message-ID': `<m-${++written}.${clock}@initech.example>`,
          Date: new Date(clock).toUTCString(),
        },
        p.text,
      ),
    );
  return {
    world: () => w,
    now: () => clock,
    tick: (advanceMs = 120_000) => engineTick(w.t, (clock += advanceMs)),
    lead: (id: string) => w.t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    view: async (id: string) => {
      const res = await w.t.app.inject({ method: 'GET', url: '/api/v1/leads?limit=500', headers: w.ws.auth });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().leads as Record<string, any>[]).find((l) => l.id === id)!;
    },
    bodiesTo: (email: string) => w.smtp.messages.filter((m) => m.to.includes(email)).map((m) => m.raw.toString()),
    /** An auto-reply from `email` to the message `inReplyTo`, delivered to dana's INBOX now. */
    outOfOffice: (email: string, inReplyTo: string) =>
      deliverFrom(email, {
        subject: 'Automatic reply: Quick question',
        text: 'I am out of the office until next week, with limited access to e-mail.',
        inReplyTo,
        auto: true,
      }),
    /** A person's own answer from `email`: threaded to `inReplyTo`, or (without it) a new message of theirs. */
    answer: (email: string, text: string, inReplyTo?: string) => deliverFrom(email, { subject: inReplyTo ? 'Re: Quick question' : 'Hello', text, inReplyTo }),
  };
}

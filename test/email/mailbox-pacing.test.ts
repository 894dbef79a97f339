import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount } from '../helpers/factories.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver.js';
import { insertSmtpWorkspace, SMTP_ONLY_ENV } from '../helpers/worlds/mailbox.js';

// Issue 14 §1 and the two-worker rule: a mailbox's daily cap and warm-up hold per mailbox, in its account's time
// zone, even when it sends for leads of other accounts (the workspace's pool); two engines on one database never send
// one step's e-mail twice. SMTP is a real smtp-server receiver; no IMAP is needed (no sent folder).
const DAY = 86_400_000;

describe('mailbox pacing', () => {
  let t: TestApp;
  let smtp: SmtpReceiver;
  const clock = Date.parse('2026-11-24T09:00:00.000Z');

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    t = await buildTestApp({ now: new Date(clock).toISOString(), env: ENV });
  }, 60_000);
  const ENV = { ...SMTP_ONLY_ENV, OUTREACH_PACING_MESSAGE_CAP: 3, OUTREACH_PACING_RAMP: '1,2' };
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  async function workspaceWithPool(name: string, warmupStartedAt: Date | null) {
    const { ws, mailboxId, sequence } = await insertSmtpWorkspace(t, smtp, name, { account: { warmup_started_at: warmupStartedAt } });
    // Two LinkedIn accounts without a mailbox: their leads' e-mail borrows the pool's mailbox.
    const accounts = [
      await insertMessagingAccount(t.db, ws.workspaceId, { time_zone: 'UTC' }),
      await insertMessagingAccount(t.db, ws.workspaceId, { time_zone: 'UTC' }),
    ];
    return { ws, mailboxId: mailboxId!, sequence, accounts };
  }

  const lead = (workspaceId: string, account: string, sequence: string, email: string) =>
    insertLead(t.db, workspaceId, { person: 'Pat Doe', email, account_id: account, sequence_id: sequence, next_action_at: new Date(clock) });
  const to = (address: string) => smtp.messages.filter((m) => m.to.includes(address));

  it("the pool mailbox sends no more than the message cap a day for leads of two accounts; the rest wait for the next day (not failed); the pass counts each mailbox's sends", async () => {
    const p = await workspaceWithPool('Capped', null);
    const addresses = ['a1', 'a2', 'b1', 'b2', 'b3'].map((n) => `${n}@capped.example`);
    const ids = await Promise.all(addresses.map((a, i) => lead(p.ws.workspaceId, p.accounts[i < 2 ? 0 : 1], p.sequence, a)));
    const summary = await t.services.engine.runPass({ now: new Date(clock) });
    expect(addresses.filter((a) => to(a).length === 1)).toHaveLength(3);
    expect(summary.mailboxes?.[p.mailboxId]?.sent).toBe(3);
    const waiting = await t.db
      .selectFrom('leads')
      .select(['stage', 'last_error', 'step_attempts', 'step_waits', 'next_action_at'])
      .where('id', 'in', ids)
      .where('messaged_at', 'is', null)
      .execute();
    expect(waiting).toHaveLength(2);
    // The claim reserved the mailbox's day (issue 41): the rest wait quietly for the mailbox's next day, as a step past
    // its account's own cap does (no error, no attempt, no wait counted).
    for (const w of waiting) {
      expect(w).toMatchObject({ stage: 'queued', last_error: null, step_attempts: 0, step_waits: 0 });
      expect(new Date(w.next_action_at!).toISOString()).toBe('2026-11-25T00:00:00.000Z');
    }
    // The next local day the mailbox sends again.
    const next = await t.services.engine.runPass({ now: new Date(clock + DAY) });
    expect(next.mailboxes?.[p.mailboxId]?.sent).toBe(2);
    expect(addresses.every((a) => to(a).length === 1)).toBe(true);
  });

  it("during its account's warm-up a mailbox sends no more than the ramp's figure for the week", async () => {
    const p = await workspaceWithPool('Warming', new Date(clock - DAY));
    const addresses = ['w1', 'w2', 'w3'].map((n) => `${n}@warming.example`);
    for (const [i, a] of addresses.entries()) await lead(p.ws.workspaceId, p.accounts[i % 2], p.sequence, a);
    const summary = await t.services.engine.runPass({ now: new Date(clock) });
    // Week 1 of the ramp "1,2": one e-mail today.
    expect(summary.mailboxes?.[p.mailboxId]?.sent).toBe(1);
    expect(addresses.filter((a) => to(a).length === 1)).toHaveLength(1);
  });

  it('two engines on one database send each step once', async () => {
    const p = await workspaceWithPool('Twice', null);
    // Each account gets its own mailbox so no cap is in the way: 12 leads, 12 e-mails, each exactly once.
    for (const [i, account] of p.accounts.entries()) {
      await t.services.mailboxes.add({
        workspaceId: p.ws.workspaceId,
        accountId: account,
        address: `twice${i}@acme.example`,
        smtpUrl: smtp.url(),
        imapUrl: 'imap://nobody:nothing@127.0.0.1:1',
        skipCheck: true,
      });
    }
    const second = await buildTestApp({
      handle: t.handle,
      cipher: t.cipher,
      now: new Date(clock).toISOString(),
      env: ENV,
    });
    try {
      const addresses = Array.from({ length: 6 }, (_, i) => `t${i}@twice.example`);
      for (const [i, a] of addresses.entries()) await lead(p.ws.workspaceId, p.accounts[i % 2], p.sequence, a);
      const at = new Date(clock + 2 * DAY);
      await Promise.all([t.services.engine.runPass({ now: at }), second.services.engine.runPass({ now: at }), t.services.engine.runPass({ now: at })]);
      for (const a of addresses) expect(to(a), a).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});

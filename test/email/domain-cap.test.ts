import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/build-test-app.js';
import { insertLead } from '../helpers/factories.js';
import type { SmtpReceiver } from '../helpers/smtp-receiver.js';
import { insertSmtpWorkspace, startAddressCheckWorld, type AddressCheckWorld } from '../helpers/worlds/mailbox.js';

// Issue 29 §5: at most OUTREACH_MAILBOX_DOMAIN_DAILY_CAP (default 20) e-mails a day, in the mailbox account's time
// zone, from one mailbox to one recipient domain, through the send budget ledger (scope `mailbox_domain`). The rest
// wait for the next local day without counting an attempt, and the mailbox's own unit is given back. Free-mail domains
// are exempt. SMTP is a real smtp-server receiver; DNS a real server on 127.0.0.1 (the address checks are on).
const clock = Date.parse('2026-11-24T09:00:00.000Z');
// Pacific/Auckland is UTC+13 in November: 09:00Z is 22:00 there, and its next day starts at 11:00Z.
const NEXT_LOCAL_DAY = '2026-11-24T11:00:00.000Z';

describe('per-recipient-domain daily cap of a mailbox', { timeout: 120_000 }, () => {
  let t: TestApp, smtp: SmtpReceiver, world: AddressCheckWorld | undefined;

  beforeAll(async () => {
    const mx = (host: string) => ({ mx: [{ exchange: host, priority: 5 }] });
    world = await startAddressCheckWorld(clock, { 'bigco.example': mx('mx.bigco.example'), 'gmail.com': mx('gmail-smtp-in.l.google.com') });
    ({ t, smtp } = world);
  }, 60_000);
  afterAll(async () => world?.close());

  async function workspace(name: string) {
    const { ws, account, mailboxId, sequence } = await insertSmtpWorkspace(t, smtp, name, { account: { time_zone: 'Pacific/Auckland' } });
    const leads = async (domain: string, n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        ids.push(
          await insertLead(t.db, ws.workspaceId, {
            person: `Pat Doe ${i}`,
            email: `p${i}.${name.toLowerCase()}@${domain}`,
            account_id: account,
            sequence_id: sequence,
            next_action_at: new Date(clock),
          }),
        );
      }
      return ids;
    };
    return { ws, mailboxId: mailboxId!, leads };
  }

  const mailedFrom = (from: string, domain: string) => smtp.messages.filter((m) => m.from === from && m.to.some((a) => a.endsWith(`@${domain}`))).length;

  async function budget(workspaceId: string, scope: string, scopeId: string) {
    const rows = await t.db
      .selectFrom('send_budgets')
      .select(['used', 'window_kind'])
      .select((eb) => eb.cast<string>('window_start', 'text').as('day'))
      .where('workspace_id', '=', workspaceId)
      .where('scope', '=', scope)
      .where('scope_id', '=', scopeId)
      .orderBy('window_start')
      .execute();
    return rows.map((r) => ({ day: r.day, used: Number(r.used), window: r.window_kind }));
  }

  it('25 leads at one domain get at most 20 messages that local day; the other 5 wait for the next day without an attempt counted, and go then', async () => {
    const w = await workspace('Capped');
    const ids = await w.leads('bigco.example', 25);
    await t.services.engine.runPass({ now: new Date(clock) });
    expect(mailedFrom('capped@acme.example', 'bigco.example')).toBe(20);

    const rows = await t.db
      .selectFrom('leads')
      .select(['id', 'messaged_at', 'last_error', 'step_attempts', 'step_waits', 'next_action_at', 'stage'])
      .where('id', 'in', ids)
      .execute();
    const waiting = rows.filter((r) => r.messaged_at === null);
    expect(waiting).toHaveLength(5);
    for (const r of waiting) {
      // The claim reserved the domain's day (issue 41): a step past the cap never reaches the driver, so it waits
      // quietly, as a step past its account's own cap does: no error, no attempt, no wait counted.
      expect(r).toMatchObject({ last_error: null, step_attempts: 0, step_waits: 0, stage: 'queued' });
      expect(new Date(r.next_action_at!).toISOString()).toBe(NEXT_LOCAL_DAY);
    }
    // The ledger: 20 on the domain's row for the account's local day; the mailbox's own budget kept only what went.
    expect(await budget(w.ws.workspaceId, 'mailbox_domain', `${w.mailboxId}:bigco.example`)).toEqual([{ day: '2026-11-24', used: 20, window: 'local_day' }]);
    expect(await budget(w.ws.workspaceId, 'mailbox', w.mailboxId)).toEqual([{ day: '2026-11-24', used: 20, window: 'local_day' }]);

    // Still the same local day: nothing more goes.
    await t.services.engine.runPass({ now: new Date(Date.parse(NEXT_LOCAL_DAY) - 60_000) });
    expect(mailedFrom('capped@acme.example', 'bigco.example')).toBe(20);

    // The next local day (Auckland), the rest go.
    await t.services.engine.runPass({ now: new Date(NEXT_LOCAL_DAY) });
    expect(mailedFrom('capped@acme.example', 'bigco.example')).toBe(25);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/leads?limit=500', headers: w.ws.auth });
    const leads = res.json().leads as { id: string; lastError: string | null; messagedAt: string | null }[];
    expect(leads.filter((l) => ids.includes(l.id) && l.messagedAt !== null)).toHaveLength(25);
    expect(await budget(w.ws.workspaceId, 'mailbox_domain', `${w.mailboxId}:bigco.example`)).toEqual([
      { day: '2026-11-24', used: 20, window: 'local_day' },
      { day: '2026-11-25', used: 5, window: 'local_day' },
    ]);
  });

  it('free-mail domains are exempt: 25 leads at gmail.com all get their message the same day', async () => {
    const w = await workspace('Freemail');
    await w.leads('gmail.com', 25);
    await t.services.engine.runPass({ now: new Date(clock) });
    expect(mailedFrom('freemail@acme.example', 'gmail.com')).toBe(25);
    expect(await budget(w.ws.workspaceId, 'mailbox_domain', `${w.mailboxId}:gmail.com`)).toEqual([]);
  });

  it('the cap is per mailbox: another mailbox writes to the same domain under its own cap', async () => {
    const a = await workspace('First');
    const b = await workspace('Second');
    await a.leads('bigco.example', 22);
    await b.leads('bigco.example', 22);
    await t.services.engine.runPass({ now: new Date(clock) });
    expect(mailedFrom('first@acme.example', 'bigco.example')).toBe(20);
    expect(mailedFrom('second@acme.example', 'bigco.example')).toBe(20);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import type { DnsFake } from '../helpers/dns-server.js';
import { insertLead, insertMessagingAccount, insertSequence } from '../helpers/factories.js';
import type { SmtpReceiver } from '../helpers/smtp-receiver.js';
import { ADDRESS_CHECKS_ENV, emailStep, insertSmtpWorkspace, startAddressCheckWorld, type AddressCheckWorld } from '../helpers/worlds/mailbox.js';

// Issue 29 §4: before a real e-mail (a mailbox, or SMTP_URL) the recipient is checked: a malformed address, a domain
// that does not exist or has no MX and no A record, or a disposable domain is never mailed; the step fails once with
// `invalid_address` and the lane stops. A lookup that cannot be made is no evidence: the message goes. SMTP is a real
// smtp-server receiver; DNS is a real server on 127.0.0.1 (OUTREACH_DNS_SERVERS).
const DAY = 86_400_000;
const clock = Date.parse('2026-11-24T09:00:00.000Z');

describe('recipient address checks before a real send', { timeout: 60_000 }, () => {
  let t: TestApp, smtp: SmtpReceiver, dns: DnsFake, world: AddressCheckWorld | undefined;

  beforeAll(async () => {
    world = await startAddressCheckWorld(clock, {
      'initech.example': { mx: [{ exchange: 'mx.initech.example', priority: 10 }] },
      // No MX: the A record is the implicit MX (RFC 5321 §5.1).
      'arecord.example': { a: ['192.0.2.10'] },
      // The name exists, with neither MX nor A nor AAAA (NODATA for each).
      'nomail.example': { txt: ['v=spf1 -all'] },
    });
    ({ t, smtp, dns } = world);
    dns.servfail.add('flaky.example');
    dns.silent.add('slow.example');
  }, 60_000);
  afterAll(async () => world?.close());

  async function workspace(name: string, opts: { mailbox: boolean }) {
    const { ws, account, sequence } = await insertSmtpWorkspace(t, smtp, name, {
      mailbox: opts.mailbox,
      steps: [emailStep(0, 0, 'Hello', 'Hi {{firstName}}'), emailStep(1, 1, null, 'Following up')],
    });
    const lead = (email: string) =>
      insertLead(t.db, ws.workspaceId, { person: 'Pat Doe', email, account_id: account, sequence_id: sequence, next_action_at: new Date(clock) });
    return { ws, lead };
  }

  const mailedTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address)).length;
  const mxQueries = (domain: string) => dns.queries.filter((q) => q === `MX ${domain}`).length;

  async function leadsOf(app: TestApp, auth: Record<string, string>) {
    const res = await app.app.inject({ method: 'GET', url: '/api/v1/leads?limit=500', headers: auth });
    expect(res.statusCode).toBe(200);
    return new Map((res.json().leads as { id: string; stage: string; lastError: string | null; messagedAt: string | null }[]).map((l) => [l.id, l]));
  }

  async function attemptsOf(id: string) {
    return await t.db.selectFrom('leads').select(['step_attempts', 'automation_stopped', 'next_action_at']).where('id', '=', id).executeTakeFirstOrThrow();
  }

  it('a malformed address, an NXDOMAIN domain, a domain with no MX and no A, and a disposable domain are never mailed: the step fails once with invalid_address and the lane stops', async () => {
    const w = await workspace('Checked', { mailbox: true });
    const good = ['ann@initech.example', 'fay@arecord.example'];
    const bad = ['bob@nowhere.example', 'bea@nowhere.example', 'cy@nomail.example', 'dee@mailinator.com', 'eve@@initech.example', 'gus@initech'];
    const ids = new Map<string, string>();
    for (const a of [...good, ...bad]) ids.set(a, await w.lead(a));
    await t.services.engine.runPass({ now: new Date(clock) });

    for (const a of good) expect(mailedTo(a), a).toBe(1);
    for (const a of bad) expect(mailedTo(a), a).toBe(0);
    const leads = await leadsOf(t, w.ws.auth);
    for (const a of bad) {
      expect(leads.get(ids.get(a)!), a).toMatchObject({ stage: 'failed', lastError: 'invalid_address', messagedAt: null });
      // Final on the first try: one attempt, no retry, the lane stopped.
      expect(await attemptsOf(ids.get(a)!), a).toMatchObject({ step_attempts: 1, automation_stopped: true, next_action_at: null });
    }
    // Two leads at one unknown domain: one lookup, and the answer is kept (no new lookup on the next pass).
    expect(mxQueries('nowhere.example')).toBe(1);
    await w.lead('bix@nowhere.example');
    await t.services.engine.runPass({ now: new Date(clock + 60_000) });
    expect(mailedTo('bix@nowhere.example')).toBe(0);
    expect(mxQueries('nowhere.example')).toBe(1);
    // The disposable and malformed addresses never reach DNS.
    expect(dns.queries.some((q) => q.endsWith('mailinator.com') || q.includes('@'))).toBe(false);
    // The good leads' lanes go on to their second step.
    await t.services.engine.runPass({ now: new Date(clock + 2 * DAY) });
    for (const a of good) expect(mailedTo(a), a).toBe(2);
  });

  it('a lookup that cannot be made (SERVFAIL, a timeout) is no evidence: the message is sent, and the next send asks again', async () => {
    const w = await workspace('Unsure', { mailbox: true });
    await w.lead('kim@flaky.example');
    await w.lead('lou@slow.example');
    await t.services.engine.runPass({ now: new Date(clock) });
    expect(mailedTo('kim@flaky.example')).toBe(1);
    expect(mailedTo('lou@slow.example')).toBe(1);
    const before = mxQueries('flaky.example');
    expect(before).toBeGreaterThan(0);
    await w.lead('max@flaky.example');
    await t.services.engine.runPass({ now: new Date(clock + 60_000) });
    expect(mailedTo('max@flaky.example')).toBe(1);
    expect(mxQueries('flaky.example')).toBeGreaterThan(before);
  });

  it('SMTP_URL sends (an account without a mailbox) are checked too; sandbox e-mail is never checked', async () => {
    const viaSmtp = await buildTestApp({
      handle: t.handle,
      cipher: t.cipher,
      now: new Date(clock).toISOString(),
      env: { ...ADDRESS_CHECKS_ENV, OUTREACH_DNS_SERVERS: dns.server, SMTP_URL: smtp.url() },
    });
    try {
      const ws = await createWorkspaceWithKey(viaSmtp, 'No mailbox');
      await viaSmtp.db.updateTable('workspaces').set({ energy_balance: 1_000 }).where('id', '=', ws.workspaceId).execute();
      const account = await insertMessagingAccount(viaSmtp.db, ws.workspaceId, { mode: 'email', time_zone: 'UTC' });
      const sequence = await insertSequence(viaSmtp.db, ws.workspaceId, {
        channels: ['email'],
        steps: [{ index: 0, kind: 'email', delayDays: 0, subject: 'Hello', message: 'Hi', actions: [], variants: null, tool: null }] as never,
      });
      const lead = (email: string) =>
        insertLead(viaSmtp.db, ws.workspaceId, { person: 'Pat Doe', email, account_id: account, sequence_id: sequence, next_action_at: new Date(clock) });
      const ok = await lead('sam@initech.example');
      const gone = await lead('sid@vanished.example');
      await viaSmtp.services.engine.runPass({ now: new Date(clock) });
      expect(mailedTo('sam@initech.example')).toBe(1);
      expect(mailedTo('sid@vanished.example')).toBe(0);
      const leads = await leadsOf(viaSmtp, ws.auth);
      expect(leads.get(ok)).toMatchObject({ lastError: null });
      expect(leads.get(gone)).toMatchObject({ stage: 'failed', lastError: 'invalid_address' });
    } finally {
      await viaSmtp.close();
    }

    // No mailbox and no SMTP_URL: the sandbox carries it, nothing leaves, and nothing is looked up.
    const w = await workspace('Sandboxed', { mailbox: false });
    const id = await w.lead('sue@imaginary.example');
    await t.services.engine.runPass({ now: new Date(clock) });
    expect((await leadsOf(t, w.ws.auth)).get(id)).toMatchObject({ lastError: null });
    expect((await leadsOf(t, w.ws.auth)).get(id)?.messagedAt).not.toBeNull();
    expect(mxQueries('imaginary.example')).toBe(0);
  });

  it('OUTREACH_ADDRESS_CHECKS=0 turns the checks off: a domain with no records is mailed and DNS is never asked', async () => {
    const off = await buildTestApp({
      handle: t.handle,
      cipher: t.cipher,
      now: new Date(clock).toISOString(),
      env: { ...ADDRESS_CHECKS_ENV, OUTREACH_DNS_SERVERS: dns.server, OUTREACH_ADDRESS_CHECKS: '0' },
    });
    try {
      const ws = await createWorkspaceWithKey(off, 'Unchecked');
      await off.db.updateTable('workspaces').set({ energy_balance: 1_000 }).where('id', '=', ws.workspaceId).execute();
      const account = await insertMessagingAccount(off.db, ws.workspaceId, { mode: 'email', time_zone: 'UTC' });
      await off.services.mailboxes.add({
        workspaceId: ws.workspaceId,
        accountId: account,
        address: 'unchecked@acme.example',
        smtpUrl: smtp.url(),
        imapUrl: 'imap://nobody:nothing@127.0.0.1:1',
        skipCheck: true,
      });
      const sequence = await insertSequence(off.db, ws.workspaceId, {
        channels: ['email'],
        steps: [{ index: 0, kind: 'email', delayDays: 0, subject: 'Hello', message: 'Hi', actions: [], variants: null, tool: null }] as never,
      });
      const id = await insertLead(off.db, ws.workspaceId, {
        person: 'Pat Doe',
        email: 'ned@unchecked-nowhere.example',
        account_id: account,
        sequence_id: sequence,
        next_action_at: new Date(clock),
      });
      await off.services.engine.runPass({ now: new Date(clock) });
      expect(mailedTo('ned@unchecked-nowhere.example')).toBe(1);
      expect((await leadsOf(off, ws.auth)).get(id)).toMatchObject({ lastError: null });
      expect(mxQueries('unchecked-nowhere.example')).toBe(0);
    } finally {
      await off.close();
    }
  });
});

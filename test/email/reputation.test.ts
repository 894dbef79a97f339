import { beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { startServer } from '../../src/server.js';
import { dbEngine } from '../helpers/test-database.js';
import { dovecotAvailable, DOVECOT_MISSING } from '../helpers/dovecot.js';
import { admin } from '../helpers/world-fixtures.js';
import { buildTestApp, createWorkspaceWithKey } from '../helpers/build-test-app.js';
import { signedInConsole } from '../helpers/console.js';
import { tableResolver } from '../webhooks/receiver.js';
import { newId } from '../../src/lib/ids.js';
import { bouncePause, pausedMailboxes, pauseOf } from '../../src/channels/email/deliverability/reputation.js';
import { readFeedbackReport } from '../../src/channels/email/inbox/arf.js';
import { deliveryReport, MAILBOX, useInboxWorld } from '../helpers/worlds/mailbox.js';
import { runCli } from '../helpers/cli-process.js';

// Issue 29 §3, reputation guards per mailbox (docs/deliverability.md), against a real Dovecot (reports arrive by IMAP
// APPEND), a real SMTP receiver and engine passes. Each test names the rule it holds.
if (!dovecotAvailable()) console.warn(`test/email/reputation.test.ts skipped: ${DOVECOT_MISSING}`);

const MINUTE = 60_000;

/** A delivery report (RFC 3464) returning one of our messages. */
const dsn = (p: { original: string; recipient: string }) => deliveryReport(p);

/** A feedback report (ARF, RFC 5965) as Microsoft's JMRP sends one: the complained-of message returned whole. */
const arf = (p: { original: string; recipient: string; feedbackType?: string; extra?: string[] }) =>
  [
    'From: staff@hotmail.com',
    `To: ${MAILBOX}`,
    'Subject: complaint about message from 192.0.2.10',
    `Message-ID: <arf-${newId()}@hotmail.com>`,
    ...(p.extra ?? []),
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="ARF"',
    '',
    '--ARF',
    'Content-Type: text/plain',
    '',
    'This is an email abuse report for an email message received from IP 192.0.2.10.',
    '',
    '--ARF',
    'Content-Type: message/feedback-report',
    '',
    `Feedback-Type: ${p.feedbackType ?? 'abuse'}`,
    'User-Agent: Hotmail FBL',
    'Version: 1',
    `Original-Mail-From: <${MAILBOX}>`,
    'Original-Rcpt-To: <redacted@hotmail.com>',
    'Arrival-Date: Fri, 27 Nov 2026 00:10:00 +0000',
    'Source-IP: 192.0.2.10',
    '',
    '--ARF',
    'Content-Type: message/rfc822',
    'Content-Disposition: inline',
    '',
    `From: Dana <${MAILBOX}>`,
    `To: ${p.recipient}`,
    'Subject: Quick question',
    `Message-ID: ${p.original}`,
    '',
    'Hi',
    '',
    '--ARF--',
    '',
  ].join('\r\n');

describe('rule "a mailbox pauses at 2 hard bounces among its last 20 sends, or 4 among its last 100" (pure)', () => {
  const sends = (n: number, bounced: number[]) => Array.from({ length: n }, (_, i) => bounced.includes(i));
  it('2 of the last 20 pause; 1 does not', () => {
    expect(bouncePause(sends(20, [3]))).toBeNull();
    expect(bouncePause(sends(20, [0, 19]))).toEqual({ bounces: 2, sends: 20 });
    expect(bouncePause(sends(2, [0, 1]))).toEqual({ bounces: 2, sends: 2 });
  });
  it('4 of the last 100 pause even when no 20 in a row hold 2; 3 do not; older sends do not count', () => {
    expect(bouncePause(sends(100, [10, 40, 70]))).toBeNull();
    expect(bouncePause(sends(100, [10, 40, 70, 99]))).toEqual({ bounces: 4, sends: 100 });
    expect(bouncePause(sends(120, [10, 40, 70, 110]))).toBeNull();
  });
});

describe('ARF reading (pure)', () => {
  it("reads the feedback type and the returned message's Message-ID, never the redacted recipient", () => {
    expect(readFeedbackReport(arf({ original: '<Step0.ABC@acme.example>', recipient: 'bob@hotmail.com' }))).toEqual({
      feedbackType: 'abuse',
      originalMessageId: 'step0.abc@acme.example',
    });
    expect(readFeedbackReport('Content-Type: text/plain\r\n\r\nhello')).toEqual({ feedbackType: null, originalMessageId: null });
  });
});

describe("mailbox.paused / mailbox.resumed are subscribable like the spec's events", () => {
  it('a subscription to both is created; they are marked x-extension in the OpenAPI webhooks', async () => {
    const t = await buildTestApp({ resolver: tableResolver({ 'hooks.example.com': ['93.184.216.34'] }) });
    try {
      const ws = await createWorkspaceWithKey(t, 'Hooks');
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: ws.auth,
        payload: { url: 'https://hooks.example.com/', events: ['mailbox.paused', 'mailbox.resumed'] },
      });
      expect(res.statusCode, res.body).toBe(201);
      const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
      expect(doc.webhooks['mailbox.paused'].post['x-extension']).toBe(true);
      expect(doc.webhooks['mailbox.resumed'].post['x-extension']).toBe(true);
      expect(doc.webhooks['lead.emailed'].post['x-extension']).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});

// A person's pause is stored with a NULL reason (docs/email.md "Pause (a person's)"): every reader names it `manual`,
// never a guard's `bounces`. No Dovecot needed: nothing is sent or read.
describe("a person's pause reads as manual", () => {
  it("the driver's pause check and the paused list say manual; readiness says mailbox_paused_manual; a NUL in a mailbox path is a 404, never a 500", async () => {
    const t = await buildTestApp();
    try {
      const ws = await createWorkspaceWithKey(t, 'Paused by hand');
      const view = await t.services.mailboxes.add({
        workspaceId: ws.workspaceId,
        address: 'dana@acme.example',
        smtpUrl: 'smtp://dana:pw@127.0.0.1:2525',
        imapUrl: 'imap://dana:pw@127.0.0.1:1143',
        skipCheck: true,
      });
      expect((await t.services.mailboxes.pause(ws.workspaceId, view.id, 'console')).paused).toBe(true);
      const stored = await t.db.selectFrom('mailboxes').select(['paused_at', 'paused_reason']).where('id', '=', view.id).executeTakeFirstOrThrow();
      expect(stored.paused_at).not.toBeNull();
      expect(stored.paused_reason).toBeNull();
      // The driver's check before each send (its step waits with `mailbox_paused_${reason}`).
      expect(await pauseOf(t.db, ws.workspaceId, view.id)).toBe('manual');
      expect((await pausedMailboxes(t.db, ws.workspaceId)).map((p) => p.reason)).toEqual(['manual']);
      const readiness = await t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: ws.auth });
      const codes = (readiness.json().accounts.issues as { code: string }[]).map((i) => i.code);
      expect(codes).toContain('mailbox_paused_manual');
      expect(codes).not.toContain('mailbox_paused_bounces');
      // A NUL in the mailbox reference (PostgreSQL refuses it as text) is refused before any route reads it: 400 naming
      // the path parameter, in the API and the console; never a 500.
      for (const ref of ['%00', 'dana%00%40acme.example']) {
        const res = await t.app.inject({ method: 'GET', url: `/api/v1/mailboxes/${ref}/inbound`, headers: ws.auth });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json()).toMatchObject({ error: 'invalid_request', field: 'mailbox' });
      }
      const browser = await signedInConsole(t, ws.key);
      for (const res of [
        await browser.get('/console/mailboxes/%00'),
        await browser.get('/console/mailboxes/%00/edit'),
        await browser.post('/console/mailboxes/%00/check'),
        await browser.post('/console/mailboxes/%00/resume'),
        await browser.post('/console/mailboxes/%00/pause'),
      ])
        expect(res.statusCode).toBe(400);
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(!dovecotAvailable())('reputation guards per mailbox (real Dovecot + SMTP receiver)', () => {
  const w = useInboxWorld();
  let clock: number;

  beforeAll(() => {
    clock = w.now();
  });

  /** One engine pass at `clock` (advanced by `advanceMs` first). */
  const tick = async (advanceMs = 2 * MINUTE) => {
    clock += advanceMs;
    const res = await w.t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: { now: new Date(clock).toISOString() } });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().mailboxes?.[w.mailboxId] ?? {}) as Record<string, unknown>;
  };
  const mailbox = () =>
    w.t.db.selectFrom('mailboxes').select(['paused_at', 'paused_reason', 'paused_detail']).where('id', '=', w.mailboxId).executeTakeFirstOrThrow();
  const events = async (event: string) =>
    (await w.t.db.selectFrom('outbox_events').select(['data']).where('workspace_id', '=', w.ws.workspaceId).where('event', '=', event).execute()).map(
      (r) => (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>,
    );
  const readinessCodes = async () => {
    const res = await w.t.app.inject({ method: 'GET', url: '/api/v1/x/readiness', headers: w.ws.auth });
    return (res.json().accounts.issues as { code: string }[]).map((i) => i.code);
  };
  const mailboxLedger = async () =>
    (
      await w.t.db
        .selectFrom('activity')
        .select(['action', 'detail', 'account_id', 'lead_id'])
        .where('workspace_id', '=', w.ws.workspaceId)
        .where('action', '=', 'manual_override')
        .where('lead_id', 'is', null)
        .orderBy('created_at')
        .execute()
    ).map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }));
  /** A lead the mailbox e-mailed whose next step is due now. */
  const dueLead = async () => {
    const lead = await w.emailedLead();
    await w.t.db
      .updateTable('leads')
      .set({ next_action_at: new Date(clock) })
      .where('id', '=', lead.leadId)
      .execute();
    return lead;
  };
  const sentTo = (address: string) => w.smtp.messages.filter((m) => m.to.includes(address)).length;

  it('rule "hard bounces pause the mailbox": three bounces pause it once (ledger, mailbox.paused, readiness mailbox_paused_bounces); its steps wait without failing or counting an attempt; resuming brings it back', async () => {
    const bounced = [await w.emailedLead(), await w.emailedLead(), await w.emailedLead()];
    const waiting = await dueLead();
    for (const b of bounced) await w.deliver(dsn({ original: b.messageId, recipient: b.email }));
    expect(await tick()).toMatchObject({ bounces: 3 });

    // The second bounce tripped the burst window (2 of the last 20 sends, here all 4 it has made); the third found it paused.
    expect(await mailbox()).toMatchObject({ paused_reason: 'bounces', paused_detail: '2 hard bounces among its last 4 sends' });
    const paused = await events('mailbox.paused');
    expect(paused).toHaveLength(1);
    expect(paused[0]).toMatchObject({ mailboxId: w.mailboxId, address: MAILBOX, account: w.account, reason: 'bounces' });
    expect(await mailboxLedger()).toEqual([
      expect.objectContaining({ account_id: w.account, detail: expect.objectContaining({ op: 'mailbox_paused', reason: 'bounces', mailboxId: w.mailboxId }) }),
    ]);
    expect(await readinessCodes()).toContain('mailbox_paused_bounces');

    // The due step waited: nothing sent, the lead neither failed nor charged an attempt.
    expect(sentTo(waiting.email)).toBe(0);
    const lead = await w.lead(waiting.leadId);
    expect(lead).toMatchObject({ stage: 'messaged', last_error: 'mailbox_paused_bounces', step_attempts: 0 });
    expect(Number(lead.step_waits)).toBeGreaterThanOrEqual(1);
    await tick(10 * MINUTE);
    expect(sentTo(waiting.email)).toBe(0);

    // `outreach mailbox resume` (the admin route the CLI calls through a running server).
    const res = await w.t.app.inject({
      method: 'POST',
      url: '/admin/v1/mailboxes/resume',
      headers: admin,
      payload: { workspaceId: w.ws.workspaceId, mailbox: MAILBOX },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ mailboxId: w.mailboxId, address: MAILBOX, resumed: true, reason: 'bounces' });
    expect(await mailbox()).toMatchObject({ paused_at: null, paused_reason: null });
    expect(await events('mailbox.resumed')).toEqual([expect.objectContaining({ mailboxId: w.mailboxId, pausedReason: 'bounces', by: 'cli' })]);
    expect((await mailboxLedger()).map((e) => e.detail.op)).toEqual(['mailbox_paused', 'mailbox_resumed']);
    expect(await readinessCodes()).not.toContain('mailbox_paused_bounces');

    // The step's wait ends and it is sent from the mailbox.
    await tick(31 * MINUTE);
    expect(sentTo(waiting.email)).toBe(1);
    expect(await w.lead(waiting.leadId)).toMatchObject({ step_attempts: 0, current_step: 2 });

    // The bounces counted before the resume count no more: one new bounce does not pause it again.
    const another = await w.emailedLead();
    await w.deliver(dsn({ original: another.messageId, recipient: another.email }));
    expect(await tick()).toMatchObject({ bounces: 1 });
    expect((await mailbox()).paused_at).toBeNull();

    // A second resume changes nothing; an unknown mailbox is a 404-like refusal.
    const again = await w.t.app.inject({
      method: 'POST',
      url: '/admin/v1/mailboxes/resume',
      headers: admin,
      payload: { workspaceId: w.ws.workspaceId, mailbox: MAILBOX },
    });
    expect(again.json()).toMatchObject({ resumed: false });
    const unknown = await w.t.app.inject({
      method: 'POST',
      url: '/admin/v1/mailboxes/resume',
      headers: admin,
      payload: { workspaceId: w.ws.workspaceId, mailbox: 'nobody@acme.example' },
    });
    expect(unknown.statusCode).toBeGreaterThanOrEqual(400);
    expect(unknown.json()).toMatchObject({ error: 'mailbox_not_found' });
  });

  it('rule "a forged ARF naming a Message-ID we never sent changes nothing"; nor does one of ours only threaded, or a not-spam report', async () => {
    const lead = await w.emailedLead();
    await w.deliver(arf({ original: `<forged-${newId()}@acme.example>`, recipient: lead.email }));
    await w.deliver(
      arf({ original: `<forged-${newId()}@acme.example>`, recipient: lead.email, extra: [`In-Reply-To: ${lead.messageId}`, `References: ${lead.messageId}`] }),
    );
    await w.deliver(arf({ original: lead.messageId, recipient: lead.email, feedbackType: 'not-spam' }));
    const c = await tick();
    expect(c).toMatchObject({ unmatched: 3 });
    expect(c.complaints).toBeUndefined();
    expect((await mailbox()).paused_at).toBeNull();
    expect(await w.lead(lead.leadId)).toMatchObject({ opted_out_at: null, automation_stopped: false });
    expect(await w.suppressed(lead.email)).toEqual([]);
    const records = await w.t.db
      .selectFrom('email_inbound_seen')
      .select(['verdict', 'reason'])
      .where('mailbox_id', '=', w.mailboxId)
      .where('reason', 'like', '%feedback%')
      .execute();
    expect(records).toEqual([{ verdict: 'ignored', reason: 'feedback_type:not-spam' }]);
  });

  it('rule "an abuse complaint pauses the mailbox and opts the person out": the address is suppressed, readiness says mailbox_paused_complaints, and the console\'s Resume button brings it back', async () => {
    const lead = await w.emailedLead();
    const sameOther = await w.emailedLead({ email: lead.email.toUpperCase() });
    await w.deliver(arf({ original: lead.messageId, recipient: 'redacted@hotmail.com' }));
    expect(await tick()).toMatchObject({ complaints: 1 });

    expect(await mailbox()).toMatchObject({ paused_reason: 'complaints' });
    for (const id of [lead.leadId, sameOther.leadId]) expect((await w.lead(id)).opted_out_at).not.toBeNull();
    expect(await w.suppressed(lead.email)).toEqual([{ address: lead.email, reason: 'complaint' }]);
    const optOut = await w.t.db.selectFrom('activity').select('detail').where('lead_id', '=', lead.leadId).where('action', '=', 'manual_override').execute();
    expect(optOut.map((r) => JSON.parse(r.detail))).toEqual([expect.objectContaining({ op: 'opt_out', via: 'abuse_complaint', feedbackType: 'abuse' })]);
    expect((await events('mailbox.paused')).at(-1)).toMatchObject({ reason: 'complaints' });
    expect(await readinessCodes()).toContain('mailbox_paused_complaints');

    // The same report again (another copy in the INBOX) counts nothing more.
    await w.deliver(arf({ original: lead.messageId, recipient: 'redacted@hotmail.com' }));
    expect((await tick()).complaints).toBeUndefined();
    expect(await events('mailbox.paused')).toHaveLength(2);

    // The console: Accounts lists the paused mailbox with a Resume button (CSRF like every form).
    const browser = await signedInConsole(w.t, w.ws.key);
    const page = await browser.get('/console/accounts');
    expect(page.body).toContain('Paused mailboxes');
    expect(page.body).toContain(`/console/mailboxes/${w.mailboxId}/resume`);
    const forged = await browser.post(`/console/mailboxes/${w.mailboxId}/resume`, { _csrf: null });
    expect(forged.statusCode).toBe(403);
    expect((await mailbox()).paused_reason).toBe('complaints');
    const resumed = await browser.post(`/console/mailboxes/${w.mailboxId}/resume`);
    expect(resumed.statusCode).toBe(303);
    expect((await mailbox()).paused_at).toBeNull();
    expect((await events('mailbox.resumed')).at(-1)).toMatchObject({ pausedReason: 'complaints', by: 'console' });
    expect((await browser.get('/console/accounts')).body).not.toContain('Paused mailboxes');
  });
});

// `npx outreach mailbox resume ADDRESS` itself, through a running server on the embedded database (the admin-backend path).
describe.runIf(dbEngine() === 'pglite')('npx outreach mailbox resume', { timeout: 300_000 }, () => {
  it('resumes a paused mailbox and says so; a second run says it was not paused; an unknown address fails', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-mailbox-resume-'));
    const server = await startServer(
      loadConfig({ OUTREACH_DATA_DIR: dataDir, OUTREACH_SEED_DEMO: '0', LOG_LEVEL: 'silent', OUTREACH_ENGINE_INTERVAL: '0' }, { PORT: 0, HOST: '127.0.0.1' }),
      { print: () => undefined },
    );
    try {
      const ws = await server.services.workspaces.createWorkspace({ name: 'Mail' });
      const view = await server.services.mailboxes.add({
        workspaceId: ws.id,
        address: 'dana@acme.example',
        smtpUrl: 'smtp://dana:pw@127.0.0.1:2525',
        imapUrl: 'imap://dana:pw@127.0.0.1:1143',
        skipCheck: true,
      });
      await server.handle.db
        .updateTable('mailboxes')
        .set({ paused_at: new Date(), paused_reason: 'bounces', paused_detail: '2 hard bounces among its last 20 sends' })
        .where('id', '=', view.id)
        .execute();
      const env = { OUTREACH_DATA_DIR: dataDir };
      const first = await cli(['mailbox', 'resume', '--workspace', ws.id, 'dana@acme.example'], env);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toContain('Resumed mailbox dana@acme.example (paused for bounces): it sends again');
      expect((await server.services.mailboxes.paused(ws.id)).length).toBe(0);
      const again = await cli(['mailbox', 'resume', '--workspace', ws.id, '--json', view.id], env);
      expect(JSON.parse(again.stdout)).toEqual({ mailboxId: view.id, address: 'dana@acme.example', resumed: false, reason: null });
      const unknown = await cli(['mailbox', 'resume', '--workspace', ws.id, 'nobody@acme.example'], env);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/not found/);
      // A person's pause (NULL reason) is named as such, not "paused for null".
      await server.services.mailboxes.pause(ws.id, view.id, 'console');
      const manual = await cli(['mailbox', 'resume', '--workspace', ws.id, 'dana@acme.example'], env);
      expect(manual.code, manual.stderr).toBe(0);
      expect(manual.stdout).toContain('Resumed mailbox dana@acme.example (paused by a person): it sends again');
    } finally {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

const cli = (args: string[], env: Record<string, string>) => runCli(args, env);

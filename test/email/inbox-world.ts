import { expect } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount, insertSequence } from '../helpers/factories.js';
import { ADMIN, admin } from '../helpers/world-fixtures.js';
import { startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver.js';
import type { Env } from '../../src/config/config.js';
import { newId } from '../../src/lib/ids.js';

// One mailbox watched against a real Dovecot, for the inbox tests of issue 26 (test/email/inbox-*.test.ts): a
// workspace, an e-mail account whose mailbox is dana@acme.example, a three-step e-mail sequence, leads the mailbox
// e-mailed (their Message-ID on record), and an engine pass at a later time each call.

export const DAY = 86_400_000;
export const MAILBOX = 'dana@acme.example';

export interface InboxWorld {
  t: TestApp;
  dovecot: Dovecot;
  smtp: SmtpReceiver;
  ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  account: string;
  mailboxId: string;
  sequenceId: string;
  now(): number;
  /** One engine pass (POST /admin/v1/engine/tick), two minutes after the last. */
  tick(): Promise<{ repliesDetected: number; mailboxes?: Record<string, Record<string, unknown>> }>;
  /**
   * A lead the mailbox e-mailed (step 0 sent, step 1 due in 3 days), with the Message-ID of that e-mail on record
   * (`recipient`: the address that e-mail went to, as the driver records it; absent: a row from before 0024).
   */
  emailedLead(f?: { email?: string; recipient?: string | null }): Promise<{ leadId: string; email: string; messageId: string }>;
  deliver(raw: string | Buffer): Promise<number | null>;
  lead(id: string): Promise<Record<string, unknown> & { stage: string; automation_stopped: boolean; opted_out_at: Date | null }>;
  suppressed(address: string): Promise<{ address: string; reason: string }[]>;
  repliesOf(id: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** A message as a mail client writes it: the given headers (plain text, UTF-8 unless overridden), a blank line, the body. */
export const raw = (headers: Record<string, string>, body: string) =>
  Object.entries({ 'MIME-Version': '1.0', 'Content-Type': 'text/plain; charset=utf-8', ...headers })
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n') +
  '\r\n\r\n' +
  body.replace(/\r?\n/g, '\r\n');

export async function startInboxWorld(opts: { env?: Partial<Env>; imapUrl?: (d: Dovecot) => string; trustedAuthservId?: string } = {}): Promise<InboxWorld> {
  const dovecot = await startDovecot([{ user: 'dana', pass: 'dana-imap-pw-7731' }]);
  const smtp = await startSmtpReceiver();
  const t = await buildTestApp({
    env: {
      OUTREACH_ADMIN_TOKEN: ADMIN,
      OUTREACH_PACING_DAYS: 'sun-sat',
      OUTREACH_PACING_HOURS: '00:00-24:00',
      OUTREACH_INBOX_POLL_INTERVAL: 60,
      ...opts.env,
    },
  });
  const ws = await createWorkspaceWithKey(t, 'Mailers');
  const account = await insertMessagingAccount(t.db, ws.workspaceId, { mode: 'email', time_zone: 'UTC' });
  const view = await t.services.mailboxes.add({
    workspaceId: ws.workspaceId,
    accountId: account,
    address: MAILBOX,
    displayName: 'Dana',
    smtpUrl: smtp.url(),
    imapUrl: opts.imapUrl ? opts.imapUrl(dovecot) : dovecot.url('dana'),
    ...(opts.trustedAuthservId && { trustedAuthservId: opts.trustedAuthservId }),
    skipCheck: true,
  });
  const sequenceId = await insertSequence(t.db, ws.workspaceId, {
    channels: ['email'],
    steps: [
      { index: 0, kind: 'email', delayDays: 0, subject: 'Quick question', message: 'Hi', actions: [], variants: null, tool: null },
      { index: 1, kind: 'email', delayDays: 3, subject: null, message: 'Following up', actions: [], variants: null, tool: null },
      { index: 2, kind: 'email', delayDays: 3, subject: null, message: 'Last note', actions: [], variants: null, tool: null },
    ] as never,
  });
  let clock = Date.now();
  let n = 0;
  const world: InboxWorld = {
    t,
    dovecot,
    smtp,
    ws,
    account,
    mailboxId: view.id,
    sequenceId,
    now: () => clock,
    async tick() {
      clock += 120_000;
      const res = await t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: { now: new Date(clock).toISOString() } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    },
    async emailedLead(f = {}) {
      n += 1;
      const email = f.email ?? `bob${n}.${newId().slice(0, 6)}@initech.example`;
      const sentAt = new Date(clock - DAY);
      const leadId = await insertLead(t.db, ws.workspaceId, {
        person: `Bob Number${n}`,
        email,
        account_id: account,
        sequence_id: sequenceId,
        stage: 'messaged',
        current_step: 1,
        messaged_at: sentAt,
        last_message_channel: 'email',
        last_activity_at: sentAt,
        next_action_at: new Date(clock + 3 * DAY),
        mailbox_id: view.id,
      } as never);
      const messageId = `<step0.${n}.${newId().slice(0, 8)}@acme.example>`;
      await t.db
        .insertInto('email_messages')
        .values({
          workspace_id: ws.workspaceId,
          message_id: messageId,
          lead_id: leadId,
          mailbox_id: view.id,
          idempotency_key: `${leadId}:${sequenceId}:0`,
          subject: 'Quick question',
          direction: 'out',
          delivery: 'accepted',
          sent_at: sentAt as never,
          // Rows written before migration 0024 have no recipient: the lead's address stands for it.
          ...(f.recipient !== undefined && { recipient: f.recipient }),
        } as never)
        .execute();
      return { leadId, email, messageId };
    },
    deliver: (text) => dovecot.deliver('dana', text),
    lead: async (id) => await t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    suppressed: (address) =>
      t.db.selectFrom('suppressed_addresses').select(['address', 'reason']).where('workspace_id', '=', ws.workspaceId).where('address', '=', address).execute(),
    repliesOf: async (id) => await t.db.selectFrom('replies').selectAll().where('lead_id', '=', id).execute(),
    async close() {
      await t?.close();
      await smtp?.close();
      await dovecot?.stop();
    },
  };
  return world;
}

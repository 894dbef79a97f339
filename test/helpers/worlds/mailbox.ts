import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../build-test-app.js';
import { insertLead, insertMessagingAccount, insertSequence } from '../factories.js';
import { ADMIN } from '../world-fixtures.js';
import { startDovecot, type Dovecot, type DovecotUser } from '../dovecot.js';
import { startSmtpReceiver, type SmtpReceiver, type SmtpReceiverOptions } from '../smtp-receiver.js';
import { startDnsFake, type DnsFake, type ZoneName } from '../dns-server.js';
import { engineTick } from './common.js';
import type { Env } from '../../../src/config/config.js';
import { newId } from '../../../src/lib/ids.js';
import { seedMailbox } from '../../../src/channels/email/index.js';

// The mailbox world: a real Dovecot (IMAP, the sent folder) and a real SMTP receiver, an app whose engine sends every
// hour of every day, a workspace with an e-mail account whose mailbox is dana@acme.example, and an e-mail sequence.

export const DAY = 86_400_000;
export const MAILBOX = 'dana@acme.example';
/** dana's IMAP password on the world's Dovecot. */
export const MAILBOX_PASS = 'dana-imap-pw-7731';

/** The settings of a world that sends: no spacing, a public URL for List-Unsubscribe, the inbox read once an hour. */
export const SENDING_ENV: Partial<Env> = {
  OUTREACH_PACING_SPACING: 0,
  OUTREACH_PUBLIC_URL: 'https://outreach.example.com',
  OUTREACH_INBOX_POLL_INTERVAL: 3600,
};

/** An e-mail step (docs/sequences-and-leads.md): `subject` null on a follow-up, which continues the thread. */
export const emailStep = (index: number, delayDays: number, subject: string | null, message: string) => ({
  index,
  kind: 'email',
  delayDays,
  subject,
  message,
  actions: [],
  variants: null,
  tool: null,
});

/** The sending tests' sequence: "Quick question" now, a follow-up a day later. */
export const SEND_STEPS = [emailStep(0, 0, 'Quick question', 'Hi {{firstName}}'), emailStep(1, 1, null, 'Following up')];
/** The inbox tests' sequence: "Quick question", then two follow-ups three days apart. */
export const INBOX_STEPS = [emailStep(0, 0, 'Quick question', 'Hi'), emailStep(1, 3, null, 'Following up'), emailStep(2, 3, null, 'Last note')];

export interface MailboxWorld {
  t: TestApp;
  dovecot: Dovecot;
  smtp: SmtpReceiver;
  ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  account: string;
  mailboxId: string;
  sequenceId: string;
  close(): Promise<void>;
}

export interface MailboxWorldOptions {
  /** Dovecot's users; dana (MAILBOX_PASS) by default. */
  users?: DovecotUser[];
  smtp?: SmtpReceiverOptions;
  /** Over the admin token and sending every hour of every day. */
  env?: Partial<Env>;
  workspaceName?: string;
  /** The workspace's energy balance; the default balance when absent. */
  energy?: number;
  /** How the mailbox is added (services.mailboxes.add): its display name, sent folder, authserv-id, IMAP URL. */
  mailbox?: { displayName?: string; sentFolder?: string; trustedAuthservId?: string; imapUrl?: (d: Dovecot) => string };
  /** The e-mail sequence's steps; SEND_STEPS by default. */
  steps?: unknown[];
  /** The app on the wall clock (for tests that run the engine's own loops) instead of the test clock. */
  realClock?: boolean;
}

/** Starts Dovecot and the SMTP receiver, builds the app and adds the workspace, its e-mail account, mailbox and sequence. */
export async function startMailboxWorld(o: MailboxWorldOptions = {}): Promise<MailboxWorld> {
  const dovecot = await startDovecot(o.users ?? [{ user: 'dana', pass: MAILBOX_PASS }]);
  const smtp = await startSmtpReceiver(o.smtp);
  const t = await buildTestApp({
    env: { OUTREACH_ADMIN_TOKEN: ADMIN, OUTREACH_PACING_DAYS: 'sun-sat', OUTREACH_PACING_HOURS: '00:00-24:00', ...o.env },
    ...(o.realClock && { realClock: true }),
  });
  const ws = await createWorkspaceWithKey(t, o.workspaceName ?? 'Mailers');
  if (o.energy !== undefined) await t.db.updateTable('workspaces').set({ energy_balance: o.energy }).where('id', '=', ws.workspaceId).execute();
  const account = await insertMessagingAccount(t.db, ws.workspaceId, { mode: 'email', time_zone: 'UTC' });
  const m = o.mailbox ?? {};
  const view = await t.services.mailboxes.add({
    workspaceId: ws.workspaceId,
    accountId: account,
    address: MAILBOX,
    ...(m.displayName && { displayName: m.displayName }),
    smtpUrl: smtp.url(),
    imapUrl: m.imapUrl ? m.imapUrl(dovecot) : dovecot.url('dana'),
    ...(m.sentFolder && { sentFolder: m.sentFolder }),
    ...(m.trustedAuthservId && { trustedAuthservId: m.trustedAuthservId }),
    skipCheck: true,
  });
  const sequenceId = await insertSequence(t.db, ws.workspaceId, { channels: ['email'], steps: (o.steps ?? SEND_STEPS) as never });
  return {
    t,
    dovecot,
    smtp,
    ws,
    account,
    mailboxId: view.id,
    sequenceId,
    async close() {
      await t?.close();
      await smtp?.close();
      await dovecot?.stop();
    },
  };
}

/** A message as a mail client writes it: the given headers (plain text, UTF-8 unless overridden), a blank line, the body. */
export const raw = (headers: Record<string, string>, body: string) =>
  Object.entries({ 'MIME-Version': '1.0', 'Content-Type': 'text/plain; charset=utf-8', ...headers })
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n') +
  '\r\n\r\n' +
  body.replace(/\r?\n/g, '\r\n');

let emailed = 0;
/** Where an e-mailed lead lives: a workspace, its e-mail account and mailbox, and the sequence that e-mailed it. */
export type EmailedFrom = Pick<MailboxWorld, 't' | 'account' | 'sequenceId' | 'mailboxId'> & { ws: { workspaceId: string } };

/**
 * A lead the world's mailbox e-mailed a day before `now` (epoch milliseconds; step 0 sent, step 1 due in 3 days), with
 * the Message-ID of that e-mail on record. `email`: the lead's address (a fresh one by default); `recipient`: the address
 * that e-mail went to, as the driver records it (absent: a row from before migration 0024, the lead's address stands).
 */
export async function insertEmailedLead(w: EmailedFrom, now: number, f: { email?: string; recipient?: string | null } = {}) {
  const n = ++emailed;
  const email = f.email ?? `bob${n}.${newId().slice(0, 6)}@initech.example`;
  const sentAt = new Date(now - DAY);
  const leadId = await insertLead(w.t.db, w.ws.workspaceId, {
    person: `Bob Number${n}`,
    email,
    account_id: w.account,
    sequence_id: w.sequenceId,
    stage: 'messaged',
    current_step: 1,
    messaged_at: sentAt,
    last_message_channel: 'email',
    last_activity_at: sentAt,
    next_action_at: new Date(now + 3 * DAY),
    mailbox_id: w.mailboxId,
  } as never);
  const messageId = `<step0.${n}.${newId().slice(0, 8)}@acme.example>`;
  await w.t.db
    .insertInto('email_messages')
    .values({
      workspace_id: w.ws.workspaceId,
      message_id: messageId,
      lead_id: leadId,
      mailbox_id: w.mailboxId,
      idempotency_key: `${leadId}:${w.sequenceId}:0`,
      subject: 'Quick question',
      direction: 'out',
      delivery: 'accepted',
      sent_at: sentAt as never,
      ...(f.recipient !== undefined && { recipient: f.recipient }),
    } as never)
    .execute();
  return { leadId, email, messageId };
}

/** The inbox tests' world (issue 26): the mailbox world with its own clock, read every minute. */
export interface InboxWorld extends MailboxWorld {
  now(): number;
  /** One engine pass (POST /admin/v1/engine/tick), two minutes after the last. */
  tick(): Promise<{ repliesDetected: number; mailboxes?: Record<string, Record<string, unknown>> }>;
  /** insertEmailedLead at the world's clock. */
  emailedLead(f?: { email?: string; recipient?: string | null }): Promise<{ leadId: string; email: string; messageId: string }>;
  deliver(raw: string | Buffer): Promise<number | null>;
  lead(id: string): Promise<Record<string, unknown> & { stage: string; automation_stopped: boolean; opted_out_at: Date | null }>;
  suppressed(address: string): Promise<{ address: string; reason: string }[]>;
  repliesOf(id: string): Promise<Record<string, unknown>[]>;
}

/** Starts the inbox world: dana's mailbox named "Dana", INBOX_STEPS, the inbox read every 60 s, `env` over that. */
export async function startInboxWorld(
  opts: { env?: Partial<Env>; imapUrl?: (d: Dovecot) => string; trustedAuthservId?: string; users?: DovecotUser[] } = {},
): Promise<InboxWorld> {
  const w = await startMailboxWorld({
    users: opts.users,
    env: { OUTREACH_INBOX_POLL_INTERVAL: 60, ...opts.env },
    mailbox: { displayName: 'Dana', imapUrl: opts.imapUrl, trustedAuthservId: opts.trustedAuthservId },
    steps: INBOX_STEPS,
  });
  const { t, dovecot, ws } = w;
  let clock = Date.now();
  return {
    ...w,
    now: () => clock,
    tick: () => engineTick(t, (clock += 120_000)),
    emailedLead: (f = {}) => insertEmailedLead(w, clock, f),
    deliver: (text) => dovecot.deliver('dana', text),
    lead: async (id) => await t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    suppressed: (address) =>
      t.db.selectFrom('suppressed_addresses').select(['address', 'reason']).where('workspace_id', '=', ws.workspaceId).where('address', '=', address).execute(),
    repliesOf: async (id) => await t.db.selectFrom('replies').selectAll().where('lead_id', '=', id).execute(),
  };
}

/** The settings of the SMTP-only tests: every hour of every day, no spacing, the inbox read once a day, no discovery. */
export const SMTP_ONLY_ENV = {
  OUTREACH_PACING_DAYS: 'sun-sat',
  OUTREACH_PACING_HOURS: '00:00-24:00',
  OUTREACH_PACING_SPACING: 0,
  OUTREACH_INBOX_POLL_INTERVAL: 86_400,
  OUTREACH_DISCOVERY_INTERVAL: 0,
};

/** SMTP_ONLY_ENV with the recipient address checks on (they ask the DNS server a test names in OUTREACH_DNS_SERVERS). */
export const ADDRESS_CHECKS_ENV = { ...SMTP_ONLY_ENV, OUTREACH_ADDRESS_CHECKS: '1' as const };

/** An SMTP receiver, a DNS fake answering from `zone`, and an app at `now` (epoch ms) checking addresses against it. */
export interface AddressCheckWorld {
  t: TestApp;
  smtp: SmtpReceiver;
  dns: DnsFake;
  /** Closes the app, the receiver and the DNS fake. */
  close(): Promise<void>;
}

/** Starts an AddressCheckWorld (ADDRESS_CHECKS_ENV); `zone` as for startDnsFake. */
export async function startAddressCheckWorld(now: number, zone: Record<string, ZoneName>): Promise<AddressCheckWorld> {
  const smtp = await startSmtpReceiver();
  const dns = await startDnsFake(zone);
  const t = await buildTestApp({ now: new Date(now).toISOString(), env: { ...ADDRESS_CHECKS_ENV, OUTREACH_DNS_SERVERS: dns.server } });
  return {
    t,
    smtp,
    dns,
    close: async () => {
      await t.close();
      await smtp.close();
      await dns.close();
    },
  };
}

/**
 * A workspace `name` with 1,000 energy for the SMTP-only tests: an e-mail account (`account`, fields over mode e-mail
 * and time zone UTC), its mailbox `<name>@acme.example` sending through `smtp` with no reachable IMAP (unless
 * `mailbox` is false), and an e-mail sequence of `steps` ("Hello" alone by default).
 */
export async function insertSmtpWorkspace(
  t: TestApp,
  smtp: SmtpReceiver,
  name: string,
  o: { account?: { time_zone?: string; warmup_started_at?: Date | null }; mailbox?: boolean; steps?: unknown[] } = {},
) {
  const ws = await createWorkspaceWithKey(t, name);
  await t.db.updateTable('workspaces').set({ energy_balance: 1_000 }).where('id', '=', ws.workspaceId).execute();
  const account = await insertMessagingAccount(t.db, ws.workspaceId, { mode: 'email', time_zone: 'UTC', ...o.account });
  const mailbox =
    o.mailbox === false
      ? null
      : await t.services.mailboxes.add({
          workspaceId: ws.workspaceId,
          accountId: account,
          address: `${name.toLowerCase()}@acme.example`,
          smtpUrl: smtp.url(),
          imapUrl: 'imap://nobody:nothing@127.0.0.1:1',
          skipCheck: true,
        });
  const sequence = await insertSequence(t.db, ws.workspaceId, {
    channels: ['email'],
    steps: (o.steps ?? [emailStep(0, 0, 'Hello', 'Hi {{firstName}}')]) as never,
  });
  return { ws, account, mailboxId: mailbox?.id ?? null, sequence };
}

/**
 * A delivery report (RFC 3464) returning our message `original` ("Quick question", from MAILBOX) that went to
 * `recipient`: from `from` (the MAILER-DAEMON of mx.initech.example by default) to MAILBOX, with `extra` header lines,
 * `note` as its human-readable part, and the status `status` (5.1.1 by default) with `action` (failed by default).
 */
export function deliveryReport(p: {
  original: string;
  recipient: string;
  status?: string;
  action?: string;
  from?: string;
  subject?: string;
  extra?: string[];
  note?: string;
}) {
  return [
    `From: ${p.from ?? 'Mail Delivery System <MAILER-DAEMON@mx.initech.example>'}`,
    `To: ${MAILBOX}`,
    `Subject: ${p.subject ?? 'Undelivered Mail Returned to Sender'}`,
    `Message-ID: <dsn-${newId()}@mx.initech.example>`,
    ...(p.extra ?? []),
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="BOUNDARY"',
    '',
    '--BOUNDARY',
    'Content-Type: text/plain',
    '',
    p.note ?? 'I could not deliver your message.',
    '',
    '--BOUNDARY',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.initech.example',
    '',
    `Final-Recipient: rfc822; ${p.recipient}`,
    `Action: ${p.action ?? 'failed'}`,
    `Status: ${p.status ?? '5.1.1'}`,
    '',
    '--BOUNDARY',
    'Content-Type: text/rfc822-headers',
    '',
    `From: ${MAILBOX}`,
    `To: ${p.recipient}`,
    `Message-ID: ${p.original}`,
    'Subject: Quick question',
    '',
    '--BOUNDARY--',
    '',
  ].join('\r\n');
}

/**
 * One inbox world for the describe block (or file) that calls this: started in its beforeAll, closed in its afterAll.
 * Returns a stand-in that reads the world's fields once it is up (and throws before).
 */
export function useInboxWorld(opts: Parameters<typeof startInboxWorld>[0] = {}): InboxWorld {
  let w: InboxWorld | undefined;
  beforeAll(async () => {
    w = await startInboxWorld(opts);
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });
  return new Proxy({} as InboxWorld, {
    get(_, key) {
      if (!w) throw new Error('the inbox world starts in beforeAll');
      return Reflect.get(w, key) as unknown;
    },
  });
}

/** The messages `smtp` took for `address`, oldest first. */
export const messagesTo = (smtp: SmtpReceiver, address: string) => smtp.messages.filter((m) => m.to.includes(address));

/** A lead of the world's account and sequence (Bob Slydell at `email`), due at `at`. */
export const insertSendingLead = (w: MailboxWorld, email: string, at: Date) =>
  insertLead(w.t.db, w.ws.workspaceId, { person: 'Bob Slydell', email, account_id: w.account, sequence_id: w.sequenceId, next_action_at: at });

/** The sending tests' world: dana (IMAP password dana-pw-5521), SENDING_ENV, 1,000 energy, the sent folder "Sent"; `o` goes over that. */
export const startSendingWorld = (o: MailboxWorldOptions = {}) =>
  startMailboxWorld({ users: [{ user: 'dana', pass: 'dana-pw-5521' }], env: SENDING_ENV, energy: 1_000, ...o, mailbox: { sentFolder: 'Sent', ...o.mailbox } });

/**
 * A sending test's clock (epoch milliseconds, from `start`) and calls on the world `world()` answers (asked at each
 * call, so the world may start in beforeAll): `tick` moves the clock `advanceMs` on and runs one engine pass there,
 * `lead` adds a lead due at the clock (insertSendingLead), `to` answers what the SMTP receiver took for an address.
 */
export function sendingClock(world: () => MailboxWorld, start = Date.parse('2026-11-24T09:00:00.000Z')) {
  let clock = start;
  return {
    now: () => clock,
    tick: (advanceMs = 120_000) => engineTick(world().t, (clock += advanceMs)),
    lead: (email: string) => insertSendingLead(world(), email, new Date(clock)),
    to: (address: string) => messagesTo(world().smtp, address),
  };
}

/**
 * An e-mail account `accountName` in `workspaceId` with a stored mailbox dana@acme.example (id `mailboxId`; its SMTP
 * and IMAP servers on 127.0.0.1 are never reached), written as the world-file loader does. Answers the account id.
 */
export async function insertStoredMailbox(t: TestApp, workspaceId: string, f: { mailboxId: string; accountName: string }) {
  const account = await insertMessagingAccount(t.db, workspaceId, { mode: 'email', name: f.accountName });
  await seedMailbox(t.db, t.cipher, {
    id: f.mailboxId,
    workspaceId,
    accountId: account,
    address: MAILBOX,
    smtpUrl: 'smtp://dana:secret@127.0.0.1:2525',
    imapUrl: 'imap://dana:secret@127.0.0.1:1143',
  });
  return account;
}

/**
 * A second e-mail account in the world's workspace, its mailbox erin@acme.example sending through `smtpUrl` (the
 * world's Dovecot as IMAP, unchecked), and a lead of the world's sequence on it (`lead.person` at `lead.email`), due
 * at `at`. Answers the lead's id.
 */
export async function insertErinMailboxLead(w: MailboxWorld, smtpUrl: string, lead: { person: string; email: string }, at: Date) {
  const account = await insertMessagingAccount(w.t.db, w.ws.workspaceId, { mode: 'email', time_zone: 'UTC' });
  await w.t.services.mailboxes.add({
    workspaceId: w.ws.workspaceId,
    accountId: account,
    address: 'erin@acme.example',
    smtpUrl,
    imapUrl: w.dovecot.url('dana'),
    skipCheck: true,
  });
  return insertLead(w.t.db, w.ws.workspaceId, { ...lead, account_id: account, sequence_id: w.sequenceId, next_action_at: at });
}

/**
 * The inbox load tests' meter: samples RSS every 10 ms and the event loop's delay from now until `stop()`, which
 * answers the figures (delays in milliseconds to one decimal, memory in whole MiB).
 */
/**
 * The warm-up reply a measuring test sends in a pass before the one it measures: long enough (over 30 letters) for the
 * classifier to ask tinyld its language, so tinyld's profiles, loaded at the first such reply (about 100 ms at once:
 * src/domain/classify.ts), load in the warm-up. A shorter one ("Thanks, speak soon.") left that load inside the
 * measured pass: the 8 MB pass's p99 stood at 155-190 ms alone and 364 ms in CI, none of it the pass's own work.
 */
export const WARM_UP_REPLY = 'Thanks for the note, happy to speak again next week about the numbers.';

export function startLoadMeter() {
  const MiB = 1024 * 1024;
  const rss = () => process.memoryUsage().rss;
  const rss0 = rss();
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 10);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  return {
    stop() {
      clearInterval(sampler);
      loop.disable();
      peak = Math.max(peak, rss());
      const ms = (ns: number) => Math.round((ns / 1e6) * 10) / 10;
      return {
        loopDelayP50Ms: ms(loop.percentile(50)),
        loopDelayP99Ms: ms(loop.percentile(99)),
        loopDelayMaxMs: ms(loop.max),
        rssBeforeMb: Math.round(rss0 / MiB),
        rssPeakMb: Math.round(peak / MiB),
        rssGrowthMb: Math.round((peak - rss0) / MiB),
      };
    },
  };
}

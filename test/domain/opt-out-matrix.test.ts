import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount, insertReply, insertSequence, nextXUserId, X_SEQUENCE } from '../helpers/factories.js';
import { ADMIN, admin } from '../helpers/world-fixtures.js';
import { dovecotAvailable, DOVECOT_MISSING, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver.js';
import { startXApiFake, worldOauth, xAppEnv, type XApiFake } from '../helpers/x-api-fake.js';
import { ENGINE_ENV } from '../engine/helpers.js';
import { newId } from '../../src/lib/ids.js';

// Issue 25 part 2 (docs/opt-out.md): one opt-out, reached the same way from every entry point. Each entry point is
// driven through its real flow (HTTP, the engine tick with the sandbox, the X watcher against the X API fake, the
// inbox watcher against a real Dovecot) against a person with four lanes: the lead the request came through, the
// same person in other sequences by e-mail, by LinkedIn URL and by X user id; and a stranger who must stay untouched.
// Then the same request again, which must write nothing. Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.
if (!dovecotAvailable()) console.warn(`test/domain/opt-out-matrix.test.ts: the e-mail entry points are skipped: ${DOVECOT_MISSING}`);
const withDovecot = dovecotAvailable();

const ME = '2001';
const PASS = 'dana-imap-pw-5520';
const MAILBOX = 'dana@acme.example';
const DAY = 86_400_000;
const H = 3_600_000;

let x: XApiFake;
let t: TestApp;
let dovecot: Dovecot | undefined;
let smtp: SmtpReceiver | undefined;
let ws: string;
let auth: { authorization: string };
let linkedinAccount: string;
let emailAccount: string;
let mailboxId: string;
const seq: Record<'linkedin' | 'email' | 'other' | 'x', string> = { linkedin: '', email: '', other: '', x: '' };
let clock = Date.now();

beforeAll(async () => {
  x = await startXApiFake({ now: () => clock });
  x.addUser({ id: ME, username: 'acme_hq' });
  const tokens = x.issueTokens(ME);
  if (withDovecot) {
    dovecot = await startDovecot([{ user: 'dana', pass: PASS }]);
    smtp = await startSmtpReceiver();
  }
  t = await buildTestApp({
    now: new Date(clock).toISOString(),
    env: { ...ENGINE_ENV, OUTREACH_ADMIN_TOKEN: ADMIN, ...xAppEnv(x), OUTREACH_X_POLL_INTERVAL: 60, OUTREACH_INBOX_POLL_INTERVAL: 60 },
  });
  const seeded = await t.app.inject({
    method: 'POST',
    url: '/admin/v1/seed',
    headers: admin,
    payload: {
      workspaces: [
        {
          name: 'Opt-out Co',
          apiKeys: [{}],
          energy: { balance: 10_000, dailyRefill: 10_000 },
          xAccounts: [{ userId: ME, handle: 'acme_hq', oauth: worldOauth(tokens, ['tweet.read', 'users.read', 'dm.read', 'dm.write', 'offline.access']) }],
        },
      ],
    },
  });
  expect(seeded.statusCode, seeded.body).toBe(200);
  ws = seeded.json().workspaces[0].id;
  auth = { authorization: `Bearer ${seeded.json().workspaces[0].apiKeys[0]}` };
  linkedinAccount = await insertMessagingAccount(t.db, ws, { mode: 'linkedin', time_zone: 'UTC' });
  emailAccount = await insertMessagingAccount(t.db, ws, { mode: 'email', time_zone: 'UTC' });
  if (dovecot && smtp) {
    const view = await t.services.mailboxes.add({
      workspaceId: ws,
      accountId: emailAccount,
      address: MAILBOX,
      displayName: 'Dana',
      smtpUrl: smtp.url(),
      imapUrl: dovecot.url('dana'),
      skipCheck: true,
    });
    mailboxId = view.id;
  }
  seq.linkedin = await insertSequence(t.db, ws, { name: 'LinkedIn' });
  seq.email = await insertSequence(t.db, ws, {
    name: 'E-mail',
    channels: ['email'],
    steps: [{ index: 0, kind: 'email', delayDays: 0, subject: 'Quick question', message: 'Hi', actions: [], variants: null, tool: null }],
  });
  seq.other = await insertSequence(t.db, ws, { name: 'Other' });
  seq.x = await insertSequence(t.db, ws, { name: 'X', ...X_SEQUENCE });
}, 120_000);

afterAll(async () => {
  await t?.close();
  await x?.close();
  await smtp?.close();
  await dovecot?.stop();
});

const now = () => new Date(clock);
/** One engine pass (steps, the sandbox's observations, the X and inbox watchers), a little later each time. */
async function tick() {
  clock += 120_000;
  t.clock.set(now());
  const res = await t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: { now: now().toISOString() } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

type Lane = 'entry' | 'byEmail' | 'byLinkedin' | 'byX';
const LANES: Lane[] = ['entry', 'byEmail', 'byLinkedin', 'byX'];
interface Person {
  tag: string;
  email: string;
  /** The address the LinkedIn lane has: a second address of the same person. */
  workEmail: string;
  linkedinUrl: string;
  xUserId: string;
  lanes: Record<Lane, string>;
  stranger: string;
  strangerEmail: string;
}

let n = 0;
/**
 * A person with four lanes, every one of them busy in its own sequence (due later, so no pass acts on them), and a
 * stranger. `entry` sets what the entry point needs on the lead the request comes through.
 */
async function person(entry: Parameters<typeof insertLead>[2] = {}): Promise<Person> {
  n += 1;
  const tag = `p${n}${newId().slice(0, 6)}`;
  const email = `${tag}@person.example`;
  const workEmail = `${tag}.work@corp.example`;
  const linkedinUrl = `https://www.linkedin.com/in/${tag}`;
  const xUserId = nextXUserId();
  const later = new Date(clock + 20 * DAY);
  const company = `Co ${tag}`;
  const entryId = await insertLead(t.db, ws, {
    person: `Pat ${tag}`,
    company,
    email,
    linkedin_url: linkedinUrl,
    x_user_id: xUserId,
    username: `${tag}_x`,
    sequence_id: seq.linkedin,
    account_id: linkedinAccount,
    stage: 'messaged',
    messaged_at: new Date(clock - DAY),
    next_action_at: later,
    ...entry,
  });
  const byEmail = await insertLead(t.db, ws, {
    person: `Pat ${tag}`,
    company,
    email: email.toUpperCase(),
    sequence_id: seq.email,
    account_id: emailAccount,
    stage: 'queued',
    next_action_at: later,
  });
  const byLinkedin = await insertLead(t.db, ws, {
    person: `P. ${tag}`,
    company,
    email: workEmail,
    linkedin_url: linkedinUrl.toUpperCase(),
    sequence_id: seq.other,
    account_id: linkedinAccount,
    stage: 'invited',
    invited_at: new Date(clock - 2 * DAY),
    next_action_at: later,
  });
  const byX = await insertLead(t.db, ws, {
    person: `@${tag}`,
    company,
    x_user_id: xUserId,
    username: `${tag}_x`,
    sequence_id: seq.x,
    stage: 'queued',
    next_action_at: later,
  });
  // Same name and company, a different person: identity is the e-mail, the LinkedIn URL or the X user id, never a name.
  const strangerEmail = `${tag}-namesake@person.example`;
  const stranger = await insertLead(t.db, ws, {
    person: `Pat ${tag}`,
    company,
    email: strangerEmail,
    linkedin_url: `${linkedinUrl}-namesake`,
    x_user_id: nextXUserId(),
    sequence_id: seq.other,
    account_id: linkedinAccount,
    stage: 'queued',
    next_action_at: later,
  });
  return { tag, email, workEmail, linkedinUrl, xUserId, lanes: { entry: entryId, byEmail, byLinkedin, byX }, stranger, strangerEmail };
}

const leadRow = (id: string) => t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const ledger = (id: string) => t.db.selectFrom('activity').selectAll().where('lead_id', '=', id).orderBy('created_at').orderBy('id').execute();
const suppressed = (address: string) =>
  t.db.selectFrom('suppressed_addresses').select(['address', 'reason']).where('workspace_id', '=', ws).where('address', '=', address).execute();
const allIds = (p: Person) => [...LANES.map((l) => p.lanes[l]), p.stranger];

/** Everything an opt-out may write about the person and the stranger: lead rows, ledger, suppression list. */
async function snapshot(p: Person) {
  const ids = allIds(p);
  const leads = await t.db.selectFrom('leads').selectAll().where('id', 'in', ids).orderBy('id').execute();
  const activity = await t.db.selectFrom('activity').selectAll().where('lead_id', 'in', ids).orderBy('id').execute();
  const addresses = await t.db
    .selectFrom('suppressed_addresses')
    .selectAll()
    .where('workspace_id', '=', ws)
    .where('address', 'in', [p.email, p.workEmail, p.strangerEmail])
    .orderBy('address')
    .execute();
  return { leads, activity, addresses };
}

/** The rule, for one entry point: every lane of the person, nothing of the stranger. */
async function expectPersonOptedOut(p: Person, via: string, channel: string) {
  const optedOutAt = (await leadRow(p.lanes.entry)).opted_out_at;
  expect(optedOutAt, `${via}: entry`).not.toBeNull();
  for (const lane of LANES) {
    const row = await leadRow(p.lanes[lane]);
    expect(row.opted_out_at, `${via}: ${lane} optedOutAt`).toEqual(optedOutAt);
    expect(row, `${via}: ${lane} automation`).toMatchObject({ automation_stopped: true, next_action_at: null, observe_next_at: null });
    const entries = (await ledger(p.lanes[lane])).filter((a) => a.action === 'manual_override');
    expect(entries, `${via}: ${lane} ledger`).toHaveLength(1);
    expect(entries[0]).toMatchObject({ outcome: 'ok', units: 0, workspace_id: ws });
    expect(JSON.parse(entries[0].detail), `${via}: ${lane} detail`).toMatchObject({ op: 'opt_out', via, channel, permanent: true });
  }
  // Uncontacted queued lanes end skipped, as a stop leaves them; contacted ones keep their stage.
  expect((await leadRow(p.lanes.byEmail)).stage).toBe('skipped');
  expect((await leadRow(p.lanes.byLinkedin)).stage).toBe('invited');
  // Every address of the person is suppressed: the lead's own and the second one on the LinkedIn lane.
  // Why, as docs/deliverability.md names it: the person's own request is `unsubscribed`, a person of the workspace deciding is `opted_out`.
  const reason = via === 'console' || via === 'reply_decision' ? 'opted_out' : via === 'abuse_complaint' ? 'complaint' : 'unsubscribed';
  for (const address of [p.email, p.workEmail]) expect(await suppressed(address), `${via}: ${address}`).toEqual([{ address, reason }]);
  await expectStrangerUntouched(p, via);
  // The API shows the spec's optedOutAt on each lane of the person, and on no other.
  const view = await t.app.inject({ method: 'GET', url: `/api/v1/leads?q=${encodeURIComponent(p.tag)}`, headers: auth });
  expect(view.statusCode, view.body).toBe(200);
  const shown = new Map(view.json().leads.map((l: { id: string; optedOutAt: string | null }) => [l.id, l.optedOutAt]));
  for (const lane of LANES) expect(shown.get(p.lanes[lane]), `${via}: ${lane} in GET /leads`).toBe(optedOutAt!.toISOString());
  expect(shown.get(p.stranger)).toBeNull();
}

async function expectStrangerUntouched(p: Person, via: string) {
  const s = await leadRow(p.stranger);
  expect(s.opted_out_at, `${via}: stranger`).toBeNull();
  expect(s).toMatchObject({ automation_stopped: false, stage: 'queued' });
  expect(s.next_action_at).not.toBeNull();
  expect(await ledger(p.stranger)).toEqual([]);
  expect(await suppressed(p.strangerEmail)).toEqual([]);
}

async function expectNobodyOptedOut(p: Person, why: string) {
  for (const lane of LANES) {
    expect((await leadRow(p.lanes[lane])).opted_out_at, `${why}: ${lane}`).toBeNull();
    expect(
      (await ledger(p.lanes[lane])).filter((a) => a.action === 'manual_override'),
      `${why}: ${lane}`,
    ).toEqual([]);
  }
  for (const lane of ['byEmail', 'byLinkedin', 'byX'] as const) expect(await leadRow(p.lanes[lane])).toMatchObject({ automation_stopped: false });
  for (const address of [p.email, p.workEmail]) expect(await suppressed(address), why).toEqual([]);
  await expectStrangerUntouched(p, why);
}

const decide = (replyId: string, body: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: `/api/v1/replies/${replyId}/decide`,
    headers: { ...auth, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });

/** A lead the mailbox e-mailed, with the Message-ID of that e-mail on record (the inbox watcher threads by it). */
async function emailedPerson() {
  const p = await person({
    sequence_id: seq.email,
    account_id: emailAccount,
    mailbox_id: mailboxId,
    last_message_channel: 'email',
    last_activity_at: new Date(clock - DAY),
  });
  const messageId = `<step0.${p.tag}@acme.example>`;
  await t.db
    .insertInto('email_messages')
    .values({
      workspace_id: ws,
      message_id: messageId,
      lead_id: p.lanes.entry,
      mailbox_id: mailboxId,
      idempotency_key: `${p.lanes.entry}:${seq.email}:0`,
      subject: 'Quick question',
      direction: 'out',
      delivery: 'accepted',
      sent_at: new Date(clock - DAY) as never,
    })
    .execute();
  return { p, messageId };
}

const raw = (headers: Record<string, string>, body: string) =>
  Object.entries({ 'MIME-Version': '1.0', 'Content-Type': 'text/plain; charset=utf-8', Date: now().toUTCString(), ...headers })
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n') +
  '\r\n\r\n' +
  body.replace(/\n/g, '\r\n');

describe('one opt-out from every entry point: every lane of the person (e-mail, LinkedIn URL, X user id), never a stranger', () => {
  it("reply decision opt_out (via reply_decision): the reply closes, the answer lists every lead of the person; a retry and another reply's opt_out write nothing", async () => {
    const p = await person({ stage: 'replied', replied_at: new Date(clock - H), messaged_at: new Date(clock - DAY) });
    const replyId = await insertReply(t.db, t.cipher, ws, { leadId: p.lanes.entry, channel: 'linkedin', theirMessage: 'Please take me off your list' });
    t.clock.set(now());
    const key = { 'idempotency-key': `opt-out-${p.tag}` };
    const res = await decide(replyId, { decision: 'opt_out', by: 'agent-1' }, key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, replyId, leadId: p.lanes.entry, decision: 'opt_out', state: 'decided', messaged: false, by: 'agent-1' });
    expect(res.json().optedOutLeadIds).toEqual(LANES.map((l) => p.lanes[l]).sort());
    await expectPersonOptedOut(p, 'reply_decision', 'linkedin');
    const entry = (await ledger(p.lanes.entry)).find((a) => a.action === 'manual_override')!;
    expect(JSON.parse(entry.detail)).toMatchObject({ replyId, decision: 'opt_out', by: 'agent-1' });
    expect((await t.db.selectFrom('replies').selectAll().where('id', '=', replyId).executeTakeFirstOrThrow()).state).toBe('decided');

    // The same request again: the first answer, replayed; nothing written.
    const before = await snapshot(p);
    const again = await decide(replyId, { decision: 'opt_out', by: 'agent-1' }, key);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(res.json());
    expect((await decide(replyId, { decision: 'opt_out', by: 'agent-1' })).json()).toMatchObject({ ok: false, error: 'reply_already_decided' });
    // A reply on another lane of the same person, decided opt_out: nothing new written. Its answer lists the leads that
    // are that lane's person (its own keys: the LinkedIn URL it shares with the entry lead, its work address).
    const other = await insertReply(t.db, t.cipher, ws, { leadId: p.lanes.byLinkedin });
    const second = await decide(other, { decision: 'opt_out' });
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json().optedOutLeadIds).toEqual([p.lanes.entry, p.lanes.byLinkedin].sort());
    const { leads, activity, addresses } = await snapshot(p);
    expect({ leads, activity, addresses }).toEqual(before);
  });

  it('the /u link (via unsubscribe_link): GET changes nothing, POST opts the person out, a second POST writes nothing', async () => {
    const p = await person({ sequence_id: seq.email, account_id: emailAccount, last_message_channel: 'email' });
    const token = t.services.unsubscribe.tokenFor(ws, p.lanes.entry);
    t.clock.set(now());
    const page = await t.app.inject({ method: 'GET', url: `/u/${token}` });
    expect(page.statusCode).toBe(200);
    await expectNobodyOptedOut(p, 'GET /u');
    const post = await t.app.inject({
      method: 'POST',
      url: `/u/${token}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(post.statusCode).toBe(200);
    expect(post.body).toContain('You are unsubscribed');
    await expectPersonOptedOut(p, 'unsubscribe_link', 'email');

    const before = await snapshot(p);
    t.clock.advance(60_000);
    expect((await t.app.inject({ method: 'POST', url: `/u/${token}` })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: `/u/${token}` })).body).toContain('You are unsubscribed');
    expect(await snapshot(p)).toEqual(before);
  });

  it.skipIf(!withDovecot)('a mailto unsubscribe read from the inbox (via mailto_unsubscribe); a second one writes nothing', async () => {
    const { p } = await emailedPerson();
    // The List-Unsubscribe mailto carries the lead's token in its subject (issue 26: without it, a plain reply).
    const subject = `unsubscribe ${t.services.unsubscribe.tokenFor(ws, p.lanes.entry)}`;
    await dovecot!.deliver('dana', raw({ From: p.email, To: MAILBOX, Subject: subject, 'Message-ID': `<unsub-${p.tag}@person.example>` }, ''));
    const summary = await tick();
    expect(summary.mailboxes?.[mailboxId]).toMatchObject({ unsubscribes: 1, replies: 0 });
    await expectPersonOptedOut(p, 'mailto_unsubscribe', 'email');

    const before = await snapshot(p);
    await dovecot!.deliver('dana', raw({ From: p.email, To: MAILBOX, Subject: subject, 'Message-ID': `<unsub-2-${p.tag}@person.example>` }, ''));
    expect((await tick()).mailboxes?.[mailboxId]).toMatchObject({ unsubscribes: 1 });
    expect(await snapshot(p)).toEqual(before);
  });

  it('a sandbox reply that says "unsubscribe" (via reply_text): the reply is recorded and queued as ever; the next passes write nothing', async () => {
    const p = await person({
      last_message_channel: 'linkedin',
      invited_at: new Date(clock - 3 * DAY),
      connected_at: new Date(clock - 2 * DAY),
      messaged_at: new Date(clock - 2 * H),
      observe_next_at: new Date(clock - 60_000),
      observe_until: new Date(clock + 10 * DAY),
      sandbox: JSON.stringify({ replyAfterHours: 1, replyText: 'Please unsubscribe me' }),
    });
    const summary = await tick();
    expect(summary.repliesDetected).toBeGreaterThanOrEqual(1);
    await expectPersonOptedOut(p, 'reply_text', 'linkedin');
    // Recorded as a reply as before: frozen as replied, reply_detected, the reply queued, reply.received.
    expect(await leadRow(p.lanes.entry)).toMatchObject({ stage: 'replied', reply_sentiment: 'negative' });
    const replies = await t.db.selectFrom('replies').selectAll().where('lead_id', '=', p.lanes.entry).execute();
    expect(replies).toMatchObject([{ classification: 'unsubscribe', state: 'pending', channel: 'linkedin' }]);
    expect((await ledger(p.lanes.entry)).map((a) => a.action).sort()).toEqual(['manual_override', 'reply_detected']);
    const opt = (await ledger(p.lanes.entry)).find((a) => a.action === 'manual_override')!;
    expect(JSON.parse(opt.detail)).toMatchObject({ replyId: replies[0].id });
    const events = await t.db
      .selectFrom('outbox_events')
      .select(['event', 'data'])
      .where('workspace_id', '=', ws)
      .where('event', '=', 'reply.received')
      .execute();
    expect(events.filter((e) => JSON.stringify(e.data).includes(p.lanes.entry))).toHaveLength(1);
    // Its pending reply can no longer contact the person.
    const queued = (await t.app.inject({ method: 'GET', url: '/api/v1/replies?limit=200', headers: auth })).json().replies;
    expect(queued.find((r: { id: string }) => r.id === replies[0].id).allowedDecisions).toEqual(['snooze', 'meeting_booked', 'dismiss', 'opt_out']);

    const before = await snapshot(p);
    await tick();
    clock += 2 * H;
    await tick();
    expect(await snapshot(p)).toEqual(before);
  });

  it('an X DM that says "STOP" (via reply_text, channel x): honoured at once; a second "stop" writes nothing', async () => {
    const p = await person({ account_user_id: ME, followed_at: new Date(clock - 2 * DAY), last_message_channel: 'x' });
    x.addUser({ id: p.xUserId, username: `${p.tag}_x`, name: `Pat ${p.tag}` });
    x.receiveDm(p.xUserId, ME, 'STOP');
    const summary = await tick();
    expect(summary.xAccounts?.[ME]).toMatchObject({ replies: 1 });
    await expectPersonOptedOut(p, 'reply_text', 'x');
    const replies = await t.db.selectFrom('replies').selectAll().where('lead_id', '=', p.lanes.entry).execute();
    expect(replies).toMatchObject([{ classification: 'unsubscribe', channel: 'x', state: 'pending' }]);
    expect(await leadRow(p.lanes.entry)).toMatchObject({ stage: 'replied' });

    const before = await snapshot(p);
    x.receiveDm(p.xUserId, ME, 'stop.');
    await tick();
    expect(await snapshot(p)).toEqual(before);
  });

  it('an X DM "stop" after an earlier answer froze the lead is still honoured at once', async () => {
    const p = await person({ account_user_id: ME, followed_at: new Date(clock - 2 * DAY), last_message_channel: 'x' });
    x.addUser({ id: p.xUserId, username: `${p.tag}_x` });
    x.receiveDm(p.xUserId, ME, 'Who is this?');
    await tick();
    expect(await leadRow(p.lanes.entry)).toMatchObject({ stage: 'replied', opted_out_at: null });
    x.receiveDm(p.xUserId, ME, 'Stop messaging me!');
    await tick();
    await expectPersonOptedOut(p, 'reply_text', 'x');
  });

  it('an X person with no e-mail address: every lane by X user id stops, no address is suppressed', async () => {
    const xUserId = nextXUserId();
    const dmLane = await insertLead(t.db, ws, {
      person: 'Xavier',
      x_user_id: xUserId,
      account_user_id: ME,
      sequence_id: seq.x,
      stage: 'messaged',
      messaged_at: now(),
    });
    const otherLane = await insertLead(t.db, ws, {
      person: 'Xavier',
      x_user_id: xUserId,
      sequence_id: seq.other,
      stage: 'queued',
      next_action_at: new Date(clock + DAY),
    });
    x.addUser({ id: xUserId, username: `xavier_${xUserId}` });
    const addressesBefore = await t.db.selectFrom('suppressed_addresses').select('address').where('workspace_id', '=', ws).execute();
    x.receiveDm(xUserId, ME, 'unsubscribe');
    await tick();
    for (const id of [dmLane, otherLane]) {
      expect((await leadRow(id)).opted_out_at).not.toBeNull();
      expect((await ledger(id)).filter((a) => a.action === 'manual_override')).toHaveLength(1);
    }
    expect(await t.db.selectFrom('suppressed_addresses').select('address').where('workspace_id', '=', ws).execute()).toEqual(addressesBefore);
  });
});

describe.skipIf(!withDovecot)('e-mail replies that ask to stop: only one threaded to our message to that very address opts out (issue 26)', () => {
  it('threaded (In-Reply-To our Message-ID) and from the address we wrote to (via reply_text, channel email); a second one writes nothing', async () => {
    const { p, messageId } = await emailedPerson();
    await dovecot!.deliver(
      'dana',
      raw(
        {
          From: `Pat <${p.email.toUpperCase()}>`,
          To: MAILBOX,
          Subject: 'Re: Quick question',
          'Message-ID': `<re-${p.tag}@person.example>`,
          'In-Reply-To': messageId,
        },
        'Unsubscribe.\n\nOn Mon, Dana <dana@acme.example> wrote:\n> Hi\n',
      ),
    );
    expect((await tick()).mailboxes?.[mailboxId]).toMatchObject({ replies: 1, unsubscribes: 0 });
    await expectPersonOptedOut(p, 'reply_text', 'email');
    expect(await t.db.selectFrom('replies').selectAll().where('lead_id', '=', p.lanes.entry).execute()).toMatchObject([
      { classification: 'unsubscribe', channel: 'email', state: 'pending' },
    ]);

    const before = await snapshot(p);
    await dovecot!.deliver(
      'dana',
      raw(
        { From: p.email, To: MAILBOX, Subject: 'Re: Quick question', 'Message-ID': `<re2-${p.tag}@person.example>`, References: messageId },
        'Please unsubscribe me',
      ),
    );
    await tick();
    expect(await snapshot(p)).toEqual(before);
  });

  it('without threading headers, from the lead’s address: a plain reply (the lead replied, a person decides), no opt-out', async () => {
    const { p } = await emailedPerson();
    await dovecot!.deliver(
      'dana',
      raw({ From: p.email, To: MAILBOX, Subject: 'hello', 'Message-ID': `<phone-${p.tag}@person.example>` }, 'Please unsubscribe me'),
    );
    expect((await tick()).mailboxes?.[mailboxId]).toMatchObject({ replies: 1, unsubscribes: 0, unmatched: 0 });
    expect(await leadRow(p.lanes.entry)).toMatchObject({ stage: 'replied', automation_stopped: true, opted_out_at: null });
    await expectNobodyOptedOut(p, 'unthreaded');
    const replies = await t.db.selectFrom('replies').selectAll().where('lead_id', '=', p.lanes.entry).execute();
    expect(replies).toMatchObject([{ classification: 'unsubscribe', state: 'pending' }]);
    // The person deciding opt_out on it is the reply-decision entry point.
    t.clock.set(now());
    const res = await decide(replies[0].id, { decision: 'opt_out' });
    expect(res.statusCode, res.body).toBe(200);
    await expectPersonOptedOut(p, 'reply_decision', 'email');
  });

  it('threaded to our message but sent from another address: a plain reply, no opt-out', async () => {
    const { p, messageId } = await emailedPerson();
    await dovecot!.deliver(
      'dana',
      raw(
        {
          From: `colleague-${p.tag}@person.example`,
          To: MAILBOX,
          Subject: 'Re: Quick question',
          'Message-ID': `<fwd-${p.tag}@person.example>`,
          'In-Reply-To': messageId,
        },
        'unsubscribe',
      ),
    );
    expect((await tick()).mailboxes?.[mailboxId]).toMatchObject({ replies: 1 });
    expect(await leadRow(p.lanes.entry)).toMatchObject({ stage: 'replied', opted_out_at: null });
    await expectNobodyOptedOut(p, 'other sender');
  });
});

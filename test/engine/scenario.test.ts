import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rampOf } from '../../src/domain/budgets.js';
import { isWithinWindow, localDay } from '../../src/domain/time.js';
import { verifyWebhook } from '../../src/index.js';
import { createTextCipher } from '../../src/lib/crypto.js';
import { newMessagingAccountId } from '../../src/lib/ids.js';
import { startWorker } from '../../src/worker.js';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { startReceiver, tableResolver, type Receiver } from '../webhooks/receiver.js';
import { countBy, ENGINE_ENV } from './helpers.js';

// The "done when": 30 simulated days from a world file, one pass per simulated hour, then every event
// delivered by the real delivery worker to a local receiver. Los Angeles sends across UTC midnight and warms
// up from day one, Paris leaves summer time on 25 October inside the window, Tokyo does neither; all three
// send on local weekdays only.
const T0 = new Date('2026-10-20T00:00:00.000Z'); // Tuesday in UTC, still Monday 17:00 in Los Angeles
const DAYS = 30;
const H = 3_600_000;
const ENV = {
  ...ENGINE_ENV,
  OUTREACH_PACING_HOURS: '08:00-18:00',
  OUTREACH_PACING_DAYS: 'mon-fri',
  OUTREACH_PACING_RAMP: '10,20,30',
  OUTREACH_PACING_INVITE_CAP: 40,
  OUTREACH_ENGINE_OOO_RESUME_DAYS: 7,
  OUTREACH_WEBHOOKS_ALLOW_INSECURE: '1' as const,
};
const EVENTS = ['lead.invited', 'lead.accepted', 'lead.messaged', 'lead.emailed', 'reply.received', 'x.followed'];
const resolver = tableResolver({ 'receiver.test': ['127.0.0.1'] });
const cipher = createTextCipher(randomBytes(32));

let t: TestApp;
let rx: Receiver;
beforeAll(async () => {
  t = await buildTestApp({ env: ENV, now: T0.toISOString(), resolver, cipher });
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

const iso = (d: Date) => d.toISOString();
type Script = Record<string, unknown>;

/** The world: three accounts, two A/B sequences, 141 scripted people and one identity that opted out before. */
function scenarioWorld() {
  const key = `ows_${randomBytes(32).toString('base64url')}`;
  const la = newMessagingAccountId();
  const paris = newMessagingAccountId();
  const tokyo = newMessagingAccountId();
  const linkedin = randomUUID();
  const email = randomUUID();
  const ids: Record<string, string> = {};
  const leads: Record<string, unknown>[] = [];
  const lead = (name: string, fields: Record<string, unknown>, sandbox: Script = {}) => {
    ids[name] = randomUUID();
    leads.push({ id: ids[name], stage: 'queued', currentStep: 0, nextActionAt: iso(T0), createdAt: iso(T0), sandbox, ...fields });
  };
  for (let i = 0; i < 60; i++) {
    const script: Script = {};
    if (i % 3 === 0) script.acceptsInviteAfterHours = 10;
    if (i % 6 === 0) Object.assign(script, { replyAfterHours: 6, replyText: i === 0 ? 'Please unsubscribe me' : 'Sounds good, can we talk next week?' });
    lead(
      `la${i}`,
      {
        person: `Ann${i} Smith`,
        company: `Co${i}`,
        email: i === 59 ? 'gone@optout.example' : `la${i}@x.example`,
        linkedinUrl: `https://li.example/la${i}`,
        account: la,
        sequenceId: linkedin,
      },
      script,
    );
  }
  for (let j = 0; j < 50; j++) {
    const script: Script = {};
    if (j % 2 === 0) script.acceptsInviteAfterHours = 20;
    if (j % 10 === 0) Object.assign(script, { replyAfterHours: 30, replyText: 'Not interested, thanks.' });
    lead(`pa${j}`, { person: `Paul${j} Martin`, company: `Soc${j}`, linkedinUrl: `https://li.example/pa${j}`, account: paris, sequenceId: linkedin }, script);
  }
  for (let k = 0; k < 30; k++) {
    const script: Script =
      k === 25
        ? { replyAfterHours: 12, replyText: 'I am out of office until next week with limited access to email.' }
        : k % 5 === 0
          ? { replyAfterHours: 12, replyText: 'Interesting. What does it cost?' }
          : {};
    lead(`tk${k}`, { person: `Kei${k} Sato`, company: `KK${k}`, email: `tk${k}@x.example`, account: tokyo, sequenceId: email }, script);
  }
  // Due on day 10, long after la0 (same address, other sequence and account) asked to be removed on day 3.
  lead('late', {
    person: 'Ann0 Smith',
    company: 'Co0',
    email: 'LA0@x.example',
    account: tokyo,
    sequenceId: email,
    nextActionAt: iso(new Date(T0.getTime() + 10 * 24 * H)),
  });
  // An identity that opted out before the scenario, on a lead of no sequence: la59 shares its address.
  lead('gone', {
    person: 'Gone',
    email: 'GONE@optout.example',
    stage: 'replied',
    optedOutAt: '2026-09-01T00:00:00.000Z',
    sequenceId: null,
    nextActionAt: null,
    repliedAt: '2026-09-01T00:00:00.000Z',
  });

  const doc = {
    workspaces: [
      {
        name: 'Scenario',
        apiKeys: [{ key }],
        settings: { bookingLink: 'https://cal.example/acme' },
        billing: { plan: 'growth', status: 'active' },
        energy: { balance: 100_000, dailyRefill: 1000 },
        messagingAccounts: [
          { id: la, name: 'Ann (LA)', mode: 'linkedin', timeZone: 'America/Los_Angeles', connectedAt: '2026-10-01T00:00:00.000Z', warmupStartedAt: iso(T0) },
          { id: paris, name: 'Paul (Paris)', mode: 'linkedin', timeZone: 'Europe/Paris', connectedAt: '2026-10-01T00:00:00.000Z' },
          { id: tokyo, name: 'Kei (Tokyo)', mode: 'linkedin', timeZone: 'Asia/Tokyo', connectedAt: '2026-10-01T00:00:00.000Z' },
        ],
        sequences: [
          {
            id: linkedin,
            name: 'Founders',
            status: 'active',
            revision: 1,
            approvedRevision: 1,
            channels: ['linkedin'],
            steps: [
              { kind: 'connect', message: 'Hi {{firstName}}' },
              {
                kind: 'message',
                delayDays: 2,
                variants: [
                  { key: 'A', weight: 50, messageTmpl: 'A note for {{company}}' },
                  { key: 'B', weight: 50, messageTmpl: 'B note for {{company}}' },
                ],
              },
              { kind: 'message', delayDays: 4, message: 'Following up, {{firstName}}' },
            ],
          },
          {
            id: email,
            name: 'Email',
            status: 'active',
            revision: 1,
            approvedRevision: 1,
            channels: ['email'],
            steps: [
              {
                kind: 'email',
                subject: 'Hello {{company}}',
                variants: [
                  { key: 'short', weight: 1, messageTmpl: 'Short {{firstName}}' },
                  { key: 'long', weight: 1, messageTmpl: 'Long {{firstName}}' },
                ],
              },
              { kind: 'email', delayDays: 3, subject: 'Re: {{company}}', message: 'Bumping this, {{firstName}}' },
            ],
          },
        ],
        leads,
      },
    ],
  };
  return { doc, key, accounts: { la, paris, tokyo }, sequences: { linkedin, email }, ids };
}

it('runs 30 days from a world file: exact ledger, stages, caps and webhook deliveries received by a local receiver', { timeout: 600_000 }, async () => {
  const w = scenarioWorld();
  const seeded = (await t.services.world.seed(w.doc)) as { workspaces: { id: string; status: string }[]; counts: { leads: number } };
  expect(seeded.workspaces[0].status).toBe('created');
  expect(seeded.counts.leads).toBe(142);
  const ws = seeded.workspaces[0].id;
  const auth = { authorization: `Bearer ${w.key}` };
  const { la, paris, tokyo } = w.accounts;
  const zoneOf: Record<string, string> = { [la]: 'America/Los_Angeles', [paris]: 'Europe/Paris', [tokyo]: 'Asia/Tokyo' };

  // Through the public API: a signed subscription to every engine event, and one stop before anything ran.
  const hook = await t.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: auth,
    payload: { url: `http://receiver.test:${rx.port}/ok/scenario`, events: EVENTS },
  });
  expect(hook.statusCode).toBe(201);
  const secret = hook.json().secret as string;
  const stop = await t.app.inject({ method: 'POST', url: `/api/v1/x/leads/${w.ids.pa49}/stop`, headers: auth });
  expect(stop.statusCode).toBe(200);

  for (let h = 0; h < DAYS * 24; h++) await t.services.engine.runPass({ now: new Date(T0.getTime() + h * H) });

  expect(await countBy(t.db, ws)).toEqual({
    'accepted:ok': 20 + 25,
    'email_sent:ok': 30 + 25,
    'followup:ok': 10 + 20,
    'invite:ok': 59 + 49,
    'invite:skipped': 1,
    // pa49's stop, and la0's "Please unsubscribe me" (docs/opt-out.md): one opt-out entry for each lane of the person,
    // la0 and `late` (same address, other sequence), so `late` is never due and never reaches the send's skip.
    'manual_override:ok': 1 + 2,
    'message:ok': 20 + 25,
    'reply_detected:ok': 10 + 5 + 6,
  });

  // Every send inside its account's local sending hours on a local weekday; invite caps never exceeded.
  const sends = await t.db
    .selectFrom('activity')
    .select(['account_id', 'action', 'created_at', 'lead_id'])
    .where('workspace_id', '=', ws)
    .where('outcome', '=', 'ok')
    .where('action', 'in', ['invite', 'message', 'followup', 'email_sent'])
    .orderBy('created_at')
    .execute();
  const perDay = new Map<string, number>();
  for (const s of sends) {
    const tz = zoneOf[s.account_id!];
    expect(isWithinWindow(s.created_at, tz, t.config.engine.pacing), `${s.action} at ${iso(s.created_at)} in ${tz}`).toBe(true);
    if (s.action !== 'invite') continue;
    const k = `${s.account_id}|${localDay(s.created_at, tz)}`;
    perDay.set(k, (perDay.get(k) ?? 0) + 1);
  }
  const rules = t.config.engine.pacing;
  for (const [k, n] of perDay) {
    const [account, day] = k.split('|');
    const cap = rampOf(rules, account === la ? T0 : null, new Date(`${day}T12:00:00Z`), zoneOf[account]).inviteCapToday;
    expect(n, k).toBeLessThanOrEqual(cap);
  }
  // LA's warm-up week caps it at 10 a day: Monday 19th (already the 20th in UTC) to Friday, then the weekend
  // waits, and the last 9 go on Monday 26th. Paris sends its cap of 40, then 9.
  const daysOf = (account: string) => [...perDay].filter(([k]) => k.startsWith(account)).map(([k, n]) => `${k.split('|')[1]}:${n}`);
  expect(daysOf(la)).toEqual(['2026-10-19:10', '2026-10-20:10', '2026-10-21:10', '2026-10-22:10', '2026-10-23:10', '2026-10-26:9']);
  expect(daysOf(paris)).toEqual(['2026-10-20:40', '2026-10-21:9']);

  const lead = (k: string) => t.db.selectFrom('leads').selectAll().where('id', '=', w.ids[k]).executeTakeFirstOrThrow();
  expect(await lead('la0')).toMatchObject({ stage: 'replied', reply_sentiment: 'negative' });
  expect((await lead('la0')).opted_out_at).not.toBeNull();
  expect(await lead('la6')).toMatchObject({ stage: 'replied', automation_stopped: true });
  expect(await lead('la3')).toMatchObject({ stage: 'followed_up', automation_stopped: true, current_step: 3 });
  expect(await lead('la1')).toMatchObject({ stage: 'invited', next_action_at: null, current_step: 1 });
  expect(await lead('la59')).toMatchObject({ stage: 'skipped', automation_stopped: true, invited_at: null });
  expect(await lead('pa49')).toMatchObject({ stage: 'skipped', automation_stopped: true, invited_at: null });
  expect(await lead('late')).toMatchObject({ stage: 'skipped', automation_stopped: true, messaged_at: null });
  expect((await lead('late')).opted_out_at).toEqual((await lead('la0')).opted_out_at);
  expect(await lead('tk0')).toMatchObject({ stage: 'replied' });
  expect(await lead('tk1')).toMatchObject({ stage: 'followed_up', automation_stopped: true });
  // The out-of-office reply paused tk25 for a week; its follow-up went out after that, not three days after.
  const tk25 = await lead('tk25');
  expect(tk25).toMatchObject({ stage: 'followed_up', replied_at: null, automation_stopped: true });
  const tk25Sends = sends.filter((s) => s.lead_id === w.ids.tk25).map((s) => s.created_at.getTime());
  expect(tk25Sends).toHaveLength(2);
  expect(tk25Sends[1] - tk25Sends[0]).toBeGreaterThanOrEqual(7 * 24 * H);

  const replies = await t.db.selectFrom('replies').select(['classification', 'channel', 'state']).where('workspace_id', '=', ws).execute();
  const byClass = replies.reduce<Record<string, number>>(
    (m, r) => ({ ...m, [`${r.classification}:${r.state}`]: (m[`${r.classification}:${r.state}`] ?? 0) + 1 }),
    {},
  );
  expect(byClass).toEqual({ 'unsubscribe:pending': 1, 'meeting_intent:pending': 9, 'negative:pending': 5, 'question:pending': 5, 'out_of_office:decided': 1 });
  const queue = await t.app.inject({ method: 'GET', url: '/api/v1/replies?limit=200', headers: auth });
  expect(queue.json().replies).toHaveLength(20);

  // Both arms of both experiments were used, and every messaged lead remembers its arm.
  const { rows: arms } = await sql<{ sequence_id: string; variant_key: string | null }>`
    SELECT DISTINCT sequence_id, variant_key FROM leads WHERE workspace_id = ${ws}::uuid AND messaged_at IS NOT NULL`.execute(t.db);
  expect(arms.every((a) => a.variant_key !== null)).toBe(true);
  expect(
    arms
      .filter((a) => a.sequence_id === w.sequences.linkedin)
      .map((a) => a.variant_key)
      .sort(),
  ).toEqual(['A', 'B']);
  expect(
    arms
      .filter((a) => a.sequence_id === w.sequences.email)
      .map((a) => a.variant_key)
      .sort(),
  ).toEqual(['long', 'short']);

  // What GET /progress reports reads the same counters the engine enforced.
  const pacing = await t.services.engine.accountPacing(la, new Date('2026-10-21T20:00:00Z'));
  expect(pacing).toMatchObject({ invitesSentToday: 10, inviteCapToday: 10, rampPhase: 1, pacingTimeZone: 'America/Los_Angeles', localDay: '2026-10-21' });
  expect(await t.services.engine.accountPacing(la, new Date('2026-11-05T20:00:00Z'))).toMatchObject({ rampPhase: 3, inviteCapToday: 30 });

  // The real delivery worker sends every event to the receiver, signed, once each.
  const expected = { 'lead.invited': 108, 'lead.accepted': 45, 'lead.messaged': 75, 'lead.emailed': 55, 'reply.received': 20 };
  const total = Object.values(expected).reduce((a, b) => a + b, 0);
  const worker = startWorker({ db: t.db, config: t.config, cipher, resolver, idlePollMs: 50, retentionMs: 0, leaseMs: 60_000 });
  try {
    await rx.waitFor(() => rx.on('/ok/scenario').length >= total, 120_000);
  } finally {
    await worker.stop();
  }
  const received = rx.on('/ok/scenario');
  expect(received).toHaveLength(total);
  const bodies = received.map((r) => {
    expect(verifyWebhook(r.raw, String(r.headers['x-service-signature']), secret)).toMatchObject({ ok: true });
    return JSON.parse(r.body) as { id: string; event: string; createdAt: string; data: Record<string, any> };
  });
  expect(new Set(bodies.map((b) => b.id)).size).toBe(total);
  const byEvent = bodies.reduce<Record<string, number>>((m, b) => ({ ...m, [b.event]: (m[b.event] ?? 0) + 1 }), {});
  expect(byEvent).toEqual(expected);

  // Each delivery matches the ledger entry it reports: same lead, same instant.
  const ledger = await t.db
    .selectFrom('activity')
    .select(['action', 'lead_id', 'created_at'])
    .where('workspace_id', '=', ws)
    .where('outcome', '=', 'ok')
    .execute();
  const entries = (action: string | string[]) =>
    ledger
      .filter((a) => (Array.isArray(action) ? action.includes(a.action) : a.action === action))
      .map((a) => `${a.lead_id}@${iso(a.created_at)}`)
      .sort();
  const delivered = (event: string) =>
    bodies
      .filter((b) => b.event === event)
      .map((b) => `${b.data.lead.id}@${b.createdAt}`)
      .sort();
  expect(delivered('lead.invited')).toEqual(entries('invite'));
  expect(delivered('lead.accepted')).toEqual(entries('accepted'));
  expect(delivered('lead.messaged')).toEqual(entries(['message', 'followup']));
  expect(delivered('lead.emailed')).toEqual(entries('email_sent'));
  const replyDeliveries = bodies.filter((b) => b.event === 'reply.received');
  expect(replyDeliveries.some((b) => b.data.lead.id === w.ids.tk25)).toBe(false);
  const meeting = replyDeliveries.find((b) => b.data.lead.id === w.ids.la6)!;
  expect(meeting.data).toMatchObject({
    classification: 'meeting_intent',
    theirMessage: 'Sounds good, can we talk next week?',
    lead: { id: w.ids.la6, account: la, stage: 'replied' },
  });
  expect(meeting.data.draft).toContain('https://cal.example/acme');
});

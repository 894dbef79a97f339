import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rampOf } from '../../src/engine/pacing.js';
import { localDay, localMinuteOfDay } from '../../src/engine/time.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/seq-fixtures.js';
import { countBy, ENGINE_ENV, eventsOf, insertAccount, step, steps } from './helpers.js';

// 30 simulated days, one pass per hour. Los Angeles sends across UTC midnight, Paris leaves summer time on
// 25 October inside the window, Tokyo does neither; LA warms up from day one.
const T0 = new Date('2026-10-20T00:00:00.000Z');
const DAYS = 30;
const H = 3_600_000;
const ENV = { ...ENGINE_ENV, OUTREACH_PACING_HOURS: '08:00-18:00', OUTREACH_PACING_RAMP: '10,20,30', OUTREACH_PACING_INVITE_CAP: 40 };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: ENV, now: T0.toISOString() });
});
afterAll(async () => t?.close());

it('runs 30 days of two A/B sequences over three time zones with exact ledger, caps and events', { timeout: 600_000 }, async () => {
  const { workspaceId: ws } = await createWorkspaceWithKey(t, 'Scenario');
  await t.db.updateTable('workspaces').set({ booking_link: 'https://cal.example/acme', energy_balance: 100_000, energy_daily_refill: 1000 }).where('id', '=', ws).execute();
  const la = await insertAccount(t.db, ws, { timeZone: 'America/Los_Angeles', warmupStartedAt: T0 });
  const paris = await insertAccount(t.db, ws, { timeZone: 'Europe/Paris' });
  const tokyo = await insertAccount(t.db, ws, { timeZone: 'Asia/Tokyo' });
  const zoneOf: Record<string, string> = { [la]: 'America/Los_Angeles', [paris]: 'Europe/Paris', [tokyo]: 'Asia/Tokyo' };

  const linkedin = await insertSequence(t.db, ws, {
    name: 'Founders',
    steps: steps(
      step('connect', { message: 'Hi {{firstName}}' }),
      step('message', { delayDays: 2, variants: [{ key: 'A', weight: 50, messageTmpl: 'A note for {{company}}' }, { key: 'B', weight: 50, messageTmpl: 'B note for {{company}}' }] }),
      step('message', { delayDays: 4, message: 'Following up, {{firstName}}' }),
    ),
  });
  const email = await insertSequence(t.db, ws, {
    name: 'Email',
    channels: ['email'],
    steps: steps(
      step('email', { subject: 'Hello {{company}}', variants: [{ key: 'short', weight: 1, messageTmpl: 'Short {{firstName}}' }, { key: 'long', weight: 1, messageTmpl: 'Long {{firstName}}' }] }),
      step('email', { delayDays: 3, subject: 'Re: {{company}}', message: 'Bumping this, {{firstName}}' }),
    ),
  });

  const ids: Record<string, string> = {};
  for (let i = 0; i < 60; i++) {
    const script: Record<string, unknown> = {};
    if (i % 3 === 0) script.acceptsInviteAfterHours = 10;
    if (i % 6 === 0) Object.assign(script, { replyAfterHours: 6, replyText: i === 0 ? 'Please unsubscribe me' : 'Sounds good, can we talk next week?' });
    ids[`la${i}`] = await insertLead(t.db, ws, {
      person: `Ann${i} Smith`, company: `Co${i}`, email: i === 59 ? 'gone@optout.example' : `la${i}@x.example`, linkedin_url: `https://li.example/la${i}`,
      account_id: la, sequence_id: linkedin, next_action_at: T0, sandbox: JSON.stringify(script),
    });
  }
  for (let j = 0; j < 50; j++) {
    const script: Record<string, unknown> = {};
    if (j % 2 === 0) script.acceptsInviteAfterHours = 20;
    if (j % 10 === 0) Object.assign(script, { replyAfterHours: 30, replyText: 'Not interested, thanks.' });
    ids[`pa${j}`] = await insertLead(t.db, ws, {
      person: `Paul${j} Martin`, company: `Soc${j}`, linkedin_url: `https://li.example/pa${j}`, account_id: paris, sequence_id: linkedin, next_action_at: T0, sandbox: JSON.stringify(script),
    });
  }
  for (let k = 0; k < 30; k++) {
    const script = k % 5 === 0 ? { replyAfterHours: 12, replyText: 'Interesting. What does it cost?' } : {};
    ids[`tk${k}`] = await insertLead(t.db, ws, {
      person: `Kei${k} Sato`, company: `KK${k}`, email: `tk${k}@x.example`, account_id: tokyo, sequence_id: email, next_action_at: T0, sandbox: JSON.stringify(script),
    });
  }
  // An identity that opted out earlier, on a lead of no sequence: la59 shares its e-mail.
  await insertLead(t.db, ws, { person: 'Gone', email: 'GONE@optout.example', opted_out_at: new Date('2026-09-01T00:00:00Z'), stage: 'replied' });
  // One stop before anything ran (POST /x/leads/{id}/stop goes through the same service).
  t.clock.set(T0);
  await t.services.xLeads.stopLead(ws, ids.pa49);

  for (let h = 0; h < DAYS * 24; h++) await t.services.engine.runPass({ now: new Date(T0.getTime() + h * H) });

  expect(await countBy(t.db, ws)).toEqual({
    'accepted:ok': 20 + 25,
    'email_sent:ok': 30 + 24,
    'followup:ok': 10 + 20,
    'invite:ok': 59 + 49,
    'invite:skipped': 1,
    'manual_override:ok': 1,
    'message:ok': 20 + 25,
    'reply_detected:ok': 10 + 5 + 6,
  });

  // Caps never exceeded per local day, and every send inside the account's local sending hours.
  const sends = await t.db.selectFrom('activity').select(['account_id', 'action', 'created_at']).where('workspace_id', '=', ws).where('outcome', '=', 'ok')
    .where('action', 'in', ['invite', 'message', 'followup', 'email_sent']).orderBy('created_at').execute();
  const perDay = new Map<string, number>();
  for (const s of sends) {
    const tz = zoneOf[s.account_id!];
    const minute = localMinuteOfDay(s.created_at, tz);
    expect(minute >= 8 * 60 && minute < 18 * 60, `${s.action} at ${s.created_at.toISOString()} in ${tz}`).toBe(true);
    if (s.action !== 'invite') continue;
    const k = `${s.account_id}|${localDay(s.created_at, tz)}`;
    perDay.set(k, (perDay.get(k) ?? 0) + 1);
  }
  const rules = t.config.engine.pacing;
  for (const [k, n] of perDay) {
    const [account, day] = k.split('|');
    const warm = account === la ? T0 : null;
    const cap = rampOf(rules, warm, new Date(`${day}T12:00:00Z`), zoneOf[account]).inviteCapToday;
    expect(n, k).toBeLessThanOrEqual(cap);
  }
  // LA's warm-up week caps it at 10 a day, so its 59 invites take six local days; Paris sends 40 then 9.
  const laDays = [...perDay].filter(([k]) => k.startsWith(la)).map(([, n]) => n);
  expect(laDays).toEqual([10, 10, 10, 10, 10, 9]);
  expect([...perDay].filter(([k]) => k.startsWith(paris)).map(([, n]) => n)).toEqual([40, 9]);
  // The first LA batch went out at 17:00 local on 19 October, which is already 20 October in UTC.
  const firstLa = sends.filter((s) => s.account_id === la).map((s) => s.created_at.getTime()).sort()[0];
  expect(localDay(new Date(firstLa), 'America/Los_Angeles')).toBe('2026-10-19');

  const lead = (k: string) => t.db.selectFrom('leads').selectAll().where('id', '=', ids[k]).executeTakeFirstOrThrow();
  expect(await lead('la0')).toMatchObject({ stage: 'replied', reply_sentiment: 'negative' });
  expect((await lead('la0')).opted_out_at).not.toBeNull();
  expect(await lead('la6')).toMatchObject({ stage: 'replied', automation_stopped: true });
  expect(await lead('la3')).toMatchObject({ stage: 'followed_up', automation_stopped: true, current_step: 3 });
  expect(await lead('la1')).toMatchObject({ stage: 'invited', next_action_at: null, current_step: 1 });
  expect(await lead('la59')).toMatchObject({ stage: 'skipped', automation_stopped: true });
  expect(await lead('pa49')).toMatchObject({ stage: 'skipped', automation_stopped: true, invited_at: null });
  expect(await lead('tk0')).toMatchObject({ stage: 'replied' });
  expect(await lead('tk1')).toMatchObject({ stage: 'followed_up', automation_stopped: true });

  const replies = await t.db.selectFrom('replies').select(['classification', 'channel']).where('workspace_id', '=', ws).execute();
  const byClass = replies.reduce<Record<string, number>>((m, r) => ({ ...m, [r.classification]: (m[r.classification] ?? 0) + 1 }), {});
  expect(byClass).toEqual({ unsubscribe: 1, meeting_intent: 9, negative: 5, question: 6 });
  expect(replies.filter((r) => r.channel === 'email')).toHaveLength(6);

  // Both arms of both experiments were used, and every messaged lead remembers its arm.
  const { rows: arms } = await sql<{ sequence_id: string; variant_key: string | null; n: number }>`
    SELECT sequence_id, variant_key, count(*)::int AS n FROM leads WHERE workspace_id = ${ws}::uuid AND messaged_at IS NOT NULL GROUP BY 1, 2`.execute(t.db);
  expect(arms.every((a) => a.variant_key !== null)).toBe(true);
  expect(arms.filter((a) => a.sequence_id === linkedin).map((a) => a.variant_key).sort()).toEqual(['A', 'B']);
  expect(arms.filter((a) => a.sequence_id === email).map((a) => a.variant_key).sort()).toEqual(['long', 'short']);

  // One event per ledger entry that reports a state change.
  const events = await eventsOf(t.db, ws);
  const count = (e: string) => events.filter((x) => x.event === e).length;
  expect({ invited: count('lead.invited'), accepted: count('lead.accepted'), messaged: count('lead.messaged'), emailed: count('lead.emailed'), replies: count('reply.received') })
    .toEqual({ invited: 108, accepted: 45, messaged: 75, emailed: 54, replies: 21 });

  // What GET /progress reports reads the same counters the engine enforced.
  const pacing = await t.services.engine.accountPacing(la, new Date('2026-10-21T20:00:00Z'));
  expect(pacing).toMatchObject({ invitesSentToday: 10, inviteCapToday: 10, rampPhase: 1, pacingTimeZone: 'America/Los_Angeles', localDay: '2026-10-21' });
  const later = await t.services.engine.accountPacing(la, new Date('2026-11-05T20:00:00Z'));
  expect(later).toMatchObject({ rampPhase: 3, inviteCapToday: 30 });
});

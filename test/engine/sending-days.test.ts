import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, parseSendingDays, sendingDaysLabel } from '../../src/config/config.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { zonedTime } from '../../src/domain/time.js';
import { activityOf, ENGINE_ENV, insertAccount, step, steps } from './helpers.js';

// Weekday-only sending: the weekday is the account's local one, so Friday afternoon in Los Angeles (already
// Saturday in UTC) still sends and Saturday noon in Tokyo, inside the sending hours, does not.
const ENV = { ...ENGINE_ENV, OUTREACH_PACING_DAYS: 'mon-fri', OUTREACH_PACING_HOURS: '09:00-17:00', OUTREACH_PACING_RAMP: '', OUTREACH_PACING_INVITE_CAP: 1 };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: ENV, now: '2026-11-06T00:00:00.000Z' });
});
afterAll(async () => t?.close());

describe('OUTREACH_PACING_DAYS', () => {
  it('parses day lists and ranges (ranges wrap past Saturday) and refuses unknown days naming the variable', () => {
    expect(sendingDaysLabel(parseSendingDays('mon-fri'))).toBe('mon,tue,wed,thu,fri');
    expect(sendingDaysLabel(parseSendingDays('fri-mon'))).toBe('sun,mon,fri,sat');
    expect(sendingDaysLabel(parseSendingDays('Mon,WED,fri'))).toBe('mon,wed,fri');
    expect(sendingDaysLabel(loadConfig({}).engine.pacing.days)).toBe('mon,tue,wed,thu,fri');
    expect(() => loadConfig({ OUTREACH_PACING_DAYS: 'mon-fry' })).toThrow(/OUTREACH_PACING_DAYS/);
    expect(() => loadConfig({ OUTREACH_PACING_DAYS: 'weekdays' })).toThrow(/OUTREACH_PACING_DAYS/);
  });
});

async function oneInviteLead(timeZone: string, due: Date) {
  const { workspaceId: ws } = await createWorkspaceWithKey(t, `Days ${timeZone}`);
  const account = await insertAccount(t.db, ws, { timeZone });
  const seq = await insertSequence(t.db, ws, { steps: steps(step('connect')) });
  const ids = [];
  for (const n of [1, 2]) {
    ids.push(
      await insertLead(t.db, ws, {
        person: `P${n}`,
        linkedin_url: `https://li.example/${timeZone}/${n}`,
        account_id: account,
        sequence_id: seq,
        next_action_at: due,
      }),
    );
  }
  return { account, ids };
}

const nextAt = async (id: string) =>
  (await t.db.selectFrom('leads').select('next_action_at').where('id', '=', id).executeTakeFirstOrThrow()).next_action_at?.toISOString();

describe('weekday-only sending in the account’s time zone', () => {
  it('Saturday noon in Tokyo, inside the hours but not a sending day, waits for Monday 09:00 Tokyo; the weekend passes do nothing', async () => {
    const satTokyo = new Date('2026-11-07T03:00:00.000Z'); // Saturday 12:00 in Tokyo
    const { account, ids } = await oneInviteLead('Asia/Tokyo', satTokyo);
    const monday = '2026-11-09T00:00:00.000Z'; // Monday 09:00 in Tokyo
    expect(await t.services.engine.accountPacing(account, satTokyo)).toMatchObject({
      sendingDays: 'mon,tue,wed,thu,fri',
      withinSendingHours: false,
      nextWindowAt: monday,
    });
    expect((await t.services.engine.runPass({ now: satTokyo })).deferred).toBe(2);
    expect(await nextAt(ids[0])).toBe(monday);
    for (const at of ['2026-11-07T06:00:00.000Z', '2026-11-08T04:00:00.000Z']) expect((await t.services.engine.runPass({ now: new Date(at) })).actions).toBe(0);
    expect((await t.services.engine.runPass({ now: new Date(monday) })).actions).toBe(1);
    const sent = [...(await activityOf(t.db, ids[0])), ...(await activityOf(t.db, ids[1]))];
    expect(sent.map((x) => `${x.action}:${x.created_at.toISOString()}`)).toEqual([`invite:${monday}`]);
  });

  it('Friday 16:30 in Los Angeles (Saturday in UTC) sends; a lead past the daily cap waits for Monday, not Saturday', async () => {
    const fri = new Date('2026-11-07T00:30:00.000Z'); // Friday 16:30 PST
    const { account, ids } = await oneInviteLead('America/Los_Angeles', fri);
    expect(await t.services.engine.accountPacing(account, fri)).toMatchObject({ withinSendingHours: true, localDay: '2026-11-06' });
    const s = await t.services.engine.runPass({ now: fri });
    expect(s).toMatchObject({ actions: 1, deferred: 1 });
    const waiting = (await nextAt(ids[0])) ? ids[0] : ids[1];
    // Monday 9 November 09:00 PST = 17:00 UTC.
    expect(await nextAt(waiting)).toBe('2026-11-09T17:00:00.000Z');
  });
});

describe('local wall-clock times across DST (zonedTime)', () => {
  const at = (y: number, m: number, d: number, hhmm: string, tz: string) =>
    zonedTime(y, m, d, Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3)), tz).toISOString();
  it('a time inside a spring-forward gap moves forward by the gap, never earlier than asked (west and east of UTC)', () => {
    expect(at(2026, 3, 8, '02:30', 'America/New_York')).toBe('2026-03-08T07:30:00.000Z'); // 03:30 EDT
    expect(at(2026, 3, 29, '02:30', 'Europe/Paris')).toBe('2026-03-29T01:30:00.000Z'); // 03:30 CEST
    expect(at(2026, 9, 6, '00:00', 'America/Santiago')).toBe('2026-09-06T04:00:00.000Z'); // 01:00 -03
    expect(at(2026, 10, 4, '02:15', 'Australia/Lord_Howe')).toBe('2026-10-03T15:45:00.000Z'); // half-hour gap: 02:45
  });
  it('an ambiguous autumn time is its first occurrence; ordinary times are exact', () => {
    expect(at(2026, 11, 1, '01:30', 'America/New_York')).toBe('2026-11-01T05:30:00.000Z'); // 01:30 EDT
    expect(at(2026, 10, 25, '02:30', 'Europe/Paris')).toBe('2026-10-25T00:30:00.000Z'); // 02:30 CEST
    expect(at(2026, 11, 9, '09:00', 'Asia/Tokyo')).toBe('2026-11-09T00:00:00.000Z');
  });
  it('a window opening inside a gap on a sending day is waited for, not retried in the past', async () => {
    const { workspaceId: ws } = await createWorkspaceWithKey(t, 'DST gap');
    const gapApp = await buildTestApp({
      handle: t.handle,
      env: { ...ENV, OUTREACH_PACING_DAYS: 'sun-sat', OUTREACH_PACING_HOURS: '02:30-17:00' },
      now: '2026-03-08T06:00:00.000Z',
    });
    try {
      const account = await insertAccount(t.db, ws, { timeZone: 'America/New_York' });
      const seq = await insertSequence(t.db, ws, { steps: steps(step('connect')) });
      const now = new Date('2026-03-08T06:50:00.000Z'); // 01:50 EST, before the window and the gap
      const id = await insertLead(t.db, ws, {
        person: 'Gap',
        linkedin_url: 'https://li.example/gap',
        account_id: account,
        sequence_id: seq,
        next_action_at: now,
      });
      const s = await gapApp.services.engine.runPass({ now });
      expect(s).toMatchObject({ actions: 0, deferred: 1 });
      expect(await nextAt(id)).toBe('2026-03-08T07:30:00.000Z');
    } finally {
      await gapApp.close();
    }
  });
});

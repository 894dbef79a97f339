import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, parseSendingDays, sendingDaysLabel } from '../../src/config/config.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/seq-fixtures.js';
import { activityOf, ENGINE_ENV, insertAccount, step, steps } from './helpers.js';

// Weekday-only sending: the weekday is the account's local one, so Friday afternoon in Los Angeles (already
// Saturday in UTC) still sends and Saturday morning in Tokyo (still Friday in UTC) does not.
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
    ids.push(await insertLead(t.db, ws, { person: `P${n}`, linkedin_url: `https://li.example/${timeZone}/${n}`, account_id: account, sequence_id: seq, next_action_at: due }));
  }
  return { account, ids };
}

const nextAt = async (id: string) => (await t.db.selectFrom('leads').select('next_action_at').where('id', '=', id).executeTakeFirstOrThrow()).next_action_at?.toISOString();

describe('weekday-only sending in the account’s time zone', () => {
  it('Saturday morning in Tokyo (Friday in UTC) waits for Monday 09:00 Tokyo; the weekend passes do nothing', async () => {
    const friUtc = new Date('2026-11-06T23:30:00.000Z'); // Saturday 08:30 in Tokyo
    const { account, ids } = await oneInviteLead('Asia/Tokyo', friUtc);
    const monday = '2026-11-09T00:00:00.000Z'; // Monday 09:00 in Tokyo
    expect(await t.services.engine.accountPacing(account, friUtc)).toMatchObject({ sendingDays: 'mon,tue,wed,thu,fri', withinSendingHours: false, nextWindowAt: monday });
    expect((await t.services.engine.runPass({ now: friUtc })).deferred).toBe(2);
    expect(await nextAt(ids[0])).toBe(monday);
    for (const at of ['2026-11-07T03:00:00.000Z', '2026-11-08T04:00:00.000Z']) expect((await t.services.engine.runPass({ now: new Date(at) })).actions).toBe(0);
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

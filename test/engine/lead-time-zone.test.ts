import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { admissionRule, sendingZone, type AdmissionContext, type AdmissionFacts } from '../../src/domain/admission.js';
import { claimAdmissionSources } from '../../src/engine/sql/claimDue.js';
import { zoneOfCountry } from '../../src/modules/leads/leads.import.rules.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { ADMIN, admin } from '../helpers/world-fixtures.js';
import { activityOf, ENGINE_ENV, insertAccount, step, steps } from './helpers.js';

// Issue 39 §5, the lead's own time zone: a sequence with `send_in_lead_hours` sends each step inside the sending hours
// and days in the lead's zone (leads.time_zone) when it is a valid IANA name, else in the messaging account's, as every
// sequence did before. A Tokyo lead on a Berlin account, hours 09:00-17:00 on weekdays: 09:00 Berlin is 17:00 Tokyo.

const ENV = { ...ENGINE_ENV, OUTREACH_ADMIN_TOKEN: ADMIN, OUTREACH_PACING_HOURS: '09:00-17:00', OUTREACH_PACING_DAYS: 'mon-fri' };
// Tuesday 24 November 2026 (CET, UTC+1; Tokyo is UTC+9 all year).
const BERLIN_9 = '2026-11-24T08:00:00.000Z'; // 09:00 Berlin, 17:00 Tokyo
const TOKYO_9_WED = '2026-11-25T00:00:00.000Z'; // Wednesday 09:00 Tokyo, 01:00 Berlin
const BERLIN_9_WED = '2026-11-25T08:00:00.000Z';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: ENV, now: BERLIN_9 });
});
afterAll(async () => t?.close());

const tick = async (now: string) => {
  const res = await t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: { now } });
  expect(res.statusCode).toBe(200);
  return res.json<{ actions: number; deferred: number }>();
};
const nextAt = async (id: string) =>
  (await t.db.selectFrom('leads').select('next_action_at').where('id', '=', id).executeTakeFirstOrThrow()).next_action_at?.toISOString();
const invites = async (id: string) =>
  (await activityOf(t.db, id)).filter((a) => a.action === 'invite' && a.outcome === 'ok').map((a) => a.created_at.toISOString());

/** One Berlin account, one invite sequence (with or without the option) and one lead in `leadZone`, due at `due`. */
async function lane(name: string, f: { sendInLeadHours: boolean; leadZone: string | null; due?: string }) {
  const { workspaceId: ws } = await createWorkspaceWithKey(t, name);
  const account = await insertAccount(t.db, ws, { timeZone: 'Europe/Berlin' });
  const seq = await insertSequence(t.db, ws, { steps: steps(step('connect')) });
  if (f.sendInLeadHours) await t.db.updateTable('sequences').set({ send_in_lead_hours: true }).where('id', '=', seq).execute();
  const lead = await insertLead(t.db, ws, {
    person: 'Yuki Tanaka',
    linkedin_url: `https://li.example/${encodeURIComponent(name)}`,
    account_id: account,
    sequence_id: seq,
    time_zone: f.leadZone,
    next_action_at: new Date(f.due ?? BERLIN_9),
  });
  return { ws, account, seq, lead };
}

describe("sending hours in the lead's own time zone", () => {
  it('a Tokyo lead on a Berlin account is not sent at 09:00 Berlin (17:00 Tokyo), waits for 09:00 Tokyo and is sent then', async () => {
    const l = await lane('Tokyo lead, lead hours', { sendInLeadHours: true, leadZone: 'Asia/Tokyo' });
    expect(await tick(BERLIN_9)).toMatchObject({ actions: 0, deferred: 1 });
    expect(await nextAt(l.lead)).toBe(TOKYO_9_WED);
    expect(await invites(l.lead)).toEqual([]);
    // 01:00 in Berlin, outside the account's hours: the lead's hours decide.
    expect(await tick(TOKYO_9_WED)).toMatchObject({ actions: 1 });
    expect(await invites(l.lead)).toEqual([TOKYO_9_WED]);
    // The account's budgets count in the account's own local day (01:00 Wednesday 25 November in Berlin).
    const { rows: budgets } = await sql<{ budget: string; day: string; used: number }>`
      SELECT budget, window_start::text AS day, used FROM send_budgets WHERE workspace_id = ${l.ws}::uuid`.execute(t.db);
    expect(budgets.map((b) => `${b.budget}:${b.day}:${b.used}`).sort()).toEqual(['actions:2026-11-25:1', 'invites:2026-11-25:1']);
  });

  it("the lead's sending days are its own too: Friday 17:30 in Tokyo (Friday 09:30 Berlin) waits for Monday 09:00 Tokyo", async () => {
    const friday = '2026-11-27T08:30:00.000Z';
    const l = await lane('Tokyo lead, Friday', { sendInLeadHours: true, leadZone: 'Asia/Tokyo', due: friday });
    await t.services.engine.runPass({ now: new Date(friday) });
    expect(await nextAt(l.lead)).toBe('2026-11-30T00:00:00.000Z');
    // Saturday 10:00 in Tokyo, inside the hours but not a sending day: it waits for Monday 09:00 Tokyo, not Berlin's 09:00.
    await t.db
      .updateTable('leads')
      .set({ next_action_at: new Date('2026-11-28T01:00:00.000Z') })
      .where('id', '=', l.lead)
      .execute();
    expect((await t.services.engine.runPass({ now: new Date('2026-11-28T01:00:00.000Z') })).actions).toBe(0);
    expect(await nextAt(l.lead)).toBe('2026-11-30T00:00:00.000Z');
  });

  it("without the option the account's zone rules as before: sent at 09:00 Berlin, and 09:00 Tokyo waits for 09:00 Berlin", async () => {
    const early = await lane('Tokyo lead, account hours', { sendInLeadHours: false, leadZone: 'Asia/Tokyo' });
    expect((await t.services.engine.runPass({ now: new Date(BERLIN_9) })).actions).toBeGreaterThanOrEqual(1);
    expect(await invites(early.lead)).toEqual([BERLIN_9]);
    const late = await lane('Tokyo lead, account hours, night', { sendInLeadHours: false, leadZone: 'Asia/Tokyo', due: TOKYO_9_WED });
    await t.services.engine.runPass({ now: new Date(TOKYO_9_WED) });
    expect(await invites(late.lead)).toEqual([]);
    expect(await nextAt(late.lead)).toBe(BERLIN_9_WED);
  });

  it("with the option, a lead without a zone or with an unknown one goes in the account's hours", async () => {
    const none = await lane('No zone', { sendInLeadHours: true, leadZone: null, due: TOKYO_9_WED });
    const unknown = await lane('Unknown zone', { sendInLeadHours: true, leadZone: 'Mars/Olympus', due: TOKYO_9_WED });
    const offset = await lane('Offset zone', { sendInLeadHours: true, leadZone: '+09:00', due: TOKYO_9_WED });
    await t.services.engine.runPass({ now: new Date(TOKYO_9_WED) });
    for (const l of [none, unknown, offset]) {
      expect(await invites(l.lead)).toEqual([]);
      expect(await nextAt(l.lead)).toBe(BERLIN_9_WED);
    }
    await t.services.engine.runPass({ now: new Date(BERLIN_9_WED) });
    for (const l of [none, unknown, offset]) expect(await invites(l.lead)).toEqual([BERLIN_9_WED]);
  });

  it('sendingZone: the lead zone only with the option and a valid IANA name', () => {
    expect(sendingZone({ accountTimeZone: 'Europe/Berlin', leadTimeZone: 'Asia/Tokyo', sendInLeadHours: true })).toBe('Asia/Tokyo');
    expect(sendingZone({ accountTimeZone: 'Europe/Berlin', leadTimeZone: 'Asia/Tokyo', sendInLeadHours: false })).toBe('Europe/Berlin');
    expect(sendingZone({ accountTimeZone: 'Europe/Berlin', leadTimeZone: 'Nowhere/Land', sendInLeadHours: true })).toBe('Europe/Berlin');
    expect(sendingZone({ accountTimeZone: null, leadTimeZone: null, sendInLeadHours: true })).toBe('UTC');
    expect(sendingZone({ accountTimeZone: 'Bad/Zone' })).toBe('UTC');
  });

  it('the rule answers the same in TypeScript and in SQL for lead zones (valid, unknown, absent), with and without the option', async () => {
    const { workspaceId: ws } = await createWorkspaceWithKey(t, 'Rule forms');
    const berlin = await insertAccount(t.db, ws, { timeZone: 'Europe/Berlin' });
    const plain = await insertSequence(t.db, ws, { steps: steps(step('connect')) });
    const own = await insertSequence(t.db, ws, { steps: steps(step('connect')) });
    await t.db.updateTable('sequences').set({ send_in_lead_hours: true }).where('id', '=', own).execute();
    for (const sequence_id of [plain, own])
      for (const time_zone of ['Asia/Tokyo', 'asia/tokyo', 'America/Los_Angeles', 'Mars/Olympus', '+09:00', '', null])
        await insertLead(t.db, ws, { sequence_id, account_id: berlin, time_zone });
    const rule = admissionRule('outside_sending_hours');
    const src = claimAdmissionSources(sql<string | null>`l.account_user_id`);
    const window = loadConfig({}, ENV).engine.pacing;
    const seen = new Set<boolean>();
    for (const now of [BERLIN_9, TOKYO_9_WED, '2026-11-24T18:00:00.000Z', '2026-11-28T01:00:00.000Z']) {
      const ctx: AdmissionContext = { now: new Date(now), unitsPerAction: 1, sendingWindow: window };
      const { rows } = await sql<{ id: string; lead_zone: string | null; option: boolean; account_zone: string | null; kind: string; verdict: boolean }>`
        SELECT l.id, l.time_zone AS lead_zone, s.send_in_lead_hours AS option, ma.time_zone AS account_zone, ${src.stepKind} AS kind,
          COALESCE(${rule.sql(src, ctx)}, false) AS verdict
        FROM leads l JOIN sequences s ON s.id = l.sequence_id JOIN workspaces w ON w.id = l.workspace_id
        LEFT JOIN messaging_accounts ma ON ma.id = l.account_id
        WHERE l.workspace_id = ${ws}::uuid`.execute(t.db);
      expect(rows).toHaveLength(14);
      for (const r of rows) {
        const facts = {
          sequence: { status: 'active', revision: 1, approved_revision: 1, send_in_lead_hours: r.option },
          step: { kind: r.kind },
          sender: { account: { stored_status: 'connected', time_zone: r.account_zone }, xAccountSaved: false },
          lead: { time_zone: r.lead_zone },
        } as unknown as AdmissionFacts;
        const ts = rule.admits(facts, ctx);
        expect([now, r.lead_zone, r.option, ts]).toEqual([now, r.lead_zone, r.option, r.verdict]);
        seen.add(ts);
      }
    }
    expect([...seen].sort()).toEqual([false, true]);
  });

  it('a sending window cannot wrap midnight: 22:00-06:00 is a configuration error naming OUTREACH_PACING_HOURS', () => {
    expect(() => loadConfig({ OUTREACH_PACING_HOURS: '22:00-06:00' })).toThrow(/OUTREACH_PACING_HOURS/);
  });
});

describe('setting the zone: the lead import and the sequence option', () => {
  const importCsv = (auth: Record<string, string>, body: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/api/v1/leads/import', headers: auth, payload: body });

  it('a CSV time zone column is stored; an invalid zone is an invalid row naming timeZone; a single-zone country fills it', async () => {
    const w = await createWorkspaceWithKey(t, 'Zone import');
    const csv = [
      'Name,Email,Zeitzone,Country,Notes',
      'Yuki Tanaka,yuki@example.jp,Asia/Tokyo,Japan,a',
      'Lower Case,lower@example.jp,asia/tokyo,,b',
      'Mars Person,mars@example.com,Mars/Olympus,,c',
      'Offset Person,offset@example.com,+09:00,,d',
      'Hans Berg,hans@example.de,,Deutschland,e',
      'Sam Smith,sam@example.com,,United States,f',
      'No Zone,nozone@example.com,,,g',
    ].join('\n');
    const res = await importCsv(w.auth, { csv });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.counts).toMatchObject({ rows: 7, new: 5, invalid: 2 });
    const byEmail = Object.fromEntries(body.rows.map((r: { lead: { email: string } }) => [r.lead.email, r]));
    expect(byEmail['mars@example.com']).toMatchObject({ status: 'invalid', timeZone: null });
    expect(byEmail['mars@example.com'].reason).toMatch(/^timeZone "Mars\/Olympus" is not an IANA time zone name/);
    expect(byEmail['offset@example.com'].reason).toMatch(/^timeZone "\+09:00"/);
    expect(byEmail['yuki@example.jp']).toMatchObject({ status: 'new', timeZone: 'Asia/Tokyo' });
    // The zone column is read, so it is no custom column; a country column stays one (it is not saved as such).
    expect(byEmail['yuki@example.jp'].custom).toEqual({ Country: 'Japan', Notes: 'a' });
    expect(body.unmapped).toEqual(['Country', 'Notes']);
    const stored = await t.db.selectFrom('leads').select(['email', 'time_zone']).where('workspace_id', '=', w.workspaceId).orderBy('email').execute();
    expect(Object.fromEntries(stored.map((l) => [l.email, l.time_zone]))).toEqual({
      'yuki@example.jp': 'Asia/Tokyo',
      'lower@example.jp': 'Asia/Tokyo',
      'hans@example.de': 'Europe/Berlin',
      'sam@example.com': null,
      'nozone@example.com': null,
    });
  });

  it('reads timeZone, time zone, timezone and tz headers; a file without zone columns answers no timeZone', async () => {
    for (const header of ['timeZone', 'time zone', 'timezone', 'tz', 'Time_Zone']) {
      const w = await createWorkspaceWithKey(t, `Header ${header}`);
      const res = await importCsv(w.auth, { csv: `email,${header}\na@example.com,Europe/Paris\n` });
      expect([header, res.json().rows[0].timeZone]).toEqual([header, 'Europe/Paris']);
    }
    const w = await createWorkspaceWithKey(t, 'No zone header');
    const res = await importCsv(w.auth, { csv: 'email,company\nb@example.com,Acme\n' });
    expect(res.json().rows[0]).not.toHaveProperty('timeZone');
  });

  it('countries with several zones are never guessed', () => {
    for (const c of ['United States', 'USA', 'US', 'Russia', 'Brazil', 'Australia', 'Canada', 'Mexico', 'Indonesia', 'Spain', 'China'])
      expect([c, zoneOfCountry(c)]).toEqual([c, null]);
    expect(zoneOfCountry('japan')).toBe('Asia/Tokyo');
    expect(zoneOfCountry('DE')).toBe('Europe/Berlin');
  });

  it('sendInLeadHours is set when authoring a sequence and answered by GET /sequences; an imported Tokyo lead then waits for 09:00 Tokyo', async () => {
    const w = await createWorkspaceWithKey(t, 'Option Co');
    const account = await insertAccount(t.db, w.workspaceId, { timeZone: 'Europe/Berlin' });
    const created = await t.services.authoring.createSequence(w.workspaceId, {
      name: 'Tokyo hours',
      sendInLeadHours: true,
      steps: [{ index: 0, kind: 'connect', delayDays: 0, subject: null, message: null, actions: [], variants: null, tool: null }],
    });
    expect(created.sequence.sendInLeadHours).toBe(true);
    const plain = await t.services.authoring.createSequence(w.workspaceId, { name: 'Account hours' });
    expect(plain.sequence.sendInLeadHours).toBe(false);
    const id = created.sequence.id;
    await t.services.authoring.approveSequence(w.workspaceId, id, { expectedRevision: 1 });
    await t.services.sequences.setStatus(w.workspaceId, id, 'active');

    const listed = (await t.app.inject({ method: 'GET', url: '/api/v1/sequences', headers: w.auth })).json().sequences;
    expect(listed.find((s: { id: string }) => s.id === id).sendInLeadHours).toBe(true);
    expect(listed.find((s: { id: string }) => s.id === plain.sequence.id)).not.toHaveProperty('sendInLeadHours');

    // Replacing the steps keeps the option unless it is given; giving another value is a change (a new revision).
    const same = await t.services.authoring.replaceSteps(w.workspaceId, plain.sequence.id, {
      expectedRevision: 1,
      steps: [{ index: 0, kind: 'connect', delayDays: 0, subject: null, message: null, actions: [], variants: null, tool: null }],
    });
    expect(same.sequence).toMatchObject({ revision: 2, sendInLeadHours: false });
    const flipped = await t.services.authoring.replaceSteps(w.workspaceId, plain.sequence.id, {
      expectedRevision: 2,
      sendInLeadHours: true,
      steps: [{ index: 0, kind: 'connect', delayDays: 0, subject: null, message: null, actions: [], variants: null, tool: null }],
    });
    expect(flipped).toMatchObject({ changed: true, sequence: { revision: 3, sendInLeadHours: true } });

    const imported = await importCsv(w.auth, {
      csv: 'person,linkedinUrl,tz\nYuki Tanaka,https://www.linkedin.com/in/yuki-tanaka,Asia/Tokyo\n',
      sequenceId: id,
      accountId: account,
    });
    expect(imported.statusCode).toBe(200);
    const leadId = imported.json().rows[0].leadId as string;
    await t.db
      .updateTable('leads')
      .set({ next_action_at: new Date(BERLIN_9) })
      .where('id', '=', leadId)
      .execute();
    await t.services.engine.runPass({ now: new Date(BERLIN_9) });
    expect(await nextAt(leadId)).toBe(TOKYO_9_WED);
    await t.services.engine.runPass({ now: new Date(TOKYO_9_WED) });
    expect(await invites(leadId)).toEqual([TOKYO_9_WED]);
  });
});

import { sql } from 'kysely';
import { CLAIMED_LEAD_FROM, claimAdmissionSources, LEAD_X_ACCOUNT, mailboxPoolSql } from '../../src/domain/claim-layout.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/test-database.js';
import { insertLead, insertMessagingAccount, insertSequence, insertXAccount } from '../helpers/factories.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { parseSendingDays } from '../../src/config/config.js';
import { newId } from '../../src/lib/ids.js';
import { claimDue } from '../../src/engine/sql/claimDue.js';
import {
  ADMISSION_RULE_NAMES,
  ADMISSION_RULES,
  admissionRule,
  optedOutAmong,
  type AdmissionContext,
  type AdmissionFacts,
  type AdmissionRuleName,
  type AdmissionSources,
} from '../../src/domain/admission.js';
import type { IdentityKeys } from '../../src/domain/identity.js';

// The admission list (src/domain/admission.ts): each rule is named once and written twice, as a TypeScript check and
// as the SQL the engine's claim is built from. Here both forms judge the same rows of a real database and must agree,
// rule by rule, at several instants; and the claim takes exactly the due leads every `hold` rule admits.

let h: DatabaseHandle;
const window = { hoursStart: 8 * 60, hoursEnd: 18 * 60, days: parseSendingDays('mon-fri') };
// Tuesday 15:00 UTC: 10:00 in New York (open), midnight in Tokyo (closed); then a Saturday, then a Sunday night in
// New York that is Monday morning in Tokyo, then a minute before New York opens on the Monday after its autumn change
// (08:59 had the summer offset still applied).
const INSTANTS = ['2026-11-24T15:00:00.000Z', '2026-11-28T14:00:00.000Z', '2026-11-29T23:30:00.000Z', '2026-11-02T12:59:00.000Z'].map((s) => new Date(s));
const ctxAt = (now: Date, unitsPerAction = 1): AdmissionContext => ({ now, unitsPerAction, sendingWindow: window });

async function workspace(f: { billing?: string; balance?: number; refill?: number; refilledAt?: string; x?: boolean } = {}) {
  const id = newId();
  await h.db
    .insertInto('workspaces')
    .values({
      id,
      name: `Admission ${id.slice(0, 6)}`,
      billing_status: (f.billing ?? 'active') as never,
      energy_balance: f.balance ?? 10,
      energy_daily_refill: f.refill ?? 10,
      energy_refilled_at: f.refilledAt ?? '2026-11-30T00:00:01.000Z',
      x_channel_enabled: f.x ?? true,
    })
    .execute();
  return id;
}

const STEPS = [
  { index: 0, kind: 'connect', delayDays: 0, message: 'Hi' },
  { index: 1, kind: 'email', delayDays: 0, subject: 'Hello', message: 'Hi' },
  { index: 2, kind: 'x_dm', delayDays: 0, message: 'Hi' },
  { index: 3, kind: 'message', delayDays: 0, message: 'Hi' },
];
const DUE = new Date('2026-10-01T00:00:00.000Z');

beforeAll(async () => {
  h = await createTestDatabase();
  const rich = await workspace({ x: true });
  const poor = await workspace({ billing: 'past_due', balance: 0, refilledAt: '2026-12-31T00:00:00.000Z', x: false });
  const owed = await workspace({ billing: 'trialing', balance: 0, refill: 5, refilledAt: '2026-10-01T00:00:00.000Z' });
  const canceled = await workspace({ billing: 'canceled', balance: 3 });
  for (const ws of [rich, poor, owed, canceled]) {
    const ny = await insertMessagingAccount(h.db, ws, { time_zone: 'America/New_York' });
    const tokyo = await insertMessagingAccount(h.db, ws, { time_zone: 'Asia/Tokyo', stored_status: ws === rich ? 'connected' : 'disconnected' });
    const { userId: savedX } = await insertXAccount(h.db, ws);
    const active = await insertSequence(h.db, ws, { steps: STEPS, channels: ['linkedin', 'email', 'x'] });
    const paused = await insertSequence(h.db, ws, { status: 'paused', steps: STEPS });
    const edited = await insertSequence(h.db, ws, { revision: 3, approvedRevision: 2, steps: STEPS });
    const never = await insertSequence(h.db, ws, { approvedRevision: null, steps: STEPS });
    await h.db.insertInto('suppressed_addresses').values({ workspace_id: ws, address: 'gone@example.com', reason: 'bounced_hard' }).execute();
    const base = { sequence_id: active, next_action_at: DUE, account_id: ny };
    const leads: Parameters<typeof insertLead>[2][] = [];
    for (let step = 0; step <= STEPS.length; step++) {
      for (const account_id of [ny, tokyo, null]) leads.push({ ...base, current_step: step, account_id, email: `p${step}@example.com` });
      leads.push({ ...base, current_step: step, account_user_id: savedX, x_user_id: `x${step}` });
      leads.push({ ...base, current_step: step, account_user_id: 'unsaved', x_user_id: `y${step}` });
    }
    for (const sequence_id of [paused, edited, never]) leads.push({ ...base, sequence_id, current_step: 0 });
    leads.push(
      { ...base, automation_stopped: true },
      { ...base, snoozed_until: new Date('2027-01-01T00:00:00.000Z') },
      { ...base, snoozed_until: new Date('2026-01-01T00:00:00.000Z') },
      { ...base, opted_out_at: DUE, email: 'Out@Example.com', linkedin_url: 'https://linkedin.com/in/out' },
      // The same person through another lane: the e-mail in another case, the profile URL.
      { ...base, email: 'out@example.com' },
      { ...base, linkedin_url: 'HTTPS://linkedin.com/in/OUT' },
      { ...base, current_step: 1, email: ' Gone@Example.com ' },
      { ...base, current_step: 0, email: 'gone@example.com' },
      { ...base, inflight_key: 'k', inflight_at: DUE, inflight_step: 0 },
      // Due only to take an edge at its branch, which spends no energy.
      { ...base, waiting_for: 'branch' },
    );
    for (const f of leads) await insertLead(h.db, ws, f);
  }
  // A workspace with one LinkedIn account, one X account and a mailbox pool: a lead without a sender gets one at claim
  // time (domain/claim-layout.ts); beside it, one with no sender of any channel, where the same leads are held.
  for (const [pool, x] of [
    [true, true],
    [false, false],
  ]) {
    const ws = await workspace({ x: true });
    await insertMessagingAccount(h.db, ws, { time_zone: 'America/New_York' });
    if (pool) {
      const mailAccount = await insertMessagingAccount(h.db, ws, { mode: 'email' });
      await h.db
        .insertInto('mailboxes')
        .values({
          id: newId(),
          workspace_id: ws,
          account_id: mailAccount,
          address: 'team@example.com',
          display_name: null,
          smtp_url_enc: 'x',
          imap_url_enc: 'x',
          sent_folder: null,
          health_detail: null,
          health_checked_at: null,
          imap_uidvalidity: null,
          trusted_authserv_id: null,
          dkim_selector: null,
        })
        .execute();
    }
    if (x) await insertXAccount(h.db, ws);
    const active = await insertSequence(h.db, ws, { steps: STEPS, channels: ['linkedin', 'email', 'x'] });
    for (let step = 0; step < STEPS.length; step++)
      await insertLead(h.db, ws, {
        sequence_id: active,
        next_action_at: DUE,
        current_step: step,
        account_id: null,
        email: `solo${step}@example.com`,
        x_user_id: `s${step}`,
      });
  }
});
afterAll(async () => h?.close());

// The claim's own layout, with the lead's X account standing in for the Play's (this test joins no plays).
const src: AdmissionSources = claimAdmissionSources();

type Row = Record<AdmissionRuleName, boolean> & {
  id: string;
  workspace_id: string;
  status: string;
  revision: number;
  approved_revision: number | null;
  billing_status: string;
  energy_balance: number;
  energy_daily_refill: number;
  energy_refilled_at: Date;
  x_channel_enabled: boolean;
  kind: string | null;
  no_step: boolean;
  stored_status: string | null;
  time_zone: string | null;
  x_saved: boolean;
  x_named: boolean;
  pool: boolean;
} & NonNullable<AdmissionFacts['lead']>;

/** Every lead with the facts the TypeScript checks read, and each rule's SQL verdict (NULL read as WHERE reads it). */
async function judged(ctx: AdmissionContext): Promise<Row[]> {
  const verdicts = ADMISSION_RULES.map((r) => sql`COALESCE(${r.sql(src, ctx)}, false) AS ${sql.ref(r.name)}`);
  const { rows } = await sql<Row>`
    SELECT l.id, l.workspace_id, s.status, s.revision, s.approved_revision, w.billing_status, w.energy_balance, w.energy_daily_refill,
      w.energy_refilled_at, w.x_channel_enabled, ${src.stepKind} AS kind, ${src.noStep} AS no_step, ma.stored_status, ma.time_zone,
      EXISTS (SELECT 1 FROM x_accounts xa WHERE xa.workspace_id = l.workspace_id AND xa.user_id = ${LEAD_X_ACCOUNT}) AS x_saved,
      ${LEAD_X_ACCOUNT} IS NOT NULL AS x_named, ${mailboxPoolSql(sql.ref('l.workspace_id'))} AS pool,
      l.automation_stopped, l.opted_out_at, l.snoozed_until, l.inflight_key, l.email, l.linkedin_url, l.x_user_id, l.waiting_for,
      ${sql.join(verdicts)}
    ${CLAIMED_LEAD_FROM}
    ORDER BY l.id`.execute(h.db);
  return rows;
}

async function peopleOf(workspaceId: string) {
  const out = await h.db
    .selectFrom('leads')
    .select(['email', 'linkedin_url', 'x_user_id'])
    .where('workspace_id', '=', workspaceId)
    .where('opted_out_at', 'is not', null)
    .execute();
  const optedOut: IdentityKeys[] = out.map((r) => ({ email: r.email, linkedinUrl: r.linkedin_url, xUserId: r.x_user_id }));
  const suppressed = new Set(
    (await h.db.selectFrom('suppressed_addresses').select('address').where('workspace_id', '=', workspaceId).execute()).map((r) => r.address),
  );
  return { optedOut: optedOutAmong(optedOut), suppressed: (a: string) => suppressed.has(a) };
}

function factsOf(r: Row, people: AdmissionFacts['people']): AdmissionFacts {
  return {
    sequence: { status: r.status, revision: r.revision, approved_revision: r.approved_revision },
    workspace: {
      billing_status: r.billing_status as never,
      energy_balance: r.energy_balance,
      energy_daily_refill: r.energy_daily_refill,
      energy_refilled_at: new Date(r.energy_refilled_at),
      x_channel_enabled: r.x_channel_enabled,
    },
    step: r.no_step ? null : { kind: r.kind ?? '' },
    sender: {
      account: r.stored_status === null ? null : { stored_status: r.stored_status, time_zone: r.time_zone },
      xAccountSaved: r.x_saved,
      xAccountNamed: r.x_named,
      mailboxPool: r.pool,
    },
    lead: {
      automation_stopped: r.automation_stopped,
      opted_out_at: r.opted_out_at,
      snoozed_until: r.snoozed_until,
      inflight_key: r.inflight_key,
      email: r.email,
      linkedin_url: r.linkedin_url,
      x_user_id: r.x_user_id,
      waiting_for: r.waiting_for,
    },
    people,
  };
}

describe('the admission list', () => {
  it('names every rule once, each with a TypeScript and an SQL form and an effect on the claim', () => {
    expect(ADMISSION_RULES.map((r) => r.name)).toEqual([...ADMISSION_RULE_NAMES]);
    expect(new Set(ADMISSION_RULE_NAMES).size).toBe(ADMISSION_RULE_NAMES.length);
    // The conditions issue 25 lists: sequence active, approved revision, billing, energy, sending hours, not opted
    // out, not suppressed, not replied (a reply stops automation: lead_stopped).
    for (const name of ['sequence_not_active', 'sequence_not_approved', 'billing_inactive', 'energy_exhausted', 'outside_sending_hours'] as const)
      expect(ADMISSION_RULE_NAMES).toContain(name);
    for (const name of ['lead_opted_out', 'identity_opted_out', 'address_suppressed', 'lead_stopped'] as const) expect(ADMISSION_RULE_NAMES).toContain(name);
    expect(Object.fromEntries(ADMISSION_RULES.map((r) => [r.name, r.effect]))).toMatchObject({
      identity_opted_out: 'stop',
      address_suppressed: 'stop',
      outside_sending_hours: 'wait',
      billing_inactive: 'hold',
    });
    for (const r of ADMISSION_RULES) {
      expect(typeof r.admits).toBe('function');
      expect(typeof r.sql).toBe('function');
      expect(r.means.length).toBeGreaterThan(10);
    }
  });

  for (const now of INSTANTS) {
    it(`TypeScript and SQL agree on every rule and every lead at ${now.toISOString()}`, async () => {
      const ctx = ctxAt(now);
      const rows = await judged(ctx);
      const people = new Map<string, AdmissionFacts['people']>();
      for (const ws of new Set(rows.map((r) => r.workspace_id))) people.set(ws, await peopleOf(ws));
      const disagreements: string[] = [];
      const seen = new Map<AdmissionRuleName, Set<boolean>>();
      for (const r of rows) {
        const facts = factsOf(r, people.get(r.workspace_id));
        for (const name of ADMISSION_RULE_NAMES) {
          const ts = admissionRule(name).admits(facts, ctx);
          if (ts !== r[name]) disagreements.push(`${name} lead ${r.id}: TypeScript ${ts}, SQL ${r[name]}`);
          (seen.get(name) ?? seen.set(name, new Set()).get(name)!).add(ts);
        }
      }
      expect(disagreements).toEqual([]);
      // Not vacuous: the rows make every rule both admit and stop somewhere (the sending hours only where a zone is closed).
      for (const name of ADMISSION_RULE_NAMES) {
        if (name === 'outside_sending_hours') continue;
        expect([name, [...seen.get(name)!].sort()]).toEqual([name, [false, true]]);
      }
      if (now === INSTANTS[0]) expect([...seen.get('outside_sending_hours')!].sort()).toEqual([false, true]);
    });
  }

  it('energy holds no lead that is due only to take an edge at its branch (that spends nothing)', async () => {
    const rows = await judged(ctxAt(INSTANTS[0]));
    const atBranch = rows.filter((r) => r.waiting_for === 'branch');
    expect(atBranch.length).toBeGreaterThan(0);
    expect(atBranch.every((r) => r.energy_exhausted)).toBe(true);
    // Beside them, in the same workspaces, leads with a step to send are held.
    const held = rows.filter((r) => !r.energy_exhausted);
    expect(held.length).toBeGreaterThan(0);
    expect(held.every((r) => atBranch.some((b) => b.workspace_id === r.workspace_id))).toBe(true);
  });

  it('the claim takes exactly the due leads that every hold rule admits (its SQL is built from them)', async () => {
    const now = INSTANTS[0];
    const ctx = ctxAt(now);
    const rows = await judged(ctx);
    const holds = ADMISSION_RULES.filter((r) => r.effect === 'hold').map((r) => r.name);
    const expected = rows.filter((r) => holds.every((n) => r[n])).map((r) => r.id);
    const claimed = await h.db
      .transaction()
      .execute(async (trx) => {
        const got = await claimDue(trx, { now, staleBefore: new Date('2026-11-01T00:00:00.000Z'), limit: 10_000, admission: ctx });
        throw Object.assign(new Error('rollback'), { got });
      })
      .catch((e: { got?: { id: string; identity_opted_out: boolean; address_suppressed: boolean }[] }) => e.got!);
    expect(claimed.map((c) => c.id).sort()).toEqual(expected.sort());
    expect(expected.length).toBeGreaterThan(0);
    // The stop rules come back as columns, as their SQL says.
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const c of claimed) {
      expect(c.identity_opted_out).toBe(!byId.get(c.id)!.identity_opted_out);
      expect(c.address_suppressed).toBe(!byId.get(c.id)!.address_suppressed);
    }
    expect(claimed.some((c) => c.identity_opted_out)).toBe(true);
    expect(claimed.some((c) => c.address_suppressed)).toBe(true);
  });
});

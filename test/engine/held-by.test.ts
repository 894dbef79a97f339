import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMISSION_RULES, admissionRule, type AdmissionRuleName } from '../../src/domain/admission.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole } from '../helpers/console.js';
import { insertLead, insertSequence, insertXAccount, type LeadFixture, type SequenceFixture } from '../helpers/factories.js';
import { ENGINE_ENV, insertAccount, step, steps } from './helpers.js';

// Every lead that waits says why (docs/engine.md "Held leads"): each `hold` rule of the admission list holds one due
// lead here, and GET /leads (`heldBy`, an x-extension), the console's lead page and the dashboard name the rule, since
// when and what releases it; an engine pass leaves the lead where it is. The `stop` and `wait` rules never hold: the
// claim takes the lead and says why in its stage, last error or next action time.

const NOW = '2026-11-24T12:00:00.000Z'; // a Tuesday, inside 09:00-17:00 UTC
const DUE = new Date('2026-11-24T10:00:00.000Z');
const ENV = { ...ENGINE_ENV, OUTREACH_PACING_HOURS: '09:00-17:00', OUTREACH_PACING_DAYS: 'mon-fri' };
const HOLD_RULES = ADMISSION_RULES.filter((r) => r.effect === 'hold').map((r) => r.name);

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: ENV, now: NOW });
});
afterAll(async () => t?.close());

interface Case {
  rule: AdmissionRuleName;
  /** Words the reason's detail must hold (it names the sequence, account or channel). */
  says: RegExp;
  sequence?: SequenceFixture;
  lead?: (ids: { account: string }) => LeadFixture;
  workspace?: Record<string, unknown>;
  setup?: (ws: string) => Promise<void>;
}

const LINKEDIN = steps(step('connect'));
const CASES: Case[] = [
  { rule: 'sequence_not_active', says: /is paused/, sequence: { status: 'paused' } },
  { rule: 'sequence_not_approved', says: /revision 2; revision 1 is the approved one/, sequence: { revision: 2, approvedRevision: 1 } },
  { rule: 'billing_inactive', says: /billing is past_due/, workspace: { billing_status: 'past_due' } },
  { rule: 'energy_exhausted', says: /energy/, workspace: { energy_balance: 0, energy_refilled_at: new Date(NOW) } },
  {
    rule: 'x_channel_disabled',
    says: /X channel is switched off/,
    sequence: { channels: ['x'], steps: steps(step('x_dm', { message: 'Hi' })) },
    workspace: { x_channel_enabled: false },
  },
  // An e-mail step of a lead without an account, in a workspace without a mailbox pool.
  {
    rule: 'no_sender_for_channel',
    says: /no mailbox/,
    sequence: { channels: ['email'], steps: steps(step('email', { subject: 'Hi', message: 'Hello' })) },
    lead: () => ({ account_id: null }),
  },
  {
    rule: 'sender_not_connected',
    says: /is disconnected/,
    lead: ({ account }) => ({ account_id: account }),
    setup: async (ws) => void (await t.db.updateTable('messaging_accounts').set({ stored_status: 'disconnected' }).where('workspace_id', '=', ws).execute()),
  },
  { rule: 'lead_stopped', says: /automation is stopped/, lead: ({ account }) => ({ account_id: account, automation_stopped: true }) },
  {
    rule: 'lead_snoozed',
    says: /snoozed until 2026-12-01/,
    lead: ({ account }) => ({ account_id: account, snoozed_until: new Date('2026-12-01T00:00:00.000Z') }),
  },
  { rule: 'lead_opted_out', says: /opted out/, lead: ({ account }) => ({ account_id: account, opted_out_at: new Date('2026-11-20T00:00:00.000Z') }) },
];

async function scenario(c: Case) {
  const w = await createWorkspaceWithKey(t, `Held ${c.rule}`);
  const account = await insertAccount(t.db, w.workspaceId);
  const x = await insertXAccount(t.db, w.workspaceId);
  const sequenceId = await insertSequence(t.db, w.workspaceId, { name: `Seq ${c.rule}`, channels: ['linkedin'], steps: LINKEDIN, ...c.sequence });
  if (c.workspace) await t.db.updateTable('workspaces').set(c.workspace).where('id', '=', w.workspaceId).execute();
  await c.setup?.(w.workspaceId);
  const leadId = await insertLead(t.db, w.workspaceId, {
    person: `Held ${c.rule}`,
    email: `${c.rule}@example.com`,
    x_user_id: `9${c.rule.length}`,
    account_id: account,
    account_user_id: x.userId,
    sequence_id: sequenceId,
    next_action_at: DUE,
    ...c.lead?.({ account }),
  });
  return { ...w, leadId, sequenceId };
}

const apiLead = async (key: string, leadId: string) => {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/leads', headers: { authorization: `Bearer ${key}` } });
  expect(res.statusCode).toBe(200);
  return res.json().leads.find((l: { id: string }) => l.id === leadId);
};

describe('every lead that waits says why', () => {
  it('the cases cover every hold rule of the admission list', () => {
    expect(CASES.map((c) => c.rule).sort()).toEqual([...HOLD_RULES].sort());
  });

  for (const c of CASES) {
    it(`${c.rule}: GET /leads, the lead page and the dashboard name it; an engine pass leaves the lead waiting`, async () => {
      const s = await scenario(c);
      const lead = await apiLead(s.key, s.leadId);
      // An e-mail step without a sender names the act that releases it best: add a mailbox.
      const fix = c.rule === 'no_sender_for_channel' ? expect.stringContaining('add a mailbox') : admissionRule(c.rule).release;
      expect(lead.heldBy).toEqual({ rule: c.rule, since: DUE.toISOString(), detail: expect.stringMatching(c.says), fix });

      const summary = await t.services.engine.runPass({ now: new Date(NOW) });
      expect(summary).toBeDefined();
      const after = await apiLead(s.key, s.leadId);
      expect(after).toMatchObject({ stage: 'queued', nextActionAt: DUE.toISOString(), heldBy: { rule: c.rule } });
      const row = await t.db.selectFrom('leads').select(['account_id', 'inflight_key']).where('id', '=', s.leadId).executeTakeFirstOrThrow();
      expect(row.inflight_key).toBeNull();

      const consoleClient = await signedInConsole(t, s.key);
      const page = await consoleClient.get(`/console/leads/${s.leadId}`);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(`<code>${c.rule}</code>`);
      expect(page.body).toContain('To release it:');
      const dashboard = await consoleClient.get('/console');
      expect(dashboard.body).toContain('Held leads: 1');
      expect(dashboard.body).toContain(`<code>${c.rule}</code>`);
    });
  }

  it('a lead nothing holds has no heldBy; the stop and wait rules never hold a lead: the claim takes it and says why', async () => {
    const w = await createWorkspaceWithKey(t, 'Stops and waits');
    const account = await insertAccount(t.db, w.workspaceId);
    const email = await insertSequence(t.db, w.workspaceId, { channels: ['email'], steps: steps(step('email', { subject: 'Hi', message: 'Hello' })) });
    const base = { account_id: account, sequence_id: email, next_action_at: DUE };
    await t.db.insertInto('suppressed_addresses').values({ workspace_id: w.workspaceId, address: 'gone@example.com', reason: 'bounced_hard' }).execute();
    const suppressed = await insertLead(t.db, w.workspaceId, { ...base, email: 'Gone@Example.com' });
    await insertLead(t.db, w.workspaceId, { ...base, email: 'out@example.com', opted_out_at: DUE, automation_stopped: true, next_action_at: null });
    const sameOptedOut = await insertLead(t.db, w.workspaceId, { ...base, email: 'OUT@example.com' });
    const free = await insertLead(t.db, w.workspaceId, { ...base, email: 'free@example.com', next_action_at: new Date('2026-11-25T10:00:00.000Z') });
    expect((await apiLead(w.key, free)).heldBy).toBeUndefined();
    expect((await apiLead(w.key, suppressed)).heldBy).toBeUndefined();
    await t.services.engine.runPass({ now: new Date(NOW) });
    expect(await apiLead(w.key, suppressed)).toMatchObject({ stage: 'failed', lastError: 'address_suppressed' });
    expect((await apiLead(w.key, sameOptedOut)).stage).toBe('skipped');
    // Outside the sending hours (20:00 UTC) the step moves to the next opening, 09:00 the next weekday.
    const evening = await insertLead(t.db, w.workspaceId, { ...base, email: 'evening@example.com', next_action_at: new Date('2026-11-24T19:00:00.000Z') });
    await t.services.engine.runPass({ now: new Date('2026-11-24T20:00:00.000Z') });
    const moved = await apiLead(w.key, evening);
    expect(moved.heldBy).toBeUndefined();
    expect(moved.nextActionAt).toBe('2026-11-25T09:00:00.000Z');
  });

  it('a lead without an account gets the workspace’s only LinkedIn account at claim time; with two it is held by no_sender_for_channel', async () => {
    // A lead without an account, due, on a fresh LinkedIn sequence of `workspaceId`.
    const leadWithoutAccount = async (workspaceId: string, person: string) =>
      insertLead(t.db, workspaceId, {
        person,
        linkedin_url: `https://www.linkedin.com/in/${person.toLowerCase()}`,
        sequence_id: await insertSequence(t.db, workspaceId, { channels: ['linkedin'], steps: LINKEDIN }),
        next_action_at: DUE,
      });
    const one = await createWorkspaceWithKey(t, 'One LinkedIn account');
    const only = await insertAccount(t.db, one.workspaceId);
    const given = await leadWithoutAccount(one.workspaceId, 'Given');
    const two = await createWorkspaceWithKey(t, 'Two LinkedIn accounts');
    await insertAccount(t.db, two.workspaceId);
    await insertAccount(t.db, two.workspaceId);
    const waiting = await leadWithoutAccount(two.workspaceId, 'Waiting');
    await t.services.engine.runPass({ now: new Date(NOW) });
    expect(await apiLead(one.key, given)).toMatchObject({ account: only, stage: 'invited' });
    expect(await apiLead(two.key, waiting)).toMatchObject({
      account: null,
      stage: 'queued',
      heldBy: { rule: 'no_sender_for_channel', detail: expect.stringContaining('LinkedIn') },
    });
  });
});

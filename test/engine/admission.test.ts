import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { activityOf, ENGINE_ENV, insertAccount, step, steps } from './helpers.js';

// The engine applies the admission list (src/domain/admission.ts) in its claim: a suppressed address is refused
// there, whatever carries the e-mail (a mailbox, SMTP_URL or the sandbox), before any budget or energy is taken;
// and the account budgets it reserves are rows of the send budget ledger.

const ENV = { ...ENGINE_ENV, OUTREACH_PACING_HOURS: '09:00-17:00', OUTREACH_PACING_DAYS: 'sun-sat' };
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: ENV, now: '2026-11-24T12:00:00.000Z' });
});
afterAll(async () => t?.close());

async function emailLead(name: string, email: string) {
  const { workspaceId: ws } = await createWorkspaceWithKey(t, name);
  const account = await insertAccount(t.db, ws, { timeZone: 'UTC' });
  const seq = await insertSequence(t.db, ws, { channels: ['email'], steps: steps(step('email', { subject: 'Hello', message: 'Hi there' })) });
  await t.db.insertInto('suppressed_addresses').values({ workspace_id: ws, address: 'gone@initech.example', reason: 'unsubscribed' }).execute();
  const lead = await insertLead(t.db, ws, {
    person: 'Gone',
    email,
    account_id: account,
    sequence_id: seq,
    next_action_at: new Date('2026-11-24T00:00:00.000Z'),
  });
  const energy = async () => (await t.db.selectFrom('workspaces').select('energy_balance').where('id', '=', ws).executeTakeFirstOrThrow()).energy_balance;
  const budgets = () => t.db.selectFrom('send_budgets').select(['scope', 'budget', 'used']).where('workspace_id', '=', ws).execute();
  return { ws, account, lead, energy, budgets };
}

const leadRow = (id: string) =>
  t.db
    .selectFrom('leads')
    .select(['stage', 'automation_stopped', 'last_error', 'step_attempts', 'inflight_key'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

describe('admission in the claim', () => {
  it('a suppressed address (any case, any spacing) fails for good without a send, a reservation or a charge, even with no mailbox', async () => {
    const l = await emailLead('Suppressed Co', '  Gone@Initech.example ');
    const before = await l.energy();
    const summary = await t.services.engine.runPass({ now: new Date('2026-11-24T12:00:00.000Z') });
    expect(summary.failed).toBe(1);
    expect(summary.actions).toBe(0);
    expect(await leadRow(l.lead)).toMatchObject({
      stage: 'failed',
      automation_stopped: true,
      last_error: 'address_suppressed',
      step_attempts: 1,
      inflight_key: null,
    });
    const [entry] = await activityOf(t.db, l.lead);
    expect(entry).toMatchObject({ action: 'email_sent', outcome: 'failed', units: 0 });
    expect(JSON.parse(entry.detail)).toMatchObject({ reason: 'address_suppressed', channel: 'email', final: true });
    expect(await l.budgets()).toEqual([]);
    expect(await l.energy()).toBe(before);
  });

  it('is decided outside the sending hours too: a stop does not wait for the window', async () => {
    const l = await emailLead('Suppressed Night Co', 'gone@initech.example');
    await t.services.engine.runPass({ now: new Date('2026-11-24T22:00:00.000Z') });
    expect(await leadRow(l.lead)).toMatchObject({ stage: 'failed', last_error: 'address_suppressed' });
  });

  it('an address that is not suppressed waits for the sending hours, then goes out on the ledger: messages and actions of its account', async () => {
    const l = await emailLead('Fine Co', 'fine@initech.example');
    const night = await t.services.engine.runPass({ now: new Date('2026-11-24T22:00:00.000Z') });
    expect(night.deferred).toBe(1);
    expect((await t.db.selectFrom('leads').select('next_action_at').where('id', '=', l.lead).executeTakeFirstOrThrow()).next_action_at?.toISOString()).toBe(
      '2026-11-25T09:00:00.000Z',
    );
    expect(await l.budgets()).toEqual([]);
    const morning = await t.services.engine.runPass({ now: new Date('2026-11-25T09:00:00.000Z') });
    expect(morning.actions).toBe(1);
    expect((await l.budgets()).sort((a, b) => a.budget.localeCompare(b.budget))).toEqual([
      { scope: 'account', budget: 'actions', used: 1 },
      { scope: 'account', budget: 'messages', used: 1 },
    ]);
    expect(await t.services.engine.accountPacing(l.account, new Date('2026-11-25T09:00:00.000Z'))).toMatchObject({
      messagesSentToday: 1,
      budgets: expect.arrayContaining([
        { scope: 'account', scopeId: l.account, budget: 'messages', window: 'local_day', windowStart: '2026-11-25', used: 1, cap: 100 },
        { scope: 'account', scopeId: l.account, budget: 'actions', window: 'local_day', windowStart: '2026-11-25', used: 1, cap: null },
      ]),
    });
  });
});

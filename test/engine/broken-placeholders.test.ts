import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { buildEngineTestApp, type MemoryChannels } from '../helpers/memory-channels.js';
import { activityOf, insertAccount, step, steps } from './helpers.js';

// Issue 39 §3–4 at send time: a step whose text would greet "Hi Dr." or "Hi 👋", or still hold a placeholder, is never
// sent. It is skipped with the reason in the ledger (as a missing value always was); with a fallback it goes out.
const T0 = new Date('2026-11-02T09:00:00.000Z');

let t: TestApp, channels: MemoryChannels;
beforeAll(async () => ({ t, channels } = await buildEngineTestApp(T0)));
afterAll(async () => t?.close());

/** One lead in its own workspace, on a one-step connect sequence whose invitation note is `message`; one engine pass. */
async function sendOnce(name: string, message: string, lead: { person: string | null; company?: string | null }) {
  const { workspaceId: ws } = await createWorkspaceWithKey(t, name);
  const account = await insertAccount(t.db, ws);
  const seq = await insertSequence(t.db, ws, {
    steps: steps(step('connect', { message }), step('engage', { delayDays: 30, actions: [{ type: 'like', count: 1, reaction: null }] })),
  });
  const id = await insertLead(t.db, ws, {
    person: lead.person,
    company: lead.company ?? 'Acme',
    linkedin_url: `https://www.linkedin.com/in/${name.toLowerCase().replace(/\W+/g, '-')}`,
    account_id: account,
    sequence_id: seq,
    next_action_at: T0,
  });
  await t.services.engine.runPass({ now: T0 });
  const sent = channels.delivered.filter((a) => a.idempotencyKey.startsWith(id));
  const acts = await activityOf(t.db, id);
  return { sent: sent.map((a) => a.text), first: acts[0], lead: await t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow() };
}

describe('a name with no given name to greet', () => {
  it.each(['Dr.', '👋'])('%s in "Hi {{firstName}}" without a fallback is not sent: skipped, missing_template_value', async (person) => {
    const r = await sendOnce(`No fallback ${person}`, 'Hi {{firstName}}', { person });
    expect(r.sent).toEqual([]);
    expect(r.first).toMatchObject({ action: 'invite', outcome: 'skipped' });
    expect(JSON.parse(r.first.detail)).toMatchObject({ step: 0, reason: 'missing_template_value', field: 'firstName' });
    expect(r.lead).toMatchObject({ current_step: 1, invited_at: null });
  });

  it.each(['Dr.', '👋'])('%s in "Hi {{firstName|there}}" is sent as "Hi there"', async (person) => {
    const r = await sendOnce(`Fallback ${person}`, 'Hi {{firstName|there}}', { person });
    expect(r.sent).toEqual(['Hi there']);
    expect(r.first).toMatchObject({ action: 'invite', outcome: 'ok' });
  });

  it('"Dr. Jane Doe" in "Hi {{ first_name }}" (an alias) is sent as "Hi Jane"', async () => {
    const r = await sendOnce('Alias', 'Hi {{ first_name }}', { person: 'Dr. Jane Doe' });
    expect(r.sent).toEqual(['Hi Jane']);
  });
});

describe('a placeholder left in the text', () => {
  it('a stored step in another tool’s syntax (saved before authoring refused it) is skipped with broken_placeholder and the token', async () => {
    const r = await sendOnce('Stored foreign', 'Hi {FirstName},', { person: 'Jane Doe' });
    expect(r.sent).toEqual([]);
    expect(r.first).toMatchObject({ action: 'invite', outcome: 'skipped' });
    expect(JSON.parse(r.first.detail)).toMatchObject({ step: 0, reason: 'broken_placeholder', field: 'firstName', token: '{FirstName}' });
  });

  it('a lead whose own data holds a placeholder ({{company_name}} as the company) is skipped, never sent with it', async () => {
    const r = await sendOnce('Data placeholder', 'Saw {{company}}', { person: 'Jane Doe', company: '{{company_name}}' });
    expect(r.sent).toEqual([]);
    expect(JSON.parse(r.first.detail)).toMatchObject({ reason: 'broken_placeholder', field: 'company', token: '{{company_name}}' });
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { createMemoryChannels, type MemoryChannels } from '../helpers/memory-channels.js';
import { activityOf, ENGINE_ENV, eventsOf, insertAccount, step, steps } from './helpers.js';

// Rule: a send that may have left before a crash is recorded as such, never repeated blindly. The crash is
// real as far as the database can tell: a pass claims the lead, charges energy, reserves pacing and calls a
// driver that never answers; that pass is abandoned and a later one finds the stale in-flight mark.
const T0 = new Date('2026-11-02T09:00:00.000Z');
const LEASE_S = 600;
const ENV = { ...ENGINE_ENV, OUTREACH_ENGINE_INFLIGHT_LEASE: LEASE_S, OUTREACH_ENGINE_UNITS_PER_ACTION: 1 };

let t: TestApp;
let channels: MemoryChannels;
beforeAll(async () => {
  channels = createMemoryChannels();
  t = await buildTestApp({ env: ENV, now: T0.toISOString(), drivers: channels.drivers });
});
afterAll(async () => {
  channels.releaseStalled();
  await t?.close();
});

const inflightKey = (id: string) => async () =>
  (await sql<{ inflight_key: string | null }>`SELECT inflight_key FROM leads WHERE id = ${id}::uuid`.execute(t.db)).rows[0].inflight_key;

const leftovers: Promise<unknown>[] = [];

async function crashedSend(name: string, afterDelivery: boolean) {
  // Passes an earlier test abandoned finish first, so none of them can claim this test's lead.
  channels.releaseStalled();
  await Promise.allSettled(leftovers.splice(0));
  const { workspaceId: ws } = await createWorkspaceWithKey(t, name);
  await t.db.updateTable('workspaces').set({ energy_balance: 10, energy_daily_refill: 0, energy_refilled_at: T0 }).where('id', '=', ws).execute();
  const account = await insertAccount(t.db, ws);
  const seq = await insertSequence(t.db, ws, {
    steps: steps(step('connect', { message: 'Hi {{firstName}}' }), step('message', { delayDays: 3, message: 'Later' })),
  });
  const id = await insertLead(t.db, ws, {
    person: `${name} Person`,
    linkedin_url: `https://li.example/${name}`,
    account_id: account,
    sequence_id: seq,
    next_action_at: T0,
  });
  channels.stallNext(afterDelivery);
  const abandoned = t.services.engine.runPass({ now: T0 });
  leftovers.push(abandoned);
  await expect.poll(inflightKey(id), { timeout: 10_000 }).toBe(`${id}:${seq}:0`);
  const energy = async () =>
    Number((await t.db.selectFrom('workspaces').select('energy_balance').where('id', '=', ws).executeTakeFirstOrThrow()).energy_balance);
  expect(await energy()).toBe(9);
  return { ws, id, seq, account, abandoned, energy, delivered: () => channels.delivered.filter((a) => a.recipient.leadId === id) };
}

const afterLease = new Date(T0.getTime() + (LEASE_S + 60) * 1000);

describe('a send interrupted by a crash', () => {
  it('the provider confirms it went out: recorded once as a success, its event emitted, never sent again', async () => {
    const c = await crashedSend('Sent', true);
    // Inside the lease another pass leaves the lead alone.
    expect(await t.services.engine.runPass({ now: new Date(T0.getTime() + 60_000) })).toMatchObject({ actions: 0, failed: 0 });
    const s = await t.services.engine.runPass({ now: afterLease });
    expect(s).toMatchObject({ actions: 1, failed: 0 });
    expect(c.delivered()).toHaveLength(1);
    const acts = await activityOf(t.db, c.id);
    expect(acts.map((a) => `${a.action}:${a.outcome}:${a.units}`)).toEqual(['invite:ok:1']);
    expect(JSON.parse(acts[0].detail)).toMatchObject({ step: 0, recovered: 'confirmed_sent' });
    expect(await t.db.selectFrom('leads').selectAll().where('id', '=', c.id).executeTakeFirstOrThrow()).toMatchObject({ stage: 'invited', current_step: 1 });
    expect(await inflightKey(c.id)()).toBeNull();
    expect((await eventsOf(t.db, c.ws)).map((e) => e.event)).toEqual(['lead.invited']);
    expect(await c.energy()).toBe(9);
    expect(await t.services.engine.accountPacing(c.account, afterLease)).toMatchObject({ invitesSentToday: 1 });
  });

  it('the provider never got it: the attempt is ledgered as interrupted, refunded, and the step goes out once', async () => {
    const c = await crashedSend('NotSent', false);
    const s = await t.services.engine.runPass({ now: afterLease });
    expect(s).toMatchObject({ actions: 1, failed: 1 });
    expect(c.delivered()).toHaveLength(1);
    const acts = await activityOf(t.db, c.id);
    expect(acts.map((a) => `${a.action}:${a.outcome}`)).toEqual(['invite:failed', 'invite:ok']);
    expect(JSON.parse(acts[0].detail)).toMatchObject({ reason: 'interrupted', confirmed: 'not_sent' });
    // One unit in all: the crashed claim's charge and invite reservation were given back before the resend took theirs.
    expect(await c.energy()).toBe(9);
    expect(await t.services.engine.accountPacing(c.account, afterLease)).toMatchObject({ invitesSentToday: 1 });
    expect((await eventsOf(t.db, c.ws)).map((e) => e.event)).toEqual(['lead.invited']);
  });

  it('a stalled worker answering after another has re-claimed the send under the same key changes nothing', async () => {
    const c = await crashedSend('Superseded', false);
    // The recovery finds it was never sent and re-sends it, and that resend stalls too: same key, newer claim.
    channels.stallNext(false);
    const recovering = t.services.engine.runPass({ now: afterLease });
    leftovers.push(recovering);
    await expect.poll(async () => (await activityOf(t.db, c.id)).length, { timeout: 10_000 }).toBe(1);
    await expect.poll(inflightKey(c.id), { timeout: 10_000 }).toBe(`${c.id}:${c.seq}:0`);
    channels.releaseStalled(1);
    await c.abandoned;
    // The first worker's "connection reset" belongs to a superseded claim: no entry, no refund, still in flight.
    expect((await activityOf(t.db, c.id)).map((a) => JSON.parse(a.detail).reason)).toEqual(['interrupted']);
    expect(await inflightKey(c.id)()).toBe(`${c.id}:${c.seq}:0`);
    expect(await c.energy()).toBe(9);
    channels.releaseStalled();
    await recovering;
    const acts = await activityOf(t.db, c.id);
    expect(acts.map((a) => JSON.parse(a.detail).reason)).toEqual(['interrupted', 'connection_reset']);
    expect(JSON.parse(acts[1].detail).retryAt).toBe(new Date(afterLease.getTime() + t.config.engine.retryMinutes * 60_000).toISOString());
    expect(await c.energy()).toBe(10);
    expect(await t.services.engine.accountPacing(c.account, afterLease)).toMatchObject({ invitesSentToday: 0 });
  });

  it('the crashed worker finishing late changes nothing: its record no longer matches the lead', async () => {
    const c = await crashedSend('Late', true);
    await t.services.engine.runPass({ now: afterLease });
    const before = await activityOf(t.db, c.id);
    channels.releaseStalled();
    await c.abandoned;
    expect(await activityOf(t.db, c.id)).toEqual(before);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox_events WHERE workspace_id = ${c.ws}::uuid`.execute(t.db);
    expect(Number(rows[0].n)).toBe(1);
  });
});

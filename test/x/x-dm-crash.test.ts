import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { TestApp } from '../helpers/build-test-app.js';
import { insertPlay, insertSequence } from '../helpers/factories.js';
import { worldOauth, type XApiFake } from '../helpers/x-api-fake.js';
import { engineTick } from '../helpers/worlds/common.js';
import { insertXPersonLead, startXWorld, X_DM_SCOPES } from '../helpers/worlds/x.js';
import { step, steps } from '../engine/helpers.js';
import { markDmAnswered } from '../../src/channels/x/dm-sends.repository.js';
import type { OutboundAction } from '../../src/channels/types.js';

// Issue 31 §4: an X DM whose request never left is `not_sent`; one that may have reached X is looked up as before.
// The driver marks a DM's request (x_dm_sends) just before its POST and marks X's answer (200/201, its dm_event_id);
// after a crash `confirm` answers from the mark: none → `not_sent` (X is not asked), answered → `sent`, started only →
// X's DM events are read, and when X cannot say the step stays uncertain and is never repeated.
// In every test X's DM listing (GET /2/dm_events) answers 503 while the engine recovers, so only the mark can decide.
// The watcher reads the same listing: it polls once at start-up and then not again within these tests.

const ME = '2001';
const LEASE_S = 600;
const AFTER_LEASE_MS = (LEASE_S + 60) * 1000;

describe('an X DM interrupted by a crash', () => {
  let x: XApiFake;
  let t: TestApp;
  let workspaceId: string;
  let auth: { authorization: string };
  let playId: string;
  let dmOnly: string;
  let clock = Date.now();
  let userSeq = 7000;
  const leftovers: Promise<unknown>[] = [];

  beforeAll(async () => {
    ({
      x,
      t,
      workspaces: [{ id: workspaceId, auth }],
    } = await startXWorld({
      now: () => clock,
      users: [{ id: ME, username: 'acme_hq' }],
      env: { OUTREACH_X_TIMEOUT_MS: 60_000, OUTREACH_X_POLL_INTERVAL: 30 * 86_400, OUTREACH_ENGINE_INFLIGHT_LEASE: LEASE_S },
      workspaces: (x) => [
        {
          name: 'X Crash Co',
          apiKeys: [{}],
          energy: { balance: 10_000, dailyRefill: 10_000 },
          xAccounts: [{ userId: ME, handle: 'acme_hq', oauth: worldOauth(x.issueTokens(ME, 30 * 86_400), X_DM_SCOPES) }],
        },
      ],
    }));
    dmOnly = await insertSequence(t.db, workspaceId, { channels: ['x'], steps: steps(step('x_dm', { message: 'Hello {{firstName}}, a quick question' })) });
    playId = (await insertPlay(t.db, workspaceId, { accountUserId: ME })).id;
    // The watcher's first poll of the account, out of the way of the counts below.
    await tick(60_000);
    expect(x.requests).toContain('GET /2/dm_events');
  }, 60_000);

  afterAll(async () => {
    x?.releaseStalled();
    await Promise.allSettled(leftovers);
    await t?.close();
    await x?.close();
  });

  const tick = (advanceMs = 1_000) => engineTick(t, (clock += advanceMs));

  /** A person who DMed the account first (on record), and the lead that DMs them with `dmOnly`. */
  async function xLead(name: string) {
    const at = new Date(clock);
    const { xUserId, leadId } = await insertXPersonLead(
      { x, t },
      { workspaceId, xUserId: String(++userSeq), name, accountUserId: ME, playId, sequenceId: dmOnly, at, wroteFirst: true },
    );
    return { xUserId, leadId, key: `${leadId}:${dmOnly}:0` };
  }

  const inflightKey = async (leadId: string) =>
    (await t.db.selectFrom('leads').select('inflight_key').where('id', '=', leadId).executeTakeFirstOrThrow()).inflight_key;
  const dmsTo = (userId: string) => x.dmEvents.filter((e) => e.senderId === ME && e.recipientId === userId);
  const posts = (userId: string) => x.requests.filter((r) => r === `POST /2/dm_conversations/with/${userId}/messages`).length;
  const listings = () => x.requests.filter((r) => r === 'GET /2/dm_events').length;
  const markOf = (key: string) =>
    t.db.selectFrom('x_dm_sends').selectAll().where('workspace_id', '=', workspaceId).where('idempotency_key', '=', key).executeTakeFirst();
  /** The lead's x_dm ledger entries, oldest first, as the activity API shows them. */
  async function dmLedger(leadId: string) {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/activity?action=x_dm', headers: auth });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().actions as { lead: { id: string }; outcome: string; detail: string; createdAt: string }[])
      .filter((a) => a.lead.id === leadId)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .map((a) => ({ outcome: a.outcome, ...(JSON.parse(a.detail) as Record<string, unknown>) }));
  }
  /** A pass that dies with its DM at X: X took the DM and its answer never comes (the connection hangs). */
  async function passDyingAtX(lead: { leadId: string; xUserId: string }) {
    x.stallNextDm();
    leftovers.push(t.services.engine.runPass({ now: new Date(clock) }));
    await expect.poll(() => inflightKey(lead.leadId), { timeout: 10_000 }).not.toBeNull();
    await expect.poll(() => dmsTo(lead.xUserId).length, { timeout: 10_000 }).toBe(1);
  }
  /** The abandoned pass ends (its connection drops): whatever it records for the recovered step is refused. */
  async function endAbandoned() {
    x.releaseStalled();
    await Promise.allSettled(leftovers.splice(0));
  }

  it('no mark, the request never left: recovery records not_sent without asking X (its listing down) and the DM goes out once', async () => {
    const lead = await xLead('Nora');
    // What a worker leaves when it dies after the claim committed and before the driver's POST (a token refresh, the
    // "they wrote first" check, the day-unit reservation): the lead's in-flight mark, and no x_dm_sends row.
    await sql`UPDATE leads SET inflight_key = ${lead.key}, inflight_step = 0, inflight_at = ${new Date(clock).toISOString()}::timestamptz
      WHERE id = ${lead.leadId}::uuid`.execute(t.db);
    expect(await markOf(lead.key)).toBeUndefined();
    x.failNext('GET /2/dm_events', { status: 503 }, 100);
    const before = listings();
    await tick(AFTER_LEASE_MS);
    await tick();
    expect(listings()).toBe(before);
    expect(dmsTo(lead.xUserId)).toHaveLength(1);
    expect(posts(lead.xUserId)).toBe(1);
    const ledger = await dmLedger(lead.leadId);
    // Both in the same pass (the step is due again at once), so at the same instant.
    expect(ledger).toHaveLength(2);
    expect(ledger).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ outcome: 'failed', reason: 'interrupted', confirmed: 'not_sent' }),
        expect.objectContaining({ outcome: 'ok', step: 0 }),
      ]),
    );
    expect(await markOf(lead.key)).toMatchObject({ account_user_id: ME, dm_event_id: dmsTo(lead.xUserId)[0].id });
    expect((await markOf(lead.key))?.answered_at).not.toBeNull();
    expect(await inflightKey(lead.leadId)).toBeNull();
    // Later passes leave it alone.
    await tick(3_600_000);
    expect(posts(lead.xUserId)).toBe(1);
    x.clearScripted();
  });

  it('a mark X answered: recovery records sent with its dm_event_id and never lists DM events or sends again', async () => {
    const lead = await xLead('Abe');
    await passDyingAtX(lead);
    const mark = await markOf(lead.key);
    expect(mark).toMatchObject({ account_user_id: ME, answered_at: null, dm_event_id: null });
    // X's answer arrived and was marked; the worker died before the engine's record.
    const event = dmsTo(lead.xUserId)[0];
    await markDmAnswered(t.db, { workspaceId, key: lead.key, dmEventId: event.id, at: new Date(clock) });
    x.failNext('GET /2/dm_events', { status: 503 }, 100);
    const before = listings();
    await tick(AFTER_LEASE_MS);
    expect(listings()).toBe(before);
    expect(await inflightKey(lead.leadId)).toBeNull();
    const row = await t.db.selectFrom('leads').select(['messaged_at', 'last_error']).where('id', '=', lead.leadId).executeTakeFirstOrThrow();
    expect(row.messaged_at).not.toBeNull();
    expect(row.last_error).toBeNull();
    await endAbandoned();
    x.clearScripted();
    await tick(3_600_000);
    expect(dmsTo(lead.xUserId)).toHaveLength(1);
    expect(posts(lead.xUserId)).toBe(1);
    expect(await dmLedger(lead.leadId)).toMatchObject([{ outcome: 'ok', recovered: 'confirmed_sent' }]);
  });

  it('a mark without an answer, the DM may have reached X: X is asked, and with its listing down the step is uncertain, never repeated', async () => {
    const lead = await xLead('Una');
    await passDyingAtX(lead);
    expect(await markOf(lead.key)).toMatchObject({ answered_at: null });
    x.failNext('GET /2/dm_events', { status: 503 }, 100);
    const before = listings();
    await tick(AFTER_LEASE_MS);
    expect(listings()).toBeGreaterThan(before);
    expect(await inflightKey(lead.leadId)).toBeNull();
    const ledger = await dmLedger(lead.leadId);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ outcome: 'failed', reason: 'uncertain_delivery' });
    await endAbandoned();
    x.clearScripted();
    await tick(3_600_000);
    await tick(3_600_000);
    expect(dmsTo(lead.xUserId)).toHaveLength(1);
    expect(posts(lead.xUserId)).toBe(1);
    expect(await dmLedger(lead.leadId)).toHaveLength(1);
  });

  it("a reply decision's missing mark is no witness (its transaction rolls the mark back with a crash): X is asked and finds the DM", async () => {
    const lead = await xLead('Rex');
    const driver = t.services.drivers.forChannel('x');
    // The reply's earlier try reached X; its transaction (and the mark in it) died with the process.
    const sent = x.receiveDm(ME, lead.xUserId, 'Thanks, Tuesday works');
    const action: OutboundAction = {
      workspaceId,
      accountId: null,
      accountUserId: ME,
      kind: 'reply',
      channel: 'x',
      recipient: { leadId: lead.leadId, person: 'Rex Doe', email: null, linkedinUrl: null, xUserId: lead.xUserId, username: 'rex_x', sandbox: null },
      subject: null,
      text: 'Thanks, Tuesday works',
      actions: [],
      idempotencyKey: 'reply:crashed-decision',
      at: new Date(clock),
    };
    const before = listings();
    // As replies.decisions.ts asks it: inside the decision's transaction.
    const check = await t.db.transaction().execute((trx) => driver.confirm!(action, { db: trx }));
    expect(check).toEqual({ status: 'sent', externalId: sent.id });
    expect(listings()).toBe(before + 1);
    // The same missing mark for an engine step (written outside any transaction) means the request never left.
    expect(await driver.confirm!({ ...action, kind: 'x_dm', idempotencyKey: 'engine-step-never-left' })).toEqual({ status: 'not_sent' });
    expect(listings()).toBe(before + 1);
  });
});

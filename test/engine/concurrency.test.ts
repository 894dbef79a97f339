import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createChannelDrivers } from '../../src/channels/index.js';
import { createEngine } from '../../src/engine/index.js';
import { createTextCipher } from '../../src/lib/crypto.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertSequence } from '../helpers/factories.js';
import { ENGINE_ENV, insertAccount, step, steps } from './helpers.js';

let t: TestApp;
const T0 = new Date('2026-11-02T09:00:00.000Z');

beforeAll(async () => {
  t = await buildTestApp({
    env: {
      ...ENGINE_ENV,
      OUTREACH_PACING_INVITE_CAP: 100_000,
      OUTREACH_PACING_RAMP: '',
      OUTREACH_PACING_MESSAGE_CAP: 100_000,
      OUTREACH_ENGINE_BATCH_SIZE: 250,
      OUTREACH_ENGINE_CONCURRENCY: 3,
    },
    now: T0.toISOString(),
  });
});
afterAll(async () => t?.close());

it('two engines over 5,000 due leads execute every step exactly once', { timeout: 300_000 }, async () => {
  const { workspaceId: ws } = await createWorkspaceWithKey(t, 'Concurrency');
  await t.db.updateTable('workspaces').set({ energy_balance: 1_000_000 }).where('id', '=', ws).execute();
  const accounts = [
    await insertAccount(t.db, ws),
    await insertAccount(t.db, ws, { timeZone: 'Asia/Tokyo' }),
    await insertAccount(t.db, ws, { timeZone: 'America/New_York' }),
  ];
  const seq = await insertSequence(t.db, ws, {
    steps: steps(step('connect', { message: 'Hi {{firstName}}' }), step('engage', { actions: [{ type: 'like', count: 1, reaction: null }] })),
  });
  await sql`INSERT INTO leads (id, workspace_id, person, account_id, sequence_id, next_action_at)
    SELECT gen_random_uuid(), ${ws}::uuid, 'Lead ' || g, (ARRAY[${accounts[0]}, ${accounts[1]}, ${accounts[2]}])[1 + g % 3], ${seq}::uuid,
      ${T0.toISOString()}::timestamptz - make_interval(secs => g)
    FROM generate_series(1, 5000) g`.execute(t.db);

  const second = createEngine({
    db: t.db,
    config: t.config,
    clock: t.clock,
    cipher: createTextCipher(randomBytes(32)),
    drivers: createChannelDrivers(t.config),
  });
  const [a, b] = await Promise.all([t.services.engine.runPass({ now: T0 }), second.runPass({ now: T0 })]);
  expect(a.actions + b.actions).toBe(10_000);
  expect(a.failed + b.failed + a.skipped + b.skipped).toBe(0);

  const { rows } = await sql<{ action: string; n: number; leads: number }>`
    SELECT action, count(*)::int AS n, count(DISTINCT lead_id)::int AS leads FROM activity WHERE workspace_id = ${ws}::uuid GROUP BY action ORDER BY action`.execute(
    t.db,
  );
  expect(rows.map((r) => [r.action, Number(r.n), Number(r.leads)])).toEqual([
    ['invite', 5000, 5000],
    ['like', 5000, 5000],
  ]);
  const events = await sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox_events WHERE workspace_id = ${ws}::uuid AND event = 'lead.invited'`.execute(
    t.db,
  );
  expect(Number(events.rows[0].n)).toBe(5000);
  const left = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM leads WHERE workspace_id = ${ws}::uuid AND (inflight_key IS NOT NULL OR NOT automation_stopped OR stage <> 'invited')`.execute(
    t.db,
  );
  expect(Number(left.rows[0].n)).toBe(0);
  // Reservations match what went out.
  const counters = await sql<{ n: number }>`SELECT sum(used)::int AS n FROM send_budgets
    WHERE workspace_id = ${ws}::uuid AND scope = 'account' AND budget = 'invites'`.execute(t.db);
  expect(Number(counters.rows[0].n)).toBe(5000);
  // A repeated pass finds nothing left to do.
  const again = await second.runPass({ now: T0 });
  expect(again.actions).toBe(0);
});

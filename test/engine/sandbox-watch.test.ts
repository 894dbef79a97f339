import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { engineTick } from '../helpers/worlds/common.js';
import { ADMIN } from '../helpers/world-fixtures.js';
import { ENGINE_ENV, insertAccount, step, steps } from './helpers.js';

// The watch of a simulated person (docs/engine.md "Watching"): the sandbox says when its scripted people next act,
// so a lead is looked at then, not at every interval before it, and a lead who will never answer is not looked at
// again until the engine reaches them again. They are heard at the first pass after they act, as before when passes
// are an interval apart. Through the operator's tick route, on the embedded database and PostgreSQL.

const T0 = new Date('2026-12-01T09:00:00.000Z');
const H = 3_600_000;

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: ENGINE_ENV, controlToken: ADMIN, now: T0.toISOString() });
});
afterAll(async () => t?.close());

const tick = (hours: number) => engineTick(t, T0.getTime() + hours * H);
const watch = async (id: string) =>
  (await t.db.selectFrom('leads').select(['observe_next_at', 'replied_at', 'stage']).where('id', '=', id).executeTakeFirstOrThrow()) as {
    observe_next_at: Date | null;
    replied_at: Date | null;
    stage: string;
  };
const at = (hours: number) => new Date(T0.getTime() + hours * H);

describe('watching the sandbox’s people', () => {
  it('a reply scripted 30 hours on is looked for then; a person who never answers is not looked at again; both re-armed by the next message', async () => {
    const ws = await createWorkspaceWithKey(t, 'Sandbox watch');
    const account = await insertAccount(t.db, ws.workspaceId);
    const seq = await insertSequence(t.db, ws.workspaceId, {
      steps: steps(step('message', { message: 'Hi {{firstName}}' }), step('message', { delayDays: 3, message: 'Any thoughts, {{firstName}}?' })),
    });
    const lead = (person: string, sandbox: Record<string, unknown>) =>
      insertLead(t.db, ws.workspaceId, { person, account_id: account, sequence_id: seq, next_action_at: T0, sandbox: JSON.stringify(sandbox) });
    const answers = await lead('Ana Answers', { replyAfterHours: 30, replyText: 'Sounds good, can we talk on Tuesday?' });
    const silent = await lead('Sid Silent', { replyAfterHours: null });

    await tick(0);
    // The first look, an interval (10 minutes) after the message: what the sandbox has scripted decides the next one.
    expect((await watch(answers)).observe_next_at?.toISOString()).toBe(at(600 / 3600).toISOString());
    await tick(1);
    expect((await watch(answers)).observe_next_at?.toISOString()).toBe(at(30).toISOString());
    expect((await watch(silent)).observe_next_at).toBeNull();
    // Hourly passes in between neither look at them nor change anything.
    for (let h = 2; h < 30; h += 4) {
      await tick(h);
      expect((await watch(answers)).observe_next_at?.toISOString()).toBe(at(30).toISOString());
      expect((await watch(silent)).observe_next_at).toBeNull();
    }
    // The first pass after the reply hears it, with its own time.
    await tick(30.5);
    expect(await watch(answers)).toMatchObject({ stage: 'replied', replied_at: at(30) });
    // The silent one gets its follow-up, three days on, and is watched again from it.
    await tick(72);
    expect((await watch(silent)).observe_next_at?.toISOString()).toBe(at(72 + 600 / 3600).toISOString());
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertPlay, insertSequence } from '../helpers/factories.js';
import { worldOauth, type XApiFake } from '../helpers/x-api-fake.js';
import { engineTick } from '../helpers/worlds/common.js';
import { startXWorld, X_SCOPES, FOLLOW_AND_LIKE } from '../helpers/worlds/x.js';
import { step, steps } from '../engine/helpers.js';
import type { TaskView } from '../../src/modules/tasks/index.js';
import { AppError } from '../../src/lib/errors.js';

// X's rules as re-read 2026-11-29 (docs/policy.md "Re-read 2026-11-29"), against the X API fake over real sockets:
// - follows and likes left the self-serve tiers: without OUTREACH_X_ENGAGE_API the task is done on X (Open profile,
//   Done), and no follow or like endpoint is called, not even at a click;
// - DM creation is limited to 15 per 15 minutes per user: the 16th DM in the window waits (429 at a click).

const ME = '3001';

describe('X under the rules re-read on 2026-11-29 (the app tier without follow and like endpoints)', () => {
  let x: XApiFake;
  let t: TestApp;
  let workspaceId: string;
  let auth: { authorization: string };
  let playId: string;
  let clock = Date.parse('2026-11-30T10:00:00.000Z');
  let userSeq = 9000;

  beforeAll(async () => {
    ({
      x,
      t,
      workspaces: [{ id: workspaceId, auth }],
    } = await startXWorld({
      now: () => clock,
      users: [{ id: ME, username: 'rules_hq' }],
      env: { OUTREACH_X_ENGAGE_API: '0', OUTREACH_X_POLL_INTERVAL: 60, OUTREACH_PACING_MESSAGE_CAP: 50, OUTREACH_PACING_INVITE_CAP: 50 },
      workspaces: (x) => [
        {
          name: 'Rules Co',
          apiKeys: [{}],
          energy: { balance: 10_000, dailyRefill: 10_000 },
          xAccounts: [{ userId: ME, handle: 'rules_hq', oauth: worldOauth(x.issueTokens(ME, 30 * 86_400), X_SCOPES) }],
        },
      ],
    }));
    playId = (await insertPlay(t.db, workspaceId, { accountUserId: ME })).id;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await x?.close();
  });

  const tick = (advanceMs = 61_000) => engineTick(t, (clock += advanceMs), { setClock: true });
  const person = (name: string) => {
    const id = String(++userSeq);
    x.addUser({ id, username: `${name.toLowerCase()}_x`, name });
    return id;
  };
  const xLead = (name: string, xUserId: string, sequence: string) =>
    insertLead(t.db, workspaceId, {
      person: `${name} Doe`,
      x_user_id: xUserId,
      username: `${name.toLowerCase()}_x`,
      play_id: playId,
      sequence_id: sequence,
      next_action_at: new Date(clock),
    });
  const openTasks = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/tasks', headers: auth });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().tasks as TaskView[];
  };
  const count = (prefix: string) => x.requests.filter((r) => r.startsWith(prefix)).length;

  it('a follow-and-like task is done on X: no endpoint at a click (409 do_it_on_platform), Done records it', async () => {
    const engage = await insertSequence(t.db, workspaceId, { channels: ['x'], steps: steps(step('x_engage', { actions: FOLLOW_AND_LIKE })) });
    const pia = person('Pia');
    const leadId = await xLead('Pia', pia, engage);
    await tick();
    const task = (await openTasks()).find((k) => k.lead.id === leadId)!;
    expect(task).toMatchObject({ kind: 'x_engage', reason: 'x_engage_by_person', profileUrl: 'https://x.com/pia_x' });
    const before = [count('POST /2/users'), count('GET /2/users')];
    const click = await t.services.tasks.performAtClick(workspaceId, task.id, 'console:test').catch((e: unknown) => e);
    expect(click).toBeInstanceOf(AppError);
    expect(click).toMatchObject({ statusCode: 409, code: 'do_it_on_platform' });
    expect([count('POST /2/users'), count('GET /2/users')]).toEqual(before);
    const done = await t.app.inject({ method: 'POST', url: `/api/v1/tasks/${task.id}/complete`, headers: auth, payload: {} });
    expect(done.statusCode, done.body).toBe(200);
    expect(count('POST /2/users')).toBe(before[0]);
  });

  it('the 16th DM within 15 minutes waits for the window: 429 at the click, and it goes once the oldest leaves it', async () => {
    const dm = await insertSequence(t.db, workspaceId, { channels: ['x'], steps: steps(step('x_dm', { message: 'Hello {{firstName}}' })) });
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) ids.push(await xLead(`Dm${i}`, person(`Dm${i}`), dm));
    await tick();
    const tasks = (await openTasks()).filter((k) => ids.includes(k.lead.id) && k.kind === 'x_dm');
    expect(tasks).toHaveLength(16);
    const sent = () => x.dmEvents.filter((e) => e.senderId === ME).length;
    const first = sent();
    for (const task of tasks.slice(0, 15)) await t.services.tasks.performAtClick(workspaceId, task.id, 'console:test');
    expect(sent() - first).toBe(15);
    const late = await t.services.tasks.performAtClick(workspaceId, tasks[15].id, 'console:test').catch((e: unknown) => e);
    expect(late).toMatchObject({ statusCode: 429, code: 'channel_rate_limited' });
    expect(sent() - first).toBe(15);
    // Fifteen minutes on, the window has room again.
    clock += 15 * 60_000 + 1000;
    t.clock.set(new Date(clock));
    await t.services.tasks.performAtClick(workspaceId, tasks[15].id, 'console:test');
    expect(sent() - first).toBe(16);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { ENGINE_ENV } from './helpers.js';

// Issue 13, defect 2: a world file's queued lead without nextActionAt never ran, because the schema
// filled in null and the loader took that null for the file's own choice.
const ADMIN = 'seeded-leads-admin-token-0123456789abcdef';
const T0 = new Date('2026-11-02T09:00:00.000Z');
const H = 3_600_000;
const ids = {
  ws: '6b0c2a4e-0000-4000-8000-000000000001',
  seq: '6b0c2a4e-0000-4000-8000-000000000002',
  absent: '6b0c2a4e-0000-4000-8000-000000000003',
  explicitNull: '6b0c2a4e-0000-4000-8000-000000000004',
  account: 'onb_6b0c2a4e-0000-4000-8000-000000000005',
};

let t: TestApp;
let auth: { authorization: string };

beforeAll(async () => {
  t = await buildTestApp({ env: { ...ENGINE_ENV, OUTREACH_ADMIN_TOKEN: ADMIN }, now: T0.toISOString() });
  const person = (name: string) => ({
    person: name,
    linkedinUrl: `https://www.linkedin.com/in/${name.toLowerCase()}`,
    account: ids.account,
    sequenceId: ids.seq,
  });
  const world = {
    workspaces: [
      {
        id: ids.ws,
        name: 'Seeded leads',
        apiKeys: [{}],
        messagingAccounts: [{ id: ids.account, name: 'Dana', timeZone: 'UTC' }],
        sequences: [
          { id: ids.seq, name: 'Invite', status: 'active', revision: 1, approvedRevision: 1, steps: [{ kind: 'connect', message: 'Hi {{firstName}}' }] },
        ],
        leads: [
          { id: ids.absent, ...person('Absent') },
          { id: ids.explicitNull, ...person('Parked'), nextActionAt: null },
        ],
      },
    ],
  };
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/v1/seed',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    payload: JSON.stringify(world),
  });
  expect(res.statusCode).toBe(200);
  auth = { authorization: `Bearer ${res.json().workspaces[0].apiKeys[0]}` };
});
afterAll(async () => t?.close());

const lead = (id: string) => t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function leadView(id: string) {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/leads?limit=200', headers: auth });
  expect(res.statusCode).toBe(200);
  return (res.json().leads as { id: string; nextActionAt: string | null }[]).find((l) => l.id === id)!;
}

describe('a seeded queued lead of an active, approved sequence', () => {
  it('without nextActionAt is due at once (its creation time) and the next engine pass runs its first step', async () => {
    expect((await leadView(ids.absent)).nextActionAt).toBe(T0.toISOString());
    const pass = await t.services.engine.runPass({ now: T0 });
    expect(pass.actions).toBe(1);
    const l = await lead(ids.absent);
    expect(l).toMatchObject({ stage: 'invited', current_step: 1 });
    expect(l.invited_at?.toISOString()).toBe(T0.toISOString());
  });

  it('with nextActionAt: null given explicitly is not scheduled: no engine pass picks it up', async () => {
    expect((await leadView(ids.explicitNull)).nextActionAt).toBeNull();
    for (const at of [T0, new Date(T0.getTime() + 24 * H), new Date(T0.getTime() + 30 * 24 * H)]) {
      await t.services.engine.runPass({ now: at });
    }
    const l = await lead(ids.explicitNull);
    expect(l).toMatchObject({ stage: 'queued', current_step: 0, next_action_at: null, invited_at: null });
    const activity = await t.db.selectFrom('activity').select('action').where('lead_id', '=', ids.explicitNull).execute();
    expect(activity).toEqual([]);
  });
});

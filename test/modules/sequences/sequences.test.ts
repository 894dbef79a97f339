import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { type SequenceFixture, insertLead, insertMessagingAccount, insertSequence, insertXAccount, setWorkspaceState } from '../../helpers/factories.js';
import { newId } from '../../../src/lib/ids.js';

let t: TestApp;
type Ws = Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let a: Ws;
let b: Ws;

beforeAll(async () => {
  t = await buildTestApp();
  a = await createWorkspaceWithKey(t, 'Sequence Co');
  b = await createWorkspaceWithKey(t, 'Other Co');
  await insertMessagingAccount(t.db, a.workspaceId, { mode: 'linkedin' });
});
afterAll(async () => t?.close());

const list = (ws: { auth: Record<string, string> }, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: '/api/v1/sequences', headers: { ...ws.auth, ...headers } });
const patch = (ws: { auth: Record<string, string> }, id: string, payload: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'PATCH',
    url: `/api/v1/sequences/${id}/status`,
    headers: { ...ws.auth, 'content-type': 'application/json', ...headers },
    payload: payload === undefined ? '' : JSON.stringify(payload),
  });
const seqRow = (id: string) => t.db.selectFrom('sequences').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** A workspace on its own, able to run a LinkedIn sequence unless the case changes something. */
async function runnableWorkspace(name: string) {
  const ws = await createWorkspaceWithKey(t, name);
  await insertMessagingAccount(t.db, ws.workspaceId, { mode: 'linkedin' });
  return ws;
}

describe('GET /sequences', () => {
  it('answers every field of every sequence, in creation order', async () => {
    const ws = await runnableWorkspace('Fields Co');
    // Every field of every step kind, stored as the API must answer it.
    const foundersSteps = [
      { index: 0, kind: 'connect', delayDays: 0, subject: null, message: 'Hi {{firstName}}', actions: [], variants: null, tool: null },
      {
        index: 1,
        kind: 'engage',
        delayDays: 1,
        subject: null,
        message: null,
        actions: [{ type: 'like_last_post', count: 1, reaction: 'like' }],
        variants: null,
        tool: null,
      },
      {
        index: 2,
        kind: 'message',
        delayDays: 2,
        subject: null,
        message: null,
        actions: [],
        variants: [
          { key: 'A', weight: 50, messageTmpl: 'Hello A' },
          { key: 'B', weight: 50, messageTmpl: 'Hello B' },
        ],
        tool: null,
      },
      { index: 3, kind: 'email', delayDays: 3, subject: 'Quick question', message: 'Body', actions: [], variants: null, tool: 'smtp' },
    ];
    const first = await insertSequence(t.db, ws.workspaceId, {
      name: 'Founders',
      status: 'active',
      revision: 3,
      approvedRevision: 3,
      approvedAt: new Date('2026-11-02T10:00:00.000Z'),
      channels: ['linkedin', 'email'],
      createdAt: new Date('2026-10-01T00:00:00.000Z'),
      steps: foundersSteps,
    });
    await insertMessagingAccount(t.db, ws.workspaceId, { mode: 'email' });
    // Stored steps may omit optional fields; the API still answers every field of a step.
    const second = await insertSequence(t.db, ws.workspaceId, {
      name: 'Sparse',
      status: 'draft',
      revision: 2,
      approvedRevision: null,
      channels: ['x'],
      createdAt: new Date('2026-10-02T00:00:00.000Z'),
      steps: [
        { kind: 'x_dm', delayDays: 0, message: 'Hey' },
        { kind: 'x_engage', delayDays: 1, actions: [{ type: 'like_last_post' }] },
      ],
    });
    const res = await list(ws);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      sequences: [
        {
          id: first,
          name: 'Founders',
          status: 'active',
          revision: 3,
          approvedAt: '2026-11-02T10:00:00.000Z',
          approvedRevision: 3,
          executionBlockReason: null,
          leadCount: 0,
          channels: ['linkedin', 'email'],
          steps: foundersSteps,
        },
        {
          id: second,
          name: 'Sparse',
          status: 'draft',
          revision: 2,
          approvedAt: null,
          approvedRevision: null,
          executionBlockReason: 'sequence_approval_required',
          leadCount: 0,
          channels: ['x'],
          steps: [
            { index: 0, kind: 'x_dm', delayDays: 0, subject: null, message: 'Hey', actions: [], variants: null, tool: null },
            {
              index: 1,
              kind: 'x_engage',
              delayDays: 1,
              subject: null,
              message: null,
              actions: [{ type: 'like_last_post', count: null, reaction: null }],
              variants: null,
              tool: null,
            },
          ],
        },
      ],
    });
  });

  it('orders sequences created at the same instant by id, stably', async () => {
    const ws = await runnableWorkspace('Order Co');
    const at = new Date('2026-10-05T00:00:00.000Z');
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await insertSequence(t.db, ws.workspaceId, { createdAt: at }));
    const listed = (await list(ws)).json().sequences.map((s: { id: string }) => s.id);
    expect(listed).toEqual([...ids].sort());
    expect((await list(ws)).json().sequences.map((s: { id: string }) => s.id)).toEqual(listed);
  });

  it('an empty workspace answers an empty list', async () => {
    const ws = await createWorkspaceWithKey(t, 'Empty Co');
    expect((await list(ws)).json()).toEqual({ sequences: [] });
  });

  it('leadCount is exact: every lead of the sequence, stopped or finished included, and nothing from elsewhere', async () => {
    const ws = await runnableWorkspace('Count Co');
    const s1 = await insertSequence(t.db, ws.workspaceId, { createdAt: new Date('2026-10-01T00:00:00.000Z') });
    const s2 = await insertSequence(t.db, ws.workspaceId, { createdAt: new Date('2026-10-02T00:00:00.000Z') });
    const empty = await insertSequence(t.db, ws.workspaceId, { createdAt: new Date('2026-10-03T00:00:00.000Z') });
    for (let i = 0; i < 137; i++)
      await insertLead(t.db, ws.workspaceId, { sequence_id: s1, stage: i % 3 === 0 ? 'messaged' : 'queued', automation_stopped: i % 5 === 0 });
    for (let i = 0; i < 4; i++) await insertLead(t.db, ws.workspaceId, { sequence_id: s2, stage: 'skipped', automation_stopped: true });
    await insertLead(t.db, ws.workspaceId, { sequence_id: null });
    const foreignSeq = await insertSequence(t.db, b.workspaceId);
    for (let i = 0; i < 3; i++) await insertLead(t.db, b.workspaceId, { sequence_id: foreignSeq });
    const counts = Object.fromEntries((await list(ws)).json().sequences.map((s: { id: string; leadCount: number }) => [s.id, s.leadCount]));
    expect(counts).toEqual({ [s1]: 137, [s2]: 4, [empty]: 0 });
  });

  it('tenancy: lists only the selected workspace, and a Team client through X-Workspace-Client', async () => {
    const owner = await runnableWorkspace('Team Owner Co');
    const client = await runnableWorkspace('Team Client Co');
    await t.services.workspaces.addTeamLink({ ownerWorkspaceId: owner.workspaceId, clientWorkspaceId: client.workspaceId, role: 'member' });
    const own = await insertSequence(t.db, owner.workspaceId);
    const theirs = await insertSequence(t.db, client.workspaceId);
    expect((await list(owner)).json().sequences.map((s: { id: string }) => s.id)).toEqual([own]);
    expect((await list(owner, { 'x-workspace-client': client.workspaceId })).json().sequences.map((s: { id: string }) => s.id)).toEqual([theirs]);
  });

  it('is not gated on the X channel: it answers while the channel is disabled', async () => {
    const ws = await runnableWorkspace('No X Co');
    await insertSequence(t.db, ws.workspaceId);
    await setWorkspaceState(t.db, ws.workspaceId, { xChannelEnabled: false });
    const res = await list(ws);
    expect(res.statusCode).toBe(200);
    expect(res.json().sequences).toHaveLength(1);
  });
});

describe('executionBlockReason', () => {
  type Case = {
    name: string;
    seq?: SequenceFixture;
    ws?: Parameters<typeof setWorkspaceState>[2];
    accounts?: { mode: string; stored_status?: string }[];
    xAccount?: boolean;
    expected: string | null;
  };
  const xSteps = { channels: ['x'], steps: [{ index: 0, kind: 'x_dm' as const, delayDays: 0, message: 'Hi' }] };
  // Today's refill already written, so the saved balance is what the engine can spend.
  const refilledToday = new Date('2026-11-21T00:00:05.000Z');
  const cases: Case[] = [
    { name: 'null when an approved active sequence has billing, a connected account and energy', expected: null },
    { name: 'null while billing is trialing', ws: { billingStatus: 'trialing' }, expected: null },
    {
      name: 'sequence_archived for an archived sequence, before anything else',
      seq: { status: 'archived', revision: 2, approvedRevision: 1 },
      ws: { billingStatus: 'canceled' },
      expected: 'sequence_archived',
    },
    {
      name: 'sequence_approval_required when the current revision was edited after approval',
      seq: { status: 'active', revision: 4, approvedRevision: 3 },
      expected: 'sequence_approval_required',
    },
    { name: 'sequence_approval_required when never approved', seq: { status: 'active', approvedRevision: null }, expected: 'sequence_approval_required' },
    {
      name: 'sequence_approval_required before sequence_draft for an unapproved draft',
      seq: { status: 'draft', revision: 2, approvedRevision: 1 },
      expected: 'sequence_approval_required',
    },
    {
      name: 'sequence_approval_required before sequence_paused for an unapproved paused sequence',
      seq: { status: 'paused', revision: 2, approvedRevision: 1 },
      expected: 'sequence_approval_required',
    },
    { name: 'sequence_draft for an approved draft', seq: { status: 'draft' }, expected: 'sequence_draft' },
    {
      name: 'sequence_paused for an approved paused sequence, before workspace obstacles',
      seq: { status: 'paused' },
      ws: { billingStatus: 'past_due', energyBalance: 0, energyRefilledAt: refilledToday },
      accounts: [],
      expected: 'sequence_paused',
    },
    { name: 'billing_inactive when billing is past_due', ws: { billingStatus: 'past_due' }, expected: 'billing_inactive' },
    {
      name: 'billing_inactive when billing is canceled, before missing accounts and energy',
      ws: { billingStatus: 'canceled', energyBalance: 0, energyRefilledAt: refilledToday },
      accounts: [],
      expected: 'billing_inactive',
    },
    { name: 'no_sending_account without any messaging account', accounts: [], expected: 'no_sending_account' },
    {
      name: 'no_sending_account when the only messaging account is not connected',
      accounts: [{ mode: 'linkedin', stored_status: 'disconnected' }],
      expected: 'no_sending_account',
    },
    {
      name: 'any connected messaging account sends the non-X steps, whatever its mode (as the engine does)',
      seq: { channels: ['linkedin', 'email'], steps: [{ index: 0, kind: 'email', delayDays: 0 }] },
      accounts: [{ mode: 'linkedin' }],
      expected: null,
    },
    { name: 'no_sending_account when a declared x channel has no saved X account', seq: { channels: ['linkedin', 'x'] }, expected: 'no_sending_account' },
    {
      name: 'no_sending_account when an X step has no saved X account, even if x is not declared',
      seq: { channels: ['linkedin'], steps: [{ index: 0, kind: 'x_engage', delayDays: 0 }] },
      expected: 'no_sending_account',
    },
    {
      name: 'no_sending_account when an X sequence has an X account but a LinkedIn step has no messaging account',
      seq: {
        channels: ['x'],
        steps: [
          { index: 0, kind: 'x_dm', delayDays: 0 },
          { index: 1, kind: 'connect', delayDays: 1 },
        ],
      },
      accounts: [],
      xAccount: true,
      expected: 'no_sending_account',
    },
    { name: 'null for an X-only sequence with a saved X account and no messaging account', seq: xSteps, accounts: [], xAccount: true, expected: null },
    {
      name: 'an X sequence is blocked while the workspace X channel is off (the engine sends no X step then)',
      seq: xSteps,
      ws: { xChannelEnabled: false },
      accounts: [],
      xAccount: true,
      expected: 'x_channel_disabled',
    },
    {
      name: 'no_sending_account before energy_exhausted',
      accounts: [],
      ws: { energyBalance: 0, energyRefilledAt: refilledToday },
      expected: 'no_sending_account',
    },
    {
      name: "energy_exhausted when the balance is 0 and today's refill was already written",
      ws: { energyBalance: 0, energyRefilledAt: refilledToday },
      expected: 'energy_exhausted',
    },
    {
      name: "null when the balance is 0 but today's refill is still owed (the engine tops it up before spending)",
      ws: { energyBalance: 0, energyDailyRefill: 50, energyRefilledAt: new Date('2026-11-20T08:00:00.000Z') },
      expected: null,
    },
    {
      name: "energy_exhausted while trialing too, once today's refill is spent",
      ws: { billingStatus: 'trialing', energyBalance: 0, energyRefilledAt: refilledToday },
      expected: 'energy_exhausted',
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const ws = await createWorkspaceWithKey(t, c.name.slice(0, 40));
      for (const acc of c.accounts ?? [{ mode: 'linkedin' }]) await insertMessagingAccount(t.db, ws.workspaceId, acc);
      if (c.xAccount) await insertXAccount(t.db, ws.workspaceId);
      if (c.ws) await setWorkspaceState(t.db, ws.workspaceId, c.ws);
      const id = await insertSequence(t.db, ws.workspaceId, { status: 'active', ...c.seq });
      const [seq] = (await list(ws)).json().sequences;
      expect(seq.id).toBe(id);
      expect(seq.executionBlockReason).toBe(c.expected);
    });
  }
});

describe('executionBlockReason and the engine action cost', () => {
  it('energy_exhausted when less energy is left than one engine action costs (OUTREACH_ENGINE_UNITS_PER_ACTION)', async () => {
    const costly = await buildTestApp({ handle: t.handle, env: { OUTREACH_ENGINE_UNITS_PER_ACTION: 3 } });
    try {
      const ws = await runnableWorkspace('Costly Co');
      await setWorkspaceState(t.db, ws.workspaceId, { energyBalance: 2, energyRefilledAt: new Date('2026-11-21T00:00:05.000Z') });
      await insertSequence(t.db, ws.workspaceId);
      const reason = async (app: TestApp) =>
        (await app.app.inject({ method: 'GET', url: '/api/v1/sequences', headers: ws.auth })).json().sequences[0].executionBlockReason;
      expect(await reason(costly)).toBe('energy_exhausted');
      expect(await reason(t)).toBeNull();
    } finally {
      await costly.close();
    }
  });
});

describe('PATCH /sequences/{id}/status: the transition table', () => {
  const ok = [
    { from: 'draft', to: 'active', rule: 'draft → active when approved' },
    { from: 'paused', to: 'active', rule: 'paused → active when approved' },
    { from: 'active', to: 'active', rule: 'active → active when approved is a no-op' },
    { from: 'active', to: 'paused', rule: 'active → paused' },
    { from: 'active', to: 'draft', rule: 'active → draft' },
    { from: 'paused', to: 'draft', rule: 'paused → draft' },
  ] as const;
  for (const row of ok) {
    it(`200 ${row.rule}; revision and approval untouched`, async () => {
      const id = await insertSequence(t.db, a.workspaceId, { status: row.from, revision: 5, approvedRevision: 5 });
      const before = await seqRow(id);
      t.clock.advance(1000);
      const res = await patch(a, id, { status: row.to });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ok: true, sequenceId: id, previousStatus: row.from, status: row.to });
      const after = await seqRow(id);
      expect(after.status).toBe(row.to);
      expect({ revision: after.revision, approved_revision: after.approved_revision, approved_at: after.approved_at, steps: after.steps }).toEqual({
        revision: before.revision,
        approved_revision: before.approved_revision,
        approved_at: before.approved_at,
        steps: before.steps,
      });
      if (row.from !== row.to) expect(after.updated_at.toISOString()).toBe(t.clock.now().toISOString());
      else expect(after.updated_at).toEqual(before.updated_at);
    });
  }

  const refused = [
    {
      from: 'draft',
      to: 'active',
      approvedRevision: 1,
      revision: 2,
      error: 'sequence_approval_required',
      rule: 'draft → active refused when the draft is not approved',
    },
    {
      from: 'draft',
      to: 'active',
      approvedRevision: null,
      revision: 1,
      error: 'sequence_approval_required',
      rule: 'draft → active refused when never approved',
    },
    {
      from: 'paused',
      to: 'active',
      approvedRevision: 2,
      revision: 3,
      error: 'sequence_approval_required',
      rule: 'paused → active refused when the current revision is not approved',
    },
    {
      from: 'active',
      to: 'active',
      approvedRevision: 2,
      revision: 3,
      error: 'sequence_approval_required',
      rule: 'active → active refused when the current revision is not approved',
    },
    { from: 'paused', to: 'paused', approvedRevision: 1, revision: 1, error: 'invalid_transition', rule: 'paused → paused is not in the table' },
    { from: 'draft', to: 'paused', approvedRevision: 1, revision: 1, error: 'invalid_transition', rule: 'draft → paused is not in the table' },
    { from: 'draft', to: 'draft', approvedRevision: 1, revision: 1, error: 'invalid_transition', rule: 'draft → draft is not in the table' },
    { from: 'archived', to: 'active', approvedRevision: 1, revision: 1, error: 'archived_sequence_is_read_only', rule: 'archived → active (even approved)' },
    { from: 'archived', to: 'paused', approvedRevision: 1, revision: 1, error: 'archived_sequence_is_read_only', rule: 'archived → paused' },
    {
      from: 'archived',
      to: 'draft',
      approvedRevision: 2,
      revision: 3,
      error: 'archived_sequence_is_read_only',
      rule: 'archived → draft (read-only wins over approval)',
    },
  ] as const;
  for (const row of refused) {
    it(`409 ${row.error}: ${row.rule}; nothing changes`, async () => {
      const id = await insertSequence(t.db, a.workspaceId, { status: row.from, revision: row.revision, approvedRevision: row.approvedRevision });
      const before = await seqRow(id);
      t.clock.advance(1000);
      const res = await patch(a, id, { status: row.to });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error: row.error, currentStatus: row.from });
      if (row.error === 'sequence_approval_required') expect(res.json()).toMatchObject({ revision: row.revision, approvedRevision: row.approvedRevision });
      expect(await seqRow(id)).toEqual(before);
    });
  }

  it('activating works again once the current revision is approved', async () => {
    const id = await insertSequence(t.db, a.workspaceId, { status: 'paused', revision: 2, approvedRevision: 1 });
    expect((await patch(a, id, { status: 'active' })).statusCode).toBe(409);
    await t.db.updateTable('sequences').set({ approved_revision: 2 }).where('id', '=', id).execute();
    expect((await patch(a, id, { status: 'active' })).json()).toEqual({ ok: true, sequenceId: id, previousStatus: 'paused', status: 'active' });
  });

  it('the row is locked: two concurrent pauses of one active sequence give one 200 and one 409 invalid_transition', async () => {
    const id = await insertSequence(t.db, a.workspaceId, { status: 'active' });
    const results = await Promise.all([patch(a, id, { status: 'paused' }), patch(a, id, { status: 'paused' })]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(results.find((r) => r.statusCode === 409)!.json()).toMatchObject({ ok: false, error: 'invalid_transition' });
  });

  it('is not gated on the X channel', async () => {
    const ws = await runnableWorkspace('Patch No X Co');
    await setWorkspaceState(t.db, ws.workspaceId, { xChannelEnabled: false });
    const id = await insertSequence(t.db, ws.workspaceId, { status: 'active', channels: ['x'] });
    expect((await patch(ws, id, { status: 'paused' })).statusCode).toBe(200);
  });
});

describe('PATCH /sequences/{id}/status: input and tenancy', () => {
  it('400 for a status outside active, paused and draft, a number, null, a missing field, extra fields or no body', async () => {
    const id = await insertSequence(t.db, a.workspaceId, { status: 'active' });
    const bad: unknown[] = [
      { status: 'archived' },
      { status: 'ACTIVE' },
      { status: 'running' },
      { status: '' },
      { status: 1 },
      { status: null },
      { status: ['active'] },
      {},
      { status: 'paused', extra: true },
      { state: 'paused' },
      [],
      'paused',
      undefined,
    ];
    for (const body of bad) {
      const res = await patch(a, id, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toBeTypeOf('string');
    }
    expect((await seqRow(id)).status).toBe('active');
  });

  it('400 for a path id that is not a uuid, naming the id parameter', async () => {
    const res = await patch(a, 'not-a-uuid', { status: 'paused' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('params/id');
  });

  it('tenancy: a sequence of another workspace answers 404 sequence not found, exactly as an unknown id, and is left untouched', async () => {
    const foreign = await insertSequence(t.db, b.workspaceId, { status: 'active' });
    const unknown = await patch(a, newId(), { status: 'paused' });
    const other = await patch(a, foreign, { status: 'paused' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'sequence not found' });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual(unknown.json());
    expect((await seqRow(foreign)).status).toBe('active');
  });

  it('tenancy: the X-Workspace-Client selector reaches a Team client sequence', async () => {
    const owner = await runnableWorkspace('Patch Owner Co');
    const client = await runnableWorkspace('Patch Client Co');
    await t.services.workspaces.addTeamLink({ ownerWorkspaceId: owner.workspaceId, clientWorkspaceId: client.workspaceId, role: 'admin' });
    const id = await insertSequence(t.db, client.workspaceId, { status: 'active' });
    expect((await patch(owner, id, { status: 'paused' })).statusCode).toBe(404);
    expect((await patch(owner, id, { status: 'paused' }, { 'x-workspace-client': client.workspaceId })).statusCode).toBe(200);
  });
});

describe('OpenAPI description of the sequence operations', () => {
  it('documents the real request and response schemas and the X-Workspace-Client header', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const listOp = doc.paths['/api/v1/sequences'].get;
    const patchOp = doc.paths['/api/v1/sequences/{id}/status'].patch;
    expect(listOp.parameters.map((p: { name: string }) => p.name)).toContain('x-workspace-client');
    expect(patchOp.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['x-workspace-client', 'id']));
    const seq = listOp.responses['200'].content['application/json'].schema.properties.sequences.items;
    expect(Object.keys(seq.properties).sort()).toEqual(
      [
        'approvedAt',
        'approvedRevision',
        'channels',
        'executionBlockReason',
        'id',
        'leadCount',
        'name',
        'revision',
        'status',
        'steps',
        'sendInLeadHours',
      ].sort(),
    );
    // The one field beyond the spec's (issue 39 §5): optional, marked as an extension.
    expect(seq.properties.sendInLeadHours['x-extension']).toBe(true);
    expect(seq.required).not.toContain('sendInLeadHours');
    // The spec's step fields, all required, and the branch properties (id, next, else), optional x-extensions.
    const step = seq.properties.steps.items;
    expect(Object.keys(step.properties).sort()).toEqual([
      'actions',
      'delayDays',
      'else',
      'id',
      'index',
      'kind',
      'message',
      'next',
      'subject',
      'tool',
      'variants',
    ]);
    expect([...step.required].sort()).toEqual(['actions', 'delayDays', 'index', 'kind', 'message', 'subject', 'tool', 'variants']);
    for (const k of ['id', 'next', 'else']) expect(step.properties[k]['x-extension'], k).toBe(true);
    const body = patchOp.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.required).toEqual(['status']);
    expect(Object.keys(patchOp.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '409']));
    expect(patchOp.responses['200'].content['application/json'].schema.required.sort()).toEqual(['ok', 'previousStatus', 'sequenceId', 'status']);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount, insertPlay, insertSequence, setWorkspaceState } from '../../helpers/factories.js';
import { newId } from '../../../src/lib/ids.js';

let t: TestApp;
type Ws = Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let a: Ws;
let b: Ws;
let client: Ws;

beforeAll(async () => {
  t = await buildTestApp();
  a = await createWorkspaceWithKey(t, 'Lead Co');
  b = await createWorkspaceWithKey(t, 'Other Co');
  client = await createWorkspaceWithKey(t, 'Client Co');
  await t.services.workspaces.addTeamLink({ ownerWorkspaceId: a.workspaceId, clientWorkspaceId: client.workspaceId, role: 'admin' });
});
afterAll(async () => t?.close());

const getLead = (ws: { auth: Record<string, string> }, id: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: `/api/v1/x/leads/${id}`, headers: { ...ws.auth, ...headers } });
const stopLead = (ws: { auth: Record<string, string> }, id: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: `/api/v1/x/leads/${id}/stop`, headers: { ...ws.auth, ...headers } });

const leadRow = (id: string) => t.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const overrides = (leadId: string) => t.db.selectFrom('activity').selectAll().where('lead_id', '=', leadId).where('action', '=', 'manual_override').execute();

let uid = 1_000_000;
const nextXUserId = () => String(++uid);

const NOTE_RE = /not recalled/;

describe('GET /x/leads/{id}', () => {
  it('answers every field of the lead object, milestones as ISO strings and deliveryGuaranteed false', async () => {
    const sequenceId = await insertSequence(t.db, a.workspaceId, { channels: ['x'] });
    const playId = (await insertPlay(t.db, a.workspaceId, { sequenceId, accountUserId: '2001' })).id;
    const id = await insertLead(t.db, a.workspaceId, {
      x_user_id: '1234567890123',
      username: 'alice_a',
      account_user_id: '2001',
      play_id: playId,
      sequence_id: sequenceId,
      stage: 'messaged',
      current_step: 2,
      next_action_at: new Date('2026-11-23T08:00:00.000Z'),
      followed_at: new Date('2026-11-10T10:00:00.000Z'),
      followed_back_at: new Date('2026-11-11T11:00:00.000Z'),
      messaged_at: new Date('2026-11-12T12:00:00.000Z'),
      replied_at: new Date('2026-11-13T13:00:00.000Z'),
      opted_out_at: new Date('2026-11-14T14:00:00.000Z'),
    });
    const res = await getLead(a, id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      lead: {
        id,
        xUserId: '1234567890123',
        username: 'alice_a',
        accountUserId: '2001',
        playId,
        sequenceId,
        stage: 'messaged',
        automationStopped: false,
        currentStep: 2,
        nextActionAt: '2026-11-23T08:00:00.000Z',
        followedAt: '2026-11-10T10:00:00.000Z',
        followedBackAt: '2026-11-11T11:00:00.000Z',
        messagedAt: '2026-11-12T12:00:00.000Z',
        repliedAt: '2026-11-13T13:00:00.000Z',
        optedOutAt: '2026-11-14T14:00:00.000Z',
        deliveryGuaranteed: false,
      },
    });
  });

  it('answers null for every absent id and milestone, and the stored automationStopped', async () => {
    const id = await insertLead(t.db, a.workspaceId, { stage: 'queued', automation_stopped: true });
    expect((await getLead(a, id)).json()).toEqual({
      lead: {
        id,
        xUserId: null,
        username: null,
        accountUserId: null,
        playId: null,
        sequenceId: null,
        stage: 'queued',
        automationStopped: true,
        currentStep: 0,
        nextActionAt: null,
        followedAt: null,
        followedBackAt: null,
        messagedAt: null,
        repliedAt: null,
        optedOutAt: null,
        deliveryGuaranteed: false,
      },
    });
  });

  it('tenancy: a lead of another workspace answers 404 lead not found, exactly as an unknown id does', async () => {
    const foreign = await insertLead(t.db, b.workspaceId, { x_user_id: nextXUserId() });
    const unknown = await getLead(a, newId());
    const other = await getLead(a, foreign);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'lead not found' });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual(unknown.json());
    expect((await getLead(b, foreign)).statusCode).toBe(200);
  });

  it('a path id that is not a uuid answers 400 naming the id parameter', async () => {
    for (const bad of ['123', 'not-a-uuid', `${newId()}0`]) {
      const res = await getLead(a, bad);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('params/id') });
    }
  });

  it('the X-Workspace-Client selector reads a Team client lead; without it the same id is 404', async () => {
    const id = await insertLead(t.db, client.workspaceId, { x_user_id: nextXUserId() });
    expect((await getLead(a, id, { 'x-workspace-client': client.workspaceId })).statusCode).toBe(200);
    expect((await getLead(a, id)).statusCode).toBe(404);
  });

  it('answers 403 channel_disabled while the workspace X channel is off', async () => {
    const ws = await createWorkspaceWithKey(t, 'Disabled Co');
    const id = await insertLead(t.db, ws.workspaceId, { x_user_id: nextXUserId() });
    await setWorkspaceState(t.db, ws.workspaceId, { xChannelEnabled: false });
    const res = await getLead(ws, id);
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('channel_disabled');
  });
});

describe('POST /x/leads/{id}/stop', () => {
  it('takes the lead id in upper-case hex as GET does (a uuid is case-insensitive)', async () => {
    const sequenceId = await insertSequence(t.db, a.workspaceId);
    const id = await insertLead(t.db, a.workspaceId, {
      x_user_id: nextXUserId(),
      sequence_id: sequenceId,
      stage: 'queued',
      next_action_at: new Date('2026-11-22T00:00:00.000Z'),
    });
    const res = await stopLead(a, id.toUpperCase());
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().lead).toMatchObject({ id, automationStopped: true });
  });

  it('answers ok, the stopped lead object, scope lead_automation, permanentSuppression false and a note', async () => {
    const sequenceId = await insertSequence(t.db, a.workspaceId);
    const id = await insertLead(t.db, a.workspaceId, {
      x_user_id: nextXUserId(),
      username: 'bob',
      sequence_id: sequenceId,
      stage: 'queued',
      next_action_at: new Date('2026-11-22T00:00:00.000Z'),
    });
    const res = await stopLead(a, id);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['lead', 'note', 'ok', 'permanentSuppression', 'scope']);
    expect(body).toMatchObject({ ok: true, scope: 'lead_automation', permanentSuppression: false });
    expect(body.note).toMatch(NOTE_RE);
    expect(body.lead).toEqual((await getLead(a, id)).json().lead);
    expect(body.lead).toMatchObject({ id, automationStopped: true, nextActionAt: null, stage: 'skipped', deliveryGuaranteed: false });
  });

  it('an uncontacted queued or resolving lead becomes skipped and its next action is cleared', async () => {
    for (const stage of ['queued', 'resolving'] as const) {
      const id = await insertLead(t.db, a.workspaceId, { x_user_id: nextXUserId(), stage, next_action_at: new Date('2026-11-22T00:00:00.000Z') });
      const lead = (await stopLead(a, id)).json().lead;
      expect(lead, stage).toMatchObject({ stage: 'skipped', automationStopped: true, nextActionAt: null });
      const row = await leadRow(id);
      expect(row.stage).toBe('skipped');
      expect(row.next_action_at).toBeNull();
    }
  });

  it('contacted history is kept: a contacted lead keeps its stage, step and milestones', async () => {
    const messagedAt = new Date('2026-11-15T10:00:00.000Z');
    const followedAt = new Date('2026-11-14T10:00:00.000Z');
    const messaged = await insertLead(t.db, a.workspaceId, {
      x_user_id: nextXUserId(),
      stage: 'messaged',
      current_step: 2,
      messaged_at: messagedAt,
      followed_at: followedAt,
      next_action_at: new Date('2026-11-25T00:00:00.000Z'),
    });
    // A lead still marked queued but already followed was contacted, so it is not turned into skipped.
    const followedButQueued = await insertLead(t.db, a.workspaceId, { x_user_id: nextXUserId(), stage: 'queued', followed_at: followedAt });
    const m = (await stopLead(a, messaged)).json().lead;
    expect(m).toMatchObject({
      stage: 'messaged',
      currentStep: 2,
      messagedAt: messagedAt.toISOString(),
      followedAt: followedAt.toISOString(),
      automationStopped: true,
      nextActionAt: null,
    });
    const q = (await stopLead(a, followedButQueued)).json().lead;
    expect(q).toMatchObject({ stage: 'queued', automationStopped: true, followedAt: followedAt.toISOString() });
  });

  it('idempotent: a second stop answers the same lead and writes no second activity entry', async () => {
    const accountId = await insertMessagingAccount(t.db, a.workspaceId);
    const id = await insertLead(t.db, a.workspaceId, {
      x_user_id: nextXUserId(),
      account_id: accountId,
      stage: 'queued',
      next_action_at: new Date('2026-11-22T00:00:00.000Z'),
    });
    const first = await stopLead(a, id);
    t.clock.advance(60_000);
    const second = await stopLead(a, id);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual(first.json());
    const rows = await overrides(id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ workspace_id: a.workspaceId, action: 'manual_override', outcome: 'ok', units: 0, account_id: accountId, lead_id: id });
    expect(JSON.parse(rows[0].detail)).toEqual({ op: 'stop', scope: 'lead_automation', requestedLeadId: id });
  });

  it('the manual_override entry is written on the first stop, stamped with the service clock', async () => {
    const id = await insertLead(t.db, a.workspaceId, { x_user_id: nextXUserId(), stage: 'invited', invited_at: new Date('2026-11-20T00:00:00.000Z') });
    expect(await overrides(id)).toHaveLength(0);
    await stopLead(a, id);
    const rows = await overrides(id);
    expect(rows).toHaveLength(1);
    expect(rows[0].created_at.toISOString()).toBe(t.clock.now().toISOString());
  });

  it('concurrent stops of one lead leave exactly one activity entry', async () => {
    const id = await insertLead(t.db, a.workspaceId, { x_user_id: nextXUserId(), stage: 'queued', next_action_at: new Date('2026-11-22T00:00:00.000Z') });
    const results = await Promise.all(Array.from({ length: 6 }, () => stopLead(a, id)));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await overrides(id)).toHaveLength(1);
  });

  it('all sequence lanes of the lead stop: every lead of the workspace with the same xUserId, each with its own ledger entry', async () => {
    const xUserId = nextXUserId();
    const s1 = await insertSequence(t.db, a.workspaceId);
    const s2 = await insertSequence(t.db, a.workspaceId);
    const s3 = await insertSequence(t.db, a.workspaceId);
    const due = new Date('2026-11-22T00:00:00.000Z');
    const queuedLane = await insertLead(t.db, a.workspaceId, { x_user_id: xUserId, sequence_id: s1, stage: 'queued', next_action_at: due });
    const messagedLane = await insertLead(t.db, a.workspaceId, {
      x_user_id: xUserId,
      sequence_id: s2,
      stage: 'messaged',
      messaged_at: due,
      next_action_at: due,
    });
    const finishedLane = await insertLead(t.db, a.workspaceId, {
      x_user_id: xUserId,
      sequence_id: s3,
      stage: 'replied',
      replied_at: due,
      automation_stopped: true,
    });
    const otherPerson = await insertLead(t.db, a.workspaceId, { x_user_id: nextXUserId(), sequence_id: s1, stage: 'queued', next_action_at: due });
    const otherWorkspace = await insertLead(t.db, b.workspaceId, { x_user_id: xUserId, stage: 'queued', next_action_at: due });

    const res = await stopLead(a, messagedLane);
    expect(res.json().lead).toMatchObject({ id: messagedLane, stage: 'messaged', automationStopped: true });

    expect(await leadRow(queuedLane)).toMatchObject({ stage: 'skipped', automation_stopped: true, next_action_at: null });
    expect(await leadRow(messagedLane)).toMatchObject({ stage: 'messaged', automation_stopped: true, next_action_at: null });
    expect(await leadRow(finishedLane)).toMatchObject({ stage: 'replied', automation_stopped: true });
    expect(await leadRow(otherPerson)).toMatchObject({ stage: 'queued', automation_stopped: false, next_action_at: due });
    expect(await leadRow(otherWorkspace)).toMatchObject({ stage: 'queued', automation_stopped: false, next_action_at: due });

    // Only lanes that changed are recorded; the lane that had already finished needed no override.
    expect(await overrides(queuedLane)).toHaveLength(1);
    expect(await overrides(messagedLane)).toHaveLength(1);
    expect(await overrides(finishedLane)).toHaveLength(0);
    expect(JSON.parse((await overrides(queuedLane))[0].detail)).toEqual({ op: 'stop', scope: 'lead_automation', requestedLeadId: messagedLane });

    // Stopping another lane of the same person afterwards is a no-op.
    expect((await stopLead(a, queuedLane)).json().lead).toMatchObject({ stage: 'skipped', automationStopped: true });
    expect(await overrides(queuedLane)).toHaveLength(1);
  });

  it('a lead without an xUserId is its only lane', async () => {
    const lone = await insertLead(t.db, a.workspaceId, { stage: 'queued', next_action_at: new Date('2026-11-22T00:00:00.000Z') });
    const bystander = await insertLead(t.db, a.workspaceId, { stage: 'queued', next_action_at: new Date('2026-11-22T00:00:00.000Z') });
    expect((await stopLead(a, lone)).json().lead).toMatchObject({ stage: 'skipped', automationStopped: true });
    expect(await leadRow(bystander)).toMatchObject({ stage: 'queued', automation_stopped: false });
  });

  it('a lead already done (stopped, nothing due) answers ok and writes nothing', async () => {
    const id = await insertLead(t.db, a.workspaceId, {
      x_user_id: nextXUserId(),
      stage: 'replied',
      automation_stopped: true,
      replied_at: new Date('2026-11-20T00:00:00.000Z'),
    });
    const res = await stopLead(a, id);
    expect(res.statusCode).toBe(200);
    expect(res.json().lead).toMatchObject({ stage: 'replied', automationStopped: true });
    expect(await overrides(id)).toHaveLength(0);
  });

  it('works while the X channel is disabled, while GET /x/leads/{id} answers 403 channel_disabled', async () => {
    const ws = await createWorkspaceWithKey(t, 'Channel Off Co');
    const id = await insertLead(t.db, ws.workspaceId, { x_user_id: nextXUserId(), stage: 'queued', next_action_at: new Date('2026-11-22T00:00:00.000Z') });
    await setWorkspaceState(t.db, ws.workspaceId, { xChannelEnabled: false });
    expect((await getLead(ws, id)).json()).toMatchObject({ error: 'channel_disabled' });
    const res = await stopLead(ws, id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, lead: { id, stage: 'skipped', automationStopped: true } });
    expect(await overrides(id)).toHaveLength(1);
  });

  it('tenancy: a lead of another workspace answers 404 lead not found, exactly as an unknown id, and is left untouched', async () => {
    const foreign = await insertLead(t.db, b.workspaceId, { x_user_id: nextXUserId(), stage: 'queued', next_action_at: new Date('2026-11-22T00:00:00.000Z') });
    const unknown = await stopLead(a, newId());
    const other = await stopLead(a, foreign);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'lead not found' });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual(unknown.json());
    expect(await leadRow(foreign)).toMatchObject({ stage: 'queued', automation_stopped: false });
    expect(await overrides(foreign)).toHaveLength(0);
  });

  it('a path id that is not a uuid answers 400 naming the id parameter', async () => {
    const res = await stopLead(a, 'nope');
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('params/id');
  });

  it('takes no body: a bare POST with a JSON content type and an empty body is accepted, and a sent body is ignored', async () => {
    const id = await insertLead(t.db, a.workspaceId, { x_user_id: nextXUserId() });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/x/leads/${id}/stop`,
      headers: { ...a.auth, 'content-type': 'application/json' },
      payload: '',
    });
    expect(res.statusCode).toBe(200);
    const withBody = await t.app.inject({ method: 'POST', url: `/api/v1/x/leads/${id}/stop`, headers: a.auth, payload: { permanent: true } });
    expect(withBody.statusCode).toBe(200);
    expect(withBody.json()).toMatchObject({ ok: true, permanentSuppression: false });
  });

  it('the X-Workspace-Client selector stops a Team client lead', async () => {
    const id = await insertLead(t.db, client.workspaceId, { x_user_id: nextXUserId() });
    expect((await stopLead(a, id)).statusCode).toBe(404);
    expect((await stopLead(a, id, { 'x-workspace-client': client.workspaceId })).json()).toMatchObject({ ok: true, lead: { id, automationStopped: true } });
  });
});

describe('OpenAPI description of the lead operations', () => {
  it('documents the real response schemas and the X-Workspace-Client header', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const get = doc.paths['/api/v1/x/leads/{id}'].get;
    const stop = doc.paths['/api/v1/x/leads/{id}/stop'].post;
    for (const op of [get, stop]) {
      expect(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(
        expect.arrayContaining(['header:x-workspace-client', 'path:id']),
      );
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404']));
    }
    const lead = get.responses['200'].content['application/json'].schema.properties.lead;
    expect(Object.keys(lead.properties).sort()).toEqual(
      [
        'accountUserId',
        'automationStopped',
        'currentStep',
        'deliveryGuaranteed',
        'followedAt',
        'followedBackAt',
        'id',
        'messagedAt',
        'nextActionAt',
        'optedOutAt',
        'playId',
        'repliedAt',
        'sequenceId',
        'stage',
        'username',
        'xUserId',
      ].sort(),
    );
    expect(lead.required).toHaveLength(16);
    const stopBody = stop.responses['200'].content['application/json'].schema;
    expect(stopBody.required.sort()).toEqual(['lead', 'note', 'ok', 'permanentSuppression', 'scope']);
  });
});

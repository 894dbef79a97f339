import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount, insertSequence } from '../../helpers/factories.js';
import { call, connectInMemory } from '../../mcp/mcp-client.js';

// Issue 42 §4 and §7: a person records a meeting's outcome (or a meeting booked elsewhere) through the API and MCP;
// every change is in the ledger with who made it, and the funnel counts move as docs/cross-channel.md says.

type Ws = Awaited<ReturnType<typeof createWorkspaceWithKey>>;

describe('meeting outcomes a person records', () => {
  let t: TestApp;
  let a: Ws;
  let b: Ws;
  let mcp: Client;
  let account: string;
  let sequenceId: string;

  beforeAll(async () => {
    t = await buildTestApp();
    a = await createWorkspaceWithKey(t, 'Outcomes Co');
    b = await createWorkspaceWithKey(t, 'Elsewhere Co');
    account = await insertMessagingAccount(t.db, a.workspaceId);
    sequenceId = await insertSequence(t.db, a.workspaceId);
    mcp = await connectInMemory(t.services, a.workspaceId);
  }, 60_000);
  afterAll(async () => t?.close());
  beforeEach(() => t?.clock.advance(60_000));

  const record = (ws: Ws, leadId: string, body: unknown) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/leads/${leadId}/meeting`,
      headers: { ...ws.auth, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  const funnel = async () => (await t.app.inject({ method: 'GET', url: '/api/v1/progress', headers: a.auth })).json().funnel as Record<string, number>;
  const lastEntry = async (leadId: string) => {
    const r = await t.db
      .selectFrom('activity')
      .select(['action', 'detail'])
      .where('lead_id', '=', leadId)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .executeTakeFirstOrThrow();
    return { action: r.action, ...(JSON.parse(r.detail) as Record<string, unknown>) };
  };
  const newLead = () =>
    insertLead(t.db, a.workspaceId, {
      account_id: account,
      sequence_id: sequenceId,
      email: `p${Math.random().toString(36).slice(2)}@initech.example`,
      next_action_at: new Date('2026-11-25T09:00:00Z'),
    });

  it('a meeting booked elsewhere, then each outcome in turn: lead fields, ledger with who, and the funnel', async () => {
    const lead = await newLead();
    const booked = await record(a, lead, { bookedAt: '2026-11-28T15:00:00Z', by: 'maria' });
    expect(booked.statusCode).toBe(200);
    expect(booked.json().lead).toMatchObject({
      id: lead,
      meetingBookedAt: t.clock.now().toISOString(),
      meetingOutcome: null,
      sequenceDone: true,
      nextActionAt: null,
    });
    expect(await lastEntry(lead)).toMatchObject({
      action: 'meeting_booked',
      source: 'person',
      by: 'maria',
      startsAt: '2026-11-28T15:00:00.000Z',
      matchedBy: 'lead',
    });
    expect(await funnel()).toMatchObject({ meetingsBooked: 1, meetingsQualifying: 1, meetingsNoShowOrCancelled: 0 });

    const steps: [string, Record<string, number>, string][] = [
      ['held', { meetingsQualifying: 1, meetingsNoShowOrCancelled: 0 }, 'meeting_synced'],
      ['not_qualified', { meetingsQualifying: 0, meetingsNoShowOrCancelled: 0 }, 'meeting_synced'],
      ['qualified', { meetingsQualifying: 1, meetingsNoShowOrCancelled: 0 }, 'meeting_synced'],
      ['no_show', { meetingsQualifying: 0, meetingsNoShowOrCancelled: 1 }, 'meeting_no_show'],
      ['cancelled', { meetingsQualifying: 0, meetingsNoShowOrCancelled: 1 }, 'meeting_synced'],
    ];
    for (const [outcome, counts, action] of steps) {
      t.clock.advance(60_000);
      const res = await record(a, lead, { outcome, note: `went ${outcome}`, by: 'maria' });
      expect(res.statusCode, outcome).toBe(200);
      expect(res.json().lead.meetingOutcome).toBe(outcome);
      expect(await lastEntry(lead)).toMatchObject({ action, change: 'outcome', outcome, note: `went ${outcome}`, by: 'maria', source: 'person' });
      expect(await funnel(), outcome).toMatchObject({ meetingsBooked: 1, ...counts });
    }
  });

  it('through MCP: the same record, by "api" unless told, as decide_reply', async () => {
    const lead = await newLead();
    const answer = await call(mcp, 'set_lead_meeting', { leadId: lead, bookedAt: '2026-11-29T10:00:00Z', outcome: 'held' });
    expect(answer).toMatchObject({ ok: true, data: { ok: true, lead: { id: lead, meetingOutcome: 'held' } } });
    expect(answer.ok && answer.data.lead.meetingBookedAt).toBeTruthy();
    const entries = await t.db.selectFrom('activity').select(['action', 'detail']).where('lead_id', '=', lead).execute();
    expect(entries.map((e) => ({ action: e.action, ...(JSON.parse(e.detail) as object) }))).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: 'meeting_booked', by: 'api' }),
        expect.objectContaining({ action: 'meeting_synced', outcome: 'held', by: 'api' }),
      ]),
    );
    // A dry run answers what the call would save, and saves nothing.
    const other = await newLead();
    const dry = await call(mcp, 'set_lead_meeting', { leadId: other, bookedAt: '2026-11-29T10:00:00Z', dryRun: true });
    expect(dry).toMatchObject({ ok: true, data: { lead: { id: other, sequenceDone: true } } });
    expect(await t.db.selectFrom('leads').select(['meeting_booked_at', 'automation_stopped']).where('id', '=', other).executeTakeFirstOrThrow()).toEqual({
      meeting_booked_at: null,
      automation_stopped: false,
    });
    const refused = await call(mcp, 'set_lead_meeting', { leadId: await newLead(), outcome: 'held' });
    expect(refused).toMatchObject({ ok: false, error: { error: 'no_meeting' } });
  });

  it('refusals change nothing: no meeting yet (409), a foreign or unknown lead (404), a bad outcome or an empty body (400 naming the field)', async () => {
    const lead = await newLead();
    const before = await funnel();
    const noMeeting = await record(a, lead, { outcome: 'held' });
    expect(noMeeting.statusCode).toBe(409);
    expect(noMeeting.json()).toMatchObject({ error: 'no_meeting' });
    expect((await record(b, lead, { bookedAt: '2026-11-28T15:00:00Z' })).statusCode).toBe(404);
    expect((await record(a, '00000000-0000-4000-8000-000000000000', { bookedAt: '2026-11-28T15:00:00Z' })).statusCode).toBe(404);
    const bad = await record(a, lead, { outcome: 'great' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('outcome');
    for (const body of [{}, { note: 'only a note' }, { bookedAt: 'tomorrow' }, { outcome: 'held', note: 'x'.repeat(2001) }]) {
      const res = await record(a, lead, body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 40)).toBe(400);
    }
    expect(await funnel()).toEqual(before);
    const row = await t.db
      .selectFrom('leads')
      .select(['meeting_booked_at', 'meeting_outcome', 'automation_stopped'])
      .where('id', '=', lead)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ meeting_booked_at: null, meeting_outcome: null, automation_stopped: false });
  });
});

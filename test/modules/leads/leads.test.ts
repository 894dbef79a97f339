import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import { createTeamWorkspaces, type TestWorkspace } from '../../helpers/http-client.js';
import { insertLead, insertMessagingAccount, insertSequence } from '../../helpers/factories.js';
import { newId } from '../../../src/lib/ids.js';

let t: TestApp;
type Ws = TestWorkspace;
let a: Ws, b: Ws, client: Ws;
const NOW = '2026-11-21T12:00:00.000Z';
const d = (day: number, hour = 10) => new Date(`2026-11-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00.000Z`);

const get = (ws: Ws, query = '', headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: `/api/v1/leads${query}`, headers: { ...ws.auth, ...headers } });
const ids = async (query: string) => {
  const body = (await get(a, query)).json();
  expect(body.count, query).toBe(body.leads.length);
  return body.leads.map((l: { id: string }) => names.get(l.id)).sort();
};

const names = new Map<string, string>();
let full: string, account: string, sequence: string;

beforeAll(async () => {
  t = await buildTestApp({ now: NOW });
  ({ a, b, client } = await createTeamWorkspaces(t, 'Leads Co'));
  account = await insertMessagingAccount(t.db, a.workspaceId);
  sequence = await insertSequence(t.db, a.workspaceId);

  const add = async (name: string, f: Parameters<typeof insertLead>[2]) => {
    const id = await insertLead(t.db, a.workspaceId, { person: name, ...f });
    names.set(id, name);
    return id;
  };
  let n = 0;
  const created = () => d(1, n++);
  await add('queued', { stage: 'queued', created_at: created() });
  await add('resolving', { stage: 'resolving', created_at: created() });
  await add('invited', { stage: 'invited', invited_at: d(2), created_at: created() });
  await add('accepted', { stage: 'accepted', invited_at: d(2), connected_at: d(3), created_at: created() });
  await add('messaged', { stage: 'messaged', invited_at: d(2), connected_at: d(3), messaged_at: d(4), created_at: created() });
  await add('followed_up', { stage: 'followed_up', messaged_at: d(4), created_at: created() });
  await add('replied', { stage: 'replied', messaged_at: d(4), replied_at: d(20), created_at: created() });
  // Failed after its invite went out: exact match for `failed`, yet it did reach `invited`.
  await add('failed_after_invite', { stage: 'failed', invited_at: d(2), last_error: 'provider_error', created_at: created() });
  await add('failed_early', { stage: 'failed', created_at: created() });
  await add('skipped', { stage: 'skipped', created_at: created() });
  await add('booked', { stage: 'replied', replied_at: d(5), meeting_booked_at: d(6), created_at: created() });
  await add('touched_recently', { stage: 'queued', last_activity_at: d(19), created_at: created() });
  await add('Ann 50% Off', { stage: 'queued', company: 'Percent_Co', created_at: created() });
  await add('Ann 500 Off', { stage: 'queued', company: 'PercentXCo', created_at: created() });
  await add('back\\slash', { stage: 'queued', created_at: created() });
  await add('title-holder', { stage: 'queued', title: 'VP of ZEBRAS', created_at: created() });
  full = await add('Full Person', {
    company: 'Initech',
    title: 'CTO',
    email: 'full@initech.example',
    linkedin_url: 'https://www.linkedin.com/in/full',
    account_id: account,
    sequence_id: sequence,
    strategy_id: '11111111-1111-4111-8111-111111111111',
    strategy_run_id: '22222222-2222-4222-8222-222222222222',
    invite_priority: 7,
    stage: 'messaged',
    current_step: 2,
    next_action_at: d(23),
    automation_stopped: true,
    invited_at: d(2),
    connected_at: d(3),
    messaged_at: d(4),
    replied_at: null,
    meeting_booked_at: null,
    meeting_outcome: 'held',
    snoozed_until: d(25),
    opted_out_at: d(7),
    reply_sentiment: 'neutral',
    last_error: 'none',
    created_at: d(10),
  });

  await insertLead(t.db, b.workspaceId, { person: 'Foreign queued', stage: 'queued' });
  await insertLead(t.db, client.workspaceId, { person: 'Client lead', stage: 'replied', replied_at: d(20) });
});
afterAll(async () => t?.close());

describe('GET /leads', () => {
  it('answers every cross-channel field, newest first, with count and returned', async () => {
    const res = await get(a);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.count).toBe(17);
    expect(body.returned).toBe(17);
    expect(body.leads[0]).toEqual({
      id: full,
      person: 'Full Person',
      company: 'Initech',
      title: 'CTO',
      email: 'full@initech.example',
      linkedinUrl: 'https://www.linkedin.com/in/full',
      account,
      sequenceId: sequence,
      strategyId: '11111111-1111-4111-8111-111111111111',
      strategyRunId: '22222222-2222-4222-8222-222222222222',
      invitePriority: 7,
      stage: 'messaged',
      currentStep: 2,
      nextActionAt: '2026-11-23T10:00:00.000Z',
      sequenceDone: true,
      invitedAt: '2026-11-02T10:00:00.000Z',
      connectedAt: '2026-11-03T10:00:00.000Z',
      messagedAt: '2026-11-04T10:00:00.000Z',
      repliedAt: null,
      meetingBookedAt: null,
      meetingOutcome: 'held',
      meetingResponse: null,
      snoozedUntil: '2026-11-25T10:00:00.000Z',
      optedOutAt: '2026-11-07T10:00:00.000Z',
      replySentiment: 'neutral',
      lastError: 'none',
    });
    expect(body.leads[1].person).toBe('title-holder');
    expect(body.leads.at(-1).person).toBe('queued');
  });

  it('stage is cumulative in the spec order; failed and skipped match exactly', async () => {
    expect(await ids('?stage=replied')).toEqual(['booked', 'replied']);
    expect(await ids('?stage=followed_up')).toEqual(['booked', 'followed_up', 'replied']);
    expect(await ids('?stage=messaged')).toEqual(['Full Person', 'booked', 'followed_up', 'messaged', 'replied']);
    expect(await ids('?stage=accepted')).toEqual(['Full Person', 'accepted', 'booked', 'followed_up', 'messaged', 'replied']);
    expect(await ids('?stage=invited')).toEqual(['Full Person', 'accepted', 'booked', 'failed_after_invite', 'followed_up', 'invited', 'messaged', 'replied']);
    expect((await get(a, '?stage=resolving')).json().count).toBe(9);
    // Everything on the ordered path, so not the failed-early or skipped leads.
    expect((await get(a, '?stage=queued')).json().count).toBe(15);
    expect(await ids('?stage=failed')).toEqual(['failed_after_invite', 'failed_early']);
    expect(await ids('?stage=skipped')).toEqual(['skipped']);
  });

  it('q is a case-insensitive substring of person, company or title, with wildcards taken literally', async () => {
    expect(await ids('?q=ann%2050')).toEqual(['Ann 50% Off', 'Ann 500 Off']);
    expect(await ids('?q=50%25')).toEqual(['Ann 50% Off']);
    expect(await ids('?q=percent_co')).toEqual(['Ann 50% Off']);
    expect(await ids('?q=_')).toEqual(['Ann 50% Off', 'failed_after_invite', 'failed_early', 'followed_up', 'touched_recently']);
    expect(await ids('?q=%5C')).toEqual(['back\\slash']);
    expect(await ids('?q=INITECH')).toEqual(['Full Person']);
    expect(await ids('?q=zebra')).toEqual(['title-holder']);
    expect(await ids('?q=%25')).toEqual(['Ann 50% Off']);
    expect(await ids('?q=nobody')).toEqual([]);
    expect((await get(a, '?q=')).json().count).toBe(17);
  });

  it('engaged, booked and sinceDays (which implies engaged)', async () => {
    expect(await ids('?engaged=1')).toEqual([
      'Full Person',
      'accepted',
      'booked',
      'failed_after_invite',
      'followed_up',
      'invited',
      'messaged',
      'replied',
      'touched_recently',
    ]);
    expect((await get(a, '?engaged=0')).json().count).toBe(17);
    expect(await ids('?booked=1')).toEqual(['booked']);
    expect(await ids('?sinceDays=3')).toEqual(['replied', 'touched_recently']);
    expect(await ids('?sinceDays=2&engaged=0')).toEqual(['replied']);
    expect(await ids('?stage=replied&sinceDays=3')).toEqual(['replied']);
  });

  it('limit bounds the page while count stays exact', async () => {
    const body = (await get(a, '?limit=3')).json();
    expect(body).toMatchObject({ count: 17, returned: 3 });
    expect(body.leads).toHaveLength(3);
    expect((await get(a, '?limit=500')).json().returned).toBe(17);
  });

  it('400 for a bad stage, flag, sinceDays or limit', async () => {
    for (const q of [
      'stage=bogus',
      'stage=Replied',
      'engaged=2',
      'engaged=true',
      'booked=yes',
      'sinceDays=0',
      'sinceDays=366',
      'sinceDays=x',
      'limit=0',
      'limit=501',
      'limit=2.5',
      'q=a%0Ab',
      'q=%00',
      'q=' + 'x'.repeat(201),
    ]) {
      const res = await get(a, `?${q}`);
      expect(res.statusCode, q).toBe(400);
    }
  });

  it('is scoped to the workspace and honors X-Workspace-Client', async () => {
    expect((await get(b)).json()).toMatchObject({ count: 1, leads: [{ person: 'Foreign queued' }] });
    const viaSelector = (await get(a, '?stage=replied', { 'x-workspace-client': client.workspaceId })).json();
    expect(viaSelector).toMatchObject({ count: 1, leads: [{ person: 'Client lead' }] });
    expect((await get(a, '', { 'x-workspace-client': newId() })).statusCode).toBe(403);
  });
});

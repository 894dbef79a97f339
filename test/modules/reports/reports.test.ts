import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZERO_FUNNEL } from '../../helpers/funnel.js';
import { randomBytes } from 'node:crypto';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.js';
import { createTeamWorkspaces, type TestWorkspace, okJson } from '../../helpers/http-client.js';
import { insertLead, insertMessagingAccount, insertReply, insertSequence } from '../../helpers/factories.js';
import { createTextCipher } from '../../../src/lib/crypto.js';

let t: TestApp;
let a: TestWorkspace, b: TestWorkspace, client: TestWorkspace;
const cipher = createTextCipher(randomBytes(32));
const d = (day: number) => new Date(`2026-11-${String(day).padStart(2, '0')}T10:00:00.000Z`);

const get = (ws: TestWorkspace, query = '', headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: `/api/v1/reports/funnel${query}`, headers: { ...ws.auth, ...headers } });

let seqA: string;
let seqB: string;
let seqEmpty: string;
let acc1: string;
let acc2: string;

const zero = ZERO_FUNNEL;

beforeAll(async () => {
  t = await buildTestApp();
  ({ a, b, client } = await createTeamWorkspaces(t, 'Reports Co', 'member'));

  const variants = (keys: string[]) => keys.map((key) => ({ key, weight: 1, messageTmpl: `Hello ${key}` }));
  seqA = await insertSequence(t.db, a.workspaceId, {
    name: 'Founders',
    createdAt: d(1),
    steps: [
      { index: 0, kind: 'connect', delayDays: 0, message: 'Hi' },
      { index: 1, kind: 'message', delayDays: 2, variants: variants(['A', 'B', 'C']) },
    ],
  });
  // A variant on the connect step is "sent" with the invite.
  seqB = await insertSequence(t.db, a.workspaceId, {
    name: 'CTOs',
    createdAt: d(2),
    steps: [{ index: 0, kind: 'connect', delayDays: 0, variants: variants(['X']) }],
  });
  seqEmpty = await insertSequence(t.db, a.workspaceId, { name: 'Unused', createdAt: d(3) });
  acc1 = await insertMessagingAccount(t.db, a.workspaceId, { name: 'Dana', created_at: d(1) });
  acc2 = await insertMessagingAccount(t.db, a.workspaceId, { name: 'Eli', created_at: d(2) });

  await insertLead(t.db, a.workspaceId, { sequence_id: seqA, account_id: acc1, variant_key: 'A', invited_at: d(1), connected_at: d(2), messaged_at: d(3) });
  const replied = await insertLead(t.db, a.workspaceId, {
    sequence_id: seqA,
    account_id: acc1,
    variant_key: 'A',
    invited_at: d(1),
    connected_at: d(2),
    messaged_at: d(3),
    replied_at: d(4),
    meeting_booked_at: d(5),
  });
  await insertReply(t.db, cipher, a.workspaceId, { leadId: replied, classification: 'positive' });
  await insertLead(t.db, a.workspaceId, { sequence_id: seqA, account_id: acc2, variant_key: 'B', invited_at: d(1) });
  // Assigned an arm but the variant step has not gone out yet.
  await insertLead(t.db, a.workspaceId, { sequence_id: seqA, account_id: acc2, variant_key: 'B' });
  const negative = await insertLead(t.db, a.workspaceId, {
    sequence_id: seqB,
    account_id: acc2,
    variant_key: 'X',
    invited_at: d(1),
    messaged_at: d(2),
    replied_at: d(3),
  });
  await insertReply(t.db, cipher, a.workspaceId, { leadId: negative, classification: 'unsubscribe' });
  await insertLead(t.db, a.workspaceId, { x_user_id: '123456', messaged_at: d(2) });

  await insertLead(t.db, b.workspaceId, { invited_at: d(1) });
  await insertLead(t.db, client.workspaceId, { invited_at: d(1), connected_at: d(2) });
});
afterAll(async () => t?.close());

describe('GET /reports/funnel', () => {
  it('groups by sequence by default: every sequence in creation order, then the leads without one', async () => {
    const body = okJson(await get(a));
    expect(body.groupBy).toBe('sequence');
    expect(body.total).toEqual({
      leads: 6,
      invited: 4,
      accepted: 2,
      messaged: 4,
      replied: 2,
      meetingsBooked: 1,
      repliesPositive: 1,
      repliesNegative: 1,
      acceptRate: 0.5,
      replyRate: 0.5,
    });
    expect(body.groups).toEqual([
      {
        id: seqA,
        name: 'Founders',
        funnel: {
          leads: 4,
          invited: 3,
          accepted: 2,
          messaged: 2,
          replied: 1,
          meetingsBooked: 1,
          repliesPositive: 1,
          repliesNegative: 0,
          acceptRate: 0.6667,
          replyRate: 0.5,
        },
      },
      {
        id: seqB,
        name: 'CTOs',
        funnel: {
          leads: 1,
          invited: 1,
          accepted: 0,
          messaged: 1,
          replied: 1,
          meetingsBooked: 0,
          repliesPositive: 0,
          repliesNegative: 1,
          acceptRate: 0,
          replyRate: 1,
        },
      },
      { id: seqEmpty, name: 'Unused', funnel: zero },
      { id: null, name: null, funnel: { ...zero, leads: 1, messaged: 1 } },
    ]);
    expect(body.experimentArms).toEqual([
      { sequenceId: seqA, variantKey: 'A', sent: 2, accepted: 2, replied: 1, meetingsBooked: 1 },
      { sequenceId: seqA, variantKey: 'B', sent: 0, accepted: 0, replied: 0, meetingsBooked: 0 },
      { sequenceId: seqA, variantKey: 'C', sent: 0, accepted: 0, replied: 0, meetingsBooked: 0 },
      { sequenceId: seqB, variantKey: 'X', sent: 1, accepted: 0, replied: 1, meetingsBooked: 0 },
    ]);
    expect(body.excludedWarmupAccounts).toEqual([]);
  });

  it('group_by=account groups by messaging account with the same counts', async () => {
    const body = (await get(a, '?group_by=account')).json();
    expect(body.groupBy).toBe('account');
    expect(body.groups.map((g: { id: string | null; name: string | null; funnel: { leads: number } }) => [g.id, g.name, g.funnel.leads])).toEqual([
      [acc1, 'Dana', 2],
      [acc2, 'Eli', 3],
      [null, null, 1],
    ]);
    const sum = (k: string) => body.groups.reduce((n: number, g: { funnel: Record<string, number> }) => n + g.funnel[k], 0);
    for (const k of ['leads', 'invited', 'accepted', 'messaged', 'replied', 'meetingsBooked', 'repliesPositive', 'repliesNegative']) {
      expect(sum(k), k).toBe(body.total[k]);
    }
  });

  it('the total equals the /progress funnel: one definition everywhere', async () => {
    const total = (await get(a)).json().total;
    const progress = (await t.app.inject({ method: 'GET', url: '/api/v1/progress', headers: a.auth })).json().funnel;
    expect(progress).toMatchObject(total);
  });

  it('400 for any other group_by', async () => {
    for (const v of ['foo', 'SEQUENCE', '', 'sequence,account']) {
      const res = await get(a, `?group_by=${v}`);
      expect(res.statusCode, v).toBe(400);
    }
  });

  it('is scoped to the workspace and honors X-Workspace-Client', async () => {
    expect((await get(b)).json().total.leads).toBe(1);
    const viaSelector = (await get(a, '', { 'x-workspace-client': client.workspaceId })).json();
    expect(viaSelector.total).toMatchObject({ leads: 1, invited: 1, accepted: 1, acceptRate: 1 });
    expect(viaSelector.groups).toEqual([{ id: null, name: null, funnel: expect.objectContaining({ leads: 1 }) }]);
    expect((await get(b, '', { 'x-workspace-client': a.workspaceId })).statusCode).toBe(403);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount, insertPlay, insertReply, insertSequence } from '../helpers/factories.js';
import { buildCrmTestApp, createMemoryChannels } from '../helpers/memory-channels.js';
import { classifyReply, isStopWord, type Classification } from '../../src/domain/classify.js';
import { iso } from '../../src/domain/iso.js';
import { replyOptsOut } from '../../src/domain/opt-out.js';
import { toEventLead } from '../../src/domain/lead-views.js';
import { toPlayView } from '../../src/domain/play-view.js';
import { ACTIVITY_ACTIONS, inWords, isRole, LEAD_STAGES, MESSAGE_KINDS, PROGRESS_STAGES, ROLES, STEP_KINDS } from '../../src/domain/vocabulary.js';

// The shared vocabulary and the public-object builders of src/domain: each list is the one the API publishes,
// and each builder answers exactly the spec's fields.

const channels = createMemoryChannels();
let t: TestApp;
let a: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let doc: any;

beforeAll(async () => {
  t = await buildCrmTestApp({ channels, now: '2026-11-21T12:00:00.000Z' });
  a = await createWorkspaceWithKey(t, 'Domain Co');
  doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(async () => t?.close());

const get = (url: string) => t.app.inject({ method: 'GET', url, headers: a.auth });
const json200 = (op: any) => op.responses['200'].content['application/json'].schema;
const anyOfValues = (schema: { anyOf: { enum: string[] }[] }) => schema.anyOf.flatMap((s) => s.enum);

describe('vocabulary: one list, the one the API publishes', () => {
  it('ROLES is the Workspace role enum of GET /workspaces, in order', () => {
    const role = json200(doc.paths['/api/v1/workspaces'].get).properties.workspaces.items.properties.role;
    expect(anyOfValues(role)).toEqual([...ROLES]);
  });

  it('STEP_KINDS is the step kind enum of GET /sequences, in order; message kinds are step kinds', () => {
    const kind = json200(doc.paths['/api/v1/sequences'].get).properties.sequences.items.properties.steps.items.properties.kind;
    expect(anyOfValues(kind)).toEqual([...STEP_KINDS]);
    for (const k of MESSAGE_KINDS) expect(STEP_KINDS).toContain(k);
  });

  it('LEAD_STAGES is the stage enum of GET /leads and of the social-network lead, in the spec order', () => {
    expect(LEAD_STAGES).toEqual(['queued', 'resolving', 'invited', 'accepted', 'messaged', 'followed_up', 'replied', 'failed', 'skipped']);
    const stageParam = doc.paths['/api/v1/leads'].get.parameters.find((p: { name: string }) => p.name === 'stage');
    expect(stageParam.schema.enum).toEqual([...LEAD_STAGES]);
    const xStage = json200(doc.paths['/api/v1/x/leads/{id}'].get).properties.lead.properties.stage;
    expect(xStage.description).toBe('queued, resolving, invited, accepted, messaged, followed_up, replied, failed or skipped');
  });

  it('PROGRESS_STAGES is the ordered part, queued up to replied; failed and skipped stay outside it', () => {
    expect(PROGRESS_STAGES).toEqual(['queued', 'resolving', 'invited', 'accepted', 'messaged', 'followed_up', 'replied']);
  });

  it('ACTIVITY_ACTIONS is the action enum of GET /activity entries', () => {
    const action = json200(doc.paths['/api/v1/activity'].get).properties.actions.items.properties.action;
    expect(action.enum).toEqual([...ACTIVITY_ACTIONS]);
  });

  it('isRole accepts exactly the list; a Team link with another role is refused with invalid_role', async () => {
    expect(ROLES.every(isRole)).toBe(true);
    expect(isRole('Owner')).toBe(false);
    const client = await createWorkspaceWithKey(t, 'Domain client');
    await expect(
      t.services.workspaces.addTeamLink({ ownerWorkspaceId: a.workspaceId, clientWorkspaceId: client.workspaceId, role: 'boss' as never }),
    ).rejects.toMatchObject({ statusCode: 400, code: 'invalid_role', message: 'role must be owner, admin or member' });
  });

  it('inWords writes a list the way messages do', () => {
    expect(inWords(ROLES)).toBe('owner, admin or member');
    expect(inWords(['one'])).toBe('one');
    expect(inWords([])).toBe('');
  });
});

describe('iso', () => {
  it('null stays null; a time is ISO 8601 in UTC', () => {
    expect(iso(null)).toBeNull();
    expect(iso(new Date('2026-11-21T13:00:00+01:00'))).toBe('2026-11-21T12:00:00.000Z');
  });
});

describe('public views through HTTP answer exactly the spec fields', () => {
  it('Play view (GET /x/plays): the spec Play object, and authoring adds only kind', async () => {
    const sequenceId = await insertSequence(t.db, a.workspaceId, { channels: ['x'] });
    const playId = (await insertPlay(t.db, a.workspaceId, { sequenceId, accountUserId: '2001' })).id;
    const res = await get('/api/v1/x/plays');
    expect(res.statusCode).toBe(200);
    expect(res.json().plays).toEqual([
      { id: playId, name: expect.any(String), status: 'active', revision: 1, sequenceId, accountUserId: '2001', reviewApiEnabled: true, autopilot: false },
    ]);
    const row = {
      id: playId,
      name: 'P',
      status: 'active' as const,
      revision: 1,
      sequence_id: null,
      account_user_id: null,
      review_api_enabled: true,
      autopilot: false,
    };
    expect(Object.keys(toPlayView({ ...row, kind: 'followers' } as typeof row))).toEqual([
      'id',
      'name',
      'status',
      'revision',
      'sequenceId',
      'accountUserId',
      'reviewApiEnabled',
      'autopilot',
    ]);
  });

  it('social-network lead (GET /x/leads/{id}) and cross-channel lead (GET /leads)', async () => {
    const id = await insertLead(t.db, a.workspaceId, {
      person: 'Grace Hopper',
      x_user_id: '424242',
      username: 'grace',
      stage: 'messaged',
      messaged_at: new Date('2026-11-20T09:00:00.000Z'),
      invited_at: new Date('2026-11-19T09:00:00.000Z'),
    });
    const x = (await get(`/api/v1/x/leads/${id}`)).json().lead;
    expect(Object.keys(x)).toEqual([
      'id',
      'xUserId',
      'username',
      'accountUserId',
      'playId',
      'sequenceId',
      'stage',
      'automationStopped',
      'currentStep',
      'nextActionAt',
      'followedAt',
      'followedBackAt',
      'messagedAt',
      'repliedAt',
      'optedOutAt',
      'deliveryGuaranteed',
    ]);
    expect(x).toMatchObject({ id, stage: 'messaged', messagedAt: '2026-11-20T09:00:00.000Z', repliedAt: null, deliveryGuaranteed: false });

    const crm = (await get('/api/v1/leads?q=Grace')).json().leads;
    expect(crm).toHaveLength(1);
    expect(Object.keys(crm[0])).toEqual([
      'id',
      'person',
      'company',
      'title',
      'email',
      'linkedinUrl',
      'account',
      'sequenceId',
      'strategyId',
      'strategyRunId',
      'invitePriority',
      'stage',
      'currentStep',
      'nextActionAt',
      'sequenceDone',
      'invitedAt',
      'connectedAt',
      'messagedAt',
      'repliedAt',
      'meetingBookedAt',
      'meetingOutcome',
      'snoozedUntil',
      'optedOutAt',
      'replySentiment',
      'lastError',
      'meetingResponse',
    ]);
    expect(crm[0]).toMatchObject({ id, person: 'Grace Hopper', stage: 'messaged', invitedAt: '2026-11-19T09:00:00.000Z', sequenceDone: false });
  });

  it('event lead object and reply recipient: a decided reply emits the spec lead and sends to the lead without engine history', async () => {
    const account = await insertMessagingAccount(t.db, a.workspaceId);
    const leadId = await insertLead(t.db, a.workspaceId, {
      person: 'Ada Lovelace',
      company: 'Analytical',
      title: 'Engineer',
      email: 'ada@analytical.example',
      linkedin_url: 'https://www.linkedin.com/in/ada',
      account_id: account,
      stage: 'replied',
      replied_at: new Date('2026-11-20T10:00:00.000Z'),
      sandbox: JSON.stringify({ acceptAfterHours: 2 }),
    });
    const replyId = await insertReply(t.db, t.cipher, a.workspaceId, { leadId, draft: 'Thanks, Ada!' });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/replies/${replyId}/decide`,
      headers: { ...a.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ decision: 'send' }),
    });
    expect(res.statusCode).toBe(200);

    const sent = channels.delivered.find((d) => d.recipient.leadId === leadId)!;
    expect(sent.recipient).toEqual({
      leadId,
      person: 'Ada Lovelace',
      email: 'ada@analytical.example',
      linkedinUrl: 'https://www.linkedin.com/in/ada',
      xUserId: null,
      username: null,
      sandbox: { acceptAfterHours: 2 },
    });

    const events = await t.db.selectFrom('outbox_events').select(['event', 'data']).where('workspace_id', '=', a.workspaceId).execute();
    const messaged = events.find((e) => e.event === 'lead.messaged')!;
    // jsonb keeps no key order, so this pins the field set and values; the order is the builder's (unit test below).
    expect((messaged.data as { lead: unknown }).lead).toEqual({
      id: leadId,
      person: 'Ada Lovelace',
      company: 'Analytical',
      title: 'Engineer',
      email: 'ada@analytical.example',
      linkedinUrl: 'https://www.linkedin.com/in/ada',
      account,
      sequenceId: null,
      stage: 'replied',
    });
  });
});

describe('event lead object', () => {
  it('is the spec `lead` of Events, in its order, and nothing else from the row', () => {
    const row = {
      id: 'l1',
      person: 'P',
      company: 'C',
      title: 'T',
      email: 'e@x.example',
      linkedin_url: 'https://l.example/p',
      account_id: 'onb_1',
      sequence_id: 's1',
      stage: 'invited',
      x_user_id: '99',
      sandbox: { secret: true },
    };
    expect(toEventLead(row)).toEqual({
      id: 'l1',
      person: 'P',
      company: 'C',
      title: 'T',
      email: 'e@x.example',
      linkedinUrl: 'https://l.example/p',
      account: 'onb_1',
      sequenceId: 's1',
      stage: 'invited',
    });
    expect(Object.keys(toEventLead(row))).toEqual(['id', 'person', 'company', 'title', 'email', 'linkedinUrl', 'account', 'sequenceId', 'stage']);
  });
});

describe('reply classification: a whole message that only says stop (X automation rules, docs/opt-out.md)', () => {
  it('is an unsubscribe, case-insensitive, trimmed, with punctuation, on every channel', () => {
    for (const text of [
      'stop',
      'STOP',
      ' Stop. ',
      'STOP!!!',
      'unsubscribe',
      'Unsubscribe me',
      'stop messaging me',
      'Opt-out',
      'opt out',
      'Cancel',
      'please stop',
      'QUIT',
      "don't contact me",
    ]) {
      expect(classifyReply(text), text).toBe('unsubscribe');
    }
    expect(isStopWord('🛑 STOP 🛑')).toBe(true);
  });

  it('a stop word inside a longer message keeps the ordinary rules', () => {
    expect(isStopWord('Stop by our booth next week')).toBe(false);
    expect(classifyReply('Stop by our booth next week?')).toBe('meeting_intent');
    // Issue 38: "please stop" as a clause of its own is a stop request (it was 'negative' before).
    expect(classifyReply('Please stop, not interested')).toBe('unsubscribe');
    expect(classifyReply('Can we cancel the call and talk Tuesday?')).toBe('meeting_intent');
    expect(classifyReply('Sounds good')).toBe('positive');
    expect(classifyReply('I am out of office until Monday')).toBe('out_of_office');
    expect(classifyReply(null)).toBe('other');
  });

  it('an e-mail that asks to stop opts out only when threaded to our message to that address; X and the sandbox are always believed', () => {
    const sure = (label: Classification) => ({ label, needsReview: false });
    expect(replyOptsOut({ tiedToOurMessage: true }, sure('unsubscribe'))).toBe(true);
    expect(replyOptsOut({ tiedToOurMessage: false }, sure('unsubscribe'))).toBe(false);
    expect(replyOptsOut({}, sure('unsubscribe'))).toBe(true);
    expect(replyOptsOut({ tiedToOurMessage: true }, sure('negative'))).toBe(false);
    expect(replyOptsOut({}, sure('question'))).toBe(false);
  });

  it('a stop request below the confidence floor waits for a person: it never opts out on its own', () => {
    expect(replyOptsOut({ tiedToOurMessage: true }, { label: 'unsubscribe', needsReview: true })).toBe(false);
    expect(replyOptsOut({}, { label: 'unsubscribe', needsReview: true })).toBe(false);
  });
});

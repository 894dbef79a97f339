import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TextCipher } from '../../src/lib/crypto.js';
import { ALL_TOOLS } from '../../src/mcp/tools/index.js';
import { createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { buildCrmTestApp, createMemoryChannels } from '../helpers/memory-channels.js';
import { insertLead, insertReply, insertXAccount } from '../helpers/factories.js';
import { connectInMemory, ok, step } from './mcp-client.js';

// Issue 17: a dry run the real call would refuse must say so as a tool error carrying the API code (isError: true),
// never as a successful answer whose text describes what would happen. One refusal per write tool.

let t: TestApp & { cipher: TextCipher };
let client: Client;
let workspaceId: string;
const ids = {} as { sequence: string; approvedSequence: string; play: string; candidate: string; lead: string; reply: string; account: string };
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  t = await buildCrmTestApp({ channels: createMemoryChannels(), now: '2026-11-23T10:00:00.000Z' });
  ({ workspaceId } = await createWorkspaceWithKey(t, 'Dry runs'));
  client = await connectInMemory(t.services, workspaceId);
  ids.account = (await insertXAccount(t.db, workspaceId, { handle: 'dry_hq' })).userId;
  ids.sequence = (await ok(client, 'create_sequence', { name: 'Draft', steps: [step(0)] })).sequence.id;
  ids.approvedSequence = (await ok(client, 'create_sequence', { name: 'Approved', steps: [step(0)] })).sequence.id;
  await ok(client, 'approve_sequence', { sequenceId: ids.approvedSequence, expectedRevision: 1 });
  ids.play = (await ok(client, 'create_play', { name: 'Play', sequenceId: ids.approvedSequence, accountUserId: ids.account })).play.id;
  const staged = await ok(client, 'import_candidates', {
    playId: ids.play,
    requestId: 'dry-refusal-1',
    expectedRevision: 1,
    leads: [{ xUserId: '9300000001' }],
  });
  ids.candidate = staged.results[0].candidateId;
  // A lead without an email: invite is not among its reply's allowedDecisions.
  ids.lead = await insertLead(t.db, workspaceId, {
    person: 'No Email',
    linkedin_url: 'https://www.linkedin.com/in/no-email',
    stage: 'replied',
    replied_at: new Date('2026-11-22T09:00:00.000Z'),
  });
  ids.reply = await insertReply(t.db, t.cipher, workspaceId, { leadId: ids.lead, draft: 'Sure.' });
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

/** The raw tools/call result, so the test sees isError itself rather than a helper's reading of it. */
async function dryRun(name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: { ...args, dryRun: true } })) as {
    isError?: boolean;
    structuredContent?: unknown;
    content: { type: string; text: string }[];
  };
  return { isError: result.isError, structuredContent: result.structuredContent, body: JSON.parse(result.content[0].text) as Record<string, unknown> };
}

const cases: Record<string, { args: () => Record<string, unknown>; error: string; httpStatus: number; also?: Record<string, unknown> }> = {
  create_sequence: { args: () => ({ name: 'Bad', steps: [step(1)] }), error: 'invalid_steps', httpStatus: 400 },
  replace_sequence_steps: {
    args: () => ({ sequenceId: ids.sequence, expectedRevision: 5, steps: [step(0)] }),
    error: 'stale_sequence_revision',
    httpStatus: 409,
    also: { currentRevision: 1 },
  },
  approve_sequence: {
    args: () => ({ sequenceId: ids.sequence, expectedRevision: 5 }),
    error: 'stale_sequence_revision',
    httpStatus: 409,
    also: { currentRevision: 1 },
  },
  create_play: { args: () => ({ name: 'P', sequenceId: ids.sequence, accountUserId: '9399999999' }), error: 'account_not_connected', httpStatus: 409 },
  edit_play: {
    args: () => ({ playId: ids.play, expectedRevision: 5, name: 'Renamed' }),
    error: 'stale_play_revision',
    httpStatus: 409,
    also: { currentRevision: 1 },
  },
  set_play_status: {
    args: () => ({ playId: ids.play, expectedRevision: 5, status: 'paused' }),
    error: 'stale_play_revision',
    httpStatus: 409,
    also: { currentRevision: 1 },
  },
  set_play_review_api: {
    args: () => ({ playId: ids.play, expectedRevision: 5, enabled: false }),
    error: 'stale_play_revision',
    httpStatus: 409,
    also: { currentRevision: 1 },
  },
  stop_lead: { args: () => ({ leadId: UNKNOWN }), error: 'lead not found', httpStatus: 404 },
  import_candidates: {
    args: () => ({ playId: ids.play, requestId: 'dry-refusal-2', expectedRevision: 5, leads: [{ xUserId: '9300000002' }] }),
    error: 'stale_play_revision',
    httpStatus: 409,
    also: { currentRevision: 1 },
  },
  enroll_candidates: {
    args: () => ({ playId: ids.play, expectedRevision: 5, sequenceId: ids.approvedSequence, sequenceRevision: 1, candidateIds: [ids.candidate] }),
    error: 'stale_play_revision',
    httpStatus: 409,
    also: { currentRevision: 1 },
  },
  review_candidates: {
    args: () => ({ playId: ids.play, expectedRevision: 5, decisions: [{ candidateId: ids.candidate, decision: 'good_fit' }] }),
    error: 'stale_play_revision',
    httpStatus: 409,
    also: { currentRevision: 1 },
  },
  set_sequence_status: { args: () => ({ sequenceId: ids.sequence, status: 'active' }), error: 'sequence_approval_required', httpStatus: 409 },
  decide_reply: { args: () => ({ replyId: ids.reply, decision: 'invite' }), error: 'decision_not_allowed', httpStatus: 409 },
  mark_reply_handled: { args: () => ({ replyId: ids.reply }), error: 'reply_has_decisions', httpStatus: 409 },
  complete_task: { args: () => ({ taskId: UNKNOWN }), error: 'task not found', httpStatus: 404 },
  skip_task: { args: () => ({ taskId: UNKNOWN }), error: 'task not found', httpStatus: 404 },
  set_lead_meeting: { args: () => ({ leadId: ids.lead, outcome: 'held' }), error: 'no_meeting', httpStatus: 409 },
};

describe('a dry run the real call would refuse is a tool error with the blocker code', () => {
  it('covers every write tool', () => {
    expect(Object.keys(cases).sort()).toEqual(
      ALL_TOOLS.filter((x) => !x.readOnly)
        .map((x) => x.name)
        .sort(),
    );
  });

  for (const [name, c] of Object.entries(cases)) {
    it(`${name}: isError true with ${c.error}, no structured answer, nothing changed`, async () => {
      const before = await t.db.selectFrom('sequences').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute();
      const r = await dryRun(name, c.args());
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toBeUndefined();
      expect(r.body).toMatchObject({ error: c.error, httpStatus: c.httpStatus, ...c.also });
      expect(r.body).not.toHaveProperty('wouldDo');
      expect(await t.db.selectFrom('sequences').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute()).toEqual(before);
    });
  }
});

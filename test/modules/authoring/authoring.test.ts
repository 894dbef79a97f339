import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { insertMessagingAccount, insertSequence, insertXAccount, stepRow } from '../../helpers/factories.js';
import { connectInMemory, fails, ok, step } from '../../mcp/mcp-client.js';

// Every authoring rule, exercised through the MCP tools an agent uses (the same server as /mcp, without HTTP).

let t: TestApp;
let ws: string;
let other: string;
let mcp: Client;
let otherMcp: Client;
let accountUserId: string;
let otherAccountUserId: string;

beforeAll(async () => {
  t = await buildTestApp();
  ws = (await createWorkspaceWithKey(t, 'Authoring')).workspaceId;
  other = (await createWorkspaceWithKey(t, 'Other')).workspaceId;
  accountUserId = (await insertXAccount(t.db, ws)).userId;
  // A LinkedIn sender, so sequences with LinkedIn steps may be approved (approval needs a sender per channel).
  await insertMessagingAccount(t.db, ws);
  otherAccountUserId = (await insertXAccount(t.db, other)).userId;
  mcp = await connectInMemory(t.services, ws);
  otherMcp = await connectInMemory(t.services, other);
});
afterAll(async () => {
  await mcp?.close();
  await otherMcp?.close();
  await t?.close();
});

const seqRow = (id: string) => t.db.selectFrom('sequences').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const playRow = (id: string) => t.db.selectFrom('plays').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const newDraft = async (steps = [step(0)]) => (await ok(mcp, 'create_sequence', { name: 'Draft', steps })).sequence;

describe('create_sequence', () => {
  it('creates a draft at revision 1, unapproved, with channels implied by its steps', async () => {
    const r = await ok(mcp, 'create_sequence', {
      name: '  Founders  ',
      steps: [
        step(0, { kind: 'connect', message: null }),
        step(1, { kind: 'email', subject: 'Hello {{company}}', delayDays: 2 }),
        step(2, { kind: 'x_engage', message: null, actions: [{ type: 'like_last_post', count: 1, reaction: null }] }),
      ],
    });
    expect(r).toMatchObject({ changed: true, dryRun: false });
    expect(r.sequence).toMatchObject({ name: 'Founders', status: 'draft', revision: 1, approvedRevision: null, approvedAt: null, approved: false });
    expect(r.sequence.channels.sort()).toEqual(['email', 'linkedin', 'x']);
    const row = await seqRow(r.sequence.id);
    expect(row).toMatchObject({ workspace_id: ws, status: 'draft', revision: 1, approved_revision: null });
    expect(row.steps).toEqual(r.sequence.steps);
    const listed = (await ok(mcp, 'list_sequences')).sequences.find((s: { id: string }) => s.id === r.sequence.id);
    expect(listed.steps).toEqual(r.sequence.steps);
    expect(listed.executionBlockReason).toBe('sequence_approval_required');
  });

  it('may start empty', async () => {
    expect((await ok(mcp, 'create_sequence', { name: 'Empty' })).sequence).toMatchObject({ steps: [], channels: [], revision: 1 });
  });

  it('validates steps exactly like the spec’s step object (schema: 400 invalid_request)', async () => {
    const cases: Record<string, unknown>[] = [
      { ...step(0), delayDays: -1 },
      { ...step(0), delayDays: 1.5 },
      { ...step(0), kind: 'sms' },
      { ...step(0), extra: true },
      // A missing `tool` (or `index`, `actions`, `variants`) is filled in by the MCP door (docs/mcp.md), not refused.
      { ...step(0), actions: [{ type: 'like' }] },
      { ...step(0), message: null, variants: [{ key: 'A', weight: 0, messageTmpl: 'x' }] },
      { ...step(0), index: '0' },
    ];
    for (const bad of cases) {
      const e = await fails(mcp, 'create_sequence', { name: 'Bad', steps: [bad] });
      expect(e, JSON.stringify(bad)).toMatchObject({ error: 'invalid_request', httpStatus: 400 });
    }
  });

  it('refuses steps that break the step rules, listing every problem (400 invalid_steps)', async () => {
    const e = await fails(mcp, 'create_sequence', {
      name: 'Bad',
      steps: [
        step(1),
        step(1, { message: null }),
        step(2, { variants: [{ key: 'A', weight: 1, messageTmpl: 'x' }] }),
        step(3, { kind: 'engage', message: null }),
        step(4, { message: 'Hi {{nickname}}' }),
        step(5, {
          message: null,
          variants: [
            { key: 'A', weight: 1, messageTmpl: 'x' },
            { key: 'A', weight: 2, messageTmpl: 'y' },
          ],
        }),
      ],
    });
    expect(e).toMatchObject({ error: 'invalid_steps', httpStatus: 400 });
    expect(e.problems).toEqual([
      'steps[0].index must be 0: steps are numbered 0, 1, 2, … in order',
      'steps[1]: a x_dm step carries exactly one of message or variants',
      'steps[2]: a x_dm step carries exactly one of message or variants',
      'steps[3]: a engage step needs at least one action',
      'steps[4].message: unknown placeholder {{nickname}}: use one of {{firstName}}, {{lastName}}, {{fullName}}, {{company}}, {{title}}, {{email}}, {{username}}, {{linkedinUrl}}, or {{custom.<column>}} for a column of the imported file',
      'steps[5].variants: keys must be unique',
    ]);
    expect(await t.db.selectFrom('sequences').select('id').where('name', '=', 'Bad').execute()).toEqual([]);
  });

  it('dryRun answers the sequence that would be created and saves nothing', async () => {
    const r = await ok(mcp, 'create_sequence', { name: 'Only a plan', steps: [step(0)], dryRun: true });
    expect(r).toMatchObject({ dryRun: true, changed: true, sequence: { name: 'Only a plan', revision: 1, status: 'draft' } });
    expect(await t.db.selectFrom('sequences').select('id').where('id', '=', r.sequence.id).execute()).toEqual([]);
  });
});

describe('replace_sequence_steps', () => {
  it('replaces the steps, bumps the revision and leaves the new revision unapproved (the old approval stays recorded)', async () => {
    const draft = await newDraft();
    await ok(mcp, 'approve_sequence', { sequenceId: draft.id, expectedRevision: 1 });
    const r = await ok(mcp, 'replace_sequence_steps', { sequenceId: draft.id, expectedRevision: 1, steps: [step(0, { kind: 'message', message: 'Hello' })] });
    expect(r.sequence).toMatchObject({ revision: 2, approvedRevision: 1, approved: false, status: 'draft', channels: ['linkedin'] });
    expect(r.sequence.steps).toEqual([step(0, { kind: 'message', message: 'Hello' })]);
    expect(await seqRow(draft.id)).toMatchObject({ revision: 2, approved_revision: 1, status: 'draft' });
  });

  it('409 stale_sequence_revision when expectedRevision is not the current one', async () => {
    const draft = await newDraft();
    expect(await fails(mcp, 'replace_sequence_steps', { sequenceId: draft.id, expectedRevision: 2, steps: [step(0)] })).toMatchObject({
      error: 'stale_sequence_revision',
      ok: false,
      httpStatus: 409,
      currentRevision: 1,
    });
  });

  it('edits drafts only: 409 sequence_not_draft for active and paused, 409 archived_sequence_is_read_only for archived', async () => {
    for (const status of ['active', 'paused'] as const) {
      const id = await insertSequence(t.db, ws, { status, revision: 3 });
      expect(await fails(mcp, 'replace_sequence_steps', { sequenceId: id, expectedRevision: 3, steps: [step(0)] })).toMatchObject({
        error: 'sequence_not_draft',
        currentStatus: status,
        httpStatus: 409,
      });
      expect(await seqRow(id)).toMatchObject({ status, revision: 3 });
    }
    const archived = await insertSequence(t.db, ws, { status: 'archived' });
    expect(await fails(mcp, 'replace_sequence_steps', { sequenceId: archived, expectedRevision: 1, steps: [step(0)] })).toMatchObject({
      error: 'archived_sequence_is_read_only',
    });
  });

  it('a running sequence is edited by returning it to draft first; authoring itself never changes a status', async () => {
    const id = await insertSequence(t.db, ws, { status: 'active', revision: 1, steps: [step(0)] });
    await ok(mcp, 'set_sequence_status', { sequenceId: id, status: 'draft' });
    const r = await ok(mcp, 'replace_sequence_steps', { sequenceId: id, expectedRevision: 1, steps: [step(0, { message: 'New' })] });
    expect(r.sequence).toMatchObject({ status: 'draft', revision: 2, approved: false });
    expect(await fails(mcp, 'set_sequence_status', { sequenceId: id, status: 'active' })).toMatchObject({ error: 'sequence_approval_required' });
  });

  it('identical steps change nothing (changed: false, same revision)', async () => {
    const draft = await newDraft([step(0)]);
    const r = await ok(mcp, 'replace_sequence_steps', { sequenceId: draft.id, expectedRevision: 1, steps: [step(0)] });
    expect(r).toMatchObject({ changed: false, sequence: { revision: 1 } });
  });

  it('needs at least one step, and a sequence of another workspace is unknown (404)', async () => {
    const draft = await newDraft();
    expect(await fails(mcp, 'replace_sequence_steps', { sequenceId: draft.id, expectedRevision: 1, steps: [] })).toMatchObject({ error: 'invalid_request' });
    expect(await fails(otherMcp, 'replace_sequence_steps', { sequenceId: draft.id, expectedRevision: 1, steps: [step(0)] })).toMatchObject({
      error: 'sequence not found',
      httpStatus: 404,
    });
  });

  it('of two concurrent replacements from the same revision exactly one wins', async () => {
    const draft = await newDraft();
    const results = await Promise.all(
      ['A', 'B'].map((m) =>
        t.services.authoring.replaceSteps(ws, draft.id, { expectedRevision: 1, steps: [step(0, { message: m }) as never] }).then(
          () => 'ok',
          (e) => e.code,
        ),
      ),
    );
    expect(results.sort()).toEqual(['ok', 'stale_sequence_revision']);
    expect((await seqRow(draft.id)).revision).toBe(2);
  });

  it('dryRun answers the new revision and saves nothing', async () => {
    const draft = await newDraft();
    const r = await ok(mcp, 'replace_sequence_steps', { sequenceId: draft.id, expectedRevision: 1, steps: [step(0, { message: 'Plan' })], dryRun: true });
    expect(r).toMatchObject({ dryRun: true, sequence: { revision: 2 } });
    expect(await seqRow(draft.id)).toMatchObject({ revision: 1, steps: [step(0)] });
  });
});

describe('approve_sequence', () => {
  it('records the exact revision and time, and never changes the status', async () => {
    const draft = await newDraft();
    t.clock.set('2026-11-21T13:00:00.000Z');
    const r = await ok(mcp, 'approve_sequence', { sequenceId: draft.id, expectedRevision: 1 });
    expect(r).toMatchObject({
      changed: true,
      sequence: { status: 'draft', revision: 1, approvedRevision: 1, approvedAt: '2026-11-21T13:00:00.000Z', approved: true },
    });
    for (const status of ['active', 'paused'] as const) {
      const id = await insertSequence(t.db, ws, { status, revision: 2, approvedRevision: 1 });
      expect((await ok(mcp, 'approve_sequence', { sequenceId: id, expectedRevision: 2 })).sequence).toMatchObject({ status, approvedRevision: 2 });
      expect((await seqRow(id)).status).toBe(status);
    }
  });

  it('409 no_sender_for_channel while a channel of the steps has no sender in the workspace; approved once it has one', async () => {
    const alone = (await createWorkspaceWithKey(t, 'No sender')).workspaceId;
    const client = await connectInMemory(t.services, alone);
    try {
      const draft = (await ok(client, 'create_sequence', { name: 'Mail', steps: [step(0, { kind: 'email', subject: 'Hi' })] })).sequence;
      const e = await fails(client, 'approve_sequence', { sequenceId: draft.id, expectedRevision: 1 });
      expect(e).toMatchObject({ error: 'no_sender_for_channel', httpStatus: 409, channels: ['email'] });
      expect(e.message).toContain('add a mailbox');
      expect((await seqRow(draft.id)).approved_revision).toBeNull();
      await insertMessagingAccount(t.db, alone);
      expect((await ok(client, 'approve_sequence', { sequenceId: draft.id, expectedRevision: 1 })).sequence).toMatchObject({ approvedRevision: 1 });
    } finally {
      await client.close();
    }
  });

  it('409 stale_sequence_revision for any other revision, with the current one', async () => {
    const draft = await newDraft();
    await ok(mcp, 'replace_sequence_steps', { sequenceId: draft.id, expectedRevision: 1, steps: [step(0, { message: 'v2' })] });
    for (const expectedRevision of [1, 3]) {
      expect(await fails(mcp, 'approve_sequence', { sequenceId: draft.id, expectedRevision })).toMatchObject({
        error: 'stale_sequence_revision',
        currentRevision: 2,
        approvedRevision: null,
      });
    }
    expect((await seqRow(draft.id)).approved_revision).toBeNull();
  });

  it('approving the approved revision again changes nothing (approvedAt kept)', async () => {
    const draft = await newDraft();
    t.clock.set('2026-11-21T14:00:00.000Z');
    await ok(mcp, 'approve_sequence', { sequenceId: draft.id, expectedRevision: 1 });
    t.clock.set('2026-11-21T15:00:00.000Z');
    const again = await ok(mcp, 'approve_sequence', { sequenceId: draft.id, expectedRevision: 1 });
    expect(again).toMatchObject({ changed: false, sequence: { approvedAt: '2026-11-21T14:00:00.000Z' } });
  });

  it('409 sequence_has_no_steps, 409 archived_sequence_is_read_only, 404 for another workspace', async () => {
    const empty = (await ok(mcp, 'create_sequence', { name: 'Empty' })).sequence;
    expect(await fails(mcp, 'approve_sequence', { sequenceId: empty.id, expectedRevision: 1 })).toMatchObject({ error: 'sequence_has_no_steps' });
    const archived = await insertSequence(t.db, ws, { status: 'archived', approvedRevision: null });
    expect(await fails(mcp, 'approve_sequence', { sequenceId: archived, expectedRevision: 1 })).toMatchObject({ error: 'archived_sequence_is_read_only' });
    const draft = await newDraft();
    expect(await fails(otherMcp, 'approve_sequence', { sequenceId: draft.id, expectedRevision: 1 })).toMatchObject({
      error: 'sequence not found',
      httpStatus: 404,
    });
  });

  it('dryRun approves nothing', async () => {
    const draft = await newDraft();
    const r = await ok(mcp, 'approve_sequence', { sequenceId: draft.id, expectedRevision: 1, dryRun: true });
    expect(r).toMatchObject({ dryRun: true, sequence: { approved: true } });
    expect(await seqRow(draft.id)).toMatchObject({ approved_revision: null, approved_at: null });
  });
});

describe('create_play', () => {
  it('creates an active Play at revision 1 with the defaults (followers, manual review, review API on)', async () => {
    const seq = await newDraft();
    const r = await ok(mcp, 'create_play', { name: 'Followers', sequenceId: seq.id, accountUserId });
    expect(r.play).toEqual({
      id: expect.any(String),
      name: 'Followers',
      status: 'active',
      revision: 1,
      sequenceId: seq.id,
      accountUserId,
      reviewApiEnabled: true,
      autopilot: false,
      kind: 'followers',
    });
    expect(await playRow(r.play.id)).toMatchObject({ workspace_id: ws, kind: 'followers', status: 'active', revision: 1 });
    const auto = await ok(mcp, 'create_play', { name: 'Auto', sequenceId: seq.id, accountUserId, autopilot: true, reviewApiEnabled: false });
    expect(auto.play).toMatchObject({ autopilot: true, reviewApiEnabled: false });
  });

  it('404 for a sequence of another workspace, 409 for an archived one, 409 account_not_connected for a foreign account', async () => {
    const theirs = (await ok(otherMcp, 'create_sequence', { name: 'Theirs' })).sequence;
    expect(await fails(mcp, 'create_play', { name: 'P', sequenceId: theirs.id, accountUserId })).toMatchObject({
      error: 'sequence not found',
      httpStatus: 404,
    });
    const archived = await insertSequence(t.db, ws, { status: 'archived' });
    expect(await fails(mcp, 'create_play', { name: 'P', sequenceId: archived, accountUserId })).toMatchObject({ error: 'archived_sequence_is_read_only' });
    const seq = await newDraft();
    for (const userId of [otherAccountUserId, '123456']) {
      expect(await fails(mcp, 'create_play', { name: 'P', sequenceId: seq.id, accountUserId: userId })).toMatchObject({
        error: 'account_not_connected',
        httpStatus: 409,
      });
    }
    expect(await fails(mcp, 'create_play', { name: 'P', sequenceId: seq.id, accountUserId: 12345 })).toMatchObject({ error: 'invalid_request' });
    expect(await fails(mcp, 'create_play', { name: 'P', sequenceId: seq.id, accountUserId, kind: 'likers' })).toMatchObject({ error: 'invalid_request' });
  });

  it('dryRun creates nothing', async () => {
    const seq = await newDraft();
    const r = await ok(mcp, 'create_play', { name: 'Plan', sequenceId: seq.id, accountUserId, dryRun: true });
    expect(r).toMatchObject({ dryRun: true, play: { name: 'Plan', revision: 1 } });
    expect(await t.db.selectFrom('plays').select('id').where('id', '=', r.play.id).execute()).toEqual([]);
  });
});

describe('edit_play, set_play_status, set_play_review_api', () => {
  const newPlay = async () => {
    const seq = await newDraft();
    return (await ok(mcp, 'create_play', { name: 'Editable', sequenceId: seq.id, accountUserId })).play;
  };

  it('edit_play changes the given fields and bumps the revision; unchanged values change nothing', async () => {
    const play = await newPlay();
    const seq2 = await newDraft();
    const r = await ok(mcp, 'edit_play', { playId: play.id, expectedRevision: 1, name: 'Renamed', sequenceId: seq2.id, autopilot: true });
    expect(r).toMatchObject({ changed: true, play: { name: 'Renamed', sequenceId: seq2.id, autopilot: true, revision: 2, accountUserId } });
    const same = await ok(mcp, 'edit_play', { playId: play.id, expectedRevision: 2, name: 'Renamed', accountUserId });
    expect(same).toMatchObject({ changed: false, play: { revision: 2 } });
  });

  it('edit_play: 409 stale_play_revision, 400 nothing_to_change, 404 for another workspace, 404/409 for bad references', async () => {
    const play = await newPlay();
    expect(await fails(mcp, 'edit_play', { playId: play.id, expectedRevision: 2, name: 'X' })).toMatchObject({
      error: 'stale_play_revision',
      currentRevision: 1,
      httpStatus: 409,
    });
    expect(await fails(mcp, 'edit_play', { playId: play.id, expectedRevision: 1 })).toMatchObject({ error: 'nothing_to_change', httpStatus: 400 });
    expect(await fails(otherMcp, 'edit_play', { playId: play.id, expectedRevision: 1, name: 'X' })).toMatchObject({ error: 'play not found', httpStatus: 404 });
    const theirs = (await ok(otherMcp, 'create_sequence', { name: 'Theirs' })).sequence;
    expect(await fails(mcp, 'edit_play', { playId: play.id, expectedRevision: 1, sequenceId: theirs.id })).toMatchObject({ error: 'sequence not found' });
    expect(await fails(mcp, 'edit_play', { playId: play.id, expectedRevision: 1, accountUserId: otherAccountUserId })).toMatchObject({
      error: 'account_not_connected',
    });
    expect((await playRow(play.id)).revision).toBe(1);
  });

  it('set_play_status bumps the revision; archived is final', async () => {
    const play = await newPlay();
    expect((await ok(mcp, 'set_play_status', { playId: play.id, expectedRevision: 1, status: 'paused' })).play).toMatchObject({
      status: 'paused',
      revision: 2,
    });
    expect((await ok(mcp, 'set_play_status', { playId: play.id, expectedRevision: 2, status: 'paused' })).changed).toBe(false);
    expect(await fails(mcp, 'set_play_status', { playId: play.id, expectedRevision: 1, status: 'active' })).toMatchObject({ error: 'stale_play_revision' });
    expect((await ok(mcp, 'set_play_status', { playId: play.id, expectedRevision: 2, status: 'archived' })).play).toMatchObject({
      status: 'archived',
      revision: 3,
    });
    for (const [tool, args] of [
      ['set_play_status', { status: 'active' }],
      ['set_play_status', { status: 'archived' }],
      ['edit_play', { name: 'Again' }],
      ['set_play_review_api', { enabled: false }],
    ] as const) {
      expect(await fails(mcp, tool, { playId: play.id, expectedRevision: 3, ...args }), tool).toMatchObject({ error: 'play_archived', httpStatus: 409 });
    }
    expect(await playRow(play.id)).toMatchObject({ status: 'archived', revision: 3 });
  });

  it('set_play_review_api bumps the revision, and with it off the review operations answer 404', async () => {
    const play = await newPlay();
    expect((await ok(mcp, 'list_candidates', { playId: play.id })).play.revision).toBe(1);
    const off = await ok(mcp, 'set_play_review_api', { playId: play.id, expectedRevision: 1, enabled: false });
    expect(off.play).toMatchObject({ reviewApiEnabled: false, revision: 2 });
    expect(await fails(mcp, 'list_candidates', { playId: play.id })).toMatchObject({ error: 'play not found', httpStatus: 404 });
    const on = await ok(mcp, 'set_play_review_api', { playId: play.id, expectedRevision: 2, enabled: true });
    expect(on.play).toMatchObject({ reviewApiEnabled: true, revision: 3 });
    expect((await ok(mcp, 'list_candidates', { playId: play.id })).play.revision).toBe(3);
  });

  it('a Play edit makes an import planned against the old revision fail (409 stale_play_revision)', async () => {
    const play = await newPlay();
    await ok(mcp, 'edit_play', { playId: play.id, expectedRevision: 1, name: 'Moved on' });
    expect(
      await fails(mcp, 'import_candidates', { playId: play.id, requestId: 'stale-import-1', expectedRevision: 1, leads: [{ xUserId: '9300000001' }] }),
    ).toMatchObject({
      error: 'stale_play_revision',
    });
  });

  it('dry runs of Play writes save nothing', async () => {
    const play = await newPlay();
    const before = await playRow(play.id);
    await ok(mcp, 'edit_play', { playId: play.id, expectedRevision: 1, name: 'Plan', dryRun: true });
    await ok(mcp, 'set_play_status', { playId: play.id, expectedRevision: 1, status: 'archived', dryRun: true });
    await ok(mcp, 'set_play_review_api', { playId: play.id, expectedRevision: 1, enabled: false, dryRun: true });
    expect(await playRow(play.id)).toEqual(before);
  });
});

describe('authoring never changes a sequence status', () => {
  it('no authoring tool moves a sequence between statuses', async () => {
    const id = await insertSequence(t.db, ws, {
      status: 'paused',
      revision: 1,
      approvedRevision: null,
      steps: [stepRow({ index: 0, kind: 'x_dm', message: 'Hi' })],
    });
    await ok(mcp, 'approve_sequence', { sequenceId: id, expectedRevision: 1 });
    await ok(mcp, 'create_play', { name: 'On paused', sequenceId: id, accountUserId });
    // A Play's leads are X accounts: a sequence with no X step is refused, naming why.
    const linkedinOnly = await insertSequence(t.db, ws, { steps: [stepRow({ index: 0, kind: 'connect' })] });
    expect(await fails(mcp, 'create_play', { name: 'No X step', sequenceId: linkedinOnly, accountUserId })).toMatchObject({
      error: 'sequence_has_no_step_for_play',
      httpStatus: 409,
    });
    await fails(mcp, 'replace_sequence_steps', { sequenceId: id, expectedRevision: 1, steps: [step(0)] });
    expect((await seqRow(id)).status).toBe('paused');
  });
});

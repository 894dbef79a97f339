import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey } from '../helpers/build-test-app.js';
import { createMemoryRateLimitStore } from '../../src/app/plugins/rate-limit.js';
import { insertLead, insertReply, insertXAccount } from '../helpers/factories.js';
import { buildCrmTestApp, createMemoryChannels, type MemoryChannels } from '../helpers/memory-channels.js';
import type { TestApp } from '../helpers/build-test-app.js';
import type { TextCipher } from '../../src/lib/crypto.js';
import { ALL_TOOLS, DEPRECATED_TOOL_NAMES } from '../../src/mcp/tools/index.js';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { call, connectHttp, fails, ok, step } from './mcp-client.js';

let t: TestApp & { cipher: TextCipher };
let channels: MemoryChannels;
let url: string;
let home: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let team: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let stranger: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let account: { userId: string; handle: string };
let client: Client;
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const count = async (table: 'sequences' | 'plays' | 'candidates' | 'leads' | 'replies' | 'activity', workspaceId: string) =>
  Number(
    (
      await t.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirstOrThrow()
    ).n,
  );

beforeAll(async () => {
  channels = createMemoryChannels();
  // Monday 10:00 UTC, inside any sending window, so the engine pass below has no reason to wait.
  t = await buildCrmTestApp({ channels, now: '2026-11-23T10:00:00.000Z' });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/mcp`;
  home = await createWorkspaceWithKey(t, 'Home');
  team = await createWorkspaceWithKey(t, 'Team client');
  stranger = await createWorkspaceWithKey(t, 'Stranger');
  await t.services.workspaces.addTeamLink({ ownerWorkspaceId: home.workspaceId, clientWorkspaceId: team.workspaceId, role: 'admin' });
  account = await insertXAccount(t.db, home.workspaceId, { handle: 'acme_hq' });
  client = await connectHttp(url, home.auth);
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe('MCP over Streamable HTTP with the SDK client', () => {
  it('lists every available tool with JSON Schema inputs, and only decide_reply says it can contact a prospect', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((x) => x.name);
    expect(names).toEqual(ALL_TOOLS.map((x) => x.name));
    for (const name of [
      'create_sequence',
      'replace_sequence_steps',
      'approve_sequence',
      'create_play',
      'edit_play',
      'set_play_status',
      'set_play_review_api',
    ]) {
      expect(names).toContain(name);
    }
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema, tool.name).toBeUndefined();
      expect(tool.name, 'one naming scheme: verb_noun').toMatch(
        /^(list|get|create|replace|approve|edit|set|resolve|check|stop|lookup|import|enroll|review|decide|mark|complete|skip|forecast)_[a-z]+(_[a-z]+)*$/,
      );
      expect(tool.description, tool.name).toMatch(/contacts a prospect: (no|YES)/);
      const contacts = /contacts a prospect: YES/.test(tool.description!);
      expect(contacts, tool.name).toBe(tool.name === 'decide_reply');
      if (!tool.annotations?.readOnlyHint) expect(tool.inputSchema.properties, tool.name).toHaveProperty('dryRun');
    }
  });

  it('tools/list stays below 40 KB (it is read on every connection); output schemas come from get_output_schema', async () => {
    const listed = await client.listTools();
    expect(JSON.stringify(listed).length).toBeLessThan(40_000);
    const names = listed.tools.map((x) => x.name);
    for (const old of Object.keys(DEPRECATED_TOOL_NAMES)) expect(names).not.toContain(old);
    const { outputSchema } = await ok(client, 'get_output_schema', { tool: 'list_candidates' });
    expect(outputSchema.properties.play.properties.revision).toMatchObject({ type: 'integer', description: 'pass as expectedRevision' });
    expect(outputSchema.properties.candidates.items.properties.status.enum).toEqual(['proposed', 'approved', 'imported', 'rejected']);
    expect(outputSchema.properties.nextCursor.type).toEqual(['string', 'null']);
    expect((await ok(client, 'get_output_schema', { tool: 'decide_reply' })).outputSchema.anyOf).toHaveLength(2);
  });

  it('authors a sequence and a Play, imports and enrolls candidates, runs an engine pass, reads progress and decides a reply', async () => {
    // Author: draft → new steps → approve the exact revision → activate.
    const created = await ok(client, 'create_sequence', { name: 'Founders on X', steps: [step(0)] });
    const seqId = created.sequence.id;
    expect(created).toMatchObject({
      dryRun: false,
      changed: true,
      sequence: { status: 'draft', revision: 1, approved: false, approvedRevision: null, channels: ['x'] },
    });

    const replaced = await ok(client, 'replace_sequence_steps', {
      sequenceId: seqId,
      expectedRevision: 1,
      steps: [
        step(0, { message: 'Hi {{firstName|there}}, thanks for following!' }),
        step(1, {
          delayDays: 3,
          message: null,
          variants: [
            { key: 'A', weight: 1, messageTmpl: 'Quick follow-up' },
            { key: 'B', weight: 1, messageTmpl: 'Any thoughts?' },
          ],
        }),
      ],
    });
    expect(replaced.sequence).toMatchObject({ revision: 2, approved: false, status: 'draft' });

    expect(await fails(client, 'approve_sequence', { sequenceId: seqId, expectedRevision: 1 })).toMatchObject({
      error: 'stale_sequence_revision',
      ok: false,
      httpStatus: 409,
      currentRevision: 2,
    });
    const approved = await ok(client, 'approve_sequence', { sequenceId: seqId, expectedRevision: 2 });
    expect(approved.sequence).toMatchObject({ status: 'draft', approved: true, approvedRevision: 2, approvedAt: '2026-11-23T10:00:00.000Z' });
    expect(await ok(client, 'set_sequence_status', { sequenceId: seqId, status: 'active', dryRun: true })).toEqual({
      ok: true,
      sequenceId: seqId,
      previousStatus: 'draft',
      status: 'active',
      dryRun: true,
    });
    expect((await ok(client, 'list_sequences')).sequences.find((x: { id: string }) => x.id === seqId).status).toBe('draft');
    expect(await ok(client, 'set_sequence_status', { sequenceId: seqId, status: 'active' })).toEqual({
      ok: true,
      sequenceId: seqId,
      previousStatus: 'draft',
      status: 'active',
      dryRun: false,
    });

    const { play } = await ok(client, 'create_play', { name: 'Followers of acme_hq', sequenceId: seqId, accountUserId: account.userId });
    expect(play).toMatchObject({ status: 'active', revision: 1, kind: 'followers', reviewApiEnabled: true, autopilot: false, sequenceId: seqId });
    expect((await ok(client, 'list_plays')).plays.map((p: { id: string }) => p.id)).toContain(play.id);

    // Import: a dry run stages nothing, then the real import.
    const leads = [
      { xUserId: '9100000001', name: 'Ada Lovelace', reference: 'crm-1' },
      { xUserId: '9100000002', name: 'Grace Hopper' },
    ];
    const preview = await ok(client, 'import_candidates', { playId: play.id, requestId: 'import-0001', expectedRevision: 1, leads, dryRun: true });
    expect(preview).toMatchObject({ dryRun: true, replayed: false, enrolled: false, sendsMessages: false });
    expect(preview.results.map((r: { result: string }) => r.result)).toEqual(['imported', 'imported']);
    expect(await count('candidates', home.workspaceId)).toBe(0);
    const imported = await ok(client, 'import_candidates', { playId: play.id, requestId: 'import-0001', expectedRevision: 1, leads });
    expect(imported).toMatchObject({ replayed: false, enrolled: false, sendsMessages: false });

    const page = await ok(client, 'list_candidates', { playId: play.id });
    expect(page.counts).toEqual({ total: 2, unreviewed: 2, goodFit: 0, notAGoodFit: 0 });
    expect(page.sequence).toMatchObject({ id: seqId, revision: 2, status: 'active', approved: true });
    const enrollArgs = {
      playId: play.id,
      expectedRevision: page.play.revision,
      sequenceId: seqId,
      sequenceRevision: page.sequence.revision,
      candidateIds: imported.results.map((r: { candidateId: string }) => r.candidateId),
    };

    // A dry run is the real enrollment rolled back: its answer is the route's, and a refusal is a tool error.
    const enrollPreview = await ok(client, 'enroll_candidates', { ...enrollArgs, dryRun: true });
    expect(enrollPreview).toMatchObject({ dryRun: true, sequenceStatus: 'active', sequenceStatusChanged: false });
    expect(enrollPreview.results.map((r: { result: string }) => r.result)).toEqual(['enrolled', 'enrolled']);
    expect(await fails(client, 'enroll_candidates', { ...enrollArgs, expectedRevision: 7, dryRun: true })).toMatchObject({
      error: 'stale_play_revision',
      httpStatus: 409,
      currentRevision: page.play.revision,
    });
    expect(await count('leads', home.workspaceId)).toBe(0);

    const enrolled = await ok(client, 'enroll_candidates', enrollArgs);
    expect(enrolled).toMatchObject({ sequenceStatus: 'active', sequenceStatusChanged: false });
    expect(enrolled.results.map((r: { result: string }) => r.result)).toEqual(['enrolled', 'enrolled']);
    expect(enrolled.results.map((r: { leadId: string }) => r.leadId)).not.toEqual(enrollPreview.results.map((r: { leadId: string }) => r.leadId));

    // The engine pass is what contacts prospects; the tools above only queued them.
    expect(channels.delivered).toHaveLength(0);
    await t.services.engine.runPass();
    const dms = channels.delivered.filter((a) => a.channel === 'x' && a.kind === 'x_dm');
    expect(dms.map((a) => a.text).sort()).toEqual(['Hi Ada, thanks for following!', 'Hi Grace, thanks for following!']);

    const leadId = enrolled.results[0].leadId;
    expect((await ok(client, 'get_lead', { leadId })).lead).toMatchObject({ id: leadId, stage: 'messaged', deliveryGuaranteed: false });
    // The name before the naming scheme still answers the same (deprecated, not listed).
    expect((await ok(client, 'get_x_lead', { leadId })).lead.id).toBe(leadId);
    const progress = await ok(client, 'get_progress', { sinceDays: 7 });
    expect(progress.funnel.messaged).toBeGreaterThanOrEqual(2);
    const sent = await ok(client, 'list_activity', { action: 'x_dm', outcome: 'ok' });
    expect(sent.count).toBe(2);
    expect((await ok(client, 'get_funnel_report', {})).groupBy).toBe('sequence');
    expect((await ok(client, 'list_leads', { limit: 10 })).count).toBe(2);

    // A LinkedIn reply waiting for a decision: a dry run sends nothing, the real decision sends once.
    const replyLead = await insertLead(t.db, home.workspaceId, {
      person: 'Linus T',
      linkedin_url: 'https://www.linkedin.com/in/linus',
      stage: 'replied',
      replied_at: new Date('2026-11-22T09:00:00.000Z'),
    });
    const replyId = await insertReply(t.db, t.cipher, home.workspaceId, { leadId: replyLead, draft: 'Happy to talk, Tuesday?' });
    const pending = await ok(client, 'list_replies', {});
    expect(pending.replies.map((r: { id: string }) => r.id)).toContain(replyId);
    const before = channels.delivered.length;
    const decidePreview = await ok(client, 'decide_reply', { replyId, decision: 'send', dryRun: true });
    expect(decidePreview).toMatchObject({ dryRun: true, contactsProspect: true, message: 'Happy to talk, Tuesday?' });
    expect(channels.delivered).toHaveLength(before);
    expect((await ok(client, 'list_replies', {})).replies.map((r: { id: string }) => r.id)).toContain(replyId);

    const decided = await ok(client, 'decide_reply', { replyId, decision: 'send', text: 'Tuesday 10:00 works.' });
    expect(decided).toMatchObject({ ok: true, replyId, decision: 'send', messaged: true });
    expect(channels.delivered.slice(before).map((a) => a.text)).toEqual(['Tuesday 10:00 works.']);
    expect(await fails(client, 'decide_reply', { replyId, decision: 'dismiss' })).toMatchObject({ error: 'reply_already_decided', ok: false, httpStatus: 409 });

    // Every answer above conforms to the schema get_output_schema gives for its tool (the compacted form included).
    const answers: [string, unknown][] = [
      ['create_sequence', created],
      ['replace_sequence_steps', replaced],
      ['approve_sequence', approved],
      ['import_candidates', imported],
      ['list_candidates', page],
      ['enroll_candidates', enrolled],
      ['get_progress', progress],
      ['list_activity', sent],
      ['list_replies', pending],
      ['decide_reply', decidePreview],
      ['decide_reply', decided],
    ];
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    for (const [name, answer] of answers) {
      const validate = ajv.compile((await ok(client, 'get_output_schema', { tool: name })).outputSchema);
      expect(validate(answer), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });

  it('an X reply: decide_reply answers answered_on_x (dry run too); mark_reply_handled closes it as mcp:<key id>, once', async () => {
    const leadId = await insertLead(t.db, home.workspaceId, { person: 'On X', stage: 'replied', replied_at: new Date('2026-11-22T09:00:00.000Z') });
    const replyId = await insertReply(t.db, t.cipher, home.workspaceId, { leadId, channel: 'x', draft: null });
    for (const dry of [{ dryRun: true }, {}]) {
      expect(await fails(client, 'decide_reply', { replyId, decision: 'dismiss', ...dry })).toMatchObject({
        ok: false,
        error: 'answered_on_x',
        httpStatus: 409,
        allowedDecisions: [],
        message: expect.stringContaining('mark_reply_handled'),
      });
    }
    const preview = await ok(client, 'mark_reply_handled', { replyId, dryRun: true });
    expect(preview).toMatchObject({ dryRun: true, alreadyHandled: false, by: `mcp:${home.keyId}` });
    expect((await ok(client, 'list_replies', { limit: 200 })).replies.map((r: { id: string }) => r.id)).toContain(replyId);

    const handled = await ok(client, 'mark_reply_handled', { replyId });
    expect(handled).toEqual({
      ok: true,
      replyId,
      leadId,
      decision: 'dismiss',
      state: 'decided',
      by: `mcp:${home.keyId}`,
      decidedAt: '2026-11-23T10:00:00.000Z',
      alreadyHandled: false,
      dryRun: false,
    });
    const entries = await t.db.selectFrom('activity').selectAll().where('lead_id', '=', leadId).execute();
    expect(entries.map((e) => [e.action, JSON.parse(e.detail)])).toEqual([
      ['reply_dismissed', { replyId, decision: 'dismiss', by: `mcp:${home.keyId}`, via: 'mcp' }],
    ]);
    expect(await ok(client, 'mark_reply_handled', { replyId })).toEqual({ ...handled, alreadyHandled: true });
    expect((await ok(client, 'list_replies', { limit: 200 })).replies.map((r: { id: string }) => r.id)).not.toContain(replyId);
    const validate = new Ajv({ strict: false });
    addFormats(validate);
    expect(validate.validate((await ok(client, 'get_output_schema', { tool: 'mark_reply_handled' })).outputSchema, handled)).toBe(true);
  });

  it('answers tool errors with the API codes, and refuses input the route would refuse', async () => {
    expect(await fails(client, 'get_lead', { leadId: '00000000-0000-4000-8000-000000000000' })).toMatchObject({ error: 'lead not found', httpStatus: 404 });
    expect(await fails(client, 'create_sequence', { name: 'x', colour: 'red' })).toMatchObject({ error: 'invalid_request', httpStatus: 400 });
    expect(await fails(client, 'set_sequence_status', { sequenceId: '00000000-0000-4000-8000-000000000000', status: 'archived' })).toMatchObject({
      error: 'invalid_request',
    });
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/unknown tool/);
  });

  it('an invalid argument is named with the rule and the allowed values, in the API’s words', async () => {
    const { play } = await ok(client, 'create_play', {
      name: 'Messages',
      sequenceId: (await ok(client, 'create_sequence', { name: 'M', steps: [step(0)] })).sequence.id,
      accountUserId: account.userId,
    });
    expect(await fails(client, 'list_candidates', { playId: play.id, filter: 'pending' })).toEqual({
      error: 'invalid_request',
      httpStatus: 400,
      message: 'arguments/filter must be one of: "all", "unreviewed", "good_fit", "not_a_good_fit"',
      errors: [{ field: 'arguments/filter', message: 'arguments/filter must be one of: "all", "unreviewed", "good_fit", "not_a_good_fit"' }],
    });
    expect((await fails(client, 'set_play_status', { playId: play.id, expectedRevision: 1, status: 'deleted' })).message).toBe(
      'arguments/status must be one of: "active", "paused", "archived"',
    );
    expect((await fails(client, 'list_replies', { limit: 10, colour: 'red' })).message).toBe(
      'arguments/colour is not allowed: arguments has no property "colour" (allowed: limit)',
    );
    expect((await fails(client, 'get_progress', { sinceDays: 0 })).message).toMatch(/^arguments\/sinceDays must be >= 1/);
    expect((await fails(client, 'create_sequence', {})).message).toBe('arguments/name is required');
  });

  it('dry runs of every write tool leave the database as it was', async () => {
    const { sequence } = await ok(client, 'create_sequence', { name: 'Dry', steps: [step(0)] });
    const { play } = await ok(client, 'create_play', { name: 'Dry play', sequenceId: sequence.id, accountUserId: account.userId });
    const staged = await ok(client, 'import_candidates', {
      playId: play.id,
      requestId: 'dry-run-000',
      expectedRevision: 1,
      leads: [{ xUserId: '9200000000' }],
    });
    const reviewable = staged.results[0].candidateId;
    const snapshot = async () => ({
      sequences: await t.db.selectFrom('sequences').selectAll().where('workspace_id', '=', home.workspaceId).orderBy('id').execute(),
      plays: await t.db.selectFrom('plays').selectAll().where('workspace_id', '=', home.workspaceId).orderBy('id').execute(),
      candidates: await count('candidates', home.workspaceId),
      leads: await t.db.selectFrom('leads').selectAll().where('workspace_id', '=', home.workspaceId).orderBy('id').execute(),
      activity: await count('activity', home.workspaceId),
    });
    const before = await snapshot();
    const dry = { dryRun: true };
    const answers = [
      await ok(client, 'create_sequence', { name: 'Never saved', steps: [step(0)], ...dry }),
      await ok(client, 'replace_sequence_steps', { sequenceId: sequence.id, expectedRevision: 1, steps: [step(0, { message: 'Changed' })], ...dry }),
      await ok(client, 'approve_sequence', { sequenceId: sequence.id, expectedRevision: 1, ...dry }),
      await ok(client, 'create_play', { name: 'Never saved', sequenceId: sequence.id, accountUserId: account.userId, ...dry }),
      await ok(client, 'edit_play', { playId: play.id, expectedRevision: 1, name: 'Renamed', ...dry }),
      await ok(client, 'set_play_status', { playId: play.id, expectedRevision: 1, status: 'archived', ...dry }),
      await ok(client, 'set_play_review_api', { playId: play.id, expectedRevision: 1, enabled: false, ...dry }),
      await ok(client, 'import_candidates', { playId: play.id, requestId: 'dry-run-001', expectedRevision: 1, leads: [{ xUserId: '9200000001' }], ...dry }),
      await ok(client, 'review_candidates', {
        playId: play.id,
        expectedRevision: 1,
        decisions: [{ candidateId: reviewable, decision: 'not_a_good_fit' }],
        ...dry,
      }),
    ];
    for (const a of answers) expect(a.dryRun).toBe(true);
    expect(answers[1].sequence.revision).toBe(2);
    expect(answers[2].sequence.approved).toBe(true);
    expect(answers[4].play).toMatchObject({ name: 'Renamed', revision: 2 });
    expect(answers[8].results[0]).toMatchObject({
      result: 'reviewed',
      candidate: { status: 'rejected', review: { decision: 'not_a_good_fit', by: home.keyId } },
    });
    expect(answers[8].counts).toEqual({ total: 1, unreviewed: 0, goodFit: 0, notAGoodFit: 1 });
    // A dry run is the real call rolled back, so one the real call would refuse is the same tool error.
    expect(await fails(client, 'set_sequence_status', { sequenceId: sequence.id, status: 'active', ...dry })).toMatchObject({
      error: 'sequence_approval_required',
      httpStatus: 409,
      currentStatus: 'draft',
    });
    const leads = await t.db.selectFrom('leads').select('id').where('workspace_id', '=', home.workspaceId).execute();
    const stop = await ok(client, 'stop_lead', { leadId: leads[0].id, ...dry });
    expect(stop).toMatchObject({ dryRun: true, ok: true, scope: 'lead_automation', lead: { id: leads[0].id, automationStopped: true } });
    expect(await snapshot()).toEqual(before);
  });
});

describe('authentication and workspace selection (same rules as the API)', () => {
  const initialize = (headers: Record<string, string>, to = url) =>
    fetch(to, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });

  it('401 unauthorized without a key, with a malformed one and with an unknown one', async () => {
    for (const headers of [{}, { authorization: 'Basic abc' }, { authorization: `Bearer ows_${'x'.repeat(43)}` }] as Record<string, string>[]) {
      const res = await initialize(headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'unauthorized' });
    }
    await expect(connectHttp(url, {})).rejects.toThrow();
    const get = await fetch(url, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(401);
  });

  it('403 for a foreign X-Workspace-Client, 400 for a malformed one', async () => {
    const res = await initialize({ ...home.auth, 'x-workspace-client': stranger.workspaceId });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'workspace_forbidden' });
    await expect(connectHttp(url, { ...home.auth, 'x-workspace-client': stranger.workspaceId })).rejects.toThrow();
    const reverse = await initialize({ ...team.auth, 'x-workspace-client': home.workspaceId });
    expect(reverse.status).toBe(403);
    const bad = await initialize({ ...home.auth, 'x-workspace-client': 'not-a-uuid' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid_workspace_client' });
  });

  it('a permitted X-Workspace-Client binds every tool to that workspace', async () => {
    const teamClient = await connectHttp(url, { ...home.auth, 'x-workspace-client': team.workspaceId });
    try {
      const { sequence } = await ok(teamClient, 'create_sequence', { name: 'Team sequence' });
      expect(await count('sequences', team.workspaceId)).toBe(1);
      // The home workspace's connection cannot see it: foreign ids are unknown ids.
      expect(await fails(client, 'approve_sequence', { sequenceId: sequence.id, expectedRevision: 1 })).toMatchObject({
        error: 'sequence not found',
        httpStatus: 404,
      });
      const homeSeq = (await ok(client, 'list_sequences')).sequences[0];
      expect(await fails(teamClient, 'replace_sequence_steps', { sequenceId: homeSeq.id, expectedRevision: homeSeq.revision, steps: [step(0)] })).toMatchObject(
        {
          error: 'sequence not found',
        },
      );
    } finally {
      await teamClient.close();
    }
  });

  it('a key shares its per-minute budget with the API: 429 with Retry-After past it; headers survive the hijacked reply', async () => {
    const limited = await buildTestApp({ handle: t.handle, env: { OUTREACH_RATE_LIMIT_PER_MINUTE: 2 }, rateLimitStore: createMemoryRateLimitStore() });
    try {
      await limited.app.listen({ host: '127.0.0.1', port: 0 });
      const limitedUrl = `http://127.0.0.1:${(limited.app.server.address() as AddressInfo).port}/mcp`;
      const first = await fetch(`${limitedUrl.replace('/mcp', '')}/api/v1/workspaces`, { headers: home.auth });
      expect(first.status).toBe(200);
      const second = await initialize(home.auth, limitedUrl);
      expect(second.status).toBe(200);
      expect(second.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(second.headers.get('x-request-id')).toBeTruthy();
      const third = await initialize(home.auth, limitedUrl);
      expect(third.status).toBe(429);
      expect(await third.json()).toMatchObject({ error: 'rate_limited' });
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await limited.close();
    }
  });

  it('GET and DELETE answer 405 with a key (stateless server: no stream, no session)', async () => {
    const get = await fetch(url, { headers: { ...home.auth, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const del = await fetch(url, { method: 'DELETE', headers: home.auth });
    expect(del.status).toBe(405);
  });

  it('X tools answer 403 channel_disabled while the channel is off, like their routes', async () => {
    await t.db.updateTable('workspaces').set({ x_channel_enabled: false }).where('id', '=', home.workspaceId).execute();
    await t.services.workspaces.workspaceSettingsChanged(home.workspaceId); // what every writer of the switch does
    try {
      expect(await fails(client, 'list_x_accounts')).toMatchObject({ error: 'channel_disabled', httpStatus: 403 });
      expect((await call(client, 'list_sequences')).ok).toBe(true);
    } finally {
      await t.db.updateTable('workspaces').set({ x_channel_enabled: true }).where('id', '=', home.workspaceId).execute();
      await t.services.workspaces.workspaceSettingsChanged(home.workspaceId);
    }
  });
});

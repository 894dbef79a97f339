import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertAccount } from '../engine/helpers.js';
import { connectInMemory, fails, ok } from './mcp-client.js';

// Authoring a branching sequence through the agent-tool server, and reading it back through GET /sequences: one wire
// form (id, next, else: x-extensions of the spec's step), checked as a graph before it is saved
// (docs/sequences-and-leads.md "Branches", docs/mcp.md).

let t: TestApp;
let client: Client;
let auth: { authorization: string };

beforeAll(async () => {
  t = await buildTestApp();
  const ws = await createWorkspaceWithKey(t, 'Branches');
  auth = ws.auth;
  // A connected account sends its LinkedIn and e-mail steps: without one, approving refuses (no sender for a channel).
  await insertAccount(t.db, ws.workspaceId);
  client = await connectInMemory(t.services, ws.workspaceId);
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

const BRANCHED = [
  { kind: 'connect', delayDays: 0, message: 'Hi {{firstName}}', id: 'invite', next: [{ if: { accepted: true }, withinDays: 7, goto: 'thanks' }], else: 'mail' },
  {
    kind: 'message',
    delayDays: 1,
    message: 'Thanks for connecting',
    id: 'thanks',
    next: [{ if: { replied: true, intent: 'positive' }, withinDays: 5, goto: 'goal' }],
    else: 'exit',
  },
  { kind: 'email', delayDays: 0, subject: 'Hello', message: 'Hello {{firstName}}', id: 'mail' },
];

describe('a branching sequence through MCP and the API', () => {
  it('is created, approved and listed with its edges; a linear step carries none of them', async () => {
    const created = await ok(client, 'create_sequence', { name: 'LinkedIn then e-mail', steps: BRANCHED });
    const seq = created.sequence;
    expect(seq.steps[0]).toMatchObject({ id: 'invite', next: [{ if: { accepted: true }, withinDays: 7, goto: 'thanks' }], else: 'mail' });
    expect(seq.steps[2]).not.toHaveProperty('next');
    expect(seq.steps[2]).not.toHaveProperty('else');
    await ok(client, 'approve_sequence', { sequenceId: seq.id, expectedRevision: seq.revision });

    const res = await t.app.inject({ method: 'GET', url: '/api/v1/sequences', headers: auth });
    expect(res.statusCode).toBe(200);
    const listed = (res.json().sequences as Record<string, any>[]).find((s) => s.id === seq.id)!;
    expect(listed.steps.map((s: { index: number; kind: string }) => `${s.index}:${s.kind}`)).toEqual(['0:connect', '1:message', '2:email']);
    expect(listed.steps[1]).toMatchObject({ id: 'thanks', next: [{ if: { replied: true, intent: 'positive' }, withinDays: 5, goto: 'goal' }], else: 'exit' });
    expect(Object.keys(listed.steps[2]).sort()).toEqual(['actions', 'delayDays', 'id', 'index', 'kind', 'message', 'subject', 'tool', 'variants']);

    const linear = await ok(client, 'create_sequence', { name: 'Linear', steps: [{ kind: 'email', delayDays: 0, subject: 'S', message: 'M' }] });
    expect(Object.keys(linear.sequence.steps[0]).sort()).toEqual(['actions', 'delayDays', 'index', 'kind', 'message', 'subject', 'tool', 'variants']);
  });

  it('the same steps written again, the keys of a condition in another order, are no new revision (the database keeps no key order)', async () => {
    const created = await ok(client, 'create_sequence', { name: 'Same again', steps: BRANCHED });
    // `intent` before `replied` this time: the same condition.
    const again = BRANCHED.map((s) => (s.id === 'thanks' ? { ...s, next: [{ goto: 'goal', withinDays: 5, if: { intent: 'positive', replied: true } }] } : s));
    const replaced = await ok(client, 'replace_sequence_steps', { sequenceId: created.sequence.id, expectedRevision: 1, steps: again });
    expect(replaced).toMatchObject({ changed: false, sequence: { revision: 1 } });
    // Answered in one order: the condition's own key first, then its qualifiers.
    expect(Object.keys(replaced.sequence.steps[1].next[0].if)).toEqual(['replied', 'intent']);
  });

  it('a graph that cannot run is refused, naming each problem, and nothing is saved', async () => {
    const before = await t.db.selectFrom('sequences').select('id').execute();
    const error = await fails(client, 'create_sequence', {
      name: 'Broken',
      steps: [
        { kind: 'email', delayDays: 0, subject: 'S', message: 'M', next: [{ if: { accepted: true }, goto: 'later' }], else: 'exit' },
        { kind: 'email', delayDays: 0, subject: 'S', message: 'M', id: 'orphan' },
      ],
    });
    expect(error).toMatchObject({ error: 'invalid_steps', httpStatus: 400 });
    expect(error.problems).toEqual([expect.stringMatching(/steps\[0\]\.next\[0\]\.goto "later" is neither a step id/)]);
    const again = await fails(client, 'create_sequence', {
      name: 'Broken',
      steps: [
        { kind: 'email', delayDays: 0, subject: 'S', message: 'M', next: [{ if: { accepted: true }, goto: 'exit' }], else: 'exit' },
        { kind: 'email', delayDays: 0, subject: 'S', message: 'M', id: 'orphan' },
      ],
    });
    expect(again.problems).toEqual([
      expect.stringMatching(/steps\[1\] cannot be reached from the first step/),
      expect.stringMatching(/steps\[0\]\.next\[0\]\.if: "accepted" cannot become true: no connect step comes before it/),
    ]);
    const badShape = await fails(client, 'create_sequence', {
      name: 'Broken',
      steps: [{ kind: 'email', delayDays: 0, subject: 'S', message: 'M', next: [{ if: { colour: 'red' }, goto: 'exit' }] }],
    });
    // tools/list sketches the condition; the service checks it against the full schema (Condition) and names where.
    expect(badShape).toMatchObject({ error: 'invalid_steps', httpStatus: 400 });
    expect(JSON.stringify(badShape)).toMatch(/next\/0\/if/);
    expect(await t.db.selectFrom('sequences').select('id').execute()).toHaveLength(before.length);
  });

  it('the OpenAPI document publishes the condition as a JSON Schema, marked x-extension', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    const doc = JSON.stringify(res.json());
    expect(doc).toContain('"meetingBooked"');
    expect(doc).toContain('A branch condition: exactly one of these objects');
  });
});

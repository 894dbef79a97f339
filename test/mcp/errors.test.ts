import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { MAX_LISTED_ERRORS } from '../../src/mcp/input-validation.js';
import { connectInMemory, fails, ok } from './mcp-client.js';

// Tool input errors list every missing or invalid argument at once (an agent fixes them in one round), and a step
// may leave out what can be inferred (index, actions, variants, tool; subject but on email steps): docs/mcp.md.

let t: TestApp;
let client: Client;

beforeAll(async () => {
  t = await buildTestApp();
  const { workspaceId } = await createWorkspaceWithKey(t, 'Errors');
  client = await connectInMemory(t.services, workspaceId);
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe('tool input errors name every problem at once', () => {
  it('create_sequence: the missing name, an unknown argument and each bad step field, in one answer', async () => {
    const error = await fails(client, 'create_sequence', {
      colour: 'red',
      steps: [
        { kind: 'fax', delayDays: -1 },
        { kind: 'x_dm', delayDays: 0, message: 5 },
      ],
    });
    expect(error).toMatchObject({ error: 'invalid_request', httpStatus: 400 });
    expect(error.errors).toEqual([
      { field: 'arguments/name', message: 'arguments/name is required' },
      {
        field: 'arguments/colour',
        message: 'arguments/colour is not allowed: arguments has no property "colour" (allowed: name, steps, sendInLeadHours, dryRun)',
      },
      { field: 'arguments/steps/0/message', message: 'arguments/steps/0/message is required' },
      { field: 'arguments/steps/0/kind', message: expect.stringMatching(/^arguments\/steps\/0\/kind must be one of: "connect", /) },
      { field: 'arguments/steps/0/delayDays', message: 'arguments/steps/0/delayDays must be >= 0' },
      { field: 'arguments/steps/1/message', message: 'arguments/steps/1/message must be of type string or null' },
    ]);
    expect(error.message).toBe(error.errors.map((e: { message: string }) => e.message).join('; '));
    // Never the rejected value itself (it could be a secret pasted in the wrong place).
    expect(JSON.stringify(error)).not.toContain('ows_pasted_key');
  });

  it('an email step without a subject is named (only e-mail has a subject line); nothing else about the rule', async () => {
    const error = await fails(client, 'create_sequence', { name: 'Mail', steps: [{ kind: 'email', delayDays: 0, message: 'Hi' }] });
    expect(error.errors).toEqual([{ field: 'arguments/steps/0/subject', message: 'arguments/steps/0/subject is required' }]);
  });

  it(`lists at most ${MAX_LISTED_ERRORS} problems and counts the rest`, async () => {
    const steps = Array.from({ length: 30 }, () => ({ kind: 'x_dm' }));
    const error = await fails(client, 'replace_sequence_steps', { sequenceId: '00000000-0000-4000-8000-000000000000', expectedRevision: 1, steps });
    expect(error.errors).toHaveLength(MAX_LISTED_ERRORS);
    expect(error.message).toMatch(/; and 40 more$/);
  });
});

describe('a step leaves out what can be inferred', () => {
  it('index is its position, actions [], variants, tool and (but on email) subject null: the first reasonable call succeeds', async () => {
    const created = await ok(client, 'create_sequence', {
      name: 'Short steps',
      steps: [
        { kind: 'x_dm', delayDays: 0, message: 'Hi {{firstName|there}}' },
        { kind: 'x_engage', delayDays: 2, message: null, actions: [{ type: 'like_last_post', count: null, reaction: null }] },
        { kind: 'email', delayDays: 3, subject: 'Hello', message: 'Hi {{firstName|there}}', tool: 'gmail' },
      ],
    });
    expect(created.sequence.steps).toEqual([
      { index: 0, kind: 'x_dm', delayDays: 0, subject: null, message: 'Hi {{firstName|there}}', actions: [], variants: null, tool: null },
      {
        index: 1,
        kind: 'x_engage',
        delayDays: 2,
        subject: null,
        message: null,
        actions: [{ type: 'like_last_post', count: null, reaction: null }],
        variants: null,
        tool: null,
      },
      { index: 2, kind: 'email', delayDays: 3, subject: 'Hello', message: 'Hi {{firstName|there}}', actions: [], variants: null, tool: 'gmail' },
    ]);

    const replaced = await ok(client, 'replace_sequence_steps', {
      sequenceId: created.sequence.id,
      expectedRevision: 1,
      steps: [{ kind: 'x_dm', delayDays: 1, message: null, variants: [{ key: 'A', weight: 1, messageTmpl: 'Hey' }] }],
    });
    expect(replaced.sequence).toMatchObject({ revision: 2, steps: [{ index: 0, subject: null, actions: [], tool: null, variants: [{ key: 'A' }] }] });
  });

  it('a given index still has to be the position (the rules are the service’s, unchanged)', async () => {
    const error = await fails(client, 'create_sequence', { name: 'Out of order', steps: [{ index: 1, kind: 'x_dm', delayDays: 0, message: 'Hi' }] });
    expect(error).toMatchObject({ error: 'invalid_steps', httpStatus: 400, problems: [expect.stringContaining('index must be 0')] });
  });
});

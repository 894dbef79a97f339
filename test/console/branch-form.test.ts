import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { insertMessagingAccount } from '../helpers/factories.js';

// The sequence editor's branch blocks over HTTP (docs/console.md "Branches"), on both databases: "Add edge" and
// "Remove edge" redraw the form with what was typed, a save turns the fields into the wire form, and a refusal is a
// 400 naming the step, the edge and the label (or the service's graph problem), with nothing saved.

let t: TestApp;
let c: ConsoleClient;
let workspaceId: string;

beforeAll(async () => {
  t = await buildTestApp();
  const ws = await createWorkspaceWithKey(t, 'Branch forms');
  workspaceId = ws.workspaceId;
  await insertMessagingAccount(t.db, ws.workspaceId);
  c = await signedInConsole(t, ws.key);
  await c.get('/console/sequences/new');
});
afterAll(async () => t?.close());

const sequenceCount = async () =>
  (await t.db.selectFrom('sequences').select(t.db.fn.countAll<number>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow()).n;

/** Two e-mail steps; the first with the edges given (field suffix → value, e.g. `cond`, `goto`). */
function form(edges: Record<string, string>[], extra: Record<string, string> = {}) {
  const fields: Record<string, string> = {
    name: 'Branchy',
    step_count: '2',
    s0_kind: 'email',
    s0_delay: '0',
    s0_subject: 'Hi',
    s0_message: 'Hi {{firstName}}',
    s0_id: 'first',
    s0_edge_count: String(edges.length),
    s1_kind: 'email',
    s1_delay: '0',
    s1_subject: '',
    s1_message: 'Bump',
    s1_id: 'bump',
    s1_edge_count: '0',
    ...extra,
  };
  edges.forEach((e, j) => {
    for (const [k, v] of Object.entries(e)) fields[`s0_e${j}_${k}`] = v;
  });
  return fields;
}

describe('the branch block of the sequence editor', () => {
  it('Add edge draws a blank edge under what was typed; Remove edge drops only that one', async () => {
    const typed = form([{ cond: 'bounced:true', within: '3', goto: 'exit' }]);
    const added = await c.post('/console/sequences/new', { ...typed, op: 'add_edge:0' });
    expect(added.statusCode).toBe(200);
    expect(added.body).toContain('<legend>Edge 2</legend>');
    expect(added.body).toContain('<option value="bounced:true" selected>E-mail bounced</option>');
    expect(added.body).toMatch(/id="s0_e0_within" name="s0_e0_within" type="number" min="1" max="365" value="3"/);
    // The blank edge's own inputs: a reply's channel and intent shown, a field's hidden.
    expect(added.body).toMatch(/<p data-conds="[^"]*replied:true[^"]*">\s*<label for="s0_e1_channel">/);
    expect(added.body).toMatch(/<div data-conds="field" hidden>/);
    const removed = await c.post('/console/sequences/new', {
      ...form([
        { cond: 'bounced:true', within: '3', goto: 'exit' },
        { cond: 'split', percent: '40', goto: 'bump' },
      ]),
      op: 'remove_edge:0:0',
    });
    expect(removed.statusCode).toBe(200);
    expect(removed.body).not.toContain('<legend>Edge 2</legend>');
    expect(removed.body).toContain('<option value="split" selected>Random split</option>');
    // An edge that is not in the form is refused, not guessed.
    const foreign = await c.post('/console/sequences/new', { ...typed, op: 'remove_edge:0:4' });
    expect(foreign.statusCode).toBe(400);
    expect(await sequenceCount()).toBe(0);
  });

  it('a save refuses what the form alone gets wrong, naming the step, the edge and the label; nothing is saved', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ cond: 'bounced:true', within: '3', goto: '' }, 'Step 1, edge 1: Go to is required (a step id, goal or exit)'],
      [{ cond: 'teleported:true', goto: 'exit' }, 'Step 1, edge 1: Condition must be one of Invitation accepted, Invitation not accepted, Replied'],
      [{ cond: 'hasAddress', channel: '', goto: 'exit' }, 'Step 1, edge 1: Channel must be one of linkedin, email, x'],
      [{ cond: 'split', percent: 'half', goto: 'bump' }, 'Step 1, edge 1: Percent must be a whole number from 1 to 99'],
      [{ cond: 'replied:true', within: '2.5', goto: 'goal' }, 'Step 1, edge 1: Within (days) must be a whole number from 1 to 365, or empty'],
      [{ cond: 'field', field: 'title', test: 'resembles', goto: 'goal' }, 'Step 1, edge 1: Test must be one of equals, contains, exists, empty'],
    ];
    for (const [edge, message] of cases) {
      const res = await c.post('/console/sequences/new', { ...form([edge]), op: 'save' });
      expect(res.statusCode, message).toBe(400);
      expect(res.body).toContain(message);
      // What was typed stays on the page.
      expect(res.body).toContain('value="first"');
    }
    expect(await sequenceCount()).toBe(0);
  });

  it("the service's graph checks come back in the form's words: an unknown target, and a condition that cannot become true", async () => {
    const unknown = await c.post('/console/sequences/new', { ...form([{ cond: 'split', percent: '50', goto: 'nowhere' }]), op: 'save' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('Step 1, edge 1, Go to &#34;nowhere&#34; is neither a step id of this sequence nor goal or exit (400)');
    const never = await c.post('/console/sequences/new', { ...form([{ cond: 'accepted:true', within: '3', goto: 'bump' }]), op: 'save' });
    expect(never.statusCode).toBe(400);
    expect(never.body).toContain('Step 1, edge 1, If: &#34;accepted&#34; cannot become true: no connect step comes before it');
    expect(await sequenceCount()).toBe(0);
  });

  it('a good form is saved as the wire form: the wait kept only where the condition reads one, hidden inputs ignored', async () => {
    const res = await c.post('/console/sequences/new', {
      ...form(
        [
          { cond: 'bounced:true', within: '3', goto: 'exit', channel: 'linkedin', field: 'title' },
          { cond: 'replied:true', channel: 'email', intent: 'positive', within: '5', goto: 'goal' },
          { cond: 'field', field: 'custom.plan', test: 'equals', value: 'Pro', within: '9', goto: 'goal' },
          { cond: 'split', percent: '30', goto: 'bump' },
        ],
        { s0_else: 'exit' },
      ),
      op: 'save',
    });
    expect(res.statusCode, res.body).toBe(303);
    const row = await t.db.selectFrom('sequences').select('steps').where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
    const [first, second] = row.steps as unknown as Record<string, unknown>[];
    expect(first).toMatchObject({
      id: 'first',
      next: [
        { if: { bounced: true }, withinDays: 3, goto: 'exit' },
        { if: { replied: true, channel: 'email', intent: 'positive' }, withinDays: 5, goto: 'goal' },
        { if: { field: 'custom.plan', equals: 'Pro' }, goto: 'goal' },
        { if: { split: 30 }, goto: 'bump' },
      ],
      else: 'exit',
    });
    expect((first.next as Record<string, unknown>[])[2]).not.toHaveProperty('withinDays');
    expect(second).toMatchObject({ id: 'bump' });
    expect(second).not.toHaveProperty('next');
    expect(second).not.toHaveProperty('else');
  });
});

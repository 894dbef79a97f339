import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole } from '../helpers/console.js';
import { insertSequence } from '../helpers/factories.js';
import { buildEngineTestApp, type MemoryChannels } from '../helpers/memory-channels.js';
import { connectInMemory, fails, ok, step as mcpStep } from '../mcp/mcp-client.js';
import { activityOf, insertAccount, step, steps } from '../engine/helpers.js';

// Issue 39 §2: a file's columns that no lead field reads are kept as the lead's custom fields, and a step reads them
// as {{custom.<name>}} (docs/sequences-and-leads.md "Custom fields"). A lead without the value: the fallback, or the
// step is skipped like any missing value, never sent with a hole.
const T0 = new Date('2026-11-02T09:00:00.000Z');

let t: TestApp, channels: MemoryChannels;
beforeAll(async () => ({ t, channels } = await buildEngineTestApp(T0)));
afterAll(async () => t?.close());

const CSV = [
  'First Name,Last Name,LinkedIn URL,Deal Size,Icebreaker,Country',
  'Jane,Doe,https://www.linkedin.com/in/jane-doe-cf,50k,Loved your talk at FOSDEM,Germany',
  'Omar,Haddad,https://www.linkedin.com/in/omar-haddad-cf,,Congrats on the launch,',
  'Lena,Berg,https://www.linkedin.com/in/lena-berg-cf,12k,,Sweden',
].join('\n');

describe('a file’s unmapped columns', () => {
  let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  let imported: { rows: { row: number; status: string; leadId: string; custom?: Record<string, string>; warnings?: string[] }[]; unmapped: string[] };
  beforeAll(async () => {
    ws = await createWorkspaceWithKey(t, 'Custom fields');
    const account = await insertAccount(t.db, ws.workspaceId);
    const sequenceId = await insertSequence(t.db, ws.workspaceId, {
      steps: steps(
        step('connect', { message: 'Hi {{firstName}}, {{ custom.icebreaker }} ({{custom.Deal Size|a new deal}})' }),
        step('engage', { delayDays: 30, actions: [{ type: 'like', count: 1, reaction: null }] }),
      ),
    });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/leads/import', headers: ws.auth, payload: { csv: CSV, sequenceId, accountId: account } });
    expect(res.statusCode).toBe(200);
    imported = res.json();
    await t.services.engine.runPass({ now: T0 });
  });

  it('are listed as unmapped, returned per row, and kept on each new lead', async () => {
    expect(imported.unmapped).toEqual(['Deal Size', 'Icebreaker', 'Country']);
    expect(imported.rows.map((r) => r.custom)).toEqual([
      { 'Deal Size': '50k', Icebreaker: 'Loved your talk at FOSDEM', Country: 'Germany' },
      { Icebreaker: 'Congrats on the launch' },
      { 'Deal Size': '12k', Country: 'Sweden' },
    ]);
    const stored = await t.db
      .selectFrom('leads')
      .select(['id', 'custom'])
      .where('workspace_id', '=', ws.workspaceId)
      .where(
        'id',
        'in',
        imported.rows.map((r) => r.leadId),
      )
      .execute();
    expect(stored.find((l) => l.id === imported.rows[1].leadId)?.custom).toEqual({ Icebreaker: 'Congrats on the launch' });
  });

  it('are shown on the lead’s console page with the placeholder that reads each', async () => {
    const console = await signedInConsole(t, ws.key);
    const page = await console.get(`/console/leads/${imported.rows[0].leadId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<code>{{custom.Deal Size}}</code> <span>50k</span>');
    expect(page.body).toContain('<code>{{custom.Icebreaker}}</code> <span>Loved your talk at FOSDEM</span>');
  });

  it('fill {{custom.<name>}} in any spelling of the column, with the fallback when a lead lacks the value', () => {
    const texts = (leadId: string) => channels.delivered.filter((a) => a.idempotencyKey.startsWith(leadId)).map((a) => a.text);
    expect(texts(imported.rows[0].leadId)).toEqual(['Hi Jane, Loved your talk at FOSDEM (50k)']);
    expect(texts(imported.rows[1].leadId)).toEqual(['Hi Omar, Congrats on the launch (a new deal)']);
  });

  it('a lead without the value and no fallback is skipped with missing_template_value naming the field, never sent', async () => {
    const lena = imported.rows[2].leadId;
    expect(channels.delivered.filter((a) => a.idempotencyKey.startsWith(lena))).toEqual([]);
    const [first] = await activityOf(t.db, lena);
    expect(first).toMatchObject({ action: 'invite', outcome: 'skipped' });
    expect(JSON.parse(first.detail)).toMatchObject({ reason: 'missing_template_value', field: 'custom.icebreaker' });
  });
});

describe('bounds', () => {
  it('a value longer than 2,000 characters, or past 50 columns, is not kept, and the row says so', async () => {
    const ws = await createWorkspaceWithKey(t, 'Custom bounds');
    const many = Array.from({ length: 52 }, (_, i) => `Extra ${i + 1}`);
    const csv = [['Email', 'Notes', ...many].join(','), ['a@example.com', 'x'.repeat(2001), ...many.map((_, i) => `v${i + 1}`)].join(',')].join('\n');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/leads/import', headers: ws.auth, payload: { csv, dryRun: true } });
    expect(res.statusCode).toBe(200);
    const [row] = res.json().rows;
    expect(Object.keys(row.custom)).toHaveLength(50);
    expect(row.custom.Notes).toBeUndefined();
    expect(row.custom['Extra 51']).toBeUndefined();
    expect(row.warnings).toEqual([
      'column "Notes" is not kept: its value is longer than 2000 characters',
      'column "Extra 51" is not kept: a lead keeps at most 50 custom fields',
      'column "Extra 52" is not kept: a lead keeps at most 50 custom fields',
    ]);
  });
});

describe('authoring', () => {
  let mcp: Client;
  beforeAll(async () => {
    mcp = await connectInMemory(t.services, (await createWorkspaceWithKey(t, 'Custom authoring')).workspaceId);
  });
  afterAll(async () => mcp?.close());

  it('accepts {{custom.<name>}} with or without a fallback, and refuses {{custom.}} naming the step', async () => {
    await ok(mcp, 'create_sequence', {
      name: 'Custom',
      steps: [mcpStep(0, { message: 'Hi {{firstName|there}}, {{custom.Deal Size|}} {{custom.icebreaker}}' })],
    });
    const err = await fails(mcp, 'create_sequence', { name: 'Empty custom', steps: [mcpStep(0, { message: 'Hi {{custom.}}' })] });
    expect(JSON.stringify(err)).toContain('unknown placeholder {{custom.}}');
  });
});

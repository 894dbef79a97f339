import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { findControlCharacter } from '../../src/lib/control-characters.js';

// Issue 39 §6: a NUL or another control character in any text of a request body is a 400 naming the field, and
// changes nothing, on every route (one check, src/lib/control-characters.ts); before, PostgreSQL's refusal of a NUL
// surfaced as a 500. A CSV's text is read by its own rules (a row with a NUL is refused alone).

let t: TestApp;
let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;

beforeAll(async () => {
  t = await buildTestApp();
  ws = await createWorkspaceWithKey(t, 'Control Co');
});
afterAll(async () => t?.close());

describe('control characters in request text', () => {
  it('finds the first control character with its path; tab, line feed and carriage return are text', () => {
    expect(findControlCharacter({ name: 'a\tb\r\nc', steps: [{ message: 'ok' }, { message: 'Hi\u0000there' }] })).toEqual({
      field: 'steps/1/message',
      codePoint: 'U+0000',
    });
    expect(findControlCharacter({ note: 'bell\u0007' })).toEqual({ field: 'note', codePoint: 'U+0007' });
    expect(findControlCharacter({ ['k\u001b']: 'v' })).toEqual({ field: 'k\u001b', codePoint: 'U+001B' });
    expect(findControlCharacter({ csv: 'a,b\n\u0000,c' })).toBeNull();
    expect(findControlCharacter({ text: 'ünïcödé ✓ 👋' })).toBeNull();
  });

  it('a JSON body with a NUL is a 400 naming the field, and nothing is saved', async () => {
    const before = await t.db.selectFrom('webhooks').select('id').where('workspace_id', '=', ws.workspaceId).execute();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: ws.auth,
      payload: { url: 'https://hooks.example.com/in\u0000', events: ['lead.invited'] },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request', field: 'url' });
    expect(res.json().message).toMatch(/^url: .*control characters \(found U\+0000\)/);
    expect(await t.db.selectFrom('webhooks').select('id').where('workspace_id', '=', ws.workspaceId).execute()).toEqual(before);
  });

  it('an MCP call with a NUL in a tool argument is a 400 naming the argument, before any tool runs', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...ws.auth, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'create_sequence', arguments: { name: 'Q4\u0000', steps: [] } },
      },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request', field: 'params/arguments/name' });
  });

  it('a CSV import with a NUL in one row refuses that row alone', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/leads/import',
      headers: ws.auth,
      payload: { csv: 'person,email\nNul Row,nul\u0000@acme.example\nGood Row,good@acme.example\n', dryRun: true },
    });
    expect(res.statusCode, res.body).toBe(200);
    const rows = res.json<{ rows: { status: string; reason: string | null }[] }>().rows;
    expect(rows.map((r) => r.status)).toEqual(['invalid', 'new']);
  });
});

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';

// ../shared/cases/inputs/14-email-forms.csv (copied in test/fixtures/inputs): "the IDN domain accepted (stored in its
// ASCII form); the rest as today". An internationalized address (RFC 6531) is a lead's address like any other.
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

describe('14 e-mail forms, saved', () => {
  it('jürgen@bücher.example is new and saved as jürgen@xn--bcher-kva.example; ASCII addresses are saved as typed', async () => {
    const ws = await createWorkspaceWithKey(t, 'Email forms');
    const csv = readFileSync('test/fixtures/inputs/14-email-forms.csv', 'utf8');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/leads/import', headers: ws.auth, payload: { csv } });
    expect(res.statusCode).toBe(200);
    const rows = res.json().rows as { row: number; status: string; leadId: string | null; lead: { email: string } }[];
    const e3 = rows.find((r) => r.lead.email === 'jürgen@bücher.example')!;
    expect(e3.status).toBe('new');
    const saved = await t.db.selectFrom('leads').select(['id', 'email']).where('workspace_id', '=', ws.workspaceId).execute();
    expect(saved.find((l) => l.id === e3.leadId)?.email).toBe('jürgen@xn--bcher-kva.example');
    expect(saved.map((l) => l.email)).toContain('Mixed.Case@Example.COM');
    // The same mailbox spelled with its Unicode domain again is the same person.
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/v1/leads/import',
      headers: ws.auth,
      payload: { csv: 'email\nJÜRGEN@BÜCHER.EXAMPLE', dryRun: true },
    });
    expect(again.json().rows[0]).toMatchObject({ status: 'duplicate', leadId: e3.leadId });
  });
});

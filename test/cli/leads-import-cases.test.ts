import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { runCli } from '../helpers/cli-process.js';
import { APOLLO_LEAD, sharedCase } from '../helpers/lead-files.js';

// Issue 39 "Done when": each lead file of ../shared/cases/inputs/ gives the right result its README states through
// `outreach leads import FILE --dry-run --json` (the console preview's twin is test/console/leads-import-cases.browser.test.ts).
// The shared files are read where they are; test/fixtures/inputs holds copies for the tests that need the repository alone.

let t: TestApp;
let url: string;
let key: string;

interface Row {
  row: number;
  status: string;
  reason: string | null;
  lead: Record<string, string | null>;
  name?: { first: string | null; last: string | null };
}
const dryRun = async (file: string) => {
  const res = await runCli(['leads', 'import', sharedCase(file), '--dry-run', '--json', '--url', url], { OUTREACH_API_KEY: key }, { timeoutMs: 120_000 });
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout) as { encoding: string; delimiter: string; unmapped: string[]; rows: Row[]; counts: Record<string, number> };
};

beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  key = (await createWorkspaceWithKey(t, 'CLI cases')).key;
});
afterAll(async () => t?.close());

describe('the shared input cases through the CLI', { timeout: 240_000 }, () => {
  it('02 Excel `;` with a BOM: both rows mapped and new', async () => {
    const r = await dryRun('02-excel-semicolon.csv');
    expect(r).toMatchObject({ encoding: 'utf-8', delimiter: ';', counts: { new: 2, invalid: 0 } });
    expect(r.rows[0].lead).toMatchObject({ person: 'Jonas Berg', company: 'Holz & Co, KG', email: 'jonas.berg@holz.example' });
  });

  it('04 Windows-1252: the names decoded exactly, never U+FFFD', async () => {
    const r = await dryRun('04-excel-windows-1252.csv');
    expect(r.encoding).toBe('windows-1252');
    expect(r.rows[0].lead.person).toBe('Jürgen Müller');
    expect(JSON.stringify(r.rows)).not.toContain('\uFFFD');
  });

  it('07 Apollo: person from First + Last, and company, title, e-mail, LinkedIn profile and X handle mapped', async () => {
    const r = await dryRun('07-apollo-export.csv');
    expect(r.rows[0]).toMatchObject({
      status: 'new',
      lead: APOLLO_LEAD,
    });
  });

  it('09 everyday header spellings and empty trailing columns: every column mapped', async () => {
    const r = await dryRun('09-header-variants-trailing-cols.csv');
    expect(r.unmapped).toEqual([]);
    expect(Object.values(r.rows[0].lead).every((v) => v !== null)).toBe(true);
    expect(r.rows[0].lead).toMatchObject({ linkedinUrl: 'https://www.linkedin.com/in/ola-nordmann', xUsername: expect.stringMatching(/^@?olanord$/) });
  });

  it('12 one profile spelled seven ways: 1 new, 6 duplicates', async () => {
    const r = await dryRun('12-linkedin-url-forms.csv');
    expect(r.counts).toMatchObject({ rows: 7, new: 1, duplicate: 6 });
  });

  it('13 kinds of LinkedIn address: the two Jürgen rows one profile; the others refused naming the kind', async () => {
    const r = await dryRun('13-linkedin-url-kinds.csv');
    expect(r.rows.map((x) => x.status)).toEqual(['new', 'duplicate', 'invalid', 'invalid', 'invalid', 'invalid', 'new']);
    expect(r.rows[3].reason).toMatch(/Sales Navigator/);
    expect(r.rows[4].reason).toMatch(/company/);
  });

  it('14 e-mail forms: the internationalized address accepted (its domain saved in ASCII), the rest as before', async () => {
    const r = await dryRun('14-email-forms.csv');
    expect(r.rows.map((x) => x.status)).toEqual(['new', 'duplicate', 'new', 'new', 'new', 'invalid', 'new', 'invalid', 'invalid', 'invalid', 'invalid']);
  });

  it('19 names: first names Sam, Jane, Jane, Jane; "MBA" is no part of a last name', async () => {
    const r = await dryRun('19-name-first-name.csv');
    expect(r.rows.map((x) => x.name)).toEqual([
      { first: 'Sam', last: 'Lee' },
      { first: 'Jane', last: 'Doe' },
      { first: 'Jane', last: 'Doe' },
      { first: 'Jane', last: 'Doe' },
    ]);
  });
});

import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { runCli } from '../helpers/cli-process.js';

// `outreach leads import FILE` sends the file's bytes (csvBase64): the server tells the encoding and the delimiter,
// and the CLI prints how it read the file (issue 39 §2). Files: test/fixtures/inputs (README.md there).

const fixture = (name: string) => path.resolve('test/fixtures/inputs', name);
let t: TestApp;
let url: string;
let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;

const cli = (args: string[]) => runCli([...args, '--url', url], { OUTREACH_API_KEY: ws.key }, { timeoutMs: 120_000 });

beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  ws = await createWorkspaceWithKey(t, 'CLI Files Co');
});
afterAll(async () => t?.close());

describe('outreach leads import: files as tools export them', { timeout: 240_000 }, () => {
  it('a Windows-1252 file: the names decoded exactly, and the encoding, delimiter and columns printed', async () => {
    const res = await cli(['leads', 'import', fixture('04-excel-windows-1252.csv'), '--dry-run']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('read as windows-1252, comma-delimited, header row on line 1');
    expect(res.stdout).toContain('columns: person ← person, company ← company');
    const json = JSON.parse((await cli(['leads', 'import', fixture('04-excel-windows-1252.csv'), '--dry-run', '--json'])).stdout);
    expect(json).toMatchObject({ encoding: 'windows-1252', delimiter: ',', headerRow: 1, unmapped: [] });
    expect(json.rows[0].lead.person).toBe('Jürgen Müller');
  });

  it('Apollo: the joined person, the other columns and a LinkedIn Connections preamble', async () => {
    const apollo = await cli(['leads', 'import', fixture('07-apollo-export.csv'), '--dry-run']);
    expect(apollo.code, apollo.stderr).toBe(0);
    expect(apollo.stdout).toContain('person ← First Name + Last Name');
    expect(apollo.stdout).toContain('linkedinUrl ← Person Linkedin Url, xUsername ← Twitter Url');
    expect(apollo.stdout).toMatch(
      /other columns \(kept by each new lead as custom fields, {{custom.<name>}}\): Company Name for Emails, .*Company Linkedin Url/,
    );
    const connections = await cli(['leads', 'import', fixture('50-linkedin-connections.csv'), '--dry-run']);
    expect(connections.stdout).toContain('header row on line 4');
    expect(connections.stdout).toContain('would import 2 of 2 row(s)');
  });

  it('row warnings are printed and in --json', async () => {
    const res = await cli(['leads', 'import', fixture('59-x-urls-and-extra-cells.csv'), '--dry-run']);
    expect(res.stdout).toContain('row 4: warning, X URL "https://www.facebook.com/facebook" is not an X profile URL; the row has no X handle');
    const json = JSON.parse((await cli(['leads', 'import', fixture('59-x-urls-and-extra-cells.csv'), '--dry-run', '--json'])).stdout);
    expect(json.rows[2].warnings).toHaveLength(2);
  });
});

import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { runCli } from '../helpers/cli-process.js';
import { insertLead } from '../helpers/factories.js';

// `outreach leads import FILE` for a file past one request's bound (issue 39 §2): sent in batches of whole records,
// the problems named by the rows of the file, the totals across batches, and an interrupted import resumed from the
// state file beside the file. The hidden `--max-batches N` stops after N batches, as an interruption would.

const ROWS = 5000;
const NAMES = ['Zoë Ångström', 'Łukasz Żółć', 'José Núñez', '王小明', 'Ngọc Ánh', 'Ann Smith'];

type Status = 'new' | 'duplicate' | 'suppressed' | 'invalid';
interface Expected {
  line: number;
  email: string;
  status: Status;
}

/**
 * A semicolon-delimited UTF-8 file of ROWS rows and what each row should come to. Duplicates within a batch and
 * across batches, a row of a lead already saved, one of an opted-out person (twice), invalid e-mails, a quoted
 * notes field over two lines now and then (so rows and lines part), and one quote never closed near the end (no
 * quote follows it, so it stays unclosed).
 */
function leadFile(): { text: string; rows: Expected[] } {
  const lines = ['person;company;email;notes'];
  const rows: Expected[] = [];
  const used = new Set<string>(['old@acme.example', 'gone@acme.example']);
  let line = 2;
  for (let i = 1; i <= ROWS; i++) {
    let email = `lead${i}@example.com`;
    if (i % 250 === 0 && i > 1000)
      email = `lead${i - 1001}@example.com`; // the same person a batch earlier
    else if (i % 333 === 0) email = `LEAD${i - 5}@Example.com`; // the same person a few rows up
    if (i === 42) email = 'OLD@acme.example'; // a lead already saved
    if (i === 77 || i === 2077) email = 'gone@acme.example'; // a person who opted out
    if (i % 97 === 0) email = `not-an-email-${i}`;
    const notes = i % 1000 === 7 ? '"met at the fair; said ""call me""\nfollow up in May"' : i % 10 === 0 ? 'warm' : '';
    const company = i % 3 === 0 ? 'Acme, Inc.' : `Company ${i % 50}`;
    if (i === 4990) {
      lines.push(`"Broken Bea;Broken Co;bea@broken.example;`);
      rows.push({ line, email: '', status: 'invalid' });
      line++;
      continue;
    }
    lines.push([NAMES[i % NAMES.length], company, email, notes].join(';'));
    const key = email.toLowerCase();
    const status: Status = i % 97 === 0 ? 'invalid' : key === 'gone@acme.example' ? 'suppressed' : used.has(key) ? 'duplicate' : 'new';
    if (status !== 'invalid') used.add(key);
    rows.push({ line, email, status });
    line += notes.includes('\n') ? 2 : 1;
  }
  return { text: `${lines.join('\r\n')}\r\n`, rows };
}

let t: TestApp;
let url: string;
let dir: string;
let file: string;
let expected: Expected[];
const count = (s: Status) => expected.filter((r) => r.status === s).length;

async function workspace(name: string) {
  const ws = await createWorkspaceWithKey(t, name);
  await insertLead(t.db, ws.workspaceId, { person: 'Old', email: 'old@acme.example' });
  await insertLead(t.db, ws.workspaceId, { person: 'Gone', email: 'gone@acme.example', opted_out_at: new Date('2026-11-01T00:00:00Z') });
  return ws;
}
/** `outreach leads import FILE ARGS` as a child process, with room for 5,000 rows of --json. */
const cli = (key: string, args: string[]) =>
  runCli(['leads', 'import', file, ...args, '--url', url], { OUTREACH_API_KEY: key }, { timeoutMs: 90_000, maxBuffer: 64 * 1024 * 1024 });
const leadsOf = (workspaceId: string) =>
  t.db.selectFrom('leads').select(['person', 'company', 'email']).where('workspace_id', '=', workspaceId).orderBy('email').execute();

beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-large-'));
  file = path.join(dir, 'leads.csv');
  const generated = leadFile();
  fs.writeFileSync(file, generated.text);
  expected = generated.rows;
});
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await t?.close();
});

describe('outreach leads import: a file past one request, in batches (issue 39 §2)', { timeout: 120_000 }, () => {
  let full: { counts: Record<string, number>; emails: string[] };

  it('imports 5,000 rows in batches: totals across batches, the rows saved, problems named by the lines of the file', async () => {
    const ws = await workspace('Large Co');
    const res = await cli(ws.key, ['--json']);
    expect(res.code, res.stderr).toBe(0);
    const body = JSON.parse(res.stdout);
    expect(body.counts).toEqual({ rows: ROWS, new: count('new'), duplicate: count('duplicate'), suppressed: count('suppressed'), invalid: count('invalid') });
    expect(body).toMatchObject({ dryRun: false, encoding: 'utf-8', delimiter: ';', headerRow: 1, unmapped: ['notes'], complete: true, resumedAfterRow: null });
    expect(body.batches.total).toBeGreaterThanOrEqual(3);
    expect(body.mapping).toMatchObject({ person: ['person'], company: ['company'], email: ['email'] });

    // Every row once, by its line in the file, with the status it should have.
    expect(body.rows.map((r: { row: number; status: string }) => [r.row, r.status])).toEqual(expected.map((r) => [r.line, r.status]));
    const byLine = new Map<number, { reason: string | null; lead: { person: string | null } }>(body.rows.map((r: { row: number }) => [r.row, r]));
    const line = (i: number) => expected[i - 1].line;
    expect(byLine.get(line(97))?.reason).toBe('email "not-an-email-97" is not an e-mail address (name@example.com, at most 320 characters)');
    // A duplicate within a batch (the second) names the earlier row by its line in the file, not in the batch.
    expect(byLine.get(line(2331))?.reason).toBe(`same person as row ${line(2326)} (same e-mail)`);
    expect(line(2326)).toBe(2330);
    expect(byLine.get(line(2250))?.reason).toMatch(/^same person as lead [0-9a-f-]+ \(same e-mail\)$/);
    expect(byLine.get(line(2077))?.reason).toMatch(/^this person opted out/);
    expect(byLine.get(line(4990))?.reason).toBe(`a quoted field that starts on line ${line(4990)} is never closed (a " is missing)`);
    expect(byLine.get(line(1007))?.lead.person).toBe(NAMES[1007 % NAMES.length]);

    const saved = await leadsOf(ws.workspaceId);
    expect(saved).toHaveLength(2 + count('new'));
    expect(new Set(saved.map((l) => l.email)).size).toBe(saved.length);
    expect(saved.find((l) => l.email === 'lead1@example.com')).toMatchObject({ person: 'Łukasz Żółć', company: 'Company 1' });
    expect(saved.find((l) => l.email === 'lead6@example.com')).toMatchObject({ person: 'Zoë Ångström', company: 'Acme, Inc.' });
    expect(saved.find((l) => l.email === 'lead3@example.com')).toMatchObject({ person: '王小明', company: 'Acme, Inc.' });
    expect(fs.existsSync(`${file}.outreach-import.json`)).toBe(false);
    full = { counts: body.counts, emails: saved.map((l) => l.email!) };
  });

  it('a dry run answers the same totals, saves nothing and records no progress; the text lists problems by line', async () => {
    const ws = await workspace('Dry Co');
    const res = await cli(ws.key, ['--dry-run', '--max-batches', '1']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('stopped after 1 of 3 batch(es) (--max-batches)');
    expect(fs.existsSync(`${file}.outreach-import.json`)).toBe(false);

    const dry = await cli(ws.key, ['--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    const c = full.counts;
    expect(dry.stdout).toContain(`Dry run, nothing saved: would import ${c.new} of ${ROWS} row(s) from ${file}, in no sequence`);
    expect(dry.stdout).toContain(`new: ${c.new}  duplicate: ${c.duplicate}  suppressed: ${c.suppressed}  invalid: ${c.invalid}`);
    expect(dry.stdout).toContain('read as utf-8, semicolon-delimited, header row on line 1');
    const line = (i: number) => expected[i - 1].line;
    expect(dry.stdout).toContain(`row ${line(97)}: invalid, email "not-an-email-97"`);
    // Across batches a dry run saved nothing, yet the row is the same person as a row of the first batch.
    expect(dry.stdout).toContain(`row ${line(2250)}: duplicate, same person as row ${line(1249)} (same e-mail)`);
    expect(await leadsOf(ws.workspaceId)).toHaveLength(2);
    expect(fs.existsSync(`${file}.outreach-import.json`)).toBe(false);
  });

  it('an interrupted import resumes after the last batch done, to the same leads with none twice', async () => {
    const ws = await workspace('Resume Co');
    const statePath = `${file}.outreach-import.json`;
    const first = await cli(ws.key, ['--max-batches', '1']);
    expect(first.code).toBe(1);
    const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
    expect(state).toMatchObject({ version: 1, batchesDone: 1, options: { sequence: null, account: null, columns: { email: 'email', person: 'person' } } });
    expect(state.rowsDone).toBeGreaterThan(0);
    expect(state.afterRow).toBe(expected[state.rowsDone - 1].line);
    expect(first.stderr).toContain(`run the same command again to resume after row ${state.afterRow}`);
    const afterFirst = (await leadsOf(ws.workspaceId)).length;
    expect(afterFirst).toBe(2 + expected.slice(0, state.rowsDone).filter((r) => r.status === 'new').length);

    // Other options do not resume (and --max-batches 0 sends nothing, so the state stays as it was).
    const other = await cli(ws.key, ['--account', 'onb_other', '--max-batches', '0']);
    expect(other.stderr).toContain('records an import of another version of the file or with other options; starting over');
    expect(JSON.parse(fs.readFileSync(statePath, 'utf8')).rowsDone).toBe(state.rowsDone);

    const rest = await cli(ws.key, []);
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.stderr).toContain(`resuming after row ${state.afterRow}`);
    expect(rest.stdout).toContain(`Imported ${full.counts.new} of ${ROWS} row(s)`);
    expect(rest.stdout).toContain(`resumed after row ${state.afterRow}`);
    expect(rest.stdout).toContain(
      `new: ${full.counts.new}  duplicate: ${full.counts.duplicate}  suppressed: ${full.counts.suppressed}  invalid: ${full.counts.invalid}`,
    );
    expect(fs.existsSync(statePath)).toBe(false);
    const saved = await leadsOf(ws.workspaceId);
    expect(saved.map((l) => l.email)).toEqual(full.emails);

    // --restart ignores a state; with none left it simply imports again, every row now a duplicate or worse.
    const again = await cli(ws.key, ['--restart', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).counts.new).toBe(0);
    expect(await leadsOf(ws.workspaceId)).toHaveLength(saved.length);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount, insertSequence } from '../../helpers/factories.js';
import { insertStoredMailbox } from '../../helpers/worlds/mailbox.js';
import { IMPORT_LIMITS } from '../../../src/modules/leads/leads.import.rules.js';

// POST /leads/import (issue 27 §3): one service decides new, duplicate, suppressed and invalid per row, a dry run
// saves nothing, and a chosen sequence and account queue the new leads where the engine picks them up.

const NOW = '2026-11-21T12:00:00.000Z';
let t: TestApp;
let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let other: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let sequence: string;
let account: string;

const importCsv = (body: Record<string, unknown>, who = ws) => t.app.inject({ method: 'POST', url: '/api/v1/leads/import', headers: who.auth, payload: body });

async function snapshot(workspaceId: string) {
  return t.db
    .selectFrom('leads')
    .select(['id', 'email', 'sequence_id', 'account_id', 'next_action_at', 'updated_at'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('id')
    .execute();
}

const HEADER = 'person,company,title,email,linkedinUrl,xUsername';

beforeAll(async () => {
  t = await buildTestApp({ now: NOW });
  ws = await createWorkspaceWithKey(t, 'Import Leads Co');
  other = await createWorkspaceWithKey(t, 'Elsewhere');
  sequence = await insertSequence(t.db, ws.workspaceId, {
    channels: ['email'],
    steps: [{ index: 0, kind: 'email', delayDays: 0, subject: 'Hi', message: 'Hello' }],
  });
  account = await insertStoredMailbox(t, ws.workspaceId, { mailboxId: 'mbx_import_test', accountName: 'Dana (e-mail)' });
  await insertLead(t.db, ws.workspaceId, { person: 'Existing Eve', email: 'Eve@Initech.example' });
  await insertLead(t.db, ws.workspaceId, { person: 'Linked Lou', linkedin_url: 'https://www.linkedin.com/in/lou' });
  await insertLead(t.db, ws.workspaceId, { person: 'Gone Gil', email: 'gil@initech.example', opted_out_at: new Date('2026-11-01T00:00:00Z') });
  await t.db
    .insertInto('suppressed_addresses')
    .values({ workspace_id: ws.workspaceId, address: 'bounced@initech.example', reason: 'bounced_hard', lead_id: null })
    .execute();
});
afterAll(async () => t?.close());

const FILE = [
  HEADER,
  'Ann New,Initech,CTO,ann@initech.example,,', // 2 new
  'Eve Again,Initech,,EVE@INITECH.EXAMPLE,,', // 3 duplicate: e-mail, case-insensitive
  'Lou Again,,,,https://WWW.linkedin.com/in/LOU,', // 4 duplicate: LinkedIn URL
  'Ann Twice,,,,https://www.linkedin.com/in/ann,', // 5 new (another person by keys)
  'Ann Thrice,,,Ann@Initech.example,https://www.linkedin.com/in/ann2,', // 6 duplicate of row 2 within the file
  'Gil Back,,,,,gil_x', // 7 new: reachable on X only
  'Gil Mail,,,GIL@initech.example,,', // 8 suppressed: the person opted out
  'Bounce,,,bounced@initech.example,,', // 9 suppressed: the address
  'Bad Mail,,,not-an-email,,', // 10 invalid
  'Nobody,Acme,,,,', // 11 invalid: no way to reach
  'Bad Url,,,,"https://www.linkedin.com/sales/lead/ACwAAAB1c2VyMTIz,NAME_SEARCH",', // 12 invalid: a Sales Navigator link, not a profile
].join('\n');

describe('POST /leads/import: new, duplicate, suppressed, invalid (the same person by domain/identity.ts)', () => {
  it('a dry run answers every row and its counts, and changes nothing', async () => {
    const before = await snapshot(ws.workspaceId);
    const res = await importCsv({ csv: FILE, dryRun: true });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.dryRun).toBe(true);
    expect(body.counts).toEqual({ rows: 11, new: 3, duplicate: 3, suppressed: 2, invalid: 3 });
    const byRow = Object.fromEntries(body.rows.map((r: { row: number; status: string; reason: string | null }) => [r.row, r]));
    expect(byRow[2]).toMatchObject({ status: 'new', leadId: null, lead: { person: 'Ann New', email: 'ann@initech.example', xUsername: null } });
    expect(byRow[3]).toMatchObject({ status: 'duplicate' });
    expect(byRow[3].reason).toMatch(/same person as lead .* \(same e-mail\)/);
    expect(byRow[4].reason).toMatch(/same LinkedIn profile/);
    expect(byRow[5].status).toBe('new');
    expect(byRow[6]).toMatchObject({ status: 'duplicate', reason: 'same person as row 2 (same e-mail)' });
    expect(byRow[7].status).toBe('new');
    expect(byRow[8]).toMatchObject({ status: 'suppressed' });
    expect(byRow[8].reason).toMatch(/opted out/);
    expect(byRow[9]).toMatchObject({ status: 'suppressed', reason: 'the address is on the suppression list (bounced_hard)' });
    expect(byRow[10]).toMatchObject({ status: 'invalid' });
    expect(byRow[10].reason).toMatch(/^email "not-an-email" is not an e-mail address/);
    expect(byRow[11].reason).toMatch(/no way to reach this person/);
    expect(byRow[12].reason).toMatch(/^linkedinUrl .*: a Sales Navigator link/);
    expect(await snapshot(ws.workspaceId)).toEqual(before);
  });

  it('the import saves the new rows only; running the same file again finds them all duplicates', async () => {
    const before = await snapshot(ws.workspaceId);
    const res = await importCsv({ csv: FILE });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().counts).toEqual({ rows: 11, new: 3, duplicate: 3, suppressed: 2, invalid: 3 });
    const saved = await snapshot(ws.workspaceId);
    expect(saved.length).toBe(before.length + 3);
    const ann = await t.db
      .selectFrom('leads')
      .selectAll()
      .where('workspace_id', '=', ws.workspaceId)
      .where('email', '=', 'ann@initech.example')
      .executeTakeFirstOrThrow();
    // No sequence chosen: the lead waits outside any sequence, nothing is due.
    expect(ann).toMatchObject({
      person: 'Ann New',
      company: 'Initech',
      title: 'CTO',
      stage: 'queued',
      sequence_id: null,
      next_action_at: null,
      account_id: null,
    });
    const gil = await t.db
      .selectFrom('leads')
      .select(['username'])
      .where('workspace_id', '=', ws.workspaceId)
      .where('person', '=', 'Gil Back')
      .executeTakeFirstOrThrow();
    expect(gil.username).toBe('gil_x');

    const again = (await importCsv({ csv: FILE })).json();
    expect(again.counts).toEqual({ rows: 11, new: 0, duplicate: 6, suppressed: 2, invalid: 3 });
    expect((await snapshot(ws.workspaceId)).length).toBe(saved.length);
  });

  it('a chosen sequence and account queue the new leads, due now on that account (its mailbox sends their e-mail)', async () => {
    const res = await importCsv({ csv: `Name,E-mail\nQueued Quinn,quinn@acme.example\n`, sequenceId: sequence, accountId: account });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.columns).toMatchObject({ person: 'Name', email: 'E-mail', linkedinUrl: null });
    expect(body.sequence).toMatchObject({ id: sequence, status: 'active' });
    expect(body.account).toEqual({ id: account, name: 'Dana (e-mail)', mode: 'email', mailbox: 'dana@acme.example' });
    const lead = await t.db.selectFrom('leads').selectAll().where('id', '=', body.rows[0].leadId).executeTakeFirstOrThrow();
    expect(lead).toMatchObject({ sequence_id: sequence, account_id: account, stage: 'queued', current_step: 0, automation_stopped: false });
    expect(new Date(lead.next_action_at!).toISOString()).toBe(NOW);
  });

  it('the preview flags role addresses (info@, sales@, …) and disposable domains, and counts malformed addresses as invalid (issue 29 §4)', async () => {
    const csv = [
      'person,email',
      'Info Desk,info@northwind.example',
      'Sales Team,Sales+EU@northwind.example',
      'Throwaway Tom,tom@mailinator.com',
      'Real Rita,rita@northwind.example',
      'Broken Bo,bo@@northwind.example',
    ].join('\n');
    const res = await importCsv({ csv, dryRun: true });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.counts).toMatchObject({ rows: 5, new: 4, invalid: 1 });
    expect(body.rows.map((r: { flags: string[] }) => r.flags)).toEqual([['role_address'], ['role_address'], ['disposable_domain'], [], []]);
    expect(body.rows[4]).toMatchObject({ status: 'invalid' });
    expect((await snapshot(ws.workspaceId)).some((l) => l.email === 'rita@northwind.example')).toBe(false);
  });

  it('columns map other headers; a header the file lacks is a 400 naming the field', async () => {
    const res = await importCsv({
      csv: 'Who,Where,Addr\nMia Map,Acme,mia@acme.example\n',
      columns: { person: 'Who', company: 'Where', email: 'Addr' },
      dryRun: true,
    });
    expect(res.json().rows[0]).toMatchObject({ status: 'new', lead: { person: 'Mia Map', company: 'Acme', email: 'mia@acme.example' } });
    const bad = await importCsv({ csv: 'Who\nMia\n', columns: { email: 'Mail' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/^columns\/email: "Mail" is not a column of the file/);
  });
});

describe('POST /leads/import: refusals name the field and change nothing', () => {
  it('a sequence or account of another workspace is 404 naming it; an archived sequence is 409', async () => {
    const before = await snapshot(ws.workspaceId);
    const foreignSequence = await insertSequence(t.db, other.workspaceId);
    const foreignAccount = await insertMessagingAccount(t.db, other.workspaceId);
    const archived = await insertSequence(t.db, ws.workspaceId, { status: 'archived' });
    const csv = `${HEADER}\nZed,,,zed@acme.example,,\n`;
    const s = await importCsv({ csv, sequenceId: foreignSequence });
    expect([s.statusCode, s.json().error]).toEqual([404, 'sequence not found']);
    expect(s.json().message).toMatch(/^sequenceId: /);
    const a = await importCsv({ csv, sequenceId: sequence, accountId: foreignAccount });
    expect([a.statusCode, a.json().error]).toEqual([404, 'account not found']);
    expect(a.json().message).toMatch(/^accountId: /);
    const arch = await importCsv({ csv, sequenceId: archived });
    expect([arch.statusCode, arch.json().error]).toEqual([409, 'archived_sequence_is_read_only']);
    const badId = await importCsv({ csv, sequenceId: 'nope' });
    expect(badId.statusCode).toBe(400);
    expect(badId.json().message).toMatch(/sequenceId/);
    expect(await snapshot(ws.workspaceId)).toEqual(before);
  });

  it('a file past the bound is refused saying the bound; an empty or header-only file is refused', async () => {
    const rows = Array.from({ length: IMPORT_LIMITS.rows + 1 }, (_, i) => `P${i},p${i}@big.example`);
    const tooMany = await importCsv({ csv: `person,email\n${rows.join('\n')}` });
    expect([tooMany.statusCode, tooMany.json().error]).toEqual([400, 'import_too_large']);
    expect(tooMany.json().message).toContain('at most 2,000 rows and 512 KiB');
    const tooBig = await importCsv({ csv: `person,email\n${'x'.repeat(IMPORT_LIMITS.bytes)}` });
    expect([tooBig.statusCode, tooBig.json().error]).toEqual([400, 'import_too_large']);
    // A row that cannot be read is refused on its own (issue 39 §2), the rows after it still read.
    const broken = await importCsv({ csv: 'person,email\n"unclosed,a@b.example\nOk,ok@b.example\n', dryRun: true });
    expect(broken.statusCode, broken.body).toBe(200);
    expect(broken.json().rows.map((r: { row: number; status: string }) => [r.row, r.status])).toEqual([
      [2, 'invalid'],
      [3, 'new'],
    ]);
    expect(broken.json().rows[0].reason).toMatch(/quoted field that starts on line 2 is never closed/);
    const empty = await importCsv({ csv: '\n\n' });
    expect([empty.statusCode, empty.json().error]).toEqual([400, 'invalid_csv']);
    const headerOnly = await importCsv({ csv: 'person,email\n', dryRun: true });
    expect(headerOnly.json().counts.rows).toBe(0);
    const unknown = await importCsv({ csv: 'a\n', extra: 1 });
    expect(unknown.statusCode).toBe(400);
  });
});

describe('leads.enrollLeads: existing leads into a sequence on an account', () => {
  it('enrolls free leads, skips opted-out and already enrolled ones and says so per lead; a foreign lead is 404', async () => {
    const free = await insertLead(t.db, ws.workspaceId, { person: 'Free Fay', email: 'fay@acme.example' });
    const optedOut = await insertLead(t.db, ws.workspaceId, { person: 'Out Otto', email: 'otto@acme.example', opted_out_at: new Date(NOW) });
    const samePersonOut = await insertLead(t.db, ws.workspaceId, { person: 'Otto again', email: 'OTTO@acme.example' });
    const enrolled = await insertLead(t.db, ws.workspaceId, { person: 'Busy Bo', email: 'bo@acme.example', sequence_id: sequence });
    const foreign = await insertLead(t.db, other.workspaceId, { person: 'Them', email: 'them@acme.example' });
    const before = await snapshot(ws.workspaceId);
    await expect(t.services.leads.enrollLeads(ws.workspaceId, { leadIds: [free, foreign], sequenceId: sequence })).rejects.toMatchObject({ statusCode: 404 });
    const dry = await t.services.leads.enrollLeads(ws.workspaceId, { leadIds: [free], sequenceId: sequence, accountId: account, dryRun: true });
    expect(dry.counts).toEqual({ enrolled: 1, alreadyEnrolled: 0, optedOut: 0 });
    expect(await snapshot(ws.workspaceId)).toEqual(before);

    const done = await t.services.leads.enrollLeads(ws.workspaceId, {
      leadIds: [free, optedOut, samePersonOut, enrolled],
      sequenceId: sequence,
      accountId: account,
    });
    expect(done.results.map((r) => [r.leadId, r.result])).toEqual([
      [free, 'enrolled'],
      [optedOut, 'opted_out'],
      [samePersonOut, 'opted_out'],
      [enrolled, 'already_enrolled'],
    ]);
    expect(done.account?.mailbox).toBe('dana@acme.example');
    const row = await t.db.selectFrom('leads').selectAll().where('id', '=', free).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ sequence_id: sequence, account_id: account, current_step: 0, automation_stopped: false });
    expect(new Date(row.next_action_at!).toISOString()).toBe(NOW);
    const untouched = await t.db.selectFrom('leads').select(['sequence_id']).where('id', '=', samePersonOut).executeTakeFirstOrThrow();
    expect(untouched.sequence_id).toBeNull();
  });
});

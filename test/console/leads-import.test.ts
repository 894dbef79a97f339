import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole, type ConsoleClient } from '../helpers/console.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { insertStoredMailbox } from '../helpers/worlds/mailbox.js';

// /console/leads/import and /console/leads/enroll (issue 27 §3): the column mapping, the dry-run preview with counts,
// the import with its outcome, "Add a lead", and enrolling leads into a sequence on a chosen mailbox.

const NOW = '2026-11-21T12:00:00.000Z';
let t: TestApp;
let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
let c: ConsoleClient;
let sequence: string;
let account: string;

const countLeads = async () => (await t.db.selectFrom('leads').select('id').where('workspace_id', '=', ws.workspaceId).execute()).length;

beforeAll(async () => {
  t = await buildTestApp({ now: NOW });
  ws = await createWorkspaceWithKey(t, 'Console Import Co');
  sequence = await insertSequence(t.db, ws.workspaceId, { name: 'E-mail intro', channels: ['email'] });
  account = await insertStoredMailbox(t, ws.workspaceId, { mailboxId: 'mbx_console_import', accountName: 'Dana' });
  await insertLead(t.db, ws.workspaceId, { person: 'Old Olga', email: 'olga@acme.example' });
  c = await signedInConsole(t, ws.key);
});
afterAll(async () => t?.close());

const CSV = [
  'Full name,Company,Work e-mail,LinkedIn',
  'Ann,Initech,ann@initech.example,',
  'Olga,Acme,OLGA@acme.example,',
  '<img src=x onerror=alert(1)>,X,bad,',
].join('\n');

describe('/console/leads/import', () => {
  it('shows a "CSV file" input and a "CSV text" field, a Preview button, and the Add a lead form', async () => {
    const page = await c.get('/console/leads/import');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<label for="csv-file">CSV file</label>');
    expect(page.body).toContain('<label for="csv-text">CSV text</label>');
    expect(page.body).toContain('src="/console/assets/leads-import.js"');
    expect(page.body).toMatch(/<button type="submit">Preview<\/button>/);
    expect(page.body).toContain('<h2 id="add-lead">Add a lead</h2>');
    expect(page.body).toContain('Dana: e-mail from dana@acme.example');
    // The first choice says who sends a lead put on no account: the workspace's mailbox pool.
    expect(page.body).toContain('<option value="" selected>No account: e-mail from the workspace&#39;s mailboxes (dana@acme.example)');
    const script = await c.get('/console/assets/leads-import.js');
    expect(script.statusCode).toBe(200);
  });

  it('Preview maps the columns, shows the first rows and the counts, and saves nothing; Import saves and shows the outcome', async () => {
    const before = await countLeads();
    const preview = await c.post('/console/leads/import/preview', { csv: CSV, sequenceId: sequence, accountId: account });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.body).toContain('New: 1');
    expect(preview.body).toContain('Duplicate: 1');
    expect(preview.body).toContain('Suppressed: 0');
    expect(preview.body).toContain('Invalid: 1');
    // The mapping defaults to the headers named like the fields.
    expect(preview.body).toMatch(/<select id="map-person" name="map_person">.*<option value="Full name" selected>Full name<\/option>/s);
    expect(preview.body).toMatch(/<select id="map-email" name="map_email">.*<option value="Work e-mail" selected>/s);
    expect(preview.body).toContain('&lt;img src=x onerror=alert(1)>');
    expect(preview.body).not.toContain('<img src=x');
    expect(preview.body).toMatch(/formaction="\/console\/leads\/import\/run"[^>]*>\s*Import\s*<\/button>/);
    expect(preview.body).toContain('<progress id="import-progress"');
    expect(await countLeads()).toBe(before);

    // A remapped column changes the outcome: no e-mail column, so the rows cannot be reached.
    const remapped = await c.post('/console/leads/import/preview', { csv: CSV, map_email: '' });
    expect(remapped.body).toContain('Invalid: 3');

    const run = await c.post('/console/leads/import/run', {
      csv: CSV,
      sequenceId: sequence,
      accountId: account,
      map_person: 'Full name',
      map_email: 'Work e-mail',
    });
    expect(run.statusCode, run.body).toBe(200);
    expect(run.body).toContain('Imported 1 lead into the sequence &#34;E-mail intro&#34; on the mailbox dana@acme.example.');
    expect(run.body).toContain('Rows not imported, and why');
    expect(await countLeads()).toBe(before + 1);
    const ann = await t.db.selectFrom('leads').selectAll().where('email', '=', 'ann@initech.example').executeTakeFirstOrThrow();
    expect(ann).toMatchObject({ person: 'Ann', sequence_id: sequence, account_id: account, stage: 'queued' });
    expect(ann.next_action_at).not.toBeNull();
  });

  it('a refusal shows on the page with its status and keeps the text; a foreign sequence is a 404 and saves nothing', async () => {
    const before = await countLeads();
    const empty = await c.post('/console/leads/import/preview', { csv: '' });
    expect(empty.statusCode).toBe(400);
    expect(empty.body).toContain('csv:');
    const other = await createWorkspaceWithKey(t, 'Other');
    const foreign = await insertSequence(t.db, other.workspaceId);
    const res = await c.post('/console/leads/import/run', { csv: 'email\nzed@acme.example\n', sequenceId: foreign });
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain('sequenceId: there is no sequence');
    expect(await countLeads()).toBe(before);
    expect((await c.post('/console/leads/import/run', { csv: 'email\nzed@acme.example\n', _csrf: null })).statusCode).toBe(403);
  });

  it('the preview runs the e-mail channel’s address check: an address the sends would refuse is invalid, with that reason, in preview and import alike', async () => {
    const before = await countLeads();
    const long = `${'x'.repeat(65)}@acme.example`;
    const csv = `email\nnumeric@acme.123\n${long}\nfine@acme.example\n`;
    const preview = await c.post('/console/leads/import/preview', { csv });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.body).toContain('New: 1');
    expect(preview.body).toContain('Invalid: 2');
    const reason = 'is refused by the e-mail channel&#39;s address check (malformed';
    expect(preview.body).toContain(`email &#34;numeric@acme.123&#34; ${reason}`);
    expect(preview.body).toContain(`email &#34;${long}&#34; ${reason}`);
    const run = await c.post('/console/leads/import/run', { csv });
    expect(run.statusCode).toBe(200);
    expect(run.body).toContain(`email &#34;numeric@acme.123&#34; ${reason}`);
    expect(await countLeads()).toBe(before + 1);
  });

  it('Add a lead saves one lead, and a duplicate says why it was not added', async () => {
    const added = await c.post('/console/leads/new', { person: 'Bea Form', email: 'bea@acme.example', sequenceId: '', accountId: '' });
    expect(added.statusCode).toBe(303);
    const page = await c.get(added.headers.location as string);
    expect(page.body).toContain('Added Bea Form.');
    const again = await c.post('/console/leads/new', { person: 'Bea Again', email: 'BEA@acme.example' });
    const refused = await c.get(again.headers.location as string);
    expect(refused.body).toMatch(/Not added \(duplicate\): same person as lead [0-9a-f-]+ \(same e-mail\)/);
    const none = await c.post('/console/leads/new', { person: 'No Way' });
    expect((await c.get(none.headers.location as string)).body).toContain('Not added (invalid): no way to reach this person');
  });
});

describe('/console/leads/enroll', () => {
  it('lists the leads in no sequence with a checkbox each, and enrolls the chosen ones on the chosen mailbox', async () => {
    const free = await insertLead(t.db, ws.workspaceId, { person: 'Free Fay', email: 'fay@acme.example' });
    const out = await insertLead(t.db, ws.workspaceId, { person: 'Out Otto', email: 'otto@acme.example' });
    await insertLead(t.db, ws.workspaceId, { person: 'Otto twin', email: 'Otto@acme.example', opted_out_at: new Date(NOW) });
    const page = await c.get('/console/leads/enroll');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`aria-label="Choose Free Fay"`);
    expect(page.body).not.toContain('Choose Otto twin');
    // Opted out through another of the person's leads: not offered either.
    expect(page.body).not.toContain('Choose Out Otto');
    expect(page.body).toContain('Enroll selected');
    const res = await c.post('/console/leads/enroll', { leadIds: [free, out], sequenceId: sequence, accountId: account });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toContain('Enrolled 1 lead into &#34;E-mail intro&#34; on the mailbox dana@acme.example. Skipped 1 lead: see why below.');
    expect(res.body).toContain('this person opted out');
    const row = await t.db.selectFrom('leads').select(['sequence_id', 'account_id']).where('id', '=', free).executeTakeFirstOrThrow();
    expect(row).toEqual({ sequence_id: sequence, account_id: account });
    const none = await c.post('/console/leads/enroll', { sequenceId: sequence });
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('leadIds: choose at least one lead');
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { axeSeriousOrCritical, launchConsoleBrowser, signInWithKey, closeBrowserAndApp } from '../helpers/browser.js';
import { insertLead } from '../helpers/factories.js';
import { dbEngine } from '../helpers/test-database.js';
import { FIXTURE_INPUTS, sharedCase } from '../helpers/lead-files.js';

// Issue 39 "Done when": each file of ../shared/cases/inputs gives its right result (cases/README.md) through the
// console's import preview in Chromium. The file goes through the page's file input, so the browser sends the file's
// own bytes (leads-import.js puts them, base64, in a hidden field) and the service tells the encoding; the preview
// says how the file was read, the mapping, each row's outcome, why a row is refused, and the first and last names
// {{firstName}} and {{lastName}} will use. The placeholder case (18, step texts) goes through the sequence editor.
// A few files of test/fixtures/inputs (UTF-16, Windows-1252 with `;`, an encoding that cannot be told, tab, a damaged
// row, a preamble, reading warnings) and the opted-out person under another spelling run the same way.
// One browser session; browser tests run on PGlite only.

const fixture = (name: string) => path.join(FIXTURE_INPUTS, name);
/** The preview's mapping table: the column (or columns) each lead field is read from. */
const mapped = (person: string, company: string, title: string, email: string, linkedin: string, x: string) => ({
  Person: person,
  Company: company,
  Title: title,
  'E-mail': email,
  'LinkedIn URL': linkedin,
  'X username': x,
});

const ROSA = 'https://www.linkedin.com/in/rosa-kaur-314';

type Row = { row: string; outcome: string; person: string; first: string; last: string; email: string; linkedin: string; why: string };
interface Preview {
  counts: string;
  reading: string;
  mapping: Record<string, string>;
  rows: Row[];
}

describe.runIf(dbEngine() === 'pglite')('lead files as people bring them, through the console preview (issue 39)', { timeout: 120_000 }, () => {
  let t: TestApp;
  let b: Awaited<ReturnType<typeof launchConsoleBrowser>>;
  let page: Page;
  let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  let rosaId: string;

  beforeAll(async () => {
    t = await buildTestApp({ realClock: true });
    ws = await createWorkspaceWithKey(t, 'Cases');
    // A lead for the sequence editor's Preview, and a person who opted out (the demo world's Rosa Kaur).
    await insertLead(t.db, ws.workspaceId, { person: 'Ada Lovelace', company: 'Analytical', email: 'ada@analytical.example' });
    rosaId = await insertLead(t.db, ws.workspaceId, {
      person: 'Rosa Kaur',
      company: 'Dunder Paper',
      linkedin_url: ROSA,
      opted_out_at: new Date('2026-11-02T14:17:00Z'),
      automation_stopped: true,
    });
    b = await launchConsoleBrowser(t);
    page = b.page;
    await signInWithKey(page, b.url('/console/leads/import'), ws.key);
    await page.getByRole('heading', { level: 1, name: 'Import leads' }).waitFor();
  }, 120_000);

  afterAll(() => closeBrowserAndApp(b, t));

  /** Chooses the file in the import page's file input and waits until its bytes are in the form. */
  async function choose(file: string | { name: string; mimeType: string; buffer: Buffer }) {
    await page.goto(b.url('/console/leads/import'));
    await page.getByLabel('CSV file', { exact: true }).setInputFiles(file);
    await page.waitForFunction(() => {
      const bytes = document.querySelector<HTMLInputElement>('[data-csv-bytes]')?.value ?? '';
      return bytes !== '' && (document.querySelector<HTMLTextAreaElement>('#csv-text')?.value ?? '') !== '';
    });
    // What the form sends is the file's bytes exactly, not the browser's reading of them.
    const sent = await page.locator('[data-csv-bytes]').inputValue();
    const bytes = typeof file === 'string' ? fs.readFileSync(file) : file.buffer;
    expect(Buffer.from(sent, 'base64').equals(bytes)).toBe(true);
  }

  /** Chooses the file, presses Preview and reads the preview as a person sees it. */
  async function preview(file: string | { name: string; mimeType: string; buffer: Buffer }): Promise<Preview> {
    await choose(file);
    return previewChosen();
  }

  async function previewChosen(): Promise<Preview> {
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('heading', { level: 2, name: 'Preview' }).waitFor();
    const counts = (await page.getByRole('list', { name: 'Rows by outcome' }).first().textContent()) ?? '';
    const reading = (await page.getByText(/^Read as /).textContent()) ?? '';
    const mapping: Record<string, string> = {};
    for (const label of ['Person', 'Company', 'Title', 'E-mail', 'LinkedIn URL', 'X username']) {
      const select = page.getByRole('group', { name: /^Columns/ }).getByLabel(label, { exact: true });
      mapping[label] = await select.evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.textContent ?? '');
    }
    const cells = await page
      .getByRole('table')
      .first()
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    const rows = cells.map(([row, outcome, person, first, last, email, linkedin, why]) => ({ row, outcome, person, first, last, email, linkedin, why }));
    return { counts, reading, mapping, rows };
  }

  const byRow = (p: Preview) => Object.fromEntries(p.rows.map((r) => [Number(r.row), r]));
  const NEW = 'new';

  it('02 Excel semicolon with a BOM: both rows mapped and new', async () => {
    const p = await preview(sharedCase('02-excel-semicolon.csv'));
    expect(p.reading).toMatch(/^Read as utf-8, semicolon-delimited, header row on line 1\./);
    expect(p.counts).toMatch(/New: 2.*Duplicate: 0.*Suppressed: 0.*Invalid: 0/s);
    expect(p.mapping).toEqual(mapped('person', 'company', 'title', 'email', 'linkedinUrl', 'xUsername'));
    expect(p.rows.map((r) => [r.row, r.outcome, r.person, r.email, r.why])).toEqual([
      ['2', NEW, 'Jonas Berg', 'jonas.berg@holz.example', ''],
      ['3', NEW, 'Marie Roux', 'marie.roux@atelier.example', ''],
    ]);
  });

  it('04 Excel Windows-1252: "Jürgen Müller" decoded exactly, never U+FFFD', async () => {
    await choose(sharedCase('04-excel-windows-1252.csv'));
    // The text shown for a look (and sent instead of the bytes if it is edited) is the file's letters too.
    expect(await page.getByLabel('CSV text').inputValue()).toContain('Jürgen Müller,Bäckerei Müller');
    const p = await previewChosen();
    expect(p.reading).toMatch(/^Read as windows-1252, comma-delimited/);
    expect(p.rows.map((r) => [r.outcome, r.person, r.first, r.last])).toEqual([[NEW, 'Jürgen Müller', 'Jürgen', 'Müller']]);
    // Nowhere on the page, the CSV riding along unseen included.
    expect(await page.locator('main').textContent()).not.toContain('\ufffd');
  });

  it('07 Apollo: First + Last joined, company, title, e-mail, the person’s LinkedIn profile and the X handle mapped', async () => {
    const p = await preview(sharedCase('07-apollo-export.csv'));
    expect(p.mapping).toEqual(mapped('First Name + Last Name', 'Company', 'Title', 'Email', 'Person Linkedin Url', 'Twitter Url'));
    expect(p.rows.map((r) => [r.outcome, r.person, r.first, r.email, r.linkedin])).toEqual([
      [NEW, 'Diego Alvarez', 'Diego', 'diego@solsticio.example', 'http://www.linkedin.com/in/diego-alvarez-12'],
    ]);
    // The company's LinkedIn page is not the person's: it stays among the other columns.
    expect(p.reading).toContain('Company Linkedin Url');
  });

  it('09 everyday header spellings and empty trailing columns: every column mapped', async () => {
    const p = await preview(sharedCase('09-header-variants-trailing-cols.csv'));
    expect(p.mapping).toEqual(mapped('Full Name', 'Company', 'Job Title', 'E-mail Address', 'LinkedIn Profile URL', 'Twitter Handle'));
    expect(p.reading).not.toContain('Other columns');
    expect(p.rows.map((r) => [r.outcome, r.person, r.linkedin])).toEqual([[NEW, 'Ola Nordmann', 'https://www.linkedin.com/in/ola-nordmann']]);
  });

  it('12 one LinkedIn profile spelled seven ways: 1 new, 6 duplicates naming the first row', async () => {
    const p = await preview(sharedCase('12-linkedin-url-forms.csv'));
    expect(p.counts).toMatch(/New: 1.*Duplicate: 6.*Suppressed: 0.*Invalid: 0/s);
    expect(p.rows[0]).toMatchObject({ row: '2', outcome: NEW });
    expect(p.rows.slice(1).map((r) => [r.outcome, r.why])).toEqual(
      Array.from({ length: 6 }, () => ['duplicate', 'same person as row 2 (same LinkedIn profile)']),
    );
  });

  it('13 LinkedIn address kinds: the two Jürgen rows one profile; the others refused with what they are', async () => {
    const p = await preview(sharedCase('13-linkedin-url-kinds.csv'));
    const r = byRow(p);
    expect([r[2].outcome, r[2].person, r[2].first]).toEqual([NEW, 'Jürgen Weiß', 'Jürgen']);
    expect([r[3].outcome, r[3].why]).toEqual(['duplicate', 'same person as row 2 (same LinkedIn profile)']);
    expect([r[4].outcome, r[4].why]).toEqual(['invalid', expect.stringContaining('an old public profile link (/pub/…)')]);
    expect([r[5].outcome, r[5].why]).toEqual(['invalid', expect.stringContaining('a Sales Navigator link')]);
    expect([r[6].outcome, r[6].why]).toEqual(['invalid', expect.stringContaining('a company page, not a person')]);
    expect([r[7].outcome, r[7].why]).toEqual(['invalid', expect.stringContaining('not a LinkedIn address (the host is example.com)')]);
    // Each refusal says what to paste instead.
    for (const n of [4, 5, 6, 7]) expect(r[n].why).toContain('paste the public profile address (https://www.linkedin.com/in/…)');
    // No scheme: read as https.
    expect([r[8].outcome, r[8].person]).toEqual([NEW, 'No Scheme']);
    expect(p.counts).toMatch(/New: 2.*Duplicate: 1.*Suppressed: 0.*Invalid: 4/s);
    expect(await axeSeriousOrCritical(page)).toEqual([]);
  });

  it('14 e-mail forms: case and spaces are one address, a +tag is its own; malformed ones refused alone with their line', async () => {
    const p = await preview(sharedCase('14-email-forms.csv'));
    const r = byRow(p);
    expect([r[2].outcome, r[3].outcome, r[3].why]).toEqual([NEW, 'duplicate', 'same person as row 2 (same e-mail)']);
    expect(r[4]).toMatchObject({ outcome: NEW, email: 'lena+outreach@example.com' });
    expect(r[6]).toMatchObject({ outcome: NEW, email: 'juergen@xn--bcher-kva.example' });
    expect(r[8]).toMatchObject({ outcome: NEW, email: 'spaced@example.com' });
    for (const n of [7, 9, 10, 11, 12])
      expect([n, r[n].outcome, r[n].why]).toEqual([n, 'invalid', expect.stringMatching(/^email ".*" is not an e-mail address/)]);
  });

  it('14 e-mail forms: the internationalized address (jürgen@bücher.example) is accepted', async () => {
    const p = await preview(sharedCase('14-email-forms.csv'));
    expect(byRow(p)[5].outcome).toBe(NEW);
  });

  it('19 names as LinkedIn and CRMs show them: first names Sam, Jane, Jane, Jane; "MBA" is no part of a last name', async () => {
    const p = await preview(sharedCase('19-name-first-name.csv'));
    expect(p.rows.map((r) => [r.person, r.first, r.last])).toEqual([
      ['👋 Sam Lee', 'Sam', 'Lee'],
      ['Dr. Jane Doe', 'Jane', 'Doe'],
      ['Doe, Jane', 'Jane', 'Doe'],
      ['Jane Doe, MBA', 'Jane', 'Doe'],
    ]);
  });

  it('18 step texts with other tools’ placeholders: aliases render in the sequence editor, broken ones are refused naming the placeholder', async () => {
    const steps = (JSON.parse(fs.readFileSync(sharedCase('18-template-placeholders.json'), 'utf8')) as { steps: { message: string }[] }).steps.map(
      (s) => s.message,
    );
    expect(steps).toEqual(['Hi {{first_name}}, saw {{company_name}}', 'Hi {{ contact.firstname }},', 'Hi {FirstName},', 'Hi {{firstName}']);
    await page.goto(b.url('/console/sequences/new'));
    await page.getByLabel('Name', { exact: true }).fill('Pasted placeholders');
    const step1 = page.getByRole('group', { name: 'Step 1' });
    await step1.getByLabel('Kind').selectOption('email');
    await step1.getByLabel('Subject').fill('Quick question');
    await page.getByLabel('Preview for lead').selectOption({ label: 'Ada Lovelace, Analytical' });
    const rendered: Record<string, string> = { [steps[0]]: 'Hi Ada, saw Analytical', [steps[1]]: 'Hi Ada,' };
    for (const message of steps.slice(0, 2)) {
      await page.getByRole('group', { name: 'Step 1' }).getByLabel('Message', { exact: true }).fill(message);
      await page.getByRole('button', { name: 'Preview step 1' }).click();
      await page.getByText('Preview for Ada Lovelace').waitFor();
      expect(await page.locator('.preview .preview-text').last().textContent()).toBe(rendered[message]);
    }
    for (const [message, token] of [
      [steps[2], '{FirstName}'],
      [steps[3], '{{firstName}'],
    ]) {
      await page.getByRole('group', { name: 'Step 1' }).getByLabel('Message', { exact: true }).fill(message);
      await page.getByRole('button', { name: 'Create sequence' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      const text = (await alert.textContent()) ?? '';
      expect(text).toContain('Step 1');
      expect(text).toContain(token);
      expect(text).toContain('(400)');
      // What was typed stays, to be corrected.
      expect(await page.getByRole('group', { name: 'Step 1' }).getByLabel('Message', { exact: true }).inputValue()).toBe(message);
    }
    expect(await axeSeriousOrCritical(page)).toEqual([]);
    expect(await t.db.selectFrom('sequences').select('id').where('name', '=', 'Pasted placeholders').execute()).toEqual([]);
  });

  it('the opted-out person under other spellings is suppressed; a new person spelled twice is one new and one duplicate', async () => {
    const csv = [
      'person,company,title,email,linkedinUrl',
      'Rosa Kaur,Dunder Paper,Head of RevOps,,https://de.linkedin.com/in/Rosa-Kaur-314/?originalSubdomain=de',
      'Rosa Kaur,Dunder Paper,Head of RevOps,,linkedin.com/in/rosa%2Dkaur%2D314?trk=x',
      'Jana Novak,Novak sro,CEO,,https://www.linkedin.com/in/jana-novak-4711/',
      'Jana Novak,Novak sro,CEO,,https://WWW.LINKEDIN.COM/IN/JANA-NOVAK-4711',
    ].join('\r\n');
    const p = await preview({ name: 'spellings.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    expect(p.rows.map((r) => [r.row, r.outcome, r.why])).toEqual([
      ['2', 'suppressed', `this person opted out (lead ${rosaId})`],
      ['3', 'suppressed', `this person opted out (lead ${rosaId})`],
      ['4', NEW, ''],
      ['5', 'duplicate', 'same person as row 4 (same LinkedIn profile)'],
    ]);
    expect(p.counts).toMatch(/New: 1.*Duplicate: 1.*Suppressed: 2.*Invalid: 0/s);
  });

  it('our own files: UTF-16LE (Excel Unicode Text, tab), UTF-16 BE and without a BOM, Windows-1252 with `;`, Google Sheets tab', async () => {
    const utf16 = await preview(fixture('20-excel-unicode-text-utf16le.txt'));
    expect(utf16.reading).toMatch(/^Read as utf-16le, tab-delimited/);
    expect(utf16.rows.map((r) => [r.outcome, r.person])).toEqual([
      [NEW, 'Zoë Lefèvre'],
      [NEW, 'Łukasz Nowak'],
    ]);
    expect(utf16.mapping.Person).toBe('First Name + Last Name');
    expect((await preview(fixture('21-utf16be-bom.csv'))).rows.map((r) => r.person)).toEqual(['Søren Kierkegaard']);
    const noBom = await preview(fixture('22-utf16le-no-bom.csv'));
    expect([noBom.reading.slice(0, 17), noBom.rows[0].person]).toEqual(['Read as utf-16le,', 'Ana Peña']);
    const french = await preview(fixture('23-windows-1252-french-semicolon.csv'));
    expect(french.reading).toMatch(/^Read as windows-1252, semicolon-delimited/);
    expect(french.mapping).toMatchObject({ Person: 'Prénom + Nom', Company: 'Société', Title: 'Poste', 'E-mail': 'Courriel' });
    expect(french.rows.map((r) => [r.person, r.first])).toEqual([
      ['François Hélène-Dubois', 'François'],
      ['Amélie Noël', 'Amélie'],
    ]);
    const sheets = await preview(fixture('30-google-sheets.tsv'));
    expect(sheets.reading).toMatch(/^Read as utf-8, tab-delimited/);
    expect(sheets.rows.map((r) => r.person)).toEqual(['Priya Raman', "Tom O'Neil"]);
  });

  it('our own files: an encoding that cannot be told is refused naming its guess; nothing is previewed', async () => {
    await choose(fixture('24-iso-8859-2-polish.csv'));
    await page.getByRole('button', { name: 'Preview' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe("csv: the file's encoding could not be told (it looks like ISO-8859-2); save it as UTF-8");
    expect(await page.getByRole('heading', { level: 2, name: 'Preview' }).count()).toBe(0);
    expect(await axeSeriousOrCritical(page)).toEqual([]);
  });

  it('our own files: a damaged row (a NUL, a quote never closed) is refused alone with its line; the others are new', async () => {
    const nul = await preview(fixture('41-nul-in-row.csv'));
    expect(nul.rows.map((r) => [r.row, r.outcome])).toEqual([
      ['2', NEW],
      ['3', 'invalid'],
      ['4', NEW],
    ]);
    expect(nul.rows[1].why).toMatch(/NUL character/);
    const open = await preview(fixture('42-unclosed-quote.csv'));
    expect(open.rows.map((r) => [r.row, r.outcome, r.why])).toEqual([
      ['2', NEW, ''],
      ['3', 'invalid', 'a quoted field that starts on line 3 is never closed (a " is missing)'],
      ['4', NEW, ''],
    ]);
  });

  it('our own files: LinkedIn Connections’ preamble skipped (header on line 4); what reading lost is shown with the row', async () => {
    const connections = await preview(fixture('50-linkedin-connections.csv'));
    expect(connections.reading).toMatch(/header row on line 4\. Other columns \(kept by each new lead as custom fields, {{custom.<name>}}\): Connected On\.$/);
    expect(connections.rows.map((r) => [r.row, r.person, r.linkedin])).toEqual([
      ['5', 'Kwame Mensah', 'https://www.linkedin.com/in/kwame-mensah-1a2b3c'],
      ['6', 'Lisa Berg', 'https://www.linkedin.com/in/lisaberg'],
    ]);
    const x = await preview(fixture('59-x-urls-and-extra-cells.csv'));
    expect(x.mapping['X username']).toBe('X URL');
    expect(x.rows[2]).toMatchObject({ outcome: NEW, person: 'Face Book' });
    expect(x.rows[2].why).toContain('is not an X profile URL; the row has no X handle');
    expect(x.rows[2].why).toContain('2 cell(s) past the last column');
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMPORT_LIMITS, readLeadCsv, sniffDelimiter, tokenizeCsv, xHandleOf } from '../../src/modules/leads/index.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { APOLLO_LEAD, FIXTURE_INPUTS, SHARED_INPUTS } from '../helpers/lead-files.js';

// The lead file reader (issue 39 §2): encodings, delimiters, lenient quoting, preambles and the layouts of common
// exports, on the real-world cases of ../shared/cases/inputs (copied into test/fixtures/inputs) and on files shaped
// like other tools' exports (test/fixtures/inputs/README.md says where each comes from).

const fixture = (name: string) => fs.readFileSync(path.join(FIXTURE_INPUTS, name));
const read = (name: string) => readLeadCsv(fixture(name), { limits: { ...IMPORT_LIMITS, text: 'the bound' } });
const values = (name: string) => read(name).rows.map((r) => r.values);
const NONE = { person: [], company: [], title: [], email: [], linkedinUrl: [], xUsername: [] };

describe('the real-world cases (../shared/cases/inputs, copied byte for byte)', () => {
  const shared = fs.existsSync(SHARED_INPUTS) ? fs.readdirSync(SHARED_INPUTS).filter((f) => f.endsWith('.csv')) : [];
  it.skipIf(shared.length === 0)('test/fixtures/inputs holds every shared CSV, byte for byte', () => {
    for (const f of shared) expect(fixture(f).equals(fs.readFileSync(path.join(SHARED_INPUTS, f))), f).toBe(true);
  });

  it.skipIf(shared.length === 0)('reads each shared file from ../shared the same as its copy', () => {
    for (const f of shared) expect(readLeadCsv(fs.readFileSync(path.join(SHARED_INPUTS, f))), f).toEqual(readLeadCsv(fixture(f)));
  });

  it('02: Excel semicolon with a BOM and a comma inside a field: both rows mapped', () => {
    const r = read('02-excel-semicolon.csv');
    expect([r.encoding, r.delimiter, r.headerRow]).toEqual(['utf-8', ';', 1]);
    expect(r.headers[0]).toBe('person'); // no BOM in the first header
    expect(r.rows.map((x) => x.values)).toEqual([
      {
        person: 'Jonas Berg',
        company: 'Holz & Co, KG',
        title: 'CTO',
        email: 'jonas.berg@holz.example',
        linkedinUrl: 'https://www.linkedin.com/in/jonas-berg-77',
        xUsername: null,
      },
      { person: 'Marie Roux', company: 'Atelier Roux', title: 'COO', email: 'marie.roux@atelier.example', linkedinUrl: null, xUsername: null },
    ]);
  });

  it('04: Excel Windows-1252: "Jürgen Müller" decoded exactly', () => {
    const r = read('04-excel-windows-1252.csv');
    expect(r.encoding).toBe('windows-1252');
    expect(r.rows[0].values).toMatchObject({ person: 'Jürgen Müller', company: 'Bäckerei Müller', title: 'Inhaber' });
    expect(JSON.stringify(r)).not.toContain('\ufffd');
  });

  it('07: Apollo: First + Last joined, Person Linkedin Url (not the company page), Twitter Url as a handle, the rest custom', () => {
    const r = read('07-apollo-export.csv');
    expect(r.mapping).toEqual({
      person: ['First Name', 'Last Name'],
      company: ['Company'],
      title: ['Title'],
      email: ['Email'],
      linkedinUrl: ['Person Linkedin Url'],
      xUsername: ['Twitter Url'],
    });
    expect(r.rows[0].values).toEqual(APOLLO_LEAD);
    expect(r.unmapped).toContain('Company Linkedin Url');
    expect(r.rows[0].custom).toMatchObject({ 'Company Linkedin Url': 'http://www.linkedin.com/company/solsticio', City: 'Madrid', 'Email Status': 'Verified' });
    expect(r.rows[0].warnings).toEqual([]);
  });

  it('09: everyday header spellings, trailing empty columns: every column mapped, none left over', () => {
    const r = read('09-header-variants-trailing-cols.csv');
    expect(r.headers).toEqual(['Full Name', 'Company', 'Job Title', 'E-mail Address', 'LinkedIn Profile URL', 'Twitter Handle']);
    expect(r.rows[0].values).toEqual({
      person: 'Ola Nordmann',
      company: 'Fjell AS',
      title: 'CEO',
      email: 'ola@fjell.example',
      linkedinUrl: 'https://www.linkedin.com/in/ola-nordmann',
      xUsername: 'olanord',
    });
    expect(r.unmapped).toEqual([]);
  });

  it('12, 13, 14: plain files read as written (the URL and e-mail rules decide later)', () => {
    expect(values('12-linkedin-url-forms.csv')).toHaveLength(7);
    expect(values('13-linkedin-url-kinds.csv')[0]).toMatchObject({ person: 'Jürgen Weiß', linkedinUrl: 'https://www.linkedin.com/in/jürgen-weiß-0815' });
    expect(values('13-linkedin-url-kinds.csv')[3].linkedinUrl).toBe('https://www.linkedin.com/sales/lead/ACwAAAB1c2VyMTIzNDU2Nzg5,NAME_SEARCH,aBcD');
    const emails = values('14-email-forms.csv').map((v) => v.email);
    expect(emails).toContain('"quoted local"@example.com');
    expect(emails).toContain('spaced@example.com');
    expect(emails).toHaveLength(11);
  });

  it('19: LF line ends, an emoji and a quoted "Last, First" stay one person', () => {
    const r = read('19-name-first-name.csv');
    expect(r.rows.map((x) => x.values.person)).toEqual(['👋 Sam Lee', 'Dr. Jane Doe', 'Doe, Jane', 'Jane Doe, MBA']);
    expect(r.mapping.xUsername).toEqual([]);
  });
});

describe('encodings', () => {
  it('UTF-16LE with a BOM (Excel "Unicode Text", tab-delimited)', () => {
    const r = read('20-excel-unicode-text-utf16le.txt');
    expect([r.encoding, r.delimiter]).toEqual(['utf-16le', '\t']);
    expect(r.rows.map((x) => [x.values.person, x.values.company])).toEqual([
      ['Zoë Lefèvre', 'Étoile Conseil'],
      ['Łukasz Nowak', 'Żagiel sp. z o.o.'],
    ]);
  });

  it('UTF-16BE with a BOM, and UTF-16LE without one', () => {
    expect(read('21-utf16be-bom.csv')).toMatchObject({ encoding: 'utf-16be', rows: [{ values: { person: 'Søren Kierkegaard' } }] });
    expect(read('22-utf16le-no-bom.csv')).toMatchObject({ encoding: 'utf-16le', rows: [{ values: { person: 'Ana Peña', company: 'Peña y Asociados' } }] });
  });

  it('Windows-1252 with €, « », – and ’ (0x80–0x9F decoded as Windows-1252, not as C1 controls)', () => {
    const r = read('23-windows-1252-french-semicolon.csv');
    expect([r.encoding, r.delimiter]).toEqual(['windows-1252', ';']);
    expect(r.rows[1].values).toMatchObject({ person: 'Amélie Noël', company: 'Café « Le Zèbre »', title: 'Gérante – fondatrice' });
    expect(r.rows[0].custom).toEqual({ 'Chiffre d’affaires': '1 250 000 €' });
  });

  it('an encoding the detector is not sure of is refused naming its guess', () => {
    expect(() => read('24-iso-8859-2-polish.csv')).toThrow(/^csv: the file's encoding could not be told \(it looks like ISO-8859-2\); save it as UTF-8$/);
    try {
      read('24-iso-8859-2-polish.csv');
    } catch (e) {
      expect(e).toMatchObject({ statusCode: 400, code: 'invalid_csv' });
    }
  });

  it('a UTF-8 file with one stray Latin-1 byte is refused, never decoded with U+FFFD', () => {
    const bytes = Buffer.concat([Buffer.from('person,email\nJos'), Buffer.from([0xe9]), Buffer.from(' Mart\u00edn,jose@x.example\n', 'utf8')]);
    expect(() => readLeadCsv(bytes)).toThrow(/could not be told/);
  });
});

describe('delimiters and quoting', () => {
  it('tab (Google Sheets), pipe, and comma with semicolons in values', () => {
    expect(read('30-google-sheets.tsv')).toMatchObject({
      delimiter: '\t',
      rows: [{ values: { company: 'Raman Labs, Inc.' } }, { values: { person: "Tom O'Neil" } }],
    });
    expect(read('32-pipe-delimited.csv')).toMatchObject({ delimiter: '|', rows: [{ values: { company: 'Chen, Wu & Co' } }, {}] });
    expect(sniffDelimiter('person,note\nA,x;y\nB,z;w\n')).toBe(',');
  });

  it('German Excel: `;` with comma decimals in every row; Vorname + Nachname joined', () => {
    const r = read('31-excel-de-semicolon-decimals.csv');
    expect([r.encoding, r.delimiter]).toEqual(['utf-8', ';']);
    expect(r.mapping).toMatchObject({ person: ['Vorname', 'Nachname'], company: ['Firma'], email: ['E-Mail'], title: ['Position'] });
    expect(r.rows.map((x) => x.values.person)).toEqual(['Jürgen Müller', 'Anna Schmidt', 'Karl Weiß']);
    expect(r.rows[1].custom).toEqual({ 'Umsatz (Mio. €)': '2,75', Mitarbeiter: '8' });
  });

  it('a one-column file, and a tie, are comma', () => {
    expect(sniffDelimiter('email\na@b.example\n')).toBe(',');
    expect(sniffDelimiter('a,b;c\n')).toBe(',');
  });

  it('a quote inside a field is text: Robert "Bob" Smith, 27"" Monitors, "Sam "The Man" Jones"', () => {
    expect(values('40-stray-quotes.csv').map((v) => [v.person, v.company])).toEqual([
      ['Robert "Bob" Smith', 'Smith Audio'],
      ['Dana Lee', '27" Monitors Ltd'],
      ['Sam "The Man" Jones', 'Jones Co'],
      ['Ann Ray', 'Ray, Ray & Ray'],
    ]);
  });

  it('a row with a NUL, or a quote never closed, is refused on its own with its line; the other rows read', () => {
    const nul = read('41-nul-in-row.csv');
    expect(nul.rows.map((r) => [r.line, r.problem === null])).toEqual([
      [2, true],
      [3, false],
      [4, true],
    ]);
    expect(nul.rows[1].problem).toMatch(/NUL character/);
    const open = read('42-unclosed-quote.csv');
    expect(open.rows.map((r) => [r.line, r.values.person, r.problem])).toEqual([
      [2, 'First Fine', null],
      [3, null, 'a quoted field that starts on line 3 is never closed (a " is missing)'],
      [4, 'Last Fine', null],
    ]);
    // A control character other than tab, CR or LF; a tab only where it is the delimiter.
    expect(tokenizeCsv('a,b\u0007c\n', ',')[0].error).toMatch(/U\+0007/);
    expect(tokenizeCsv('a,b\tc\n', ',')[0].error).toMatch(/U\+0009/);
    expect(tokenizeCsv('a\tb\n', '\t')[0]).toEqual({ line: 1, cells: ['a', 'b'], error: null });
  });

  it('a quoted field over two lines: the next row keeps its own line number', () => {
    const r = read('43-multiline-notes.csv');
    expect(r.rows.map((x) => x.line)).toEqual([2, 4]);
    expect(r.rows[0].custom.notes).toBe('met at the fair\r\nfollow up in May');
  });
});

describe('header rows and layouts', () => {
  it('LinkedIn Connections.csv: the Notes preamble is skipped, URL is the profile, Connected On is custom', () => {
    const r = read('50-linkedin-connections.csv');
    expect(r.headerRow).toBe(4);
    expect(r.mapping).toEqual({
      person: ['First Name', 'Last Name'],
      company: ['Company'],
      title: ['Position'],
      email: ['Email Address'],
      linkedinUrl: ['URL'],
      xUsername: [],
    });
    expect(r.rows.map((x) => [x.line, x.values.person, x.values.linkedinUrl])).toEqual([
      [5, 'Kwame Mensah', 'https://www.linkedin.com/in/kwame-mensah-1a2b3c'],
      [6, 'Lisa Berg', 'https://www.linkedin.com/in/lisaberg'],
    ]);
    expect(r.unmapped).toEqual(['Connected On']);
  });

  it('a generic URL column that holds websites is not the LinkedIn profile', () => {
    expect(readLeadCsv('name,email,URL\nA,a@b.example,https://acme.example\n').mapping.linkedinUrl).toEqual([]);
  });

  it.each([
    [
      '51-hubspot-contacts.csv',
      { person: 'Grace Hopper', company: 'Navy Systems', title: 'Rear Admiral', linkedinUrl: 'https://www.linkedin.com/in/grace-hopper' },
    ],
    [
      '52-sales-navigator-evaboot.csv',
      { person: 'Ines Duarte', company: 'Luz Telecom', email: 'ines@luz.example', linkedinUrl: 'https://www.linkedin.com/in/ines-duarte' },
    ],
    [
      '53-sales-navigator-phantombuster.csv',
      { person: 'Omar Haddad', company: 'Cedar Cloud', title: 'CTO', linkedinUrl: 'https://www.linkedin.com/in/omar-haddad' },
    ],
    ['54-salesforce-leads.csv', { person: 'Marta Kowalski', company: 'Vistula Logistics', title: 'Procurement Lead', email: 'marta@vistula.example' }],
    ['55-pipedrive-people.csv', { person: 'Chen Jing', company: 'Harbor Imports', email: 'chen@harbor.example' }],
    ['56-lemlist-export.csv', { person: 'Nia Otieno', company: 'Kito Pay', title: 'Head of Ops', xUsername: 'niaotieno' }],
    ['57-instantly-leads.csv', { person: 'Li Wei', company: 'Dragon Robotics', title: 'CEO', linkedinUrl: 'https://www.linkedin.com/in/liwei' }],
    ['58-mailchimp-audience.csv', { person: 'Eva Lund', company: 'Fjord Design', email: 'eva@fjord.example' }],
    ['33-spanish-comma.csv', { person: 'José García López', company: 'Soluciones Ibéricas', title: 'Director comercial', email: 'jose@ibericas.example' }],
    ['23-windows-1252-french-semicolon.csv', { person: 'François Hélène-Dubois', company: 'Société Générale', email: 'francois@sg.example' }],
  ])('%s maps its layout', (name, first) => {
    const r = read(name);
    expect(r.rows[0].values).toMatchObject(first);
    expect(r.rows[0].warnings).toEqual([]);
  });

  it("a company's LinkedIn page and a Sales Navigator URL are never the person's profile; they stay custom", () => {
    const evaboot = read('52-sales-navigator-evaboot.csv');
    expect(evaboot.unmapped).toEqual(expect.arrayContaining(['Company Linkedin URL', 'Sales Navigator Profile URL']));
    expect(readLeadCsv('Name,Email,Company LinkedIn URL\nA,a@b.example,https://www.linkedin.com/company/acme\n').mapping.linkedinUrl).toEqual([]);
    expect(read('53-sales-navigator-phantombuster.csv').unmapped).toContain('profileUrl');
  });

  it('X URLs become handles; a URL of another site and cells past the last column are row warnings', () => {
    const r = read('59-x-urls-and-extra-cells.csv');
    expect(r.rows.map((x) => x.values.xUsername)).toEqual(['xavihandle', 'tess_t', null]);
    expect(r.rows[2].warnings).toEqual([
      'X URL "https://www.facebook.com/facebook" is not an X profile URL; the row has no X handle',
      '2 cell(s) past the last column ("stray cell", "another") belong to no column and were left out',
    ]);
    expect(xHandleOf('@h_1')).toEqual({ handle: 'h_1' });
    expect(xHandleOf('twitter.com/someone/')).toEqual({ handle: 'someone' });
    expect(xHandleOf('https://x.com/intent/follow')).toEqual({ lost: true });
    expect(xHandleOf('not a handle')).toEqual({ text: 'not a handle' });
  });

  it('without a known header in the first rows the first row is the header; blank and repeated names get names', () => {
    const r = readLeadCsv('Who,Where,,Where\nMia,Acme,x,Home\n');
    expect([r.headerRow, r.headers]).toEqual([1, ['Who', 'Where', 'column 3', 'Where (2)']]);
    expect(r.mapping).toEqual(NONE);
    expect(r.unmapped).toEqual(['Who', 'Where', 'column 3', 'Where (2)']);
  });

  it('an empty file is refused; bounds are refused naming them', () => {
    expect(() => readLeadCsv(Buffer.from('\r\n\r\n'))).toThrow(/^csv: the file is empty/);
    expect(() => readLeadCsv('a,b\n1,2\n3,4\n', { limits: { rows: 1, bytes: 100, text: 'at most 1 row' } })).toThrow(
      /more than 1 rows; an import holds at most 1 row/,
    );
    expect(() => readLeadCsv(Buffer.alloc(200, 0x41), { limits: { rows: 1, bytes: 100, text: 'at most 100 bytes' } })).toThrow(/is 200 bytes/);
  });
});

describe('POST /leads/import with csvBase64 (the file as bytes)', () => {
  let t: TestApp;
  let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  const post = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/api/v1/leads/import', headers: ws.auth, payload });
  const b64 = (name: string) => fixture(name).toString('base64');

  beforeAll(async () => {
    t = await buildTestApp({ now: '2026-11-29T12:00:00.000Z' });
    ws = await createWorkspaceWithKey(t, 'CSV Reader Co');
  });
  afterAll(async () => t?.close());

  it('the Windows-1252 file imports "Jürgen Müller" exactly and says how it was read', async () => {
    const res = await post({ csvBase64: b64('04-excel-windows-1252.csv') });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ encoding: 'windows-1252', delimiter: ',', headerRow: 1, unmapped: [], counts: { rows: 1, new: 1 } });
    expect(body.rows[0]).toMatchObject({ row: 2, status: 'new', lead: { person: 'Jürgen Müller', company: 'Bäckerei Müller' }, warnings: [], custom: {} });
    const saved = await t.db.selectFrom('leads').select(['person', 'company']).where('id', '=', body.rows[0].leadId).executeTakeFirstOrThrow();
    expect(saved).toEqual({ person: 'Jürgen Müller', company: 'Bäckerei Müller' });
  });

  it('the semicolon file: both rows new', async () => {
    const res = await post({ csvBase64: b64('02-excel-semicolon.csv'), dryRun: true });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ encoding: 'utf-8', delimiter: ';', counts: { rows: 2, new: 2, invalid: 0 } });
    expect(body.rows[0].lead.company).toBe('Holz & Co, KG');
  });

  it('Apollo through the API: the joined person, the mapping and the custom columns; a chosen "A + B" person column', async () => {
    const res = await post({ csvBase64: b64('07-apollo-export.csv'), dryRun: true });
    const body = res.json();
    expect(body.columns).toMatchObject({ person: 'First Name + Last Name', linkedinUrl: 'Person Linkedin Url', xUsername: 'Twitter Url' });
    expect(body.mapping.person).toEqual(['First Name', 'Last Name']);
    expect(body.rows[0].lead).toMatchObject({ person: 'Diego Alvarez', xUsername: 'diegoalv' });
    expect(body.rows[0].custom.Country).toBe('Spain');
    const swapped = await post({ csvBase64: b64('07-apollo-export.csv'), columns: { person: 'Last Name + First Name' }, dryRun: true });
    expect(swapped.json().rows[0].lead.person).toBe('Alvarez Diego');
  });

  it('a row with a NUL is invalid with its line; the other rows import', async () => {
    const res = await post({ csvBase64: b64('41-nul-in-row.csv'), dryRun: true });
    const body = res.json();
    expect(body.counts).toMatchObject({ rows: 3, new: 2, invalid: 1 });
    expect(body.rows[1]).toMatchObject({ row: 3, status: 'invalid' });
    expect(body.rows[1].reason).toMatch(/NUL character/);
  });

  it('csv and csvBase64 together, or neither, is a 400 naming both; not base64 is a 400; an unknown encoding names its guess', async () => {
    const both = await post({ csv: 'email\na@b.example\n', csvBase64: b64('02-excel-semicolon.csv') });
    expect([both.statusCode, both.json().error]).toEqual([400, 'invalid_request']);
    expect(both.json().message).toMatch(/^csv, csvBase64: /);
    const neither = await post({ dryRun: true });
    expect(neither.statusCode).toBe(400);
    expect(neither.json().message).toMatch(/csv.*csvBase64/);
    const bad = await post({ csvBase64: 'not base64!' });
    expect([bad.statusCode, bad.json().message]).toEqual([400, expect.stringMatching(/^csvBase64: not base64/)]);
    const polish = await post({ csvBase64: b64('24-iso-8859-2-polish.csv') });
    expect([polish.statusCode, polish.json().error]).toEqual([400, 'invalid_csv']);
    expect(polish.json().message).toContain('it looks like ISO-8859-2');
  });
});

import { parse } from 'csv-parse/sync';
import { Type } from 'typebox';
import { compileStrict } from '../../app/validation.js';
import { badRequest } from '../../lib/errors.js';
import { WorldLeadSchema } from '../world/index.js';

// The rules of one imported row, without the database: reading the CSV, mapping its columns to lead fields and
// checking each field. What the database decides (duplicate, suppressed) is in leads.import.ts.

/** The spec's cross-channel lead fields a file may carry, plus `xUsername` (stored as the lead's X handle). */
export const LEAD_FIELDS = ['person', 'company', 'title', 'email', 'linkedinUrl', 'xUsername'] as const;
export type LeadField = (typeof LEAD_FIELDS)[number];
export type LeadValues = Record<LeadField, string | null>;
export type ColumnMapping = Partial<Record<LeadField, string | null>>;

/**
 * How much one import may hold. Why these: a file this size is checked and saved in one request well inside the
 * API's and the console's body limits (JSON and form encoding grow it by up to 3 times), in a few seconds.
 */
export const IMPORT_LIMITS = { rows: 2000, bytes: 512 * 1024 } as const;
export const IMPORT_LIMITS_TEXT = `at most ${IMPORT_LIMITS.rows.toLocaleString('en-US')} rows and ${IMPORT_LIMITS.bytes / 1024} KiB`;

/** The names a header may have for each field (compared without case, spaces, `_` or `-`). */
const HEADER_NAMES: Record<LeadField, string[]> = {
  person: ['person', 'name', 'fullname'],
  company: ['company', 'organization', 'organisation'],
  title: ['title', 'jobtitle', 'position'],
  email: ['email', 'emailaddress', 'mail', 'workemail', 'businessemail'],
  linkedinUrl: ['linkedinurl', 'linkedin', 'linkedinprofile'],
  xUsername: ['xusername', 'username', 'handle', 'twitter', 'x'],
};

const squash = (header: string) => header.toLowerCase().replace(/[\s_-]/g, '');

/** The header each field reads by default: the first whose name matches the field. */
export function defaultColumns(headers: readonly string[]): Record<LeadField, string | null> {
  const out = {} as Record<LeadField, string | null>;
  for (const field of LEAD_FIELDS) out[field] = headers.find((h) => HEADER_NAMES[field].includes(squash(h))) ?? null;
  return out;
}

export interface ParsedCsv {
  headers: string[];
  /** Each data row by header, with its row number in the file (the header is row 1). */
  records: { row: number; cells: Record<string, string> }[];
}

/** Reads CSV text with a header row; a file past the bound or that is not CSV is a 400 naming `csv`. */
export function parseCsv(text: string): ParsedCsv {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > IMPORT_LIMITS.bytes) {
    throw badRequest('import_too_large', `csv: the file is ${bytes.toLocaleString('en-US')} bytes; an import holds ${IMPORT_LIMITS_TEXT}. Split the file.`, {
      field: 'csv',
      limits: IMPORT_LIMITS,
    });
  }
  let rows: string[][];
  try {
    const records: string[][] = parse(text, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: true });
    rows = records;
  } catch (e) {
    throw badRequest('invalid_csv', `csv: the file cannot be read as CSV: ${(e as Error).message}`, { field: 'csv' });
  }
  if (rows.length === 0)
    throw badRequest('invalid_csv', 'csv: the file is empty; its first row names the columns (person, company, title, email, linkedinUrl)', { field: 'csv' });
  const headers = rows[0].map((h, i) => h || `column ${i + 1}`);
  const seen = new Set<string>();
  for (const h of headers) {
    if (seen.has(h)) throw badRequest('invalid_csv', `csv: the column "${h}" appears twice in the header row`, { field: 'csv' });
    seen.add(h);
  }
  const data = rows.slice(1);
  if (data.length > IMPORT_LIMITS.rows) {
    throw badRequest(
      'import_too_large',
      `csv: the file has more than ${IMPORT_LIMITS.rows.toLocaleString('en-US')} rows; an import holds ${IMPORT_LIMITS_TEXT}. Split the file.`,
      {
        field: 'csv',
        limits: IMPORT_LIMITS,
      },
    );
  }
  return {
    headers,
    records: data.map((cells, i) => ({ row: i + 2, cells: Object.fromEntries(headers.map((h, c) => [h, cells[c] ?? ''])) })),
  };
}

/** The mapping actually used: the caller's choice per field (a header of the file, or none), else the default. */
export function resolveColumns(headers: readonly string[], chosen: ColumnMapping | undefined): Record<LeadField, string | null> {
  const columns = defaultColumns(headers);
  for (const field of LEAD_FIELDS) {
    const pick = chosen?.[field];
    if (pick === undefined) continue;
    if (pick !== null && pick !== '' && !headers.includes(pick)) {
      throw badRequest('invalid_request', `columns/${field}: "${pick}" is not a column of the file (its columns are: ${headers.join(', ')})`, {
        field: `columns/${field}`,
      });
    }
    columns[field] = pick || null;
  }
  return columns;
}

/** One row's values per field; blank cells are null. */
export function valuesOf(cells: Record<string, string>, columns: Record<LeadField, string | null>): LeadValues {
  const out = {} as LeadValues;
  for (const field of LEAD_FIELDS) {
    const column = columns[field];
    const value = column ? (cells[column] ?? '').trim() : '';
    out[field] = value === '' ? null : value;
  }
  return out;
}

// The world file's rules for these fields (its lead object), so an imported lead and a seeded one obey the same.
const worldField = (name: keyof typeof WorldLeadSchema.properties) => compileStrict(Type.Object({ v: WorldLeadSchema.properties[name] }));
const CHECKS: Record<LeadField, { valid: (v: string) => boolean; what: string }> = (() => {
  const check = (name: keyof typeof WorldLeadSchema.properties) => {
    const validate = worldField(name);
    return (v: string) => validate({ v }) === true;
  };
  const text = check('person');
  const email = check('email');
  const uri = check('linkedinUrl');
  const handle = check('username');
  return {
    person: { valid: text, what: 'a name of at most 200 characters' },
    company: { valid: check('company'), what: 'a company of at most 200 characters' },
    title: { valid: check('title'), what: 'a title of at most 200 characters' },
    email: { valid: email, what: 'an e-mail address (name@example.com, at most 320 characters)' },
    // A profile is a web page: the world file's URI rule, and an http(s) address (not `mailto:` or `urn:`).
    linkedinUrl: { valid: (v) => uri(v) && /^https?:\/\/[^/\s]+/i.test(v), what: 'an http(s) URL of at most 2000 characters' },
    xUsername: { valid: handle, what: 'an X handle (1 to 15 letters, digits or _, @ optional)' },
  };
})();

/** Why a row cannot be imported (a malformed field, or no way to reach the person), or null when it can. */
export function rowProblem(v: LeadValues): string | null {
  for (const field of LEAD_FIELDS) {
    const value = v[field];
    if (value !== null && !CHECKS[field].valid(value)) return `${field} ${JSON.stringify(value.slice(0, 80))} is not ${CHECKS[field].what}`;
  }
  if (!v.email && !v.linkedinUrl && !v.xUsername) return 'no way to reach this person: the row has no email, linkedinUrl or xUsername';
  return null;
}

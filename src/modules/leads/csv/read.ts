import { badRequest } from '../../../lib/errors.js';
import type { LeadField, LeadValues } from '../lead-fields.js';
import { decodeCsvBytes } from './decode.js';
import { defaultSources, knownHeaderCount, type FieldSources } from './headers.js';
import { sniffDelimiter, type Delimiter } from './sniff.js';
import { forEachCsvRecord, isBlankRecord, type CsvRecord } from './tokenize.js';

// The one reader of lead files, for the API (`csv` text or `csvBase64` bytes), the console and the CLI: bytes to
// text (decode.ts), the delimiter (sniff.ts), lenient records (tokenize.ts), the header row past any preamble, and
// the default mapping of its columns to lead fields (headers.ts). `leadRowsOf` then reads each row's lead values,
// its custom columns and what it lost.

const FIELDS: readonly LeadField[] = ['person', 'company', 'title', 'email', 'linkedinUrl', 'xUsername'];

/** One data row of the file. */
export interface CsvRow {
  /** The line of the file the row starts on, from 1. */
  line: number;
  /** The row's cells by header (trimmed; '' when the row is shorter than the header). */
  cells: Record<string, string>;
  /** Non-empty cells past the header's last column (they belong to no column). */
  extra: string[];
  /** Why the row cannot be read (a quote never closed, a NUL or other control character), or null. */
  problem: string | null;
}

/** A lead file as read: how, its header, its rows and the default mapping of its columns. */
export interface CsvTable {
  /** `utf-8` (also for text given as a string), `utf-16le`, `utf-16be`, `windows-1252`… */
  encoding: string;
  delimiter: Delimiter;
  /** The line of the header row, from 1 (after a preamble such as LinkedIn's `Notes:` lines it is later). */
  headerRow: number;
  /** The header row's names, trimmed and unique: a blank one is `column N`, a repeated one `Name (2)`. */
  headers: string[];
  rows: CsvRow[];
  /** The columns each lead field reads unless the caller chooses (headers.ts `defaultSources`). */
  mapping: FieldSources;
}

export interface ReadCsvOptions {
  /** Bounds of one import (IMPORT_LIMITS): past them a 400 `import_too_large` names them. None: unbounded. */
  limits?: { rows: number; bytes: number; text: string };
}

/** How many rows of the file a header row may follow (a preamble longer than this is not looked past). */
export const HEADER_SEARCH_ROWS = 10;
const SAMPLE_ROWS = 20;

const tooLarge = (what: string, limits: NonNullable<ReadCsvOptions['limits']>) =>
  badRequest('import_too_large', `csv: the file ${what}; an import holds ${limits.text}. Split the file.`, {
    field: 'csv',
    limits: { rows: limits.rows, bytes: limits.bytes },
  });

/**
 * Reads a lead file: `input` is its bytes (the encoding is told from them, decode.ts) or text already decoded.
 * Sniffs the delimiter (`,` `;` tab `|`), splits records leniently (a row that cannot be read keeps its line and a
 * `problem`; the others are read), skips blank rows, finds the header row (the first of the first 10 rows with at
 * least 2 known header names, else the first row) and maps its columns to lead fields by default.
 * Throws a 400: `import_too_large` past `options.limits` (bytes before decoding, data rows); `invalid_csv` (field
 * `csv`) when the encoding cannot be told, the file is empty, or its header row cannot be read.
 */
export function readCsv(input: Buffer | string, options: ReadCsvOptions = {}): CsvTable {
  const { limits } = options;
  const bytes = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.length;
  if (limits && bytes > limits.bytes) throw tooLarge(`is ${bytes.toLocaleString('en-US')} bytes`, limits);
  const decoded = typeof input === 'string' ? { text: input.replace(/^\ufeff/, ''), encoding: 'utf-8' } : decodeCsvBytes(input);
  const { text, encoding } = decoded;
  const delimiter = sniffDelimiter(text);

  // One pass over the records, each made a row as it is read (the file's records are never all held beside its
  // rows): the first rows are kept until the header row is found among them (skipping blank rows throughout).
  const head: CsvRecord[] = [];
  let header: CsvRecord | null = null;
  let names: string[] = [];
  let width = 0;
  /** Columns with no name, and those of them with a value in some row. */
  let blank: number[] = [];
  const valued = new Set<number>();
  const rows: CsvRow[] = [];
  const addRow = (r: CsvRecord) => {
    if (limits && rows.length >= limits.rows) throw tooLarge(`has more than ${limits.rows.toLocaleString('en-US')} rows`, limits);
    const cells: Record<string, string> = {};
    for (let i = 0; i < width; i++) cells[names[i]] = r.cells[i] ?? '';
    for (const i of blank) if ((r.cells[i] ?? '') !== '') valued.add(i);
    rows.push({ line: r.line, cells, extra: r.cells.slice(width).filter((c) => c !== ''), problem: r.error });
  };
  const chooseHeader = () => {
    const index = Math.max(
      0,
      head.findIndex((r) => r.error === null && knownHeaderCount(r.cells) >= 2),
    );
    header = head[index];
    if (header.error !== null) throw badRequest('invalid_csv', `csv: the header row (line ${header.line}) cannot be read: ${header.error}`, { field: 'csv' });
    // Names: trimmed, a blank one `column N`, a repeated one `Name (2)`.
    const seen = new Map<string, number>();
    names = header.cells.map((cell, i) => {
      const name = cell.trim() || `column ${i + 1}`;
      const times = (seen.get(name) ?? 0) + 1;
      seen.set(name, times);
      return times === 1 ? name : `${name} (${times})`;
    });
    width = header.cells.length;
    blank = header.cells.flatMap((c, i) => (c.trim() === '' ? [i] : []));
    for (const r of head.slice(index + 1)) addRow(r);
    head.length = 0;
  };
  forEachCsvRecord(text, delimiter, (r) => {
    if (isBlankRecord(r)) return;
    if (header) return addRow(r);
    head.push(r);
    if (head.length === HEADER_SEARCH_ROWS) chooseHeader();
  });
  if (!header) {
    if (head.length === 0) {
      throw badRequest('invalid_csv', 'csv: the file is empty; its first row names the columns (person, company, title, email, linkedinUrl)', {
        field: 'csv',
      });
    }
    chooseHeader();
  }
  const headerLine = (header as CsvRecord | null)!.line;

  // A column with no name and no value anywhere (Excel's trailing `,,,`) is no column.
  const empty = new Set(blank.filter((i) => !valued.has(i)));
  const headers = names.filter((_, i) => !empty.has(i));
  if (empty.size > 0) {
    for (const row of rows) {
      const cells: Record<string, string> = {};
      for (const h of headers) cells[h] = row.cells[h];
      row.cells = cells;
    }
  }
  const mapping = defaultSources(headers, (h) => rows.slice(0, SAMPLE_ROWS).map((r) => r.cells[h] ?? ''));
  return { encoding, delimiter, headerRow: headerLine, headers, rows, mapping };
}

/** One row read as a lead. */
export interface LeadRow {
  line: number;
  /** One value per lead field (trimmed; null when blank or not mapped); the person joined from its columns. */
  values: LeadValues;
  /** The row's non-empty cells of columns no field reads, by header as written. */
  custom: Record<string, string>;
  /** What the row lost in reading: cells past the last column, an X column value that is no X profile. */
  warnings: string[];
  /** Why the row cannot be read at all (then `values` are what could be read), or null. */
  problem: string | null;
}

const HANDLE = /^@?([A-Za-z0-9_]{1,15})$/;
const X_URL = /^(?:https?:\/\/)?(?:www\.|mobile\.)?(?:twitter|x)\.com\/@?([A-Za-z0-9_]{1,15})\/?(?:[?#].*)?$/i;
/** Paths of twitter.com / x.com that are pages, not accounts. */
const X_PAGES = new Set(['home', 'i', 'intent', 'share', 'search', 'hashtag', 'explore', 'settings', 'login', 'signup', 'messages', 'notifications']);
const LOOKS_LIKE_URL = /^(https?:\/\/|www\.)|^[^\s/@]+\.[a-z]{2,}\//i;

/**
 * An X column's value as a bare handle: `@h` and `h` are `h`; `https://twitter.com/h` and `https://x.com/h` (with
 * or without scheme, `www.` or `mobile.`, a trailing `/` or query) are `h`. Another URL is `{ lost: true }`: it
 * names no X account. Any other text is kept as written, for the handle check to refuse with its reason.
 */
export function xHandleOf(value: string): { handle: string } | { lost: true } | { text: string } {
  const handle = HANDLE.exec(value);
  if (handle) return { handle: handle[1] };
  const url = X_URL.exec(value);
  if (url && !X_PAGES.has(url[1].toLowerCase())) return { handle: url[1] };
  if (LOOKS_LIKE_URL.test(value)) return { lost: true };
  return { text: value };
}

/**
 * Reads each row of `table` as a lead with `sources` (the columns each field reads: `table.mapping`, or the
 * caller's). Answers the rows and `unmapped`: the columns no field reads that hold a value in some row (their
 * values are each row's `custom`). Never throws.
 */
export function leadRowsOf(table: CsvTable, sources: FieldSources): { rows: LeadRow[]; unmapped: string[] } {
  const read = new Set(FIELDS.flatMap((f) => sources[f]));
  const others = table.headers.filter((h) => !read.has(h));
  const unmapped = others.filter((h) => table.rows.some((r) => (r.cells[h] ?? '') !== ''));
  const rows = table.rows.map((r): LeadRow => {
    const warnings: string[] = [];
    const values = {} as LeadValues;
    for (const field of FIELDS) {
      const value = sources[field]
        .map((h) => (r.cells[h] ?? '').trim())
        .filter((v) => v !== '')
        .join(' ');
      values[field] = value === '' ? null : value;
    }
    if (values.xUsername !== null) {
      const x = xHandleOf(values.xUsername);
      if ('handle' in x) values.xUsername = x.handle;
      else if ('lost' in x) {
        warnings.push(`${sources.xUsername[0]} ${JSON.stringify(values.xUsername.slice(0, 80))} is not an X profile URL; the row has no X handle`);
        values.xUsername = null;
      }
    }
    if (r.extra.length > 0) {
      const shown = r.extra
        .slice(0, 3)
        .map((c) => JSON.stringify(c.slice(0, 40)))
        .join(', ');
      warnings.push(`${r.extra.length} cell(s) past the last column (${shown}${r.extra.length > 3 ? ', …' : ''}) belong to no column and were left out`);
    }
    const custom: Record<string, string> = {};
    for (const h of others) if (r.cells[h]) custom[h] = r.cells[h];
    return { line: r.line, values, custom, warnings, problem: r.problem };
  });
  return { rows, unmapped };
}

/** `readCsv` and `leadRowsOf` with the default mapping: the whole reading of a lead file (tests, tools). */
export function readLeadCsv(input: Buffer | string, options: ReadCsvOptions = {}) {
  const table = readCsv(input, options);
  return { ...table, ...leadRowsOf(table, table.mapping) };
}

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { AppError } from '../../lib/errors.js';
import { IMPORT_LIMITS, LEAD_FIELDS, readCsv, type CsvTable, type FieldSources, type ImportLeadsResult, type LeadField } from '../../modules/leads/index.js';
import { CliError } from '../admin-backend.js';

// The lead file of `outreach leads import FILE` (leads-import.ts) and its batches: the file is read once with the
// shared reader (readCsv). A larger file than one request holds goes in batches of whole records: each is the header
// row and its records re-serialized as UTF-8 CSV text with the file's delimiter, every cell quoted that holds a
// delimiter of any kind, a quote, a line break or blanks at its ends, so each batch reads as the file does. After each
// committed batch a small state file beside the file records how far the import got (docs/cli-api-commands.md).

/** A row of the API's answer to an import. */
export type ImportedRow = ImportLeadsResult['rows'][number];
type Counts = ImportLeadsResult['counts'];

/** The words for the delimiters the reader tells apart. */
export const DELIMITER_WORDS: Record<string, string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab', '|': 'pipe' };

/** The most data rows one file may hold. */
export const MAX_FILE_ROWS = 100_000;
/** One batch: the API's row bound, and half its byte bound (JSON escaping and the header stay well inside it). */
export const BATCH_LIMITS = { rows: IMPORT_LIMITS.rows, bytes: IMPORT_LIMITS.bytes / 2 } as const;

// ---------------------------------------------------------------------------------------------------------------
// The file and its batches

/** A lead file as read here: its table (csv/read.ts) and its header row re-serialized. */
export interface LeadFile {
  /** The file's path as given. */
  name: string;
  bytes: Buffer;
  sha256: string;
  table: CsvTable;
  /** The header row as sent at the top of every batch (the reader's unique names), and its bytes with its line break. */
  headerLine: string;
  headerBytes: number;
  /** The mapping as sent with every batch (`columns`): one label per field, or null for none. */
  columns: Record<LeadField, string | null>;
}

/** A cell that must be quoted to read back the same: a delimiter of any kind, a quote, a line break, edge blanks. */
const NEEDS_QUOTES = /[,;\t|"\r\n]|^\s|\s$/;
const cellText = (v: string) => (NEEDS_QUOTES.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
const recordText = (cells: readonly string[], delimiter: string) => cells.map(cellText).join(delimiter);

/** Line breaks as the tokenizer counts them (CRLF, LF, a lone CR), so a batch's lines can be mapped back. */
function lineBreaks(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 10 || (c === 13 && s.charCodeAt(i + 1) !== 10)) n++;
  }
  return n;
}

/**
 * Reads a lead file's bytes with the shared reader (no bound: the batches keep within it). Throws a CliError for an
 * encoding that cannot be told, an empty file or one past `MAX_FILE_ROWS`.
 */
export function readLeadFile(file: string, bytes: Buffer): LeadFile {
  let table: CsvTable;
  try {
    table = readCsv(bytes);
  } catch (e) {
    // As the API would refuse it (400 `invalid_csv`), before anything is sent.
    if (e instanceof AppError) throw new CliError(`importing ${file}: ${e.message}`, { error: e.code, message: e.message, ...e.body });
    throw e;
  }
  if (table.rows.length > MAX_FILE_ROWS) {
    throw new CliError(
      `${file} has ${table.rows.length.toLocaleString('en-US')} rows; the CLI imports at most ${MAX_FILE_ROWS.toLocaleString('en-US')} rows a file. Split the file and import each part.`,
    );
  }
  const headerLine = recordText(table.headers, table.delimiter);
  return {
    name: file,
    bytes,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    table,
    headerLine,
    headerBytes: Buffer.byteLength(headerLine, 'utf8') + 1,
    columns: columnsOf(table.mapping),
  };
}

/** The mapping as the API's `columns`: the header, `A + B` when joined, null for none. */
function columnsOf(mapping: FieldSources): Record<LeadField, string | null> {
  return Object.fromEntries(LEAD_FIELDS.map((f) => [f, mapping[f].length ? mapping[f].join(' + ') : null])) as Record<LeadField, string | null>;
}

/** A row's cells in header order, then its cells past the last column. */
const cellsOf = (table: CsvTable, i: number) => {
  const row = table.rows[i];
  return [...table.headers.map((h) => row.cells[h] ?? ''), ...row.extra];
};

/**
 * Why a row is answered here rather than sent: a record the tokenizer could not read (a quote never closed) has no
 * cells, and sent it would be a blank line the API skips; a row larger than one import holds. Null: sent.
 */
function localProblem(file: LeadFile, i: number, bytes: number): string | null {
  const row = file.table.rows[i];
  if (row.problem !== null && row.extra.length === 0 && file.table.headers.every((h) => (row.cells[h] ?? '') === '')) return row.problem;
  if (file.headerBytes + bytes > IMPORT_LIMITS.bytes) {
    return `the row is ${bytes.toLocaleString('en-US')} bytes; an import holds at most ${IMPORT_LIMITS.bytes / 1024} KiB`;
  }
  return null;
}

/** One batch: rows [start, end) of the table, at most `BATCH_LIMITS` of them sent; `whole`: the file's own bytes. */
export interface BatchPlan {
  start: number;
  end: number;
  whole?: boolean;
}

/** Whether the file goes in one request as it is: within the API's bound (the same test as the server's). */
export const fitsOneRequest = (file: LeadFile) => file.bytes.length <= IMPORT_LIMITS.bytes && file.table.rows.length <= IMPORT_LIMITS.rows;

/** Splits rows [from, n) into batches of whole rows within `limits` (a row is never split; each batch holds one at least). */
export function planBatches(file: LeadFile, from = 0, limits: { rows: number; bytes: number } = BATCH_LIMITS): BatchPlan[] {
  const { table, headerBytes } = file;
  const plans: BatchPlan[] = [];
  let start = from;
  let rows = 0;
  let bytes = headerBytes;
  for (let i = from; i < table.rows.length; i++) {
    const size = Buffer.byteLength(recordText(cellsOf(table, i), table.delimiter), 'utf8') + 1;
    const sent = localProblem(file, i, size) === null;
    if (sent && rows > 0 && (rows + 1 > limits.rows || bytes + size > limits.bytes)) {
      plans.push({ start, end: i });
      start = i;
      rows = 0;
      bytes = headerBytes;
    }
    if (sent) {
      rows++;
      bytes += size;
    }
  }
  if (start < table.rows.length || plans.length === 0) plans.push({ start, end: table.rows.length });
  return plans;
}

/**
 * Refuses a file whose batches would not read as it does, before any is sent: each batch is read here as the server
 * will read it (readCsv), and must have the file's delimiter, its header row on line 1 with the file's headers, a row
 * at each line the batch maps, and those rows' cells. (A file of one column whose cells hold other delimiters may be
 * told another delimiter, or a header row without two known names may be looked past: such a file is refused.)
 */
export function checkBatches(file: LeadFile, plans: readonly BatchPlan[]) {
  for (const plan of plans) {
    const batch = batchOf(file, plan);
    if (!('csv' in batch.body) || plan.end === plan.start) continue;
    let read: CsvTable | null = null;
    try {
      read = readCsv(batch.body.csv);
    } catch {
      // answered below as a batch that does not read as the file
    }
    const rows = read?.rows ?? [];
    // The file's rows of this batch by the line they start on (one batch's worth at a time).
    const byLine = new Map(file.table.rows.slice(plan.start, plan.end).map((r) => [r.line, r]));
    const same =
      read !== null &&
      read.delimiter === file.table.delimiter &&
      read.headerRow === 1 &&
      read.headers.join('\n') === file.table.headers.join('\n') &&
      rows.length === batch.lines.size &&
      rows.every((r) => {
        const line = batch.lines.get(r.line);
        const original = line === undefined ? undefined : byLine.get(line);
        return (
          original !== undefined &&
          r.problem === original.problem &&
          r.extra.join('\n') === original.extra.join('\n') &&
          file.table.headers.every((h) => r.cells[h] === original.cells[h])
        );
      });
    if (!same) {
      const told = read && read.delimiter !== file.table.delimiter ? ` (as ${DELIMITER_WORDS[read.delimiter]}-delimited)` : '';
      throw new CliError(
        `${file.name}: its rows ${file.table.rows[plan.start].line}–${file.table.rows[plan.end - 1].line} sent as one batch would not read as in the file${told}; save the file with a header row naming at least two of person, company, title, email, linkedinUrl, or split it into files of at most ${IMPORT_LIMITS.rows.toLocaleString('en-US')} rows and 512 KiB`,
      );
    }
  }
}

/** A batch as sent: its CSV text, the original line of each batch line a row starts on, the rows answered here. */
export function batchOf(file: LeadFile, plan: BatchPlan): { body: { csv: string } | { csvBase64: string }; lines: Map<number, number>; local: ImportedRow[] } {
  const { table } = file;
  if (plan.whole) return { body: { csvBase64: file.bytes.toString('base64') }, lines: new Map(), local: [] };
  const parts = [file.headerLine];
  let line = 1 + lineBreaks(file.headerLine) + 1;
  const lines = new Map<number, number>();
  const local: ImportedRow[] = [];
  for (let i = plan.start; i < plan.end; i++) {
    const text = recordText(cellsOf(table, i), table.delimiter);
    const problem = localProblem(file, i, Buffer.byteLength(text, 'utf8') + 1);
    if (problem !== null) {
      local.push(invalidRow(table.rows[i].line, problem));
      continue;
    }
    parts.push(text);
    lines.set(line, table.rows[i].line);
    line += lineBreaks(text) + 1;
  }
  return { body: { csv: `${parts.join('\n')}\n` }, lines, local };
}

const NO_VALUES = Object.fromEntries(LEAD_FIELDS.map((f) => [f, null])) as ImportedRow['lead'];
/** A row that cannot be read, answered as the API answers it. */
const invalidRow = (row: number, reason: string): ImportedRow => ({
  row,
  status: 'invalid',
  reason,
  flags: [],
  leadId: null,
  lead: { ...NO_VALUES },
  warnings: [],
  custom: {},
});

// ---------------------------------------------------------------------------------------------------------------
// Progress kept beside the file

/** The state file of an import: `<file>.outreach-import.json`. */
export const stateFileOf = (file: string) => `${file}.outreach-import.json`;

/** What decides whether a rerun may resume: the server, workspace, sequence, account and mapping. */
export interface StateOptions {
  url: string;
  client: string | null;
  sequence: string | null;
  account: string | null;
  columns: Record<LeadField, string | null>;
}

/** The state file's content (version 1). */
export interface ImportState {
  version: 1;
  /** The file's bytes (sha256, hex). */
  sha256: string;
  options: StateOptions;
  /** Data rows of the file (after the header row) done, blank lines not counted: the next batch starts there. */
  rowsDone: number;
  batchesDone: number;
  /** The line of the file of the last row done. */
  afterRow: number;
  /** The counts of the rows done. */
  counts: Counts;
  /** What the answers said that the summary prints (an earlier run's, on resume). */
  answer: Pick<ImportLeadsResult, 'sequence' | 'account' | 'headers' | 'columns'> & { unmapped: string[] };
  updatedAt: string;
}

/** The state recorded at `path`: null when there is none, 'unreadable' when it is not a state of this version. */
export function readState(path: string): ImportState | 'unreadable' | null {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  try {
    const state = JSON.parse(text) as ImportState;
    return state && state.version === 1 && Number.isInteger(state.rowsDone) ? state : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/** Writes the state beside the file (a temporary file renamed over it); a failure warns and the import goes on. */
export function writeState(path: string, state: ImportState, warned: { value: boolean }) {
  try {
    fs.writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
    fs.renameSync(`${path}.tmp`, path);
  } catch (e) {
    if (!warned.value) process.stderr.write(`outreach: cannot record the import's progress in ${path} (${(e as Error).message}); a rerun will start over\n`);
    warned.value = true;
  }
}

/** Removes the state file and its temporary file, if any. */
export function removeState(path: string) {
  fs.rmSync(path, { force: true });
  fs.rmSync(`${path}.tmp`, { force: true });
}

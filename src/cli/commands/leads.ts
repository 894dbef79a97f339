import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import cliProgress from 'cli-progress';
import { personKeys, type IdentityKey } from '../../domain/identity.js';
import { AppError } from '../../lib/errors.js';
import { IMPORT_LIMITS, LEAD_FIELDS, readCsv, type CsvTable, type FieldSources, type ImportLeadsResult, type LeadField } from '../../modules/leads/index.js';
import { CliError } from '../admin-backend.js';
import { apiError, resolveApi, withApiOptions, type ApiOptions, type ApiTarget } from './api.js';
import { registerLeadTwins } from './leads-twins.js';

// `outreach leads import FILE` (issue 39 §2): a file of up to 100,000 rows, sent to POST /leads/import within the
// API's bound (IMPORT_LIMITS). The file is read once here with the shared reader (readCsv: encoding, delimiter, header
// row past a preamble, lenient records, default mapping). A file within the bound goes as it is, its bytes in one
// request (`csvBase64`: the server reads it, as before). A larger one goes in batches of whole records: each is the
// header row and its records re-serialized as UTF-8 CSV text (`csv`) with the file's delimiter, every cell quoted
// that holds a delimiter of any kind, a quote, a line break or blanks at its ends, and every batch names the same
// `columns` (the mapping read from the whole file), so each batch reads as the file does. The API numbers a batch's
// rows by its own lines; the answers are mapped back to the lines of the file. After each committed batch a small
// state file beside the file records how far the import got; a rerun with the same file and options resumes there
// (docs/cli-api-commands.md).

interface LeadsImportOptions extends ApiOptions {
  sequence?: string;
  account?: string;
  dryRun?: boolean;
  restart?: boolean;
  /** Hidden: stop after this many batches sent, as an interruption would (the resume test). */
  maxBatches?: number;
}

type ImportedRow = ImportLeadsResult['rows'][number];
type Counts = ImportLeadsResult['counts'];

const DELIMITER_WORDS: Record<string, string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab', '|': 'pipe' };

/** The most data rows one file may hold. */
export const MAX_FILE_ROWS = 100_000;
/** One batch: the API's row bound, and half its byte bound (JSON escaping and the header stay well inside it). */
export const BATCH_LIMITS = { rows: IMPORT_LIMITS.rows, bytes: IMPORT_LIMITS.bytes / 2 } as const;
/** Waits before sending a batch again after a network error, a 5xx, 408 or 429. */
const RETRY_DELAYS_MS = [500, 2000];

/** What the CLI prints and `--json` answers: the API's answer, for the whole file. */
export interface LeadsImportResult extends ImportLeadsResult {
  file: string;
  batches: { total: number; sent: number; skipped: number };
  /** The row of the file after which this run resumed (earlier rows were imported by an earlier run), or null. */
  resumedAfterRow: number | null;
  /** Data rows of the file done (this run and earlier ones), and the line of the last of them (null: none). */
  rowsDone: number;
  lastRowDone: number | null;
  /** False when the run stopped before the last batch (`--max-batches`). */
  complete: boolean;
}

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
interface StateOptions {
  url: string;
  client: string | null;
  sequence: string | null;
  account: string | null;
  columns: Record<LeadField, string | null>;
}

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

function readState(path: string): ImportState | 'unreadable' | null {
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
function writeState(path: string, state: ImportState, warned: { value: boolean }) {
  try {
    fs.writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
    fs.renameSync(`${path}.tmp`, path);
  } catch (e) {
    if (!warned.value) process.stderr.write(`outreach: cannot record the import's progress in ${path} (${(e as Error).message}); a rerun will start over\n`);
    warned.value = true;
  }
}

function removeState(path: string) {
  fs.rmSync(path, { force: true });
  fs.rmSync(`${path}.tmp`, { force: true });
}

// ---------------------------------------------------------------------------------------------------------------
// Sending

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const retryable = (status: number) => status >= 500 || status === 429 || status === 408;

async function postBatch(api: ApiTarget, body: Record<string, unknown>, what: string, hint: () => string): Promise<ImportLeadsResult> {
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(`${api.baseUrl}/api/v1/leads/import`, {
        method: 'POST',
        headers: { ...api.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    } catch (e) {
      if (attempt < RETRY_DELAYS_MS.length) {
        await sleep(RETRY_DELAYS_MS[attempt]);
        continue;
      }
      const cause = (e as Error & { cause?: Error }).cause?.message ?? (e as Error).message;
      throw new CliError(`${what}: cannot reach the server at ${api.baseUrl} (${cause})${hint()}`);
    }
    const answer: unknown = await res.json().catch(() => null);
    if (res.ok) return answer as ImportLeadsResult;
    if (retryable(res.status) && attempt < RETRY_DELAYS_MS.length) {
      await sleep(RETRY_DELAYS_MS[attempt]);
      continue;
    }
    const err = apiError(what, res.status, answer);
    throw new CliError(`${err.message}${hint()}`, err.body);
  }
}

const SHARED: Record<IdentityKey['channel'], string> = { email: 'same e-mail', linkedin: 'same LinkedIn profile', x: 'same X user', handle: 'same X handle' };
const keysOf = (v: ImportedRow['lead']) =>
  personKeys({ email: v.email, linkedinUrl: v.linkedinUrl, xUserId: null, username: v.xUsername }).map((k) => ({
    id: `${k.channel}:${k.key}`,
    channel: k.channel,
  }));

/**
 * A dry run saves no batch, so a row that is the same person as a row of an earlier batch comes back `new`; the
 * API would have answered `duplicate` (or `suppressed`) in one request. `seen` holds the earlier batches' rows by
 * identity key (domain/identity.ts, as the API compares them); such a row is answered as the API would.
 */
function acrossBatches(row: ImportedRow, seen: Map<string, { row: number; status: ImportedRow['status'] }>): ImportedRow {
  if (row.status === 'invalid') return row;
  const keys = keysOf(row.lead);
  let out = row;
  if (row.status === 'new') {
    const hit = keys.map((k) => ({ k, earlier: seen.get(k.id) })).find((h) => h.earlier !== undefined);
    if (hit?.earlier) {
      out =
        hit.earlier.status === 'suppressed'
          ? { ...row, status: 'suppressed', reason: `same person as row ${hit.earlier.row}, which is suppressed` }
          : { ...row, status: 'duplicate', reason: `same person as row ${hit.earlier.row} (${SHARED[hit.k.channel]})` };
    }
  }
  for (const k of keys) if (!seen.has(k.id)) seen.set(k.id, { row: out.row, status: out.status });
  return out;
}

const countRows = (rows: readonly ImportedRow[], into: Counts) => {
  for (const r of rows) {
    into.rows++;
    into[r.status]++;
  }
};

/**
 * Imports a lead file in batches (see the top of this file). `progress` is told the rows done and the total before
 * the first batch and after each one. Throws a CliError on a refused batch (with where a rerun resumes).
 */
export async function runLeadsImport(
  file: string,
  opts: LeadsImportOptions,
  progress: (done: number, total: number) => void = () => undefined,
): Promise<LeadsImportResult> {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const lead = readLeadFile(file, bytes);
  const { table } = lead;
  const total = table.rows.length;
  const api = resolveApi(opts);
  const dryRun = opts.dryRun === true;
  const options: StateOptions = {
    url: api.baseUrl,
    client: opts.client ?? null,
    sequence: opts.sequence ?? null,
    account: opts.account ?? null,
    columns: lead.columns,
  };

  // Where to start: after the rows an earlier run of the same file and options recorded, unless --restart.
  const statePath = stateFileOf(file);
  let state: ImportState | null = null;
  if (!dryRun && !opts.restart) {
    const saved = readState(statePath);
    if (saved === 'unreadable') process.stderr.write(`outreach: ${statePath} cannot be read; starting the import over\n`);
    else if (saved !== null) {
      const same = saved.sha256 === lead.sha256 && JSON.stringify(saved.options) === JSON.stringify(options) && saved.rowsDone <= total;
      if (same) state = saved;
      else process.stderr.write(`outreach: ${statePath} records an import of another version of the file or with other options; starting over\n`);
    }
  }
  if (state) {
    process.stderr.write(
      `outreach: ${file}: resuming after row ${state.afterRow} (${state.rowsDone.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} rows imported by an earlier run; --restart starts over)\n`,
    );
  }

  // Every batch reads the columns the whole file's reading chose (a label the API cannot take, past 200 characters,
  // is left to its default mapping, which is the same).
  const sentColumns = Object.fromEntries(Object.entries(lead.columns).filter(([, v]) => v === null || v.length <= 200));
  const from = state?.rowsDone ?? 0;
  const plans: BatchPlan[] = state
    ? from < total
      ? planBatches(lead, from)
      : []
    : fitsOneRequest(lead)
      ? [{ start: 0, end: total, whole: true }]
      : planBatches(lead);
  checkBatches(lead, plans);
  const before = state?.batchesDone ?? 0;
  const batchCount = before + plans.length;
  const counts: Counts = state ? { ...state.counts } : { rows: 0, new: 0, duplicate: 0, suppressed: 0, invalid: 0 };
  let answer: ImportState['answer'] | null = state?.answer ?? null;
  const unmapped = new Set(answer?.unmapped ?? []);
  // Text output lists only the rows worth a line; --json answers every row.
  const keep = (r: ImportedRow) => opts.json === true || r.status !== 'new' || r.flags.length > 0 || (r.warnings?.length ?? 0) > 0;
  const rows: ImportedRow[] = [];
  const seen = new Map<string, { row: number; status: ImportedRow['status'] }>();
  const warned = { value: false };
  let rowsDone = from;
  let afterRow = state?.afterRow ?? table.headerRow;
  let sent = 0;
  const resumeHint = () =>
    !dryRun && rowsDone > 0
      ? `; rows up to ${afterRow} (${rowsDone.toLocaleString('en-US')} of ${total.toLocaleString('en-US')}) are imported: run the same command again to resume after row ${afterRow}`
      : '';

  progress(from, total);
  for (const [i, plan] of plans.entries()) {
    if (opts.maxBatches !== undefined && sent >= opts.maxBatches) break;
    const batch = batchOf(lead, plan);
    const n = before + i + 1;
    const range = plan.end > plan.start ? `, rows ${table.rows[plan.start].line}–${table.rows[plan.end - 1].line}` : '';
    const what = batchCount > 1 ? `importing ${file} (batch ${n} of ${batchCount}${range})` : `importing ${file}`;
    const res = await postBatch(
      api,
      {
        ...batch.body,
        ...(plan.whole ? {} : { columns: sentColumns }),
        sequenceId: opts.sequence ?? null,
        accountId: opts.account ?? null,
        dryRun,
      },
      what,
      resumeHint,
    );
    sent++;
    // The API numbers rows (and names earlier rows in reasons) by the line of the batch: map them to the file's.
    const toFile = (line: number) => batch.lines.get(line) ?? line;
    // The answer's rows are this run's own objects: renumbered in place, not copied (a batch's rows are dropped
    // once counted, but for those the summary lists).
    for (const r of res.rows) {
      r.row = toFile(r.row);
      r.reason = r.reason?.replace(/\bsame person as row (\d+)/, (_, line: string) => `same person as row ${toFile(Number(line))}`) ?? null;
    }
    const batchRows = (batch.local.length > 0 ? [...res.rows, ...batch.local] : res.rows).sort((a, b) => a.row - b.row);
    if (dryRun) for (const [k, r] of batchRows.entries()) batchRows[k] = acrossBatches(r, seen);
    countRows(batchRows, counts);
    for (const r of batchRows) if (keep(r)) rows.push(r);
    for (const h of res.unmapped ?? []) unmapped.add(h);
    answer = { sequence: res.sequence, account: res.account, headers: res.headers, columns: res.columns, unmapped: [...unmapped] };
    rowsDone = plan.end;
    if (plan.end > plan.start) afterRow = table.rows[plan.end - 1].line;
    // The last batch needs no record: the state file is removed once the import is complete.
    if (!dryRun && i < plans.length - 1) {
      writeState(
        statePath,
        {
          version: 1,
          sha256: lead.sha256,
          options,
          rowsDone,
          batchesDone: n,
          afterRow,
          counts,
          answer: { ...answer, unmapped: table.headers.filter((h) => unmapped.has(h)) },
          updatedAt: new Date().toISOString(),
        },
        warned,
      );
    }
    progress(rowsDone, total);
  }
  const complete = sent === plans.length;
  if (complete && !dryRun) removeState(statePath);

  const first = answer ?? { sequence: null, account: null, headers: table.headers, columns: lead.columns, unmapped: [] };
  return {
    file,
    dryRun,
    sequence: first.sequence,
    account: first.account,
    headers: first.headers,
    columns: first.columns,
    encoding: table.encoding,
    delimiter: table.delimiter,
    headerRow: table.headerRow,
    mapping: table.mapping,
    unmapped: table.headers.filter((h) => unmapped.has(h)),
    counts,
    rows,
    batches: { total: batchCount, sent, skipped: before },
    resumedAfterRow: state ? state.afterRow : null,
    rowsDone,
    lastRowDone: rowsDone > 0 ? afterRow : null,
    complete,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Output

/** How the file was read: encoding, delimiter, header line, the columns each field read, the columns left over. */
function readingLines(r: ImportLeadsResult): string[] {
  if (r.encoding === undefined) return [];
  const mapping: Record<string, string[]> = r.mapping ?? {};
  const fields = Object.entries(mapping).map(([field, headers]) => `${field} ← ${headers.length ? headers.join(' + ') : '(none)'}`);
  return [
    `  read as ${r.encoding}, ${DELIMITER_WORDS[r.delimiter ?? ','] ?? r.delimiter}-delimited, header row on line ${r.headerRow ?? 1}`,
    `  columns: ${fields.join(', ')}`,
    ...(r.unmapped?.length ? [`  other columns (kept by each new lead as custom fields, {{custom.<name>}}): ${r.unmapped.join(', ')}`] : []),
  ];
}

export function summaryLines(file: string, r: LeadsImportResult): string[] {
  const c = r.counts;
  const where = r.sequence
    ? ` into sequence "${r.sequence.name}"${r.account ? ` on account ${r.account.name}${r.account.mailbox ? ` (mailbox ${r.account.mailbox})` : ''}` : ''}`
    : r.account
      ? ` on account ${r.account.name}, in no sequence`
      : ', in no sequence';
  const verb = r.dryRun ? 'Dry run, nothing saved: would import' : r.complete ? 'Imported' : 'Stopped early: imported';
  return [
    `${verb} ${c.new} of ${c.rows} row(s) from ${file}${where}`,
    `  new: ${c.new}  duplicate: ${c.duplicate}  suppressed: ${c.suppressed}  invalid: ${c.invalid}`,
    ...(r.batches.total > 1 ? [`  sent in ${r.batches.total} batches (${r.batches.sent} by this run)`] : []),
    ...(r.resumedAfterRow !== null
      ? [`  resumed after row ${r.resumedAfterRow}: the rows before it were imported by an earlier run (counted above, not listed below)`]
      : []),
    ...readingLines(r),
    ...r.rows.filter((row) => row.status !== 'new').map((row) => `  row ${row.row}: ${row.status}, ${row.reason ?? ''}`),
    ...r.rows.filter((row) => row.flags.length > 0).map((row) => `  row ${row.row}: warning, ${row.flags.join(', ').replace(/_/g, ' ')}`),
    ...r.rows.flatMap((row) => (row.warnings ?? []).map((w) => `  row ${row.row}: warning, ${w}`)),
  ];
}

export function registerLeads(program: Command) {
  const leads = program.command('leads').description('cross-channel leads (person, company, e-mail, LinkedIn URL) through the API');
  // `outreach leads twins` (list, merge, distinct): two leads that are one person (leads-twins.ts).
  registerLeadTwins(leads);
  withApiOptions(
    leads
      .command('import')
      .description(
        `import a CSV of cross-channel leads (up to ${MAX_FILE_ROWS.toLocaleString('en-US')} rows, sent in batches of at most ${BATCH_LIMITS.rows.toLocaleString('en-US')} rows; a rerun resumes after the last batch done); each row is new, duplicate, suppressed or invalid, and only new rows are saved`,
      )
      .argument(
        '<file>',
        'CSV whose header names the columns (person, company, title, email, linkedinUrl, xUsername, or the headers of common exports); any encoding and delimiter',
      )
      .option('--sequence <id>', 'the sequence the new leads join, queued and due at once (without it they join none)')
      .option('--account <accountId>', 'the messaging account (onb_…) the new leads are put on; its mailbox, if any, sends their e-mail steps')
      .option('--dry-run', 'check every row and print the outcome, saving nothing (and recording no progress)')
      .option('--restart', 'start from the first row, ignoring the progress an interrupted import recorded beside the file')
      .option('--json', 'print the combined answer as JSON')
      .addOption(
        new Option('--max-batches <n>', 'stop after sending n batches, as an interruption would (to test resuming)')
          .argParser((v) => {
            const n = Number(v);
            if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('--max-batches is a non-negative integer');
            return n;
          })
          .hideHelp(),
      ),
  ).action(async (file: string, opts: LeadsImportOptions) => {
    const bar =
      process.stdout.isTTY && !opts.json
        ? new cliProgress.SingleBar({ format: 'import [{bar}] {value}/{total} rows' }, cliProgress.Presets.shades_classic)
        : null;
    let result: LeadsImportResult;
    try {
      result = await runLeadsImport(file, opts, (done, total) => (bar?.isActive ? bar.update(done) : bar?.start(total, done)));
    } finally {
      bar?.stop();
    }
    process.stdout.write(opts.json ? `${JSON.stringify(result, null, 2)}\n` : `${summaryLines(file, result).join('\n')}\n`);
    if (!result.complete) {
      const where =
        result.dryRun || result.lastRowDone === null
          ? ''
          : `; rows up to ${result.lastRowDone} are imported: run the same command again to resume after row ${result.lastRowDone}`;
      throw new CliError(`stopped after ${result.batches.sent} of ${result.batches.total - result.batches.skipped} batch(es) (--max-batches)${where}`);
    }
  });
}

import fs from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import cliProgress from 'cli-progress';
import { personKeys, type IdentityKey } from '../../domain/identity.js';
import type { ImportLeadsResult } from '../../modules/leads/index.js';
import { CliError } from '../admin-backend.js';
import { apiError, resolveApi, withApiOptions, type ApiOptions, type ApiTarget } from './api.js';
import {
  BATCH_LIMITS,
  DELIMITER_WORDS,
  MAX_FILE_ROWS,
  batchOf,
  checkBatches,
  fitsOneRequest,
  planBatches,
  readLeadFile,
  readState,
  removeState,
  stateFileOf,
  writeState,
  type BatchPlan,
  type ImportState,
  type ImportedRow,
  type LeadFile,
  type StateOptions,
} from './leads-import-file.js';

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

type Counts = ImportLeadsResult['counts'];

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

/** Reads the file's bytes; a CliError when it cannot be read. */
function readBytes(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
  }
}

/**
 * Where to start: the state an earlier run of the same file and options recorded (null: from the first row). A dry
 * run and `--restart` start over; a state that cannot be read or records another import is warned of and ignored.
 */
function resumableState(file: string, lead: LeadFile, options: StateOptions, opts: LeadsImportOptions): ImportState | null {
  const total = lead.table.rows.length;
  const statePath = stateFileOf(file);
  let state: ImportState | null = null;
  if (opts.dryRun !== true && !opts.restart) {
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
  return state;
}

/** The batches this run sends: the rows after a resumed state, else the whole file in one request or in batches. */
function plansOf(lead: LeadFile, state: ImportState | null): BatchPlan[] {
  const total = lead.table.rows.length;
  if (state) return state.rowsDone < total ? planBatches(lead, state.rowsDone) : [];
  return fitsOneRequest(lead) ? [{ start: 0, end: total, whole: true }] : planBatches(lead);
}

/**
 * A batch's answered rows numbered by the lines of the file, with the rows answered here, in the file's order; in a
 * dry run (`seen` given), answered across batches as one request would be.
 */
function batchRowsOf(
  res: ImportLeadsResult,
  batch: ReturnType<typeof batchOf>,
  seen: Map<string, { row: number; status: ImportedRow['status'] }> | null,
): ImportedRow[] {
  // The API numbers rows (and names earlier rows in reasons) by the line of the batch: map them to the file's.
  const toFile = (line: number) => batch.lines.get(line) ?? line;
  // The answer's rows are this run's own objects: renumbered in place, not copied (a batch's rows are dropped
  // once counted, but for those the summary lists).
  for (const r of res.rows) {
    r.row = toFile(r.row);
    r.reason = r.reason?.replace(/\bsame person as row (\d+)/, (_, line: string) => `same person as row ${toFile(Number(line))}`) ?? null;
  }
  const batchRows = (batch.local.length > 0 ? [...res.rows, ...batch.local] : res.rows).sort((a, b) => a.row - b.row);
  if (seen) for (const [k, r] of batchRows.entries()) batchRows[k] = acrossBatches(r, seen);
  return batchRows;
}

/** What a run has done so far: the rows and batches done, the counts, the rows listed and the answers' reading. */
interface RunProgress {
  rowsDone: number;
  afterRow: number;
  sent: number;
  counts: Counts;
  rows: ImportedRow[];
  unmapped: Set<string>;
  answer: ImportState['answer'] | null;
}

/** The run's answer for the whole file (the reading of the last answer, or of the file when none came). */
function resultOf(file: string, lead: LeadFile, dryRun: boolean, state: ImportState | null, plans: readonly BatchPlan[], run: RunProgress): LeadsImportResult {
  const { table } = lead;
  const before = state?.batchesDone ?? 0;
  const first = run.answer ?? { sequence: null, account: null, headers: table.headers, columns: lead.columns, unmapped: [] };
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
    unmapped: table.headers.filter((h) => run.unmapped.has(h)),
    counts: run.counts,
    rows: run.rows,
    batches: { total: before + plans.length, sent: run.sent, skipped: before },
    resumedAfterRow: state ? state.afterRow : null,
    rowsDone: run.rowsDone,
    lastRowDone: run.rowsDone > 0 ? run.afterRow : null,
    complete: run.sent === plans.length,
  };
}

/**
 * Imports a lead file in batches (see the top of this file). `progress` is told the rows done and the total before
 * the first batch and after each one. Throws a CliError on a refused batch (with where a rerun resumes).
 */
export async function runLeadsImport(
  file: string,
  opts: LeadsImportOptions,
  progress: (done: number, total: number) => void = () => undefined,
): Promise<LeadsImportResult> {
  const lead = readLeadFile(file, readBytes(file));
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
  const statePath = stateFileOf(file);
  const state = resumableState(file, lead, options, opts);

  // Every batch reads the columns the whole file's reading chose (a label the API cannot take, past 200 characters,
  // is left to its default mapping, which is the same).
  const sentColumns = Object.fromEntries(Object.entries(lead.columns).filter(([, v]) => v === null || v.length <= 200));
  const from = state?.rowsDone ?? 0;
  const plans = plansOf(lead, state);
  checkBatches(lead, plans);
  const before = state?.batchesDone ?? 0;
  const batchCount = before + plans.length;
  const run: RunProgress = {
    rowsDone: from,
    afterRow: state?.afterRow ?? table.headerRow,
    sent: 0,
    counts: state ? { ...state.counts } : { rows: 0, new: 0, duplicate: 0, suppressed: 0, invalid: 0 },
    rows: [],
    unmapped: new Set(state?.answer?.unmapped ?? []),
    answer: state?.answer ?? null,
  };
  // Text output lists only the rows worth a line; --json answers every row.
  const keep = (r: ImportedRow) => opts.json === true || r.status !== 'new' || r.flags.length > 0 || (r.warnings?.length ?? 0) > 0;
  const seen = dryRun ? new Map<string, { row: number; status: ImportedRow['status'] }>() : null;
  const warned = { value: false };
  const resumeHint = () =>
    !dryRun && run.rowsDone > 0
      ? `; rows up to ${run.afterRow} (${run.rowsDone.toLocaleString('en-US')} of ${total.toLocaleString('en-US')}) are imported: run the same command again to resume after row ${run.afterRow}`
      : '';

  progress(from, total);
  for (const [i, plan] of plans.entries()) {
    if (opts.maxBatches !== undefined && run.sent >= opts.maxBatches) break;
    const batch = batchOf(lead, plan);
    const n = before + i + 1;
    const range = plan.end > plan.start ? `, rows ${table.rows[plan.start].line}–${table.rows[plan.end - 1].line}` : '';
    const what = batchCount > 1 ? `importing ${file} (batch ${n} of ${batchCount}${range})` : `importing ${file}`;
    const body = {
      ...batch.body,
      ...(plan.whole ? {} : { columns: sentColumns }),
      sequenceId: opts.sequence ?? null,
      accountId: opts.account ?? null,
      dryRun,
    };
    const res = await postBatch(api, body, what, resumeHint);
    run.sent++;
    const batchRows = batchRowsOf(res, batch, seen);
    countRows(batchRows, run.counts);
    for (const r of batchRows) if (keep(r)) run.rows.push(r);
    for (const h of res.unmapped ?? []) run.unmapped.add(h);
    run.answer = { sequence: res.sequence, account: res.account, headers: res.headers, columns: res.columns, unmapped: [...run.unmapped] };
    run.rowsDone = plan.end;
    if (plan.end > plan.start) run.afterRow = table.rows[plan.end - 1].line;
    // The last batch needs no record: the state file is removed once the import is complete.
    if (!dryRun && i < plans.length - 1) {
      const { rowsDone, afterRow, counts } = run;
      const answer = { ...run.answer, unmapped: table.headers.filter((h) => run.unmapped.has(h)) };
      const updatedAt = new Date().toISOString();
      writeState(statePath, { version: 1, sha256: lead.sha256, options, rowsDone, batchesDone: n, afterRow, counts, answer, updatedAt }, warned);
    }
    progress(run.rowsDone, total);
  }
  const result = resultOf(file, lead, dryRun, state, plans, run);
  if (result.complete && !dryRun) removeState(statePath);
  return result;
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

/** The text summary of an import: the counts, the batches, how the file was read and a line per row worth one. */
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
/** Registers `outreach leads import FILE` on the `leads` command group. */
export function registerLeadsImport(leads: Command) {
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

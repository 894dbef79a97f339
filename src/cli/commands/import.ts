import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Option, InvalidArgumentError, type Command } from 'commander';
import { parse } from 'csv-parse/sync';
import cliProgress from 'cli-progress';
import { CliError } from '../admin-backend.js';
import { apiError, resolveApi, withApiOptions, type ApiOptions, type ApiTarget } from './api.js';

export const IMPORT_CHUNK_SIZE = 100;

const ID_COLUMNS = ['xuserid', 'x_user_id', 'user_id', 'userid', 'id'];
const HANDLE_COLUMNS = ['username', 'handle', 'screen_name'];
const NAME_COLUMNS = ['name', 'display_name'];
const REFERENCE_COLUMNS = ['reference', 'ref'];
const USER_ID = /^[1-9][0-9]{0,19}$/;
const HANDLE = /^@?[A-Za-z0-9_]{1,15}$/;

interface ImportOptions extends ApiOptions {
  play: string;
  maxChunks?: number;
}

interface Row {
  line: number;
  xUserId?: string;
  handle?: string;
  name?: string;
  reference?: string;
}

export interface ImportSummary {
  file: string;
  playId: string;
  rows: number;
  chunks: number;
  chunksSent: number;
  replayedChunks: number;
  /** Leads of the replayed chunks (sent by an earlier run). */
  replayedLeads: number;
  imported: number;
  existing: number;
  duplicates: number;
  unresolved: { line: number; handle: string; reason: string }[];
  invalid: { line: number; reason: string }[];
  complete: boolean;
}

/** Reads the CSV rows: a header line naming a user-id column or a handle column, and optionally name and reference. */
export function readCsvRows(text: string): { rows: Row[]; invalid: { line: number; reason: string }[] } {
  let records: Record<string, string>[];
  try {
    records = parse(text, { columns: (h: string[]) => h.map((c) => c.trim().toLowerCase()), skip_empty_lines: true, trim: true, bom: true });
  } catch (e) {
    throw new CliError(`the CSV cannot be read: ${(e as Error).message}`);
  }
  const header = records.length ? Object.keys(records[0]) : [];
  const pick = (names: string[]) => names.find((n) => header.includes(n));
  const idCol = pick(ID_COLUMNS);
  const handleCol = pick(HANDLE_COLUMNS);
  if (records.length && !idCol && !handleCol) {
    throw new CliError(
      `the CSV needs a user id column (xUserId, user_id or id) or a handle column (username or handle); its columns are: ${header.join(', ')}`,
    );
  }
  const nameCol = pick(NAME_COLUMNS);
  const refCol = pick(REFERENCE_COLUMNS);
  const rows: Row[] = [];
  const invalid: { line: number; reason: string }[] = [];
  records.forEach((r, i) => {
    const line = i + 2; // the header is line 1
    const id = idCol ? r[idCol] : '';
    const handle = handleCol ? r[handleCol] : '';
    const name = nameCol && r[nameCol] ? r[nameCol].slice(0, 200) : undefined;
    const reference = refCol && r[refCol] ? r[refCol].slice(0, 200) : undefined;
    if (id) {
      if (!USER_ID.test(id)) return invalid.push({ line, reason: `user id ${JSON.stringify(id)} is not a numeric id` });
      rows.push({ line, xUserId: id, name, reference });
    } else if (handle) {
      if (!HANDLE.test(handle)) return invalid.push({ line, reason: `handle ${JSON.stringify(handle)} is not a valid handle` });
      rows.push({ line, handle: handle.replace(/^@/, ''), name, reference });
    } else {
      invalid.push({ line, reason: 'neither a user id nor a handle' });
    }
  });
  return { rows, invalid };
}

/**
 * The requestId of one chunk: the same file, Play revision and chunk index always give the same id, so a rerun
 * replays the chunks that already went (the server answers `replayed: true`) and continues with the rest.
 * The revision is part of it because it is part of the stored payload: after an edit the chunks import again
 * (as existing candidates) instead of answering 409 request_id_reused.
 */
export function chunkRequestId(fileHash: string, revision: number, index: number): string {
  return `csv-${fileHash.slice(0, 24)}-r${revision}-c${index}`;
}

async function resolveHandle(api: ApiTarget, handle: string): Promise<{ xUserId?: string; reason?: string }> {
  const { data, error, response } = await api.client.POST('/api/v1/x/users/resolve', { body: { username: handle } });
  if (data && data.status === 'resolved') return { xUserId: data.user.xUserId };
  if (response.status === 503 || response.status === 404) return { reason: (error as { error?: string } | undefined)?.error ?? `HTTP ${response.status}` };
  throw apiError(`resolving @${handle}`, response.status, error);
}

/** 409 codes that a later run can get past: the run re-reads the Play (a new revision), or another writer has finished. */
const RETRYABLE_CONFLICTS = new Set(['stale_play_revision', 'duplicate_candidate']);

/** What to do about a refusal no rerun changes, by its code. */
const PERMANENT_ADVICE: Record<string, string> = {
  play_archived: 'import into a Play that is not archived',
  play_autopilot: 'an autopilot Play finds its own candidates; import into a manual Play instead',
  request_id_reused:
    'a chunk of this file was sent before with other content (a handle resolved differently); change the file (any change gives its chunks new ids) and import it again',
};

/**
 * A refused chunk. Network errors, 5xx, 429 and the retryable conflicts are worth running the same command again
 * (the sent chunks replay); any other refusal is permanent, and the message says so and what to do instead.
 */
export function chunkRefusal(what: string, status: number, error: unknown) {
  const code = error && typeof error === 'object' ? (error as { error?: unknown }).error : undefined;
  const retryable = status >= 500 || status === 429 || status === 408 || (status === 409 && typeof code === 'string' && RETRYABLE_CONFLICTS.has(code));
  if (retryable) return apiError(`${what}; run the same command again to continue)`, status, error);
  const refusal = apiError(`${what})`, status, error);
  const advice = (typeof code === 'string' && PERMANENT_ADVICE[code]) || 'fix the cause above first';
  return new CliError(`${refusal.message}. This refusal is permanent: running the same command again gets the same answer; ${advice}.`, refusal.body);
}

export async function runImport(file: string, opts: ImportOptions, progress: (done: number, total: number) => void = () => undefined): Promise<ImportSummary> {
  let text: Buffer;
  try {
    text = fs.readFileSync(file);
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const fileHash = createHash('sha256').update(text).digest('hex');
  const { rows, invalid } = readCsvRows(text.toString('utf8'));
  const api = resolveApi(opts);

  const page = await api.client.GET('/api/v1/plays/{id}/candidates', { params: { path: { id: opts.play }, query: { limit: 1 } } });
  if (!page.data) throw apiError(`reading Play ${opts.play}`, page.response.status, page.error);
  const revision = page.data.play.revision;

  const chunks: Row[][] = [];
  for (let i = 0; i < rows.length; i += IMPORT_CHUNK_SIZE) chunks.push(rows.slice(i, i + IMPORT_CHUNK_SIZE));
  const summary: ImportSummary = {
    file,
    playId: opts.play,
    rows: rows.length,
    chunks: chunks.length,
    chunksSent: 0,
    replayedChunks: 0,
    replayedLeads: 0,
    imported: 0,
    existing: 0,
    duplicates: 0,
    unresolved: [],
    invalid,
    complete: false,
  };
  // A user id already sent in an earlier chunk is left out of later ones (the API refuses repeats within one import).
  const sent = new Set<string>();
  progress(0, chunks.length);
  for (const [index, chunk] of chunks.entries()) {
    if (opts.maxChunks !== undefined && index >= opts.maxChunks) return summary;
    const leads: { xUserId: string; name?: string; reference?: string }[] = [];
    for (const row of chunk) {
      let xUserId = row.xUserId;
      if (!xUserId) {
        const resolved = await resolveHandle(api, row.handle!);
        if (!resolved.xUserId) {
          summary.unresolved.push({ line: row.line, handle: row.handle!, reason: resolved.reason! });
          continue;
        }
        xUserId = resolved.xUserId;
      }
      if (sent.has(xUserId)) {
        summary.duplicates++;
        continue;
      }
      sent.add(xUserId);
      leads.push({ xUserId, ...(row.name ? { name: row.name } : {}), ...(row.reference ? { reference: row.reference } : {}) });
    }
    if (leads.length) {
      const requestId = chunkRequestId(fileHash, revision, index);
      const { data, error, response } = await api.client.POST('/api/v1/plays/{id}/import', {
        params: { path: { id: opts.play } },
        body: { requestId, expectedRevision: revision, leads },
      });
      if (!data) throw chunkRefusal(`importing chunk ${index + 1} of ${chunks.length} (${summary.chunksSent} sent`, response.status, error);
      summary.chunksSent++;
      if (data.replayed) {
        // Sent by an earlier run: its stored answer is not counted again as imported.
        summary.replayedChunks++;
        summary.replayedLeads += data.results.length;
      } else
        for (const r of data.results)
          if (r.result === 'imported') summary.imported++;
          else summary.existing++;
    }
    progress(index + 1, chunks.length);
  }
  summary.complete = true;
  return summary;
}

export function registerImport(program: Command) {
  withApiOptions(
    program
      .command('import')
      .description('import a CSV of X users as review candidates of a Play, in chunks of 100 that a rerun resumes (through the API)')
      .argument('<file>', 'CSV with a header: xUserId / user_id / id, or username / handle; optionally name and reference')
      .requiredOption('--play <id>', 'the manual Play to import into')
      .option('--json', 'print the summary as JSON')
      .addOption(
        new Option('--max-chunks <n>', 'stop after sending n chunks (to test resuming)')
          .argParser((v) => {
            const n = Number(v);
            if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('--max-chunks is a non-negative integer');
            return n;
          })
          .hideHelp(),
      ),
  ).action(async (file: string, opts: ImportOptions) => {
    const bar =
      process.stdout.isTTY && !opts.json
        ? new cliProgress.SingleBar({ format: 'import [{bar}] {value}/{total} chunks' }, cliProgress.Presets.shades_classic)
        : null;
    let summary: ImportSummary;
    try {
      summary = await runImport(file, opts, (done, total) => (done === 0 ? bar?.start(total, 0) : bar?.update(done)));
    } finally {
      bar?.stop();
    }
    if (opts.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    else {
      const lines = [
        `${summary.complete ? 'Imported' : 'Stopped early:'} ${summary.chunksSent} of ${summary.chunks} chunk(s) into Play ${summary.playId} from ${summary.file}`,
        `  imported: ${summary.imported}  existing: ${summary.existing}  replayed chunks: ${summary.replayedChunks} (${summary.replayedLeads} leads sent by an earlier run)  repeated ids skipped: ${summary.duplicates}`,
        ...summary.unresolved.map((u) => `  line ${u.line}: @${u.handle} not resolved (${u.reason})`),
        ...summary.invalid.map((u) => `  line ${u.line}: skipped, ${u.reason}`),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    if (!summary.complete) throw new CliError(`stopped after ${summary.chunksSent} of ${summary.chunks} chunk(s); run the same command again to continue`);
  });
}

import fs from 'node:fs';
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { IMPORT_LIMITS, IMPORT_LIMITS_TEXT, type ImportLeadsResult } from '../../modules/leads/index.js';
import { CliError } from '../admin-backend.js';
import { apiError, resolveApi, withApiOptions, type ApiOptions } from './api.js';

interface LeadsImportOptions extends ApiOptions {
  sequence?: string;
  account?: string;
  dryRun?: boolean;
}

/**
 * Sends the file to POST /leads/import (the leads service decides every row, as the console's import does). The
 * whole file goes in one request: the import's bound keeps it small enough, and one request is one transaction, so
 * an interrupted import saved nothing and is simply run again.
 */
export async function runLeadsImport(file: string, opts: LeadsImportOptions): Promise<ImportLeadsResult> {
  let bytes: Buffer;
  try {
    const size = fs.statSync(file).size;
    if (size > IMPORT_LIMITS.bytes) {
      throw new CliError(`${file} is ${size.toLocaleString('en-US')} bytes; an import holds ${IMPORT_LIMITS_TEXT}. Split the file and import each part.`);
    }
    // The bytes as they are: the server tells their encoding (UTF-8, UTF-16, Windows-1252…) and delimiter.
    bytes = fs.readFileSync(file);
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const api = resolveApi(opts);
  // The typed client is generated from the spec's operations; this extension is called with the same headers.
  const res = await fetch(`${api.baseUrl}/api/v1/leads/import`, {
    method: 'POST',
    headers: { ...api.headers, 'content-type': 'application/json' },
    body: JSON.stringify({
      csvBase64: bytes.toString('base64'),
      sequenceId: opts.sequence ?? null,
      accountId: opts.account ?? null,
      dryRun: opts.dryRun === true,
    }),
  });
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) throw apiError(`importing ${file}`, res.status, body);
  return body as ImportLeadsResult;
}

const DELIMITER_WORDS: Record<string, string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab', '|': 'pipe' };

/** How the server read the file: encoding, delimiter, header line, the columns each field read, the columns left over. */
function readingLines(r: ImportLeadsResult): string[] {
  if (r.encoding === undefined) return [];
  const mapping: Record<string, string[]> = r.mapping ?? {};
  const fields = Object.entries(mapping).map(([field, headers]) => `${field} ← ${headers.length ? headers.join(' + ') : '(none)'}`);
  return [
    `  read as ${r.encoding}, ${DELIMITER_WORDS[r.delimiter ?? ','] ?? r.delimiter}-delimited, header row on line ${r.headerRow ?? 1}`,
    `  columns: ${fields.join(', ')}`,
    ...(r.unmapped?.length ? [`  other columns (kept per row as custom fields, not saved): ${r.unmapped.join(', ')}`] : []),
  ];
}

export function summaryLines(file: string, r: ImportLeadsResult): string[] {
  const c = r.counts;
  const where = r.sequence
    ? ` into sequence "${r.sequence.name}"${r.account ? ` on account ${r.account.name}${r.account.mailbox ? ` (mailbox ${r.account.mailbox})` : ''}` : ''}`
    : r.account
      ? ` on account ${r.account.name}, in no sequence`
      : ', in no sequence';
  return [
    `${r.dryRun ? 'Dry run, nothing saved: would import' : 'Imported'} ${c.new} of ${c.rows} row(s) from ${file}${where}`,
    `  new: ${c.new}  duplicate: ${c.duplicate}  suppressed: ${c.suppressed}  invalid: ${c.invalid}`,
    ...readingLines(r),
    ...r.rows.filter((row) => row.status !== 'new').map((row) => `  row ${row.row}: ${row.status}, ${row.reason ?? ''}`),
    ...r.rows.filter((row) => row.flags.length > 0).map((row) => `  row ${row.row}: warning, ${row.flags.join(', ').replace(/_/g, ' ')}`),
    ...r.rows.flatMap((row) => (row.warnings ?? []).map((w) => `  row ${row.row}: warning, ${w}`)),
  ];
}

export function registerLeads(program: Command) {
  const leads = program.command('leads').description('cross-channel leads (person, company, e-mail, LinkedIn URL) through the API');
  withApiOptions(
    leads
      .command('import')
      .description(
        `import a CSV of cross-channel leads in one request (${IMPORT_LIMITS_TEXT}); each row is new, duplicate, suppressed or invalid, and only new rows are saved`,
      )
      .argument(
        '<file>',
        'CSV whose header names the columns (person, company, title, email, linkedinUrl, xUsername, or the headers of common exports); any encoding and delimiter',
      )
      .option('--sequence <id>', 'the sequence the new leads join, queued and due at once (without it they join none)')
      .option('--account <accountId>', 'the messaging account (onb_…) the new leads are put on; its mailbox, if any, sends their e-mail steps')
      .option('--dry-run', 'check every row and print the outcome, saving nothing')
      .option('--json', 'print the answer as JSON'),
  ).action(async (file: string, opts: LeadsImportOptions) => {
    const bar =
      process.stdout.isTTY && !opts.json
        ? new cliProgress.SingleBar({ format: 'import [{bar}] {value}/{total} file' }, cliProgress.Presets.shades_classic)
        : null;
    bar?.start(1, 0);
    let result: ImportLeadsResult;
    try {
      result = await runLeadsImport(file, opts);
      bar?.update(1);
    } finally {
      bar?.stop();
    }
    process.stdout.write(opts.json ? `${JSON.stringify(result, null, 2)}\n` : `${summaryLines(file, result).join('\n')}\n`);
  });
}

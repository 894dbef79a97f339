import { isBlankRecord, tokenizeCsv } from './tokenize.js';

/** The delimiters a lead file may use, in the order that breaks a tie (comma first). */
export const DELIMITERS = [',', ';', '\t', '|'] as const;
export type Delimiter = (typeof DELIMITERS)[number];

/** How a delimiter is named in messages and answers. */
export const DELIMITER_NAMES: Record<Delimiter, string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab', '|': 'pipe' };

const SAMPLE_CHARS = 64 * 1024;
const SAMPLE_RECORDS = 30;

/**
 * Tells the delimiter from the file's first records (a 64 KiB sample, up to 30 records, quotes respected): the
 * delimiter under which the most records share one column count greater than 1 (Excel in a comma-decimal locale
 * writes `;`, and its `1,5` values then split unevenly on `,`). Records of one cell (a preamble line, a blank line)
 * count for no delimiter. A tie, or a file of one column, is a comma.
 */
export function sniffDelimiter(text: string): Delimiter {
  const sample = text.length > SAMPLE_CHARS ? text.slice(0, SAMPLE_CHARS) : text;
  let best: Delimiter = ',';
  let bestScore = 0;
  for (const d of DELIMITERS) {
    const records = tokenizeCsv(sample, d, SAMPLE_RECORDS + 1);
    // A sample cut mid-file may cut its last record.
    if (sample.length < text.length) records.pop();
    const counts = new Map<number, number>();
    for (const r of records) {
      if (r.error !== null || isBlankRecord(r) || r.cells.length < 2) continue;
      counts.set(r.cells.length, (counts.get(r.cells.length) ?? 0) + 1);
    }
    const score = Math.max(0, ...counts.values());
    if (score > bestScore) {
      best = d;
      bestScore = score;
    }
  }
  return best;
}

// Splitting CSV text into records, leniently, the way spreadsheets read it: RFC 4180 quoting (a field that starts with
// `"` runs to the matching `"`; `""` inside it is one quote; it may hold delimiters and line breaks), and a quote
// anywhere else is text (`Robert "Bob" Smith`, `12" monitor`). A record that cannot be read is kept as an error of
// its own, with its line, and reading goes on at the next line; one bad row never refuses the file.

/** One record of the file: its cells (trimmed) and the line it starts on (from 1), or why it cannot be read. */
export interface CsvRecord {
  /** The line of the file the record starts on, from 1 (a quoted field may carry it over several lines). */
  line: number;
  cells: string[];
  /** Why the record cannot be read (its cells are then empty), or null. */
  error: string | null;
}

/** C0 control characters a cell may not hold: all but tab (allowed in a tab-delimited file only), CR and LF. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f]/;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_OR_TAB = /[\x00-\x09\x0b\x0c\x0e-\x1f]/;

function controlProblem(cells: string[], delimiter: string): string | null {
  const pattern = delimiter === '\t' ? CONTROL : CONTROL_OR_TAB;
  for (const cell of cells) {
    const m = pattern.exec(cell);
    if (m) {
      const code = m[0].charCodeAt(0);
      const name = code === 0 ? 'a NUL character (U+0000)' : `the control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
      return `the row holds ${name}, which no name, address or URL has; the file may be damaged or not a text file`;
    }
  }
  return null;
}

/**
 * Splits CSV text into records with `delimiter` (one character). Line breaks are CRLF, LF or CR. Cells are trimmed
 * (a quoted cell keeps its inner spaces). A record whose quoted field is never closed becomes
 * `{ line, cells: [], error }` and reading resumes on the line after its first; a record holding a C0 control
 * character (NUL…; tab too unless the delimiter is tab) keeps its cells and gets an `error`. Stops after
 * `maxRecords` records when given (for sniffing). Never throws.
 */
export function tokenizeCsv(text: string, delimiter: string, maxRecords = Infinity): CsvRecord[] {
  const records: CsvRecord[] = [];
  forEachCsvRecord(text, delimiter, (r) => records.push(r), maxRecords);
  return records;
}

/**
 * `tokenizeCsv` one record at a time: `onRecord` gets each record as it is read and none is kept here (a reader
 * that turns records into rows holds one of them at a time, not every record of the file besides its rows).
 */
export function forEachCsvRecord(text: string, delimiter: string, onRecord: (record: CsvRecord) => void, maxRecords = Infinity): void {
  let count = 0;
  const n = text.length;
  let i = 0;
  let line = 1;
  const isBlank = (c: string | undefined) => c === ' ' || (c === '\t' && delimiter !== '\t');
  while (i < n && count < maxRecords) {
    const startLine = line;
    const startIndex = i;
    const cells: string[] = [];
    let unclosed = false;
    for (;;) {
      // One field, starting at i.
      let j = i;
      while (isBlank(text[j])) j++;
      if (text[j] === '"') {
        let value = '';
        let k = j + 1;
        let closed = false;
        while (k < n) {
          const c = text[k];
          if (c === '"') {
            if (text[k + 1] === '"') {
              value += '"';
              k += 2;
              continue;
            }
            let after = k + 1;
            while (isBlank(text[after])) after++;
            const next = text[after];
            if (after >= n || next === delimiter || next === '\n' || next === '\r') {
              k = after;
              closed = true;
              break;
            }
            value += '"'; // a quote inside a quoted field that does not end it: text
            k++;
            continue;
          }
          if (c === '\n' || (c === '\r' && text[k + 1] !== '\n')) line++;
          value += c;
          k++;
        }
        if (!closed) {
          unclosed = true;
          break;
        }
        cells.push(value);
        i = k;
      } else {
        let k = i;
        while (k < n && text[k] !== delimiter && text[k] !== '\n' && text[k] !== '\r') k++;
        cells.push(text.slice(i, k).trim());
        i = k;
      }
      if (i < n && text[i] === delimiter) {
        i++;
        continue;
      }
      // End of the record: its line break.
      if (text[i] === '\r' && text[i + 1] === '\n') i += 2;
      else if (i < n) i++;
      line++;
      break;
    }
    if (unclosed) {
      count++;
      onRecord({ line: startLine, cells: [], error: `a quoted field that starts on line ${startLine} is never closed (a " is missing)` });
      // Read on from the line after the record's first line.
      let k = startIndex;
      while (k < n && text[k] !== '\n' && text[k] !== '\r') k++;
      i = text[k] === '\r' && text[k + 1] === '\n' ? k + 2 : k + 1;
      line = startLine + 1;
      continue;
    }
    count++;
    onRecord({ line: startLine, cells, error: controlProblem(cells, delimiter) });
  }
}

/** A record with no content: an empty line, or only delimiters and blanks. */
export const isBlankRecord = (r: CsvRecord) => r.error === null && r.cells.every((c) => c === '');

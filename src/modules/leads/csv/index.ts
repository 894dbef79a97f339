// Reading lead files (issue 39 §2): one reader for the API, the console and the CLI. docs/sequences-and-leads.md
// "Reading a CSV file" says what it recognizes.
export { decodeCsvBytes, MIN_CONFIDENCE, LATIN1_MIN_CONFIDENCE, type DecodedText } from './decode.js';
export { sniffDelimiter, DELIMITERS, DELIMITER_NAMES, type Delimiter } from './sniff.js';
export { tokenizeCsv, type CsvRecord } from './tokenize.js';
export { defaultSources, headerKey, isCompanyLinkedInHeader, knownHeaderCount, type FieldSources } from './headers.js';
export { readCsv, leadRowsOf, readLeadCsv, xHandleOf, HEADER_SEARCH_ROWS, type CsvRow, type CsvTable, type LeadRow, type ReadCsvOptions } from './read.js';

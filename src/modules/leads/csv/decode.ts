import chardet from 'chardet';
import iconv from 'iconv-lite';
import { badRequest } from '../../../lib/errors.js';

// Which characters a lead file's bytes stand for. Spreadsheet programs save CSV in the machine's legacy code page
// (Excel on Windows: Windows-1252 in Western Europe), in UTF-16 ("Unicode text") or in UTF-8 with or without a BOM;
// none of them says which. The decision, in this order: a byte order mark; valid UTF-8; UTF-16 without a BOM (every
// other byte zero); else the detector's (chardet) guess when it is confident, decoded by iconv-lite (Node's
// TextDecoder('windows-1252') maps 0x80–0x9F to C1 controls, not to € “ ” – …).

/** What `decodeCsvBytes` answers: the text, without its BOM, and the encoding it was read in (lower case). */
export interface DecodedText {
  text: string;
  /** `utf-8`, `utf-16le`, `utf-16be`, or the detected legacy encoding (`windows-1252`, `iso-8859-2`, `shift_jis`…). */
  encoding: string;
}

/**
 * The detector's least confidence (0–100) for a guess to be used. Below it the file is refused: a wrong guess would
 * save wrong letters in every name. A Western European single-byte guess (ISO-8859-1, ISO-8859-15, Windows-1252) is
 * taken from `LATIN1_MIN_CONFIDENCE` up: these files are short and mostly ASCII, so the detector is rarely sure
 * (Excel's Windows-1252 "Jürgen Müller,Bäckerei Müller" scores 46), and these code pages agree on every letter
 * such a file holds (Windows-1252 is decoded for all three, as browsers do).
 */
export const MIN_CONFIDENCE = 50;
export const LATIN1_MIN_CONFIDENCE = 20;
const LATIN1_FAMILY = new Set(['iso-8859-1', 'iso-8859-15', 'windows-1252']);
/** How many bytes from the start of the file the detector reads. */
const DETECT_SAMPLE_BYTES = 64 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** A UTF-8 multi-byte sequence, in bytes read as Latin-1. */
const UTF8_SEQUENCE = /[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}/;

/** UTF-16 without a BOM: in the first 4 KiB, most bytes at one parity are zero and almost none at the other. */
function utf16WithoutBom(bytes: Buffer): 'utf-16le' | 'utf-16be' | null {
  const n = Math.min(bytes.length, 4096) & ~1;
  if (n < 4) return null;
  let evenZero = 0;
  let oddZero = 0;
  for (let i = 0; i < n; i += 2) {
    if (bytes[i] === 0) evenZero++;
    if (bytes[i + 1] === 0) oddZero++;
  }
  const pairs = n / 2;
  if (oddZero / pairs > 0.4 && evenZero / pairs < 0.05) return 'utf-16le';
  if (evenZero / pairs > 0.4 && oddZero / pairs < 0.05) return 'utf-16be';
  return null;
}

const refuse = (guess: string) =>
  badRequest('invalid_csv', `csv: the file's encoding could not be told (it looks like ${guess}); save it as UTF-8`, { field: 'csv', encoding: guess });

/**
 * Decodes a lead file's bytes to text. A BOM decides (UTF-8, UTF-16LE, UTF-16BE); bytes that are valid UTF-8 are
 * UTF-8; UTF-16 without a BOM is recognized by its zero bytes; otherwise chardet guesses and iconv-lite decodes.
 * Throws a 400 `invalid_csv` (field `csv`, message naming the guess) when the guess is not confident enough
 * (`MIN_CONFIDENCE`, `LATIN1_MIN_CONFIDENCE`), names an encoding iconv-lite lacks, or decodes to U+FFFD (bytes the
 * encoding does not define), or when bytes that are not UTF-8 sit beside UTF-8 sequences (a file of two encodings).
 */
export function decodeCsvBytes(bytes: Buffer): DecodedText {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return { text: decodeUtf8AfterBom(bytes.subarray(3)), encoding: 'utf-8' };
  }
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return { text: iconv.decode(bytes.subarray(2), 'utf-16le'), encoding: 'utf-16le' };
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return { text: iconv.decode(bytes.subarray(2), 'utf-16be'), encoding: 'utf-16be' };
  try {
    return { text: utf8.decode(bytes), encoding: 'utf-8' };
  } catch {
    // not UTF-8: go on
  }
  const utf16 = utf16WithoutBom(bytes);
  if (utf16) return { text: iconv.decode(bytes, utf16), encoding: utf16 };

  // The detector reads a sample (its docs suggest one for large files): on a whole file of many MB it allocates
  // several times the file's size. The whole file is still checked below (two encodings, bytes the guess lacks).
  const best = chardet.analyse(bytes.length > DETECT_SAMPLE_BYTES ? bytes.subarray(0, DETECT_SAMPLE_BYTES) : bytes)[0];
  if (!best) throw refuse('an unknown encoding');
  const name = best.name.toLowerCase();
  if (name === 'utf-8') throw refuse('UTF-8 with bytes that are not UTF-8');
  // A single-byte guess for bytes that hold UTF-8 sequences (`é` as C3 A9) is a file of two encodings (rows pasted
  // from another file): any one decoding garbles some names.
  if (/^(iso-8859-|windows-125)/.test(name) && UTF8_SEQUENCE.test(bytes.toString('latin1'))) throw refuse('UTF-8 mixed with another encoding');
  const latin1 = LATIN1_FAMILY.has(name);
  const encoding = latin1 ? 'windows-1252' : name;
  if (best.confidence < (latin1 ? LATIN1_MIN_CONFIDENCE : MIN_CONFIDENCE) || !iconv.encodingExists(encoding)) throw refuse(best.name);
  const text = iconv.decode(bytes, encoding);
  if (text.includes('\ufffd')) throw refuse(best.name);
  return { text, encoding };
}

/** UTF-8 after a UTF-8 BOM: the BOM says UTF-8, so a stray invalid byte is refused rather than guessed around. */
function decodeUtf8AfterBom(bytes: Buffer): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw refuse('UTF-8, by its byte order mark, but it holds bytes that are not UTF-8');
  }
}

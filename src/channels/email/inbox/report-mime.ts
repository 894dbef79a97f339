// The MIME side of reading delivery reports (reports.ts): a linear walk of the bounded source into its parts, and the
// small text helpers the report readers share. Pure: no database, no network.

/** Of a message's source, at most this many bytes are read; of its text, at most PHRASE_SCAN_CHARS are searched. */
export const REPORT_SCAN_BYTES = 262_144;
export const PHRASE_SCAN_CHARS = 65_536;
const MAX_ID_LENGTH = 500;
const MAX_PARTS = 200;
const MAX_DEPTH = 6;

export const lower = (s: string | null | undefined) => (s ?? '').toLowerCase();

export function firstOf(text: string, phrases: readonly string[]): string | null {
  for (const p of phrases) if (text.includes(p)) return p;
  return null;
}

/** `<abc@host>`, `abc@host`, `&lt;abc@host&gt;` → `abc@host` (lower case); null when it is not an id. */
export function idFrom(value: string): string | null {
  const v = value.replace(/&lt;/gi, '<').replace(/&gt;/gi, '>').trim();
  const open = v.indexOf('<');
  let id: string;
  if (open >= 0) {
    const close = v.indexOf('>', open + 1);
    if (close < 0) return null;
    id = v.slice(open + 1, close);
  } else id = v.split(/[\s;,]/, 1)[0] ?? '';
  id = id.trim().toLowerCase();
  if (!id || id.length > MAX_ID_LENGTH || !id.includes('@') || /[\s<>]/.test(id)) return null;
  return id;
}

/**
 * One header block: unfolded, lower-case name → first value. Lenient as mail systems are: a line with no colon
 * continues the field before it (a `boundary=` written on a line of its own).
 */
export function headerFields(block: string): Map<string, string> {
  const out = new Map<string, string>();
  let last: string | null = null;
  for (const line of block.split('\n')) {
    const i = line.indexOf(':');
    const continued = line.startsWith(' ') || line.startsWith('\t') || i <= 0 || i > 100 || /\s/.test(line.slice(0, i).trim());
    if (continued) {
      if (last !== null && out.get(last) !== undefined && line.trim()) out.set(last, `${out.get(last)} ${line.trim()}`.slice(0, 4096));
      continue;
    }
    const name = line.slice(0, i).trim().toLowerCase();
    if (out.has(name)) {
      last = null;
      continue;
    }
    out.set(name, line.slice(i + 1).trim());
    last = name;
  }
  return out;
}

/** Splits at the first blank line: the header block and what follows (text already has `\n` line ends). */
export function splitHead(text: string): [string, string] {
  if (text.startsWith('\n')) return ['', text.slice(1)];
  const i = text.indexOf('\n\n');
  return i < 0 ? [text, ''] : [text.slice(0, i), text.slice(i + 2)];
}

export function paramOf(value: string, name: string): string | null {
  const lowerValue = value.toLowerCase();
  let from = 0;
  for (;;) {
    const i = lowerValue.indexOf(name, from);
    if (i < 0) return null;
    from = i + name.length;
    const before = lowerValue[i - 1];
    if (i > 0 && before !== ';' && before !== ' ' && before !== '\t') continue;
    let j = from;
    while (value[j] === ' ' || value[j] === '\t') j++;
    if (value[j] !== '=') continue;
    j++;
    while (value[j] === ' ' || value[j] === '\t') j++;
    if (value[j] === '"') {
      const end = value.indexOf('"', j + 1);
      return end < 0 ? null : value.slice(j + 1, end);
    }
    const m = /^[^\s;]{1,200}/.exec(value.slice(j, j + 201));
    return m ? m[0] : null;
  }
}

export function decodeBody(body: string, encoding: string | undefined): string {
  const enc = lower(encoding).trim();
  if (enc === 'base64')
    return Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64')
      .toString('latin1')
      .replace(/\r\n?/g, '\n');
  if (enc === 'quoted-printable') return body.replace(/=\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return body;
}

// ---------------------------------------------------------------------------------------------------------------
// MIME: the parts of the bounded source, whatever their disposition (mailparser inlines an `inline` message/rfc822
// or delivery-status into the text and drops the returned headers; this walk keeps them).

export interface MimeLeaf {
  /** Lower case, e.g. 'message/delivery-status'. */
  type: string;
  /** The part's own header fields. */
  headers: Map<string, string>;
  /** The decoded body as latin1 text with `\n` line ends (for a message/rfc822 part, the whole returned message). */
  body: string;
}

export interface MimeWalk {
  headers: Map<string, string>;
  /** Every part's type, multiparts included, in order (the IMAP body structure's view). */
  types: string[];
  leaves: MimeLeaf[];
  /** The bounded source after the top header block, as latin1 with `\n` line ends. */
  rest: string;
}

/** The parts of a message, from at most REPORT_SCAN_BYTES of its source, in linear time per nesting level. */
export function walkMime(source: Buffer | string): MimeWalk {
  const raw = typeof source === 'string' ? source.slice(0, REPORT_SCAN_BYTES) : source.subarray(0, REPORT_SCAN_BYTES).toString('latin1');
  const text = raw.replace(/\r\n?/g, '\n');
  const [head, body] = splitHead(text);
  const headers = headerFields(head);
  const out: MimeWalk = { headers, types: [], leaves: [], rest: body };
  walkPart(headers, body, 0, out);
  return out;
}

function walkPart(headers: Map<string, string>, body: string, depth: number, out: MimeWalk): void {
  if (out.types.length >= MAX_PARTS) return;
  const contentType = headers.get('content-type') ?? 'text/plain';
  const type = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase() || 'text/plain';
  out.types.push(type);
  const boundary = type.startsWith('multipart/') ? paramOf(contentType, 'boundary') : null;
  if (!boundary || depth >= MAX_DEPTH) {
    out.leaves.push({ type, headers, body: type.startsWith('multipart/') ? body : decodeBody(body, headers.get('content-transfer-encoding')) });
    return;
  }
  const delimiter = `\n--${boundary}`;
  const all = `\n${body}`;
  let at = all.indexOf(delimiter);
  while (at >= 0 && out.types.length < MAX_PARTS) {
    const start = at + delimiter.length;
    if (all.startsWith('--', start)) return;
    const lineEnd = all.indexOf('\n', start);
    if (lineEnd < 0) return;
    const next = all.indexOf(delimiter, lineEnd);
    const part = all.slice(lineEnd + 1, next < 0 ? all.length : next);
    const [partHead, partBody] = splitHead(part);
    walkPart(headerFields(partHead), partBody, depth + 1, out);
    at = next;
  }
}

export const stripTags = (html: string) =>
  html
    .slice(0, PHRASE_SCAN_CHARS * 4)
    .replace(/<[^<>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');

/** A leaf's text in its charset when that is UTF-8, else as latin1 (enough for ASCII phrases and codes). */
export function leafText(leaf: MimeLeaf): string {
  const charset = lower(paramOf(leaf.headers.get('content-type') ?? '', 'charset'));
  return charset === 'utf-8' || charset === 'utf8' ? Buffer.from(leaf.body, 'latin1').toString('utf8') : leaf.body;
}

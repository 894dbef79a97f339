import { randomBytes } from 'node:crypto';
import { compile, type DomNode, type FormatCallback } from 'html-to-text';
import { HTML_QUOTE_MARKUP } from './reply-text-rules.js';

// HTML replies as reply-text.ts reads them: the markup bounded (boundMarkup), then converted to text by html-to-text
// with the containers of a quoted thread or a signature marked by sentinel lines (Marks), which the plain-text cut
// then reads. Pure: no database, no network.

/** The HTML a reply is read from: its first this many characters (before conversion). */
export const HTML_SCAN_CHARS = 400_000;
/**
 * Nesting deeper than this is flattened before parsing (its tags dropped, its text kept): htmlparser2 keeps its stack
 * with `unshift` (quadratic in the depth: 80k nested divs took 2 s) and html-to-text walks the tree recursively.
 * A real reply nests a few dozen levels (an Outlook thread of 20 replies, about 100).
 */
const HTML_MAX_DEPTH = 250;
/** Tags past this many are dropped (their text kept): html-to-text costs ~10 µs an element. */
const HTML_MAX_TAGS = 12_000;
/** Elements whose end tag is optional: htmlparser2 closes them itself, so they never nest deep; not counted. */
const OPTIONAL_END = new Set(['p', 'li', 'dt', 'dd', 'tr', 'td', 'th', 'thead', 'tbody', 'tfoot', 'option', 'optgroup', 'rb', 'rt', 'rp', 'colgroup']);
const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
  'basefont',
  'frame',
  'keygen',
]);
/** Lines longer than this are never a quote header, footer or attribution (and no pattern runs on them). */

/** The sentinel lines one HTML conversion wrote: a quote container opens/closes, a signature opens/closes, the rest. */
export class Marks {
  readonly tag: string;
  constructor() {
    this.tag = `\uE000${randomBytes(8).toString('hex')}`;
  }
  has(line: string): boolean {
    return line.includes(this.tag);
  }
  /** The marks in a line, in order: 'Q'/'S' open, 'q'/'s' close, 'R' rest. */
  of(line: string): string[] {
    return line
      .split(this.tag)
      .slice(1)
      .map((part) => part[0] ?? '');
  }
}

const attribsOf = (elem: DomNode) => (elem.attribs ?? {}) as Record<string, string | undefined>;
const classesOf = (elem: DomNode): string[] => attribsOf(elem).class?.split(/\s+/) ?? [];
const compact = (s: string | undefined) => (s ?? '').toLowerCase().replace(/\s+/g, '');
const QUOTE_CLASSES = new Set<string>(HTML_QUOTE_MARKUP.quoteClasses);
const SIGNATURE_CLASSES = new Set<string>(HTML_QUOTE_MARKUP.signatureClasses);
const REST_IDS = new Set<string>(HTML_QUOTE_MARKUP.restIds);
const SIGNATURE_IDS = new Set<string>(HTML_QUOTE_MARKUP.signatureIds);

/** What a container is: the quoted thread ('Q'), where the quoted thread starts ('R'), a signature ('S'), or none. */
function containerKind(elem: DomNode): 'Q' | 'R' | 'S' | null {
  const attribs = attribsOf(elem);
  // Outlook on the web prefixes ids in a quoted message with x_ (one level per reply).
  const id = (attribs.id ?? '').replace(/^(x_)+/, '');
  const classes = classesOf(elem);
  if (REST_IDS.has(id)) return 'R';
  if (classes.some((c) => QUOTE_CLASSES.has(c)) || HTML_QUOTE_MARKUP.quoteIdPrefixes.some((p) => id.startsWith(p))) return 'Q';
  if (classes.some((c) => SIGNATURE_CLASSES.has(c)) || SIGNATURE_IDS.has(id)) return 'S';
  const style = compact(attribs.style);
  if (elem.name === 'div' && style.includes('border-top')) {
    const borderTop = style.split(';').find((d) => d.startsWith('border-top:'));
    if (borderTop && HTML_QUOTE_MARKUP.outlookHeaderBorders.some((c) => borderTop.includes(c))) return 'R';
  }
  if (elem.name === 'blockquote') {
    // Gmail's and Apple Mail's "indent" is a blockquote without a border: the person's own text.
    const indent = attribs.type !== 'cite' && (style.includes('border:none') || style.includes('border-style:none') || style.includes('border:0'));
    return indent ? null : 'Q';
  }
  return null;
}

const metaOf = (builder: unknown) => (builder as { metadata?: Marks }).metadata;

const quoteAware: FormatCallback = (elem, walk, builder, options) => {
  const marks = metaOf(builder);
  const kind = containerKind(elem);
  if (elem.name === 'hr' && kind === null) {
    builder.openBlock({ leadingLineBreaks: 2 });
    builder.addInline('-'.repeat(40));
    builder.closeBlock({ trailingLineBreaks: 2 });
    return;
  }
  if ((!marks || kind === null) && options.inline === true) {
    walk(elem.children, builder);
    return;
  }
  if (!marks || kind === null) {
    builder.openBlock({ leadingLineBreaks: options.leadingLineBreaks ?? 1 });
    walk(elem.children, builder);
    builder.closeBlock({ trailingLineBreaks: options.trailingLineBreaks ?? 1 });
    return;
  }
  const mark = (m: string) => {
    builder.openBlock({ leadingLineBreaks: 1 });
    builder.addLiteral(marks.tag + m);
    builder.closeBlock({ trailingLineBreaks: 1 });
  };
  // The content is still written (between the marks), so "nothing left" can fall back to the whole text.
  mark(kind);
  walk(elem.children, builder);
  if (kind !== 'R') mark(kind.toLowerCase());
};

const block = (lead: number) => ({ leadingLineBreaks: lead, trailingLineBreaks: lead });
// html-to-text passes its second argument to the formatters as `builder.metadata` (its typings omit it).
const convertHtml = compile({
  wordwrap: false,
  decodeEntities: true,
  limits: { maxDepth: HTML_MAX_DEPTH + 50, ellipsis: '', maxInputLength: HTML_SCAN_CHARS },
  formatters: { quoteAware },
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'style', format: 'skip' },
    { selector: 'script', format: 'skip' },
    { selector: 'head', format: 'skip' },
    { selector: 'title', format: 'skip' },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((h) => ({ selector: h, options: { uppercase: false } })),
    { selector: 'div', format: 'quoteAware', options: block(1) },
    { selector: 'section', format: 'quoteAware', options: block(1) },
    { selector: 'blockquote', format: 'quoteAware', options: block(2) },
    { selector: 'hr', format: 'quoteAware' },
    // Outlook for Mac wraps the quote in <span id="OLK_SRC_BODY_SECTION">; other spans stay inline.
    { selector: 'span[id]', format: 'quoteAware', options: { inline: true } },
  ],
});

/**
 * The markup with its nesting depth and its number of tags bounded (one linear pass, `indexOf` only): a tag past
 * either bound is removed and its text kept, so htmlparser2 and html-to-text see at most HTML_MAX_TAGS elements nested
 * at most HTML_MAX_DEPTH deep.
 */
export function boundMarkup(html: string): string {
  const out: string[] = [];
  let pos = 0;
  let flushed = 0;
  let tags = 0;
  let depth = 0;
  let excess = 0;
  for (;;) {
    const lt = html.indexOf('<', pos);
    if (lt < 0) break;
    const gt = html.indexOf('>', lt + 1);
    if (gt < 0) break;
    const closing = html.charCodeAt(lt + 1) === 0x2f;
    let end = lt + (closing ? 2 : 1);
    const nameStart = end;
    while (end < gt && end - nameStart < 40 && isNameChar(html.charCodeAt(end), end === nameStart)) end++;
    if (end === nameStart) {
      // Text, a comment or a doctype: kept as it is.
      pos = gt + 1;
      continue;
    }
    out.push(html.slice(flushed, lt));
    flushed = gt + 1;
    const name = html.slice(nameStart, end).toLowerCase();
    let keep = ++tags <= HTML_MAX_TAGS;
    if (keep && !VOID.has(name) && !OPTIONAL_END.has(name) && html[gt - 1] !== '/') {
      if (closing) {
        if (excess > 0) {
          excess--;
          keep = false;
        } else depth = Math.max(0, depth - 1);
      } else if (depth >= HTML_MAX_DEPTH) {
        excess++;
        keep = false;
      } else depth++;
    }
    out.push(keep ? html.slice(lt, gt + 1) : ' ');
    pos = gt + 1;
  }
  out.push(html.slice(flushed));
  return out.join('');
}

/** A letter first, then letters, digits, `-`, `_`, `:` (o:p). */
function isNameChar(c: number, first: boolean): boolean {
  const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  return first ? letter : letter || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x5f || c === 0x3a;
}

/**
 * The text of an HTML reply (its first HTML_SCAN_CHARS characters, bounded by boundMarkup), with quote and signature
 * containers marked by `marks`' sentinel lines.
 */
export function markedTextOf(html: string, marks: Marks): string {
  return (convertHtml as (html: string, metadata: Marks) => string)(boundMarkup(html.slice(0, HTML_SCAN_CHARS)), marks);
}

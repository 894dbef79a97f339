import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The real inbound cases of issue 38 (test/fixtures/inbound/<kind>/: *.eml, expected.json, README.md with each file's
// source and licence), loaded for the end-to-end test (inbound-cases.test.ts) and the 500-message load test.

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/inbound');

/** What a case's expected.json says of one file (the folders' READMEs say why). */
export interface Expected {
  verdict: 'bounce' | 'delayed' | 'delivered' | 'complaint' | 'reply' | 'unsubscribe' | 'out_of_office' | 'left_company';
  severity?: 'hard' | 'soft';
  optOut?: boolean;
  label?: string;
  replacement?: string;
  textIncludes?: string;
  textExcludes?: string[];
}

export interface InboundCase {
  kind: string;
  file: string;
  /** The file as bytes in a latin1 string (each byte one character), so 8-bit bodies travel unchanged. */
  raw: string;
  expected: Expected;
}

export function loadInboundCases(): InboundCase[] {
  if (!existsSync(FIXTURES)) return [];
  const out: InboundCase[] = [];
  for (const kind of readdirSync(FIXTURES).sort()) {
    const dir = join(FIXTURES, kind);
    if (!existsSync(join(dir, 'expected.json'))) continue;
    const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Record<string, Expected>;
    for (const [file, e] of Object.entries(expected)) out.push({ kind, file, raw: readFileSync(join(dir, file), 'latin1'), expected: e });
  }
  return out;
}

/**
 * The case as if it were about a message the test sent: our Message-ID and the lead's address put in for the
 * convention's `<sent-0001@acme.example>` and `pat@initech.example`, the top-level Date made now, its own
 * Message-ID made unique with `n`. Returns the message (CRLF line ends) and its own Message-ID as the watcher stores it.
 */
export function rewriteCase(c: InboundCase, p: { messageId: string; email: string; n: number }): { raw: string; ownId: string | null } {
  const ours = p.messageId.replace(/^<|>$/g, '');
  const raw = c.raw.replace(/sent-0001@acme\.example/gi, ours).replace(/pat@initech\.example/gi, p.email);
  const split = /\r?\n\r?\n/.exec(raw);
  let head = split ? raw.slice(0, split.index) : raw;
  const rest = split ? raw.slice(split.index) : '';
  head = head.replace(/^Date:[^\r\n]*(\r?\n[ \t][^\r\n]*)*/im, `Date: ${new Date().toUTCString()}`);
  let ownId: string | null = null;
  head = head.replace(/^(Message-ID:[ \t]*<)([^>\r\n]+)>/im, (_m, pre: string, id: string) => {
    ownId = `${p.n}.${id}`.toLowerCase();
    return `${pre}${p.n}.${id}>`;
  });
  return { raw: (head + rest).replace(/\r?\n/g, '\r\n'), ownId };
}

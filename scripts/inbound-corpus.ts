// Runs readReport (src/channels/email/inbox/reports.ts) over a local corpus of messages and prints how many were
// recognised, and with a returned Message-ID, by kind. The corpus is not part of this repository: for instance a
// checkout of Sisimai's test set (github.com/sisimai/set-of-emails, BSD-2-Clause), `maildir/bsd`.
//
//   npx tsx scripts/inbound-corpus.ts <directory or .eml file>… [--verbose] [--sent-to=<address>]
//
// --verbose prints one line per message (file, mayBeReport, verdict, reason, Message-ID, milliseconds).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { mayBeReport, readReport, reportHintsOf, REPORT_SCAN_BYTES } from '../src/channels/email/inbox/reports.js';

function files(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const verbose = args.includes('--verbose');
  const sentTo = args.find((a) => a.startsWith('--sent-to='))?.slice('--sent-to='.length) ?? null;
  const paths = args.filter((a) => !a.startsWith('--'));
  if (paths.length === 0) {
    console.error('usage: npx tsx scripts/inbound-corpus.ts <directory or .eml file>… [--verbose] [--sent-to=<address>]');
    process.exitCode = 2;
    return;
  }
  const counts = new Map<string, { all: number; withId: number }>();
  let total = 0;
  let flagged = 0;
  let slowest = 0;
  for (const file of paths.flatMap(files)) {
    if (!/\.(eml|msg|txt)$/i.test(file) && !/\/[^./]+$/.test(file)) continue;
    const source = readFileSync(file).subarray(0, REPORT_SCAN_BYTES * 4);
    total++;
    let key: string;
    let line: string;
    try {
      const mail = await simpleParser(source, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
      const hints = reportHintsOf(mail, source);
      const may = mayBeReport(hints);
      if (may) flagged++;
      const t0 = performance.now();
      const v = readReport(mail, source, { ...hints, sentTo });
      const ms = performance.now() - t0;
      slowest = Math.max(slowest, ms);
      key = v === null ? 'not a report' : v.kind === 'bounce' ? `bounce ${v.severity}` : v.kind === 'complaint' ? `complaint ${v.format}` : v.kind;
      const c = counts.get(key) ?? { all: 0, withId: 0 };
      c.all++;
      if (v?.originalMessageId) c.withId++;
      counts.set(key, c);
      const detail =
        v === null
          ? ''
          : v.kind === 'bounce'
            ? `${v.reason} ${v.status ?? '-'} ${v.action ?? '-'}`
            : v.kind === 'complaint'
              ? v.feedbackType
              : `${v.status ?? '-'} ${v.action ?? '-'}`;
      line = `${file}\t${may ? 'may' : 'no'}\t${key}\t${detail}\t${v?.originalMessageId ?? '-'}\t${ms.toFixed(1)}ms\t${v?.evidence ?? ''}`;
    } catch (e) {
      key = 'unparseable';
      const c = counts.get(key) ?? { all: 0, withId: 0 };
      c.all++;
      counts.set(key, c);
      line = `${file}\tunparseable\t${(e as Error).message}`;
    }
    if (verbose) console.log(line);
  }
  console.log(`${total} messages; mayBeReport true for ${flagged}; slowest readReport ${slowest.toFixed(1)} ms`);
  for (const [key, c] of [...counts].sort((a, b) => b[1].all - a[1].all))
    console.log(`${key.padEnd(16)} ${String(c.all).padStart(5)}  with a Message-ID ${c.withId}`);
}

await main();

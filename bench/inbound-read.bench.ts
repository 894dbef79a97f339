/**
 * What reading one inbound message costs the inbox watcher's CPU, over the real cases of test/fixtures/inbound (90
 * bounces, complaints, HTML and multilingual replies, auto-replies, leaver notices), side by side with a floor in the
 * same run: mailparser's simpleParser of the message, which any reader must do. Measured per pass over all cases:
 * - floor: parse only;
 * - read: parse, then what decide.ts adds on the CPU (reports.ts readReport, reply-text.ts, domain/classify.ts);
 * - read, 2 MB reply: the same for one 2 MB plain-text reply (the OUTREACH_INBOX_MAX_MESSAGE_BYTES bound).
 * No IMAP and no database (bench/inbox-poll.bench.ts measures those). Prints ms and the ratio to the floor. Not a test.
 *
 *   npx tsx bench/inbound-read.bench.ts [--runs=30]
 */
import { performance } from 'node:perf_hooks';
import { parseHead, parseMessage, replyWords } from '../src/channels/email/inbox/parse.js';
import { mayBeReport, readReport, reportHintsOf } from '../src/channels/email/inbox/reports.js';
import { classifyReplyText } from '../src/domain/classify.js';
import { loadInboundCases, rewriteCase } from '../test/email/inbound-fixtures.js';
import { printBesideFloor } from './floor-report.js';

const RUNS = Number(process.argv.find((a) => a.startsWith('--runs='))?.split('=')[1] ?? 30);

const cases = loadInboundCases().map((c, n) =>
  Buffer.from(rewriteCase(c, { messageId: `<step0.${n}@acme.example>`, email: `pat.${n}@initech.example`, n }).raw, 'latin1'),
);
const line = 'The quarterly numbers are attached below, with every figure we spoke about on the call.\n';
const big = Buffer.from(
  `From: pat@initech.example\r\nTo: dana@acme.example\r\nSubject: Re: Quick question\r\nMessage-ID: <big@initech.example>\r\nIn-Reply-To: <step0@acme.example>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSounds good, details below.\n\n${line.repeat(Math.ceil(2_097_152 / line.length))}`.slice(
    0,
    2_097_152,
  ),
);

async function read(source: Buffer): Promise<string> {
  const head = await parseHead(source.subarray(0, Math.min(source.length, 65_536)));
  const mail = await parseMessage(source);
  const hints = reportHintsOf(mail, source);
  const report = mayBeReport(hints) || head.from !== 'pat@initech.example' ? readReport(mail, source, { ...hints, sentTo: 'pat@initech.example' }) : null;
  if (report) return report.kind;
  return classifyReplyText(replyWords(mail), { subject: head.subject, autoReply: head.autoReply }).label;
}

async function timed(fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

// Warm every path once (module loads, regex compilation) before timing.
for (const c of cases) await read(c);
await read(big);

const floor = await timed(async () => {
  for (const c of cases) await parseMessage(c);
});
const full = await timed(async () => {
  for (const c of cases) await read(c);
});
const bigFloor = await timed(() => parseMessage(big));
const bigFull = await timed(() => read(big));
console.log(`${cases.length} real inbound messages per pass, ${RUNS} passes; one 2 MB reply, ${RUNS} reads`);
printBesideFloor([`floor: parse ${cases.length} messages`, floor], [[`read ${cases.length} messages (report, text, label)`, full]]);
printBesideFloor(['floor: parse one 2 MB reply', bigFloor], [['read one 2 MB reply', bigFull]]);

/**
 * Prints the reply classifier's figures on the labelled set (test/fixtures/replies/labelled.json) as a Markdown
 * table, for docs: label, n, precision, recall, needs_review rate; then stop-request recall, opt-out precision and
 * the overall needs_review rate.
 *
 *   npx tsx scripts/classify-report.ts
 */
import { readFileSync } from 'node:fs';
import { CLASSIFICATIONS, classifyReplyText, type Classification } from '../src/domain/classify.js';

const set: { id: string; text: string; label: Classification }[] = JSON.parse(
  readFileSync(new URL('../test/fixtures/replies/labelled.json', import.meta.url), 'utf8'),
);
const scored = set.map((item) => ({ item, v: classifyReplyText(item.text) }));
const f = (x: number) => x.toFixed(2);

const lines = ['| label | n | precision | recall | needs_review |', '|---|---:|---:|---:|---:|'];
for (const label of CLASSIFICATIONS) {
  const gold = scored.filter((s) => s.item.label === label);
  const predicted = scored.filter((s) => s.v.label === label);
  const tp = predicted.filter((s) => s.item.label === label).length;
  lines.push(
    `| ${label} | ${gold.length} | ${predicted.length ? f(tp / predicted.length) : '–'} | ${gold.length ? f(tp / gold.length) : '–'} | ${
      gold.length ? f(gold.filter((s) => s.v.needsReview).length / gold.length) : '–'
    } |`,
  );
}
const stops = scored.filter((s) => s.item.label === 'unsubscribe');
const optOuts = scored.filter((s) => s.v.label === 'unsubscribe' && !s.v.needsReview);
lines.push(
  '',
  `- items: ${set.length}`,
  `- stop-request recall (needs_review counts as missed): ${f(stops.filter((s) => s.v.label === 'unsubscribe' && !s.v.needsReview).length / stops.length)}`,
  `- opt-out precision (unsubscribe, not needs_review): ${optOuts.length ? f(optOuts.filter((s) => s.item.label === 'unsubscribe').length / optOuts.length) : '–'}`,
  `- needs_review rate: ${f(scored.filter((s) => s.v.needsReview).length / set.length)}`,
);
console.log(lines.join('\n'));

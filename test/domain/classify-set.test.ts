/**
 * The labelled reply set (issue 38 §5, test/fixtures/replies/labelled.json) against the classifier: per-label
 * precision and recall, the needs_review rate, and the two gates an opt-out depends on. Also: every rule of
 * classify-rules.ts is exercised by at least one item (a rule nothing exercises is a defect).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLASSIFICATIONS, classifyReplyText, type Classification, type ReplyVerdict } from '../../src/domain/classify.js';
import { REPLY_RULES, RULE_LANGUAGES } from '../../src/domain/classify-rules.js';

interface Item {
  id: string;
  lang: string;
  text: string;
  label: Classification;
  source: string;
}

const SET: Item[] = JSON.parse(readFileSync(new URL('../fixtures/replies/labelled.json', import.meta.url), 'utf8'));

/** Stop-request recall must be at least this (a stop request flagged needsReview counts as missed). */
const MIN_STOP_RECALL = 0.98;
/** Precision over confident (not needsReview) unsubscribe verdicts must be at least this. */
const MIN_OPT_OUT_PRECISION = 0.99;

interface Scored {
  item: Item;
  verdict: Pick<ReplyVerdict, 'label' | 'needsReview'>;
}

function measure(scored: Scored[]) {
  const perLabel = CLASSIFICATIONS.map((label) => {
    const gold = scored.filter((s) => s.item.label === label);
    const predicted = scored.filter((s) => s.verdict.label === label);
    const tp = predicted.filter((s) => s.item.label === label).length;
    return {
      label,
      n: gold.length,
      precision: predicted.length ? tp / predicted.length : 1,
      recall: gold.length ? tp / gold.length : 1,
      needsReview: gold.length ? gold.filter((s) => s.verdict.needsReview).length / gold.length : 0,
    };
  });
  const stops = scored.filter((s) => s.item.label === 'unsubscribe');
  const confidentOptOuts = scored.filter((s) => s.verdict.label === 'unsubscribe' && !s.verdict.needsReview);
  const stopRecall = stops.length ? stops.filter((s) => s.verdict.label === 'unsubscribe' && !s.verdict.needsReview).length / stops.length : 0;
  const optOutPrecision = confidentOptOuts.length ? confidentOptOuts.filter((s) => s.item.label === 'unsubscribe').length / confidentOptOuts.length : 0;
  const reviewRate = scored.filter((s) => s.verdict.needsReview).length / scored.length;
  const failures: string[] = [];
  if (stopRecall < MIN_STOP_RECALL) failures.push(`stop-request recall ${stopRecall.toFixed(3)} < ${MIN_STOP_RECALL}`);
  if (optOutPrecision < MIN_OPT_OUT_PRECISION) failures.push(`opt-out precision ${optOutPrecision.toFixed(3)} < ${MIN_OPT_OUT_PRECISION}`);
  return { perLabel, stopRecall, optOutPrecision, reviewRate, failures };
}

describe('the labelled reply set', () => {
  it('is well formed: ≥ 320 items, unique ids, known labels, ≥ 20 per label, ≥ 8 languages, every language has stop requests and leaver notices', () => {
    expect(SET.length).toBeGreaterThanOrEqual(320);
    expect(new Set(SET.map((i) => i.id)).size).toBe(SET.length);
    for (const i of SET) {
      expect(CLASSIFICATIONS, i.id).toContain(i.label);
      expect(i.text.trim().length, i.id).toBeGreaterThan(0);
      expect(i.source, i.id).toBeTruthy();
    }
    for (const label of CLASSIFICATIONS) expect(SET.filter((i) => i.label === label).length, label).toBeGreaterThanOrEqual(20);
    expect(new Set(SET.map((i) => i.lang)).size).toBeGreaterThanOrEqual(8);
    for (const lang of RULE_LANGUAGES) {
      expect(SET.filter((i) => i.lang === lang && i.label === 'unsubscribe').length, `${lang} stop requests`).toBeGreaterThanOrEqual(3);
      expect(SET.filter((i) => i.lang === lang && i.label === 'left_company').length, `${lang} leaver notices`).toBeGreaterThanOrEqual(2);
    }
  });

  const scored: Scored[] = SET.map((item) => ({ item, verdict: classifyReplyText(item.text) }));
  const m = measure(scored);

  it(`stop requests are never missed (recall ≥ ${MIN_STOP_RECALL}) and opt-outs are precise (≥ ${MIN_OPT_OUT_PRECISION})`, () => {
    const pct = (x: number) => x.toFixed(2);
    const table = [
      '| label | n | precision | recall | needs_review |',
      '|---|---:|---:|---:|---:|',
      ...m.perLabel.map((r) => `| ${r.label} | ${r.n} | ${pct(r.precision)} | ${pct(r.recall)} | ${pct(r.needsReview)} |`),
    ].join('\n');
    console.log(
      `${table}\n\nstop-request recall ${m.stopRecall.toFixed(3)}, opt-out precision ${m.optOutPrecision.toFixed(3)}, needs_review rate ${m.reviewRate.toFixed(3)} (${SET.length} items)`,
    );
    const missed = scored.filter((s) => s.item.label === 'unsubscribe' && (s.verdict.label !== 'unsubscribe' || s.verdict.needsReview)).map((s) => s.item.id);
    const wrongOptOuts = scored
      .filter((s) => s.verdict.label === 'unsubscribe' && !s.verdict.needsReview && s.item.label !== 'unsubscribe')
      .map((s) => s.item.id);
    expect({ failures: m.failures, missed, wrongOptOuts }).toEqual({ failures: [], missed: expect.any(Array), wrongOptOuts: expect.any(Array) });
  });

  it('the gates fail a classifier that misses stop requests or opts out wrongly', () => {
    // Every stop request sent to review: recall 0.
    const timid = measure(scored.map((s) => ({ item: s.item, verdict: { label: s.item.label, needsReview: s.item.label === 'unsubscribe' } })));
    expect(timid.failures.join()).toMatch(/stop-request recall/);
    // Two confident opt-outs too many (one per 100 would still pass): precision below 0.99.
    const eager = measure(
      scored.map((s, n) => ({
        item: s.item,
        verdict: { label: s.item.label === 'negative' && n % 2 === 0 ? 'unsubscribe' : s.item.label, needsReview: false },
      })),
    );
    expect(eager.failures.join()).toMatch(/opt-out precision/);
    // The perfect answer passes.
    expect(measure(scored.map((s) => ({ item: s.item, verdict: { label: s.item.label, needsReview: false } }))).failures).toEqual([]);
  });

  it('every rule in classify-rules.ts is exercised by at least one item', () => {
    const hit = new Set<string>();
    for (const s of scored) for (const e of (s.verdict as ReplyVerdict).evidence) hit.add(e.rule);
    const unexercised = REPLY_RULES.map((r) => r.id).filter((id) => !hit.has(id));
    expect(unexercised).toEqual([]);
  });

  it('every language has a stop-request, refusal, out-of-office and leaver rule', () => {
    for (const lang of RULE_LANGUAGES)
      for (const label of ['unsubscribe', 'negative', 'out_of_office', 'left_company'] as const)
        expect(
          REPLY_RULES.some((r) => r.language === lang && r.label === label && !r.effect),
          `${lang} ${label}`,
        ).toBe(true);
  });
});

/**
 * The reply classifier (issue 38 §4–§5): one classifier for e-mail replies, X DMs and LinkedIn messages, in English,
 * German, French, Spanish, Italian, Portuguese, Dutch, Danish, Swedish, Norwegian, Finnish, Polish, Japanese and
 * Chinese. The rules are data (classify-rules.ts); this file normalizes the text, runs them, and decides.
 *
 * Pure functions, no I/O. Every regular expression is linear; at most the first MAX_CLASSIFIED_CHARS characters of
 * the normalized text are read.
 */
import { createRequire } from 'node:module';
import type * as Tinyld from 'tinyld';
import { AUTO_REPLY_SUBJECTS, CLASSIFICATIONS, REPLY_RULES, STOP_WORDS, type Classification, type ReplyRule } from './classify-rules.js';

export { CLASSIFICATIONS, type Classification } from './classify-rules.js';

/** tinyld loads its language profiles (about 100 ms) when a reply is first classified, not at start-up. */
const requireCjs = createRequire(import.meta.url);
let tinyld: typeof Tinyld | null = null;
const detectAll = (text: string) => (tinyld ??= requireCjs('tinyld') as typeof Tinyld).detectAll(text);

/** One piece of what decided a verdict. */
export interface ReplyEvidence {
  /** A rule id from REPLY_RULES (classify-rules.ts), or `auto-reply-header` / `auto-reply-subject`. */
  rule: string;
  /** The matched text (normalized, lower-cased), at most 80 characters; null when nothing in the text matched. */
  phrase: string | null;
  /** The rule's language (ISO 639-1), or null for a rule of any language. */
  language: string | null;
}

/** What the classifier makes of a reply. */
export interface ReplyVerdict {
  label: Classification;
  /** 0..1, from the winning evidence (lowered when a stronger label's phrase was negated or seen weakly). */
  confidence: number;
  /** confidence < CONFIDENCE_FLOOR: a person decides, nothing automatic happens (no opt-out, no snooze, no draft sent). */
  needsReview: boolean;
  /** What decided it, strongest first; empty for 'other' when no rule matched. */
  evidence: ReplyEvidence[];
  /** The language tinyld detected, when it is confident (≥ 30 letters or 6 CJK characters, and a clear winner); else null. */
  language: string | null;
  /** For left_company / wrong_person: who to contact instead, when the text names someone (addresses lower-case, ≤ 5 each). */
  replacement: { addresses: string[]; names: string[] } | null;
}

/** Below this confidence a verdict needs review. An opt-out from text alone needs evidence at or above it. */
export const CONFIDENCE_FLOOR = 0.7;

/** Texts can be 100,000 characters (a long quoted thread): only the start is read. */
const MAX_CLASSIFIED_CHARS = 4_000;
/** tinyld reads this much. */
const MAX_DETECTED_CHARS = 1_000;
/** Confidence of a non-empty reply no rule recognises: below the floor, so a person reads it. */
const UNRECOGNISED_CONFIDENCE = 0.6;

const APOSTROPHES = /[\u2018\u2019\u201A\u201B\u2032\u2035\u00B4\u0060\u02B9\u02BB\u02BC\u02BD\uFF07]/g;
const QUOTES = /[\u201C\u201D\u201E\u201F\u2033\u2036\u00AB\u00BB\u2039\u203A\u301D\u301E\u301F\uFF02]/g;
const DASHES = /[\u2010-\u2015\u2212\u2E3A\u2E3B\uFE58\uFE63\uFF0D]/g;
const INVISIBLE = /[\u00AD\u180E\u200B-\u200D\u2060\uFEFF]/g;

/**
 * The text every rule reads: typographic apostrophes (’ ‘ ‛ ´ ` ′ …) to ', quotes (“ ” „ « » ‹ › …) to ", dashes
 * (‐ ‑ ‒ – — ― − …) to -, then Unicode NFKC (full-width forms, ligatures, NBSP), zero-width characters and soft
 * hyphens removed, whitespace collapsed to single spaces and trimmed. Case is kept.
 */
export function normalizeReplyText(text: string): string {
  return text.replace(APOSTROPHES, "'").replace(QUOTES, '"').replace(DASHES, '-').normalize('NFKC').replace(INVISIBLE, '').replace(/\s+/gu, ' ').trim();
}

const STOP_WORD_SET: ReadonlySet<string> = new Set(STOP_WORDS);

/**
 * Whether the whole text is a stop word (classify-rules.ts STOP_WORDS: STOP, UNSUBSCRIBE, CANCEL, STOPP, ARRÊT, BAJA,
 * 退订, …): compared case-insensitively, trimmed, without punctuation, emoji or apostrophes.
 */
export function isStopWord(text: string | null): boolean {
  if (!text) return false;
  const words = normalizeReplyText(text)
    .toLowerCase()
    .replace(/'/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
  return STOP_WORD_SET.has(words);
}

const SUBJECT_PREFIXES = [...AUTO_REPLY_SUBJECTS].sort((a, b) => b.phrase.length - a.phrase.length);

/**
 * A subject that by itself marks an auto-reply: a localized prefix (AUTO_REPLY_SUBJECTS in classify-rules.ts, e.g.
 * "Automatische Antwort:", "Abwesenheitsnotiz", "Réponse automatique", "Automatisch antwoord", "Autosvar",
 * "自動応答", "自动回复", "Out of Office", "Auto:") at the start of the subject, optionally inside brackets ([ 【 ( …).
 * Returns the label it implies, the prefix as written, and its language (null when shared by several languages).
 */
export function autoReplySubject(subject: string): { label: 'out_of_office' | 'left_company'; phrase: string; language: string | null } | null {
  const s = normalizeReplyText(subject);
  const lead = /^[[(【（〔「<*\s-]*/u.exec(s)?.[0].length ?? 0;
  const rest = s.slice(lead);
  const lower = rest.toLowerCase();
  for (const p of SUBJECT_PREFIXES) {
    if (!lower.startsWith(p.phrase)) continue;
    const next = lower.charAt(p.phrase.length);
    if (next && /[\p{L}\p{N}]/u.test(next) && /[\p{L}\p{N}]$/u.test(p.phrase) && !/^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(p.phrase))
      continue;
    return { label: p.label, phrase: rest.slice(0, p.phrase.length), language: p.language };
  }
  return null;
}

interface Hit {
  rule: ReplyRule;
  phrase: string;
  start: number;
  end: number;
}

const COMPILED = REPLY_RULES.map((rule) => ({ rule, re: new RegExp(rule.pattern.source, `${rule.pattern.flags.replace(/[gy]/g, '')}g`) }));
const MAX_HITS_PER_RULE = 20;

function detectLanguage(text: string): string | null {
  const sample = text.slice(0, MAX_DETECTED_CHARS);
  const letters = sample.match(/\p{L}/gu)?.length ?? 0;
  const cjk = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(sample);
  if (letters < (cjk ? 6 : 30)) return null;
  const [top, second] = detectAll(sample);
  if (!top) return null;
  // Confident: a clear winner (measured on the labelled set: no wrong language at these bounds).
  return top.accuracy >= 0.8 || (top.accuracy >= 0.6 && (second?.accuracy ?? 0) <= top.accuracy / 4) ? top.lang : null;
}

function collectHits(lower: string, language: string | null): Hit[] {
  const hits: Hit[] = [];
  for (const { rule, re } of COMPILED) {
    if (language && rule.notIn?.includes(language)) continue;
    let n = 0;
    for (const m of lower.matchAll(re)) {
      hits.push({ rule, phrase: m[0].trim().slice(0, 80), start: m.index, end: m.index + m[0].length });
      if (++n >= MAX_HITS_PER_RULE) break;
    }
  }
  return hits;
}

function evidenceOf(h: Hit): ReplyEvidence {
  return { rule: h.rule.id, phrase: h.phrase, language: h.rule.language };
}

const rank = (c: Classification) => CLASSIFICATIONS.indexOf(c);

/** Evidence, strongest first: the deciding hit, then the rest by confidence (one per rule). */
function orderEvidence(first: Hit | null, hits: Hit[], extra: ReplyEvidence[] = []): ReplyEvidence[] {
  const seen = new Set<string>();
  const out: ReplyEvidence[] = [...extra];
  for (const e of extra) seen.add(e.rule);
  const rest = [...hits].sort((a, b) => b.rule.confidence - a.rule.confidence || rank(a.rule.label) - rank(b.rule.label));
  for (const h of first ? [first, ...rest] : rest) {
    if (seen.has(h.rule.id)) continue;
    seen.add(h.rule.id);
    out.push(evidenceOf(h));
  }
  return out.slice(0, 8);
}

const EMAIL = /[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+/g;
/** Who a leaver notice or a wrong-person reply points to: the trigger (case-insensitive) before a capitalised name. */
const NAME_TRIGGERS: { re: RegExp; single: boolean }[] = [
  {
    re: /(?<![\p{L}])(?:my|our|her|his) (?:[\p{L}]+ )?(?:colleague|coworker|co-worker|successor|replacement|manager|lead|cto|ceo|cfo|cio|director|boss)[,:]? /giu,
    single: true,
  },
  { re: /(?<![\p{L}])(?:contact|reach out to|speak (?:with|to)|talk to|write to|enquiries to|inquiries to|questions to) /giu, single: false },
  { re: /(?<![\p{L}])(?:meine[nmr]? |ihre[nmr]? )?(?:kollegen|kollegin|kollege|nachfolger(?:in)?|ansprechpartner(?:in)?)(?: ist)?[,:]? /giu, single: true },
  { re: /(?<![\p{L}])(?:wenden sie sich (?:bitte )?an (?:herrn |frau )?)/giu, single: false },
  {
    re: /(?<![\p{L}])(?:mon|ma|notre) (?:collègue|successeur|remplaçante?)[,:]? |(?<![\p{L}])(?:contactez|voyez (?:plutôt )?avec|adressez-vous à) /giu,
    single: true,
  },
  { re: /(?<![\p{L}])(?:mi|su|nuestr[oa]) (?:compañer[oa]|colega|sustitut[oa]|sucesora?)(?: es)?[,:]? |(?<![\p{L}])hable con /giu, single: true },
  { re: /(?<![\p{L}])(?:il mio|la mia|la sua|il suo) (?:collega|sostitut[oa])[,:]? /giu, single: true },
  { re: /(?<![\p{L}])(?:o meu|a minha|meu|minha) (?:colega|substitut[oa])[,:]? |(?<![\p{L}])quem assume é (?:o |a )?/giu, single: true },
  { re: /(?<![\p{L}])(?:mijn|onze) (?:collega|opvolger)[,:]? /giu, single: true },
  { re: /(?<![\p{L}])(?:min|vores|vår) (?:kollega|efterfølger|efterträdare|etterfølger)[,:]? |(?<![\p{L}])kollegaen min /giu, single: true },
  { re: /(?<![\p{L}])(?:kollegani|seuraajani) /giu, single: true },
  { re: /(?<![\p{L}])(?:mojej|mojego|moją|moim) (?:koleżanki|kolegi|koleżanką|kolegą)[,:]? /giu, single: true },
];
const NAME = /\p{Lu}[\p{Ll}'-]+(?: (?:de |van |von |da |di |del |la |le |van der |van den )?\p{Lu}[\p{Ll}'-]+){0,2}/uy;
const CJK_TRIGGER = /(?:同事|担当の|担当者の|後任の)/gu;
const CJK_NAME = /[\p{Script=Han}]{2,3}/uy;
const NOT_NAMES = new Set(['Sales', 'Support', 'Team', 'Customer', 'Service', 'Please', 'Thanks', 'Thank', 'Hi', 'Hello', 'The', 'Our', 'My', 'Herrn', 'Frau']);

function replacementOf(text: string): { addresses: string[]; names: string[] } | null {
  const addresses = [...new Set([...text.toLowerCase().matchAll(EMAIL)].map((m) => m[0].replace(/[.-]+$/, '')))].slice(0, 5);
  const names: string[] = [];
  const add = (n: string) => {
    if (!names.includes(n) && names.length < 5) names.push(n);
  };
  for (const { re, single } of NAME_TRIGGERS) {
    for (const m of text.matchAll(re)) {
      NAME.lastIndex = m.index + m[0].length;
      const found = NAME.exec(text)?.[0];
      if (!found) continue;
      const words = found.split(' ').filter((x) => !NOT_NAMES.has(x));
      if (words.length === 0 || (!single && words.length < 2) || NOT_NAMES.has(found.split(' ')[0])) continue;
      add(words.join(' '));
    }
  }
  for (const m of text.matchAll(CJK_TRIGGER)) {
    CJK_NAME.lastIndex = m.index + m[0].length;
    const found = CJK_NAME.exec(text)?.[0];
    if (found) add(found);
  }
  return addresses.length || names.length ? { addresses, names } : null;
}

function verdict(label: Classification, confidence: number, evidence: ReplyEvidence[], language: string | null, text: string): ReplyVerdict {
  const c = Math.round(Math.max(0, Math.min(1, confidence)) * 1000) / 1000;
  return {
    label,
    confidence: c,
    needsReview: c < CONFIDENCE_FLOOR,
    evidence,
    language,
    replacement: label === 'left_company' || label === 'wrong_person' ? replacementOf(text) : null,
  };
}

/**
 * Classifies a reply's own words (the quoted thread already cut, as far as the caller can).
 *
 * Decision: every rule of classify-rules.ts runs on the normalized, lower-cased text (rules whose `notIn` names the
 * confidently detected language are skipped); guards discard negated hits ("I don't want to unsubscribe"). The
 * label is the first in CLASSIFICATIONS order with a hit at or above CONFIDENCE_FLOOR (unsubscribe > left_company >
 * out_of_office > wrong_person > negative > meeting_intent > question > positive); with none, the first label with
 * any hit, below the floor (needsReview); with no hit at all, 'other'. A weak stop phrase beside a confident other
 * label keeps that label but sends it to review, so a possible stop request is never acted on as something else.
 *
 * `opts.autoReply` (the message carried auto-reply headers) or an auto-reply `opts.subject` (autoReplySubject): the
 * label is out_of_office unless the text is a leaver notice (left_company); auto-reply boilerplate never yields
 * unsubscribe, negative or anything else.
 */
export function classifyReplyText(text: string | null, opts: { subject?: string | null; autoReply?: boolean } = {}): ReplyVerdict {
  if (text !== null && text.length > MAX_REMEMBERED_CHARS) return classifyAnew(text, opts);
  const key = `${opts.autoReply ? 1 : 0}\u0000${opts.subject ?? ''}\u0000${text ?? ''}`;
  const known = remembered.get(key);
  if (known) return known;
  const verdict = frozen(classifyAnew(text, opts));
  if (remembered.size >= REMEMBERED_VERDICTS) remembered.delete(remembered.keys().next().value!);
  remembered.set(key, verdict);
  return verdict;
}

/**
 * The last verdicts given, by text: the same words get the same verdict (the function is pure), and a reply seen
 * many times (a sandbox's scripted replies, a forecast's, a template's auto-reply) is classified once, not once per
 * lead (tinyld and every rule over it cost about 1 ms a reply). Short texts only, the oldest forgotten first; each
 * verdict is frozen, as it is shared.
 */
const remembered = new Map<string, ReplyVerdict>();
const REMEMBERED_VERDICTS = 512;
const MAX_REMEMBERED_CHARS = 2_000;

function frozen(v: ReplyVerdict): ReplyVerdict {
  for (const e of v.evidence) Object.freeze(e);
  Object.freeze(v.evidence);
  if (v.replacement) {
    Object.freeze(v.replacement.addresses);
    Object.freeze(v.replacement.names);
    Object.freeze(v.replacement);
  }
  return Object.freeze(v);
}

function classifyAnew(text: string | null, opts: { subject?: string | null; autoReply?: boolean }): ReplyVerdict {
  const normalized = text ? normalizeReplyText(text).slice(0, MAX_CLASSIFIED_CHARS) : '';
  const lower = normalized.toLowerCase();
  const language = normalized ? detectLanguage(normalized) : null;
  const all = normalized ? collectHits(lower, language) : [];

  const guards = all.filter((h) => h.rule.effect === 'negate');
  let negated = false;
  const votes = all.filter((h) => {
    if (h.rule.effect) return false;
    if (guards.some((g) => g.rule.label === h.rule.label && h.start >= g.start && h.end <= g.end)) {
      negated = true;
      return false;
    }
    return true;
  });
  const best = new Map<Classification, Hit>();
  for (const h of votes) {
    const b = best.get(h.rule.label);
    if (!b || h.rule.confidence > b.rule.confidence) best.set(h.rule.label, h);
  }

  const subject = opts.subject ? autoReplySubject(opts.subject) : null;
  if (opts.autoReply || subject) {
    const leaver = best.get('left_company');
    const marker: ReplyEvidence = opts.autoReply
      ? { rule: 'auto-reply-header', phrase: null, language: null }
      : { rule: 'auto-reply-subject', phrase: subject!.phrase.slice(0, 80), language: subject!.language };
    if (leaver && leaver.rule.confidence >= CONFIDENCE_FLOOR) {
      return verdict(
        'left_company',
        leaver.rule.confidence,
        orderEvidence(
          leaver,
          votes.filter((h) => h.rule.label === 'left_company'),
          [],
        ),
        language,
        normalized,
      );
    }
    if (subject?.label === 'left_company') return verdict('left_company', 0.85, [marker], language, normalized);
    const ooo = votes.filter((h) => h.rule.label === 'out_of_office');
    return verdict('out_of_office', opts.autoReply ? 0.95 : 0.9, orderEvidence(null, ooo, [marker]), language, normalized);
  }

  if (!normalized) return verdict('other', 1, [], null, normalized);

  const strong = CLASSIFICATIONS.find((c) => (best.get(c)?.rule.confidence ?? 0) >= CONFIDENCE_FLOOR);
  const winner = strong ?? CLASSIFICATIONS.find((c) => best.has(c));
  if (!winner) return verdict('other', negated ? UNRECOGNISED_CONFIDENCE * 0.85 : UNRECOGNISED_CONFIDENCE, [], language, normalized);

  const top = best.get(winner)!;
  let confidence = top.rule.confidence;
  // A possible stop request (below the floor) beside another confident label: a person decides.
  const weakStop = best.get('unsubscribe');
  if (winner !== 'unsubscribe' && weakStop) confidence = Math.min(confidence, CONFIDENCE_FLOOR - 0.05);
  if (negated) confidence *= 0.85;
  // A long reply that says many things at once is less certain.
  if (normalized.length > 1_500 && new Set(votes.map((h) => h.rule.label)).size >= 3) confidence *= 0.9;
  const evidence = orderEvidence(top, votes, []);
  // The guards that discarded a phrase are part of what decided it.
  for (const g of guards) if (evidence.length < 8 && !evidence.some((e) => e.rule === g.rule.id)) evidence.push(evidenceOf(g));
  return verdict(winner, confidence, evidence, language, normalized);
}

/** The label alone: `classifyReplyText(text).label`. */
export function classifyReply(text: string | null): Classification {
  return classifyReplyText(text).label;
}

/** Coarse sentiment kept on the lead (`replySentiment`), which the funnel reads; wrong_person and left_company are neutral. */
export function sentimentOf(c: Classification): 'positive' | 'negative' | 'neutral' {
  if (c === 'meeting_intent' || c === 'positive' || c === 'question') return 'positive';
  if (c === 'negative' || c === 'unsubscribe') return 'negative';
  return 'neutral';
}

/** The workspace's reply templates: built in, with the booking link when the prospect wants to meet. */
export function draftReply(c: Classification, input: { firstName: string | null; bookingLink: string | null }): string {
  const hi = `Hi ${input.firstName ?? 'there'},`;
  switch (c) {
    case 'meeting_intent':
      return input.bookingLink
        ? `${hi} great to hear. Here is my calendar, pick any time that suits you: ${input.bookingLink}`
        : `${hi} great to hear. Which times work for you this week or next?`;
    case 'positive':
      return `${hi} thanks for getting back to me. Would a short call next week be useful?`;
    case 'question':
      return `${hi} good question. Happy to explain; would a quick call be easier, or shall I write it up here?`;
    case 'negative':
      return `${hi} understood, thanks for letting me know. I won't follow up.`;
    case 'out_of_office':
      return `${hi} thanks, I'll get back in touch when you're back.`;
    case 'unsubscribe':
      return `${hi} understood. You won't hear from us again.`;
    case 'wrong_person':
      return `${hi} thanks for letting me know. Who would be the right person to talk to about this?`;
    case 'left_company':
      return `${hi} thanks for letting me know, and all the best.`;
    default:
      return `${hi} thanks for your reply.`;
  }
}

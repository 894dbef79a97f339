/**
 * The reply classifier's rules, as data (issue 38 §4): one entry per phrase family, per language. classify.ts runs
 * every entry's `pattern` on the normalized, lower-cased reply (normalizeReplyText, at most the first 4,000
 * characters) and decides from the hits; test/domain/classify-set.test.ts walks this table and fails when an entry is
 * malformed or when no item of the labelled set (test/fixtures/replies/labelled.json) exercises it.
 *
 * Sources: the phrases are the ones people and mail servers write, as collected in the labelled set and the real
 * cases (test/fixtures/inbound/k11…k15, /work/shared/cases); Outlook/Exchange, Gmail and Apple Mail auto-reply and
 * leaver-notice wordings for the out-of-office and left-company families; SMS/X keyword conventions (STOP, STOPP,
 * ARRÊT, BAJA, 退订) for whole-message stop words (docs/opt-out.md).
 *
 * Rules of writing a rule:
 * - patterns are linear: no nested unbounded quantifiers; gaps are bounded (`[^.!?]{0,40}`);
 * - words are delimited with Unicode-aware boundaries (`w()`), since `\b` is ASCII-only; Japanese and Chinese, which
 *   have no spaces, use bare patterns (`cjk()`);
 * - `confidence` ≥ CONFIDENCE_FLOOR (classify.ts) only for unambiguous phrases: an opt-out from text alone acts at once,
 *   so an ambiguous stop phrase ("stop" inside a sentence, "remove" alone) stays below the floor and goes to a person;
 * - `notIn` lists languages in which the phrase means something else: when tinyld is confident the text is in one of
 *   them the rule does not run (short replies defeat detection; then every rule runs);
 * - `effect: 'negate'` marks a guard: hits of `label` that lie inside the guard's match are discarded ("I don't want
 *   to unsubscribe"), and the verdict's confidence is lowered.
 */
import { ANY_RULES } from './classify-rules/any-language.js';
import { EN_RULES } from './classify-rules/english.js';
import { DE_RULES } from './classify-rules/german.js';
import { FR_RULES } from './classify-rules/french.js';
import { ES_RULES } from './classify-rules/spanish.js';
import { IT_RULES } from './classify-rules/italian.js';
import { PT_RULES } from './classify-rules/portuguese.js';
import { NL_RULES } from './classify-rules/dutch.js';
import { DA_RULES } from './classify-rules/danish.js';
import { SV_RULES } from './classify-rules/swedish.js';
import { NO_RULES } from './classify-rules/norwegian.js';
import { FI_RULES } from './classify-rules/finnish.js';
import { PL_RULES } from './classify-rules/polish.js';
import { JA_RULES } from './classify-rules/japanese.js';
import { ZH_RULES } from './classify-rules/chinese.js';
import type { ReplyRule } from './classify-rules/types.js';

export { CLASSIFICATIONS, RULE_LANGUAGES, type Classification, type ReplyRule } from './classify-rules/types.js';
export { STOP_WORDS } from './classify-rules/any-language.js';

/**
 * The table. Order inside a label does not matter; classify.ts decides between labels in CLASSIFICATIONS order
 * (unsubscribe > left_company > out_of_office > wrong_person > negative > meeting_intent > question > positive).
 */
export const REPLY_RULES: readonly ReplyRule[] = [
  ...ANY_RULES,
  ...EN_RULES,
  ...DE_RULES,
  ...FR_RULES,
  ...ES_RULES,
  ...IT_RULES,
  ...PT_RULES,
  ...NL_RULES,
  ...DA_RULES,
  ...SV_RULES,
  ...NO_RULES,
  ...FI_RULES,
  ...PL_RULES,
  ...JA_RULES,
  ...ZH_RULES,
];

/** An auto-reply subject prefix, the label it marks and its language (null when several languages share it). */
export interface AutoReplySubject {
  phrase: string;
  label: 'out_of_office' | 'left_company';
  language: string | null;
}

/** One entry per phrase, all of one language and label. */
function prefixes(language: string | null, label: AutoReplySubject['label'], phrases: readonly string[]): AutoReplySubject[] {
  return phrases.map((phrase) => ({ phrase, label, language }));
}

/**
 * Localized auto-reply subject prefixes (issue 38 §4): Outlook/Exchange, Gmail, Apple Mail and the big webmailers in
 * each language. Matched at the start of the subject (after an optional bracket), case-insensitively, on the
 * normalized subject. `language` null when the prefix is shared by several languages ("Autosvar").
 */
export const AUTO_REPLY_SUBJECTS: readonly AutoReplySubject[] = [
  // en
  ...prefixes('en', 'out_of_office', [
    'automatic reply',
    'auto reply',
    'auto-reply',
    'autoreply',
    'auto response',
    'automatic response',
    'out of office',
    'out of the office',
    'ooo',
    'away from the office',
    'auto:',
  ]),
  ...prefixes('en', 'left_company', ['no longer with', 'no longer at', 'mailbox no longer monitored']),
  // de
  ...prefixes('de', 'out_of_office', ['automatische antwort', 'autom. antwort', 'abwesenheitsnotiz', 'abwesenheitsmeldung', 'abwesend', 'nicht im büro']),
  ...prefixes('de', 'left_company', ['nicht mehr im unternehmen']),
  // fr
  ...prefixes('fr', 'out_of_office', ['réponse automatique', "message d'absence", 'absence du bureau', 'absent du bureau', 'absent(e) du bureau']),
  // es
  ...prefixes('es', 'out_of_office', ['respuesta automática', 'fuera de la oficina', 'fuera de oficina']),
  // it
  ...prefixes('it', 'out_of_office', ['risposta automatica', 'fuori sede', 'fuori ufficio']),
  // pt
  ...prefixes('pt', 'out_of_office', ['resposta automática', 'resposta automatica', 'fora do escritório', 'ausência temporária']),
  // nl
  ...prefixes('nl', 'out_of_office', ['automatisch antwoord', 'afwezig', 'niet aanwezig', 'afwezigheidsbericht']),
  // da / no / sv
  ...prefixes(null, 'out_of_office', ['autosvar', 'automatisk svar', 'fraværende']),
  ...prefixes('no', 'out_of_office', ['fravær']),
  ...prefixes(null, 'out_of_office', ['ikke på kontoret']),
  ...prefixes('sv', 'out_of_office', ['automatiskt svar', 'frånvaro', 'frånvarande', 'inte på kontoret']),
  // fi
  ...prefixes('fi', 'out_of_office', ['automaattinen vastaus', 'poissaoloilmoitus', 'poissa toimistolta']),
  // pl
  ...prefixes('pl', 'out_of_office', ['automatyczna odpowiedź', 'odpowiedź automatyczna', 'poza biurem', 'nieobecność']),
  // ja
  ...prefixes('ja', 'out_of_office', ['自動応答', '自動返信', '不在通知', '不在のお知らせ', '不在']),
  // zh
  ...prefixes('zh', 'out_of_office', ['自动回复', '自動回覆', '自動回復']),
  ...prefixes(null, 'out_of_office', ['外出']),
  ...prefixes('zh', 'out_of_office', ['休假中']),
];

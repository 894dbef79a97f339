/** The reply classifier's vocabulary: its labels, the shape of a rule and the languages the rule families cover. */
/** Reply classifications, most decisive first: between labels with confident evidence, the earlier one wins. */
export const CLASSIFICATIONS = [
  'unsubscribe',
  'left_company',
  'out_of_office',
  'wrong_person',
  'negative',
  'meeting_intent',
  'question',
  'positive',
  'other',
] as const;
export type Classification = (typeof CLASSIFICATIONS)[number];

export interface ReplyRule {
  /** Stable id, `<language|any>-<label short>-<what>`; reported in ReplyEvidence.rule. */
  id: string;
  label: Classification;
  /** ISO 639-1 code of the language the phrase belongs to, or null for any language. */
  language: string | null;
  /** Run on normalized, lower-cased text; Unicode flag, never global or sticky. */
  pattern: RegExp;
  /** 0..1: how sure a hit of this rule alone makes the label. */
  confidence: number;
  /** Languages (ISO 639-1) in which the phrase means something else: skipped when tinyld confidently detects one. */
  notIn?: readonly string[];
  /** A guard: discards hits of `label` inside its own match instead of voting for `label`. */
  effect?: 'negate';
  note?: string;
}

/** Languages every stop-request, refusal, out-of-office and leaver family covers. */
export const RULE_LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'da', 'sv', 'no', 'fi', 'pl', 'ja', 'zh'] as const;

import { w } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The Danish rules (da). */
export const DA_RULES: readonly ReplyRule[] = [
  {
    id: 'da-unsub-afmeld',
    label: 'unsubscribe',
    language: 'da',
    pattern: w('afmeld(?: mig| os)?|frameld(?: mig)?|fjern (?:mig|os|min e-?mail(?:adresse)?) fra'),
    confidence: 0.95,
  },
  {
    id: 'da-unsub-ikke-flere',
    label: 'unsubscribe',
    language: 'da',
    pattern: w(
      '(?:ønsker|vil) ikke (?:at )?modtage flere|kontakt (?:mig|os) ikke (?:igen|mere)|ikke kontakte (?:mig|os) (?:igen|mere)|ingen flere (?:e-?mails|mails|henvendelser)|stop med at (?:sende|skrive|kontakte)',
    ),
    confidence: 0.95,
  },
  {
    id: 'da-left',
    label: 'left_company',
    language: 'da',
    pattern: w(
      'ikke længere ansat|ikke længere (?:hos|i|ved)|(?:har|er) (?:forladt|fratrådt|stoppet i) (?:virksomheden|firmaet|selskabet)|fratrådt|gået på pension',
    ),
    confidence: 0.95,
  },
  {
    id: 'da-ooo',
    label: 'out_of_office',
    language: 'da',
    pattern: w('(?:er )?på ferie|ikke på kontoret|begrænset adgang|fraværende|på barsel'),
    confidence: 0.9,
    note: 'shared with Norwegian for "på ferie" / "ikke på kontoret"',
  },
  {
    id: 'da-wrong',
    label: 'wrong_person',
    language: 'da',
    pattern: w('ikke mig,? der (?:står for|tager mig af|håndterer)|ikke den rette (?:person|kontakt)|(?:skriv|tal) (?:til|med) min kollega'),
    confidence: 0.88,
  },
  {
    id: 'da-neg',
    label: 'negative',
    language: 'da',
    pattern: w('nej tak|ikke interesserede?|ingen interesse'),
    confidence: 0.9,
  },
  {
    id: 'da-meet',
    label: 'meeting_intent',
    language: 'da',
    pattern: w('(?:tage|holde|aftale) et møde|mødes (?:på|i)'),
    confidence: 0.85,
  },
  {
    id: 'da-pos',
    label: 'positive',
    language: 'da',
    pattern: w('lyder interessant|mere information|send gerne'),
    confidence: 0.8,
  },
];

import { w } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The Norwegian rules (no). */
export const NO_RULES: readonly ReplyRule[] = [
  {
    id: 'no-unsub-meld-av',
    label: 'unsubscribe',
    language: 'no',
    pattern: w(
      'meld (?:meg|oss) av|avmeld(?: meg)?|fjern (?:meg|oss|min e-?post(?:adresse)?) fra|(?:ønsker|vil) ikke (?:å )?motta flere|ikke kontakt (?:meg|oss) (?:igjen|mer)|ikke send (?:meg|oss) (?:flere|mer)|send (?:meg|oss) ikke flere|ingen flere e-?poster|slutt å (?:sende|kontakte|skrive)',
    ),
    confidence: 0.95,
  },
  {
    id: 'no-left',
    label: 'left_company',
    language: 'no',
    pattern: w('(?:jobber|arbeider) ikke lenger|ikke lenger ansatt|(?:har )?sluttet (?:i|hos|ved)|gått av med pensjon|pensjonert'),
    confidence: 0.95,
  },
  {
    id: 'no-ooo',
    label: 'out_of_office',
    language: 'no',
    pattern: w('ferie til|begrenset tilgang|i permisjon|fraværende|ikke på kontoret før|tilbake på kontoret'),
    confidence: 0.9,
  },
  {
    id: 'no-wrong',
    label: 'wrong_person',
    language: 'no',
    pattern: w('ikke (?:rett|riktig) person|(?:snakk|ta kontakt) med (?:kollegaen min|min kollega)'),
    confidence: 0.88,
  },
  {
    id: 'no-neg',
    label: 'negative',
    language: 'no',
    pattern: w('nei,? takk|ikke interessert|ingen interesse'),
    confidence: 0.9,
  },
  {
    id: 'no-meet',
    label: 'meeting_intent',
    language: 'no',
    pattern: w('ta et møte|(?:møtes|ses) på|(?:mandag|tirsdag|onsdag|torsdag|fredag) kl'),
    confidence: 0.85,
  },
  {
    id: 'no-pos',
    label: 'positive',
    language: 'no',
    pattern: w('høres interessant ut|mer informasjon|send meg gjerne'),
    confidence: 0.8,
  },
];

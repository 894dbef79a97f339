import { w } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The Swedish rules (sv). */
export const SV_RULES: readonly ReplyRule[] = [
  {
    id: 'sv-unsub-avregistrera',
    label: 'unsubscribe',
    language: 'sv',
    pattern: w('avregistrera(?: mig)?|avprenumerera|avanmäl(?:a)?(?: mig)?|ta bort (?:mig|oss|min (?:e-?post|mejl)(?:adress)?) från'),
    confidence: 0.95,
  },
  {
    id: 'sv-unsub-inte-fler',
    label: 'unsubscribe',
    language: 'sv',
    pattern: w(
      '(?:vill|önskar) inte (?:få|ta emot) (?:fler|mer|några fler) (?:mejl|mail|e-?post|utskick)|kontakta (?:mig|oss) inte (?:igen|mer)|sluta (?:skicka|maila|mejla|kontakta)',
    ),
    confidence: 0.95,
  },
  {
    id: 'sv-left',
    label: 'left_company',
    language: 'sv',
    pattern: w('(?:har )?slutat (?:på|hos|sin anställning)|arbetar inte (?:längre|kvar) (?:på|hos|för)|inte längre anställd|(?:gått|går) i pension'),
    confidence: 0.95,
  },
  {
    id: 'sv-ooo',
    label: 'out_of_office',
    language: 'sv',
    pattern: w('på semester|ledig (?:till|t\\.o\\.m\\.|fram till)|inte på kontoret|begränsad tillgång|tjänstledig|föräldraledig|frånvarande'),
    confidence: 0.9,
  },
  {
    id: 'sv-ooo-semester',
    label: 'out_of_office',
    language: 'sv',
    pattern: w('semester'),
    confidence: 0.86,
    notIn: ['en', 'de', 'nl'],
    note: '"semester" is a vacation in Swedish but a term of study in English, German and Dutch',
  },
  {
    id: 'sv-wrong',
    label: 'wrong_person',
    language: 'sv',
    pattern: w('inte (?:rätt|den rätta) person|(?:prata|tala) med min kollega'),
    confidence: 0.88,
  },
  {
    id: 'sv-neg',
    label: 'negative',
    language: 'sv',
    pattern: w('nej tack|inte intresserade?|inget intresse'),
    confidence: 0.9,
  },
  {
    id: 'sv-meet',
    label: 'meeting_intent',
    language: 'sv',
    pattern: w('ska vi (?:ses|höras|ta ett möte|boka)|(?:boka|ta) ett möte|(?:måndag|tisdag|onsdag|torsdag|fredag) kl\\.? ?\\d+'),
    confidence: 0.85,
  },
  {
    id: 'sv-pos',
    label: 'positive',
    language: 'sv',
    pattern: w('låter intressant|mer information|skicka gärna'),
    confidence: 0.8,
  },
];

import { w } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The Polish rules (pl). */
export const PL_RULES: readonly ReplyRule[] = [
  {
    id: 'pl-unsub-usunac',
    label: 'unsubscribe',
    language: 'pl',
    pattern: w(
      '(?:o )?usunięcie (?:mnie|mojego adresu|moich danych)|niewysyłanie|(?:usunąć|usuńcie|usuń) (?:mnie|mój (?:adres|e-?mail))|mnie (?:usunąć|wypisać)|wypisz(?:cie)? mnie|wypisać mnie',
    ),
    confidence: 0.95,
  },
  {
    id: 'pl-unsub-nie-pisac',
    label: 'unsubscribe',
    language: 'pl',
    pattern: w(
      '(?:więcej )?do mnie nie pisać|nie (?:chcę|życzę sobie) (?:otrzymywać|dostawać)|proszę (?:więcej )?nie (?:pisać|kontaktować)|nie (?:piszcie|kontaktujcie się)',
    ),
    confidence: 0.95,
  },
  {
    id: 'pl-left',
    label: 'left_company',
    language: 'pl',
    pattern: w(
      'nie pracuje już|już nie pracuje|nie jest już (?:pracownikiem|zatrudnion[ya])|(?:odszedł|odeszła|odszedłem|odeszłam) z (?:firmy|pracy)|przesz(?:edł|ła) na emeryturę',
    ),
    confidence: 0.95,
  },
  {
    id: 'pl-ooo',
    label: 'out_of_office',
    language: 'pl',
    pattern: w('poza biurem|na urlopie|ograniczonym dostępem|nieobecn(?:y|a|ość)'),
    confidence: 0.9,
  },
  {
    id: 'pl-wrong',
    label: 'wrong_person',
    language: 'pl',
    pattern: w('nie jestem (?:właściwą|odpowiednią) osobą|nie zajmuję się'),
    confidence: 0.88,
  },
  {
    id: 'pl-neg',
    label: 'negative',
    language: 'pl',
    pattern: w('nie,? dziękuję|nie (?:jestem|jesteśmy) zainteresowan[\\p{L}]*|nie interesuje'),
    confidence: 0.9,
  },
  {
    id: 'pl-meet',
    label: 'meeting_intent',
    language: 'pl',
    pattern: w('(?:możemy|możecie) porozmawiać|umówmy się|(?:poniedziałek|wtorek|środę|czwartek|piątek) o \\d+'),
    confidence: 0.85,
  },
  {
    id: 'pl-pos',
    label: 'positive',
    language: 'pl',
    pattern: w('brzmi ciekawie|więcej informacji'),
    confidence: 0.8,
  },
];

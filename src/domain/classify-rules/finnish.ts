import { w } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The Finnish rules (fi). */
export const FI_RULES: readonly ReplyRule[] = [
  {
    id: 'fi-unsub-poistakaa',
    label: 'unsubscribe',
    language: 'fi',
    pattern: w('poistakaa minut|poista minut|peruuta(?:n)? (?:tilaus|uutiskirje)'),
    confidence: 0.95,
  },
  {
    id: 'fi-unsub-ei-enaa',
    label: 'unsubscribe',
    language: 'fi',
    pattern: w(
      '(?:en|emme) halua (?:enää )?(?:sähköposteja|viestejä|postia)|älkää (?:ottako|lähettäkö)|älä (?:ota|lähetä)|lopet(?:takaa|a) (?:viestien|sähköpostien)',
    ),
    confidence: 0.95,
  },
  {
    id: 'fi-left',
    label: 'left_company',
    language: 'fi',
    pattern: w('ei (?:enää )?työskentele|ei ole enää töissä|jäänyt eläkkeelle|(?:on|olen) lopettanut (?:työt|työskentelyn)'),
    confidence: 0.95,
  },
  {
    id: 'fi-ooo',
    label: 'out_of_office',
    language: 'fi',
    pattern: w('lomalla|vuosilomalla|poissa (?:toimistolta|töistä)|rajoitetusti|palaan (?:toimistolle|töihin)'),
    confidence: 0.9,
  },
  {
    id: 'fi-wrong',
    label: 'wrong_person',
    language: 'fi',
    pattern: w('en ole oikea henkilö|kollegani [\\p{L}]+(?: [\\p{L}]+)? hoitaa|ei kuulu minulle'),
    confidence: 0.88,
  },
  {
    id: 'fi-neg',
    label: 'negative',
    language: 'fi',
    pattern: w('ei kiitos|(?:emme ole|en ole) kiinnostuneita|(?:en ole) kiinnostunut|ei kiinnosta'),
    confidence: 0.9,
  },
  {
    id: 'fi-meet',
    label: 'meeting_intent',
    language: 'fi',
    pattern: w('soitetaanko|tavataanko|(?:sovitaan|sopia) (?:palaveri|tapaaminen)'),
    confidence: 0.85,
  },
  {
    id: 'fi-pos',
    label: 'positive',
    language: 'fi',
    pattern: w('kuulostaa kiinnostavalta|lisätietoja'),
    confidence: 0.8,
  },
];

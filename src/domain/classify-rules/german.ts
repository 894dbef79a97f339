import { w } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The German rules (de). */
export const DE_RULES: readonly ReplyRule[] = [
  {
    id: 'de-unsub-abmelden',
    label: 'unsubscribe',
    language: 'de',
    pattern: w(
      'abmelden|abmeldung|austragen|(?:melden|meldet) (?:sie |du )?mich [^.!?]{0,60}ab(?= ?(?:[.!,;]|$| und| bitte| danke))|trag(?:en sie|t)? mich [^.!?]{0,40}aus',
    ),
    confidence: 0.95,
    note: '"melden Sie mich … ab" is a stop request; "Ich melde mich nächste Woche" is not (no "ab" at the end)',
  },
  {
    id: 'de-unsub-verteiler',
    label: 'unsubscribe',
    language: 'de',
    pattern: w(
      '(?:nehmen|streichen|entfernen|löschen) sie mich (?:bitte )?(?:aus|von)|(?:löschen sie|lösche) (?:bitte )?(?:meine|alle meine) (?:daten|kontaktdaten|e-?mail-?adresse|adresse)',
    ),
    confidence: 0.95,
  },
  {
    id: 'de-unsub-keine-mails',
    label: 'unsubscribe',
    language: 'de',
    pattern: w(
      'keine (?:weiteren|weitere) (?:e-?mails|mails|nachrichten|werbung)|keine (?:e-?mails|mails|nachrichten|werbung) mehr|(?:kontaktieren|schreiben|anschreiben|mailen|belästigen) sie mich (?:bitte )?nicht mehr|(?:kontaktiere|schreib|schreibt) mich nicht mehr|(?:hören sie|hört|hör) auf,? mir',
    ),
    confidence: 0.95,
  },
  {
    id: 'de-left-nicht-mehr-bei',
    label: 'left_company',
    language: 'de',
    pattern: w(
      '(?:ist|bin) (?:nicht mehr|nicht länger) (?:bei|für|im unternehmen|in unserem hause|tätig|beschäftigt|angestellt)|(?:hat|habe) (?:das unternehmen|die firma|unser unternehmen|unser haus|uns)[^!?]{0,30}verlassen|ausgeschieden|(?:im|in den) ruhestand|pensioniert',
    ),
    confidence: 0.95,
  },
  {
    id: 'de-ooo-abwesend',
    label: 'out_of_office',
    language: 'de',
    pattern: w(
      'nicht im (?:büro|hause|haus)|außer haus|abwesend|abwesenheit|urlaub|elternzeit|mutterschutz|dienstreise|wieder erreichbar|wieder im (?:büro|hause|office)|eingeschränkt(?:em|en)? zugriff|nur eingeschränkt',
    ),
    confidence: 0.92,
  },
  {
    id: 'de-wrong-zustaendig',
    label: 'wrong_person',
    language: 'de',
    pattern: w(
      'nicht zuständig|nicht (?:der richtige|die richtige) (?:ansprechpartner(?:in)?|person)|bei mir (?:leider )?falsch|falsche[nr]? ansprechpartner|wenden sie sich (?:bitte )?an (?:meinen|meine) (?:kollegen|kollegin)',
    ),
    confidence: 0.9,
  },
  {
    id: 'de-neg-kein-interesse',
    label: 'negative',
    language: 'de',
    pattern: w(
      'kein(?:e|en)? interesse|nicht interessiert|nein,? danke|brauchen (?:wir )?keine?n? (?:anruf|termin|lösung|tool)|(?:sind|bin) (?:bereits |schon )?versorgt|haben (?:bereits|schon) (?:eine lösung|einen anbieter|ein tool)',
    ),
    confidence: 0.9,
  },
  {
    id: 'de-meet-termin',
    label: 'meeting_intent',
    language: 'de',
    pattern: w(
      'telefonieren|(?:einen |ein )?(?:termin|telefonat|gespräch|call|meeting) (?:für|am|vereinbaren|ausmachen)|lassen sie uns (?:sprechen|telefonieren|treffen)|treffen wir uns|(?:montag|dienstag|mittwoch|donnerstag|freitag) um \\d+',
    ),
    confidence: 0.85,
  },
  {
    id: 'de-pos-interessant',
    label: 'positive',
    language: 'de',
    pattern: w('klingt (?:interessant|gut|spannend)|mehr informationen|bin interessiert|interessiert mich'),
    confidence: 0.8,
  },
];

import { w } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The Dutch rules (nl). */
export const NL_RULES: readonly ReplyRule[] = [
  {
    id: 'nl-unsub-uitschrijven',
    label: 'unsubscribe',
    language: 'nl',
    pattern: w(
      'uitschrijven|(?:mij|me) (?:uit te schrijven|af te melden)|schrijf (?:mij|me) (?:alstublieft |aub |graag )?uit|afmelden|meld (?:mij|me) (?:alstublieft )?af|(?:haal|verwijder) (?:mij|me|mijn (?:gegevens|e-?mailadres)) (?:alstublieft |aub |graag )?(?:van|uit)|(?:mij|me) (?:van|uit) (?:de|uw|jullie|het) (?:mailinglijst|lijst|verzendlijst|bestand) (?:halen|verwijderen|afhalen)',
    ),
    confidence: 0.95,
  },
  {
    id: 'nl-unsub-geen-mails',
    label: 'unsubscribe',
    language: 'nl',
    pattern: w(
      'geen (?:e-?mails|mails|berichten) meer|niet meer (?:mailen|benaderen|contacteren)|neem geen contact meer|stop met (?:mailen|e-?mailen|berichten sturen)',
    ),
    confidence: 0.95,
  },
  {
    id: 'nl-left',
    label: 'left_company',
    language: 'nl',
    pattern: w(
      'niet meer (?:werkzaam|in dienst|actief) (?:bij|voor)|uit dienst(?: getreden| gegaan)?|met pensioen|(?:heeft|heb) (?:het bedrijf|de organisatie|ons) verlaten|werkt niet meer (?:bij|voor)',
    ),
    confidence: 0.95,
  },
  {
    id: 'nl-ooo',
    label: 'out_of_office',
    language: 'nl',
    pattern: w('afwezig|niet aanwezig|(?:met|op) vakantie|beperkt toegang|buiten kantoor|met verlof|zwangerschapsverlof'),
    confidence: 0.92,
  },
  {
    id: 'nl-wrong',
    label: 'wrong_person',
    language: 'nl',
    pattern: w('daar ga ik niet over|niet de juiste (?:persoon|contactpersoon)|(?:kunt|kan) (?:u|je) (?:beter|het beste) (?:mijn|onze) (?:collega|afdeling)'),
    confidence: 0.88,
  },
  {
    id: 'nl-neg',
    label: 'negative',
    language: 'nl',
    pattern: w('geen interesse|niet geïnteresseerd|nee,? dank(?: u| je)?|hebben (?:al|reeds) (?:een|iets)'),
    confidence: 0.9,
  },
  {
    id: 'nl-meet',
    label: 'meeting_intent',
    language: 'nl',
    pattern: w(
      '(?:zullen|kunnen|laten) we (?:[\\p{L}\\p{N}]+ ){0,4}(?:bellen|afspreken|spreken)|(?:maandag|dinsdag|woensdag|donderdag|vrijdag) om \\d+|afspraak (?:maken|inplannen)',
    ),
    confidence: 0.85,
  },
  {
    id: 'nl-pos',
    label: 'positive',
    language: 'nl',
    pattern: w('klinkt interessant|meer informatie|ben geïnteresseerd'),
    confidence: 0.8,
  },
];

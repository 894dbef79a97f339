import { B, E, escape, whole } from './patterns.js';
import type { ReplyRule } from './types.js';

/**
 * Whole messages that ask to stop, as SMS and X automation rules read them (STOP, UNSUBSCRIBE, CANCEL, …) and their
 * single-word equivalents in the other languages when unambiguous (STOPP, ARRÊT, BAJA, 退订, …): compared
 * case-insensitively, trimmed, without punctuation or apostrophes. A message that only says one of these is an
 * unsubscribe on every channel, to be honoured at once (docs/opt-out.md).
 */
export const STOP_WORDS: readonly string[] = [
  'stop',
  'stop it',
  'stop now',
  'stop please',
  'please stop',
  'stopall',
  'stop all',
  'unsubscribe',
  'unsubscribe me',
  'unsub',
  'opt out',
  'optout',
  'opt me out',
  'cancel',
  'end',
  'quit',
  'remove me',
  'stop messaging me',
  'stop texting me',
  'stop contacting me',
  'stop writing to me',
  'leave me alone',
  // other languages: whole-message opt-out keywords
  'stopp', // de, sv, no, da SMS keyword
  'arrêt', // fr SMS keyword
  'arret',
  'désabonner',
  'désinscription',
  'abmelden',
  'austragen',
  'baja', // es SMS keyword
  'darme de baja',
  'cancelar suscripción',
  'disiscrivimi',
  'cancellami',
  'descadastrar',
  'descadastre',
  'uitschrijven',
  'afmelden',
  'afmeld',
  'afmeld mig',
  'avregistrera',
  'avregistrera mig',
  'meld meg av',
  'avmeld',
  'wypisz',
  'wypisz mnie',
  '配信停止',
  '配信解除',
  '退订',
  '取消订阅',
  '退訂',
];

/** Rules that read any language: whole-message stop words, a stop clause, bare punctuation. */
export const ANY_RULES: readonly ReplyRule[] = [
  {
    id: 'any-unsub-stop-word',
    label: 'unsubscribe',
    language: null,
    pattern: whole(STOP_WORDS.map((s) => escape(s).replace(/ /g, '[^\\p{L}\\p{N}]+')).join('|')),
    confidence: 0.99,
    note: 'the whole message is a stop word (STOP_WORDS)',
  },
  {
    id: 'any-unsub-stop-clause',
    label: 'unsubscribe',
    language: null,
    pattern: /(?:^|[.!?;,:] ?)(?:please |pls |just |so )?stop(?: it| now| please| this| all)?(?= ?(?:[.!;,]|$))/u,
    confidence: 0.9,
    note: '"STOP." / "Please stop, not interested": stop as a clause of its own (SMS keyword, read in any language)',
  },
  {
    id: 'any-unsub-stop-weak',
    label: 'unsubscribe',
    language: null,
    pattern: new RegExp(
      `(?<!(?:non|one|bus|full|pit|don't|dont|won't|can't|cannot|didn't|never|not)[ -])(?<!-)${B}stop${E}(?! by| in| over| at| for| and think)(?!-)`,
      'u',
    ),
    confidence: 0.45,
    note: '"stop" inside a sentence: ambiguous ("we had to stop the pilot"), so below the floor: a person decides',
  },
  {
    id: 'any-unsub-remove-alone',
    label: 'unsubscribe',
    language: 'en',
    pattern: whole('(?:please |pls )?(?:remove|delete)(?: please| pls| thanks)?'),
    confidence: 0.55,
    note: '"Remove" as the whole message: probably a stop request, but could answer anything; a person decides',
  },
  {
    id: 'any-question-mark',
    label: 'question',
    language: null,
    pattern: /[?¿]/u,
    confidence: 0.75,
    note: 'a question mark (NFKC folds the full-width ？ of Japanese and Chinese)',
  },
];

import { w } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The French rules (fr). */
export const FR_RULES: readonly ReplyRule[] = [
  {
    id: 'fr-unsub-retirer',
    label: 'unsubscribe',
    language: 'fr',
    pattern: w(
      '(?:me|nous) (?:retirer|supprimer|désinscrire|desinscrire|enlever|radier) (?:de|des|du)|(?:retirez|supprimez|enlevez|désinscrivez|radiez)-moi|(?:me )?désabonner|désabonnement|désinscription|desabonner|supprime[rz] (?:mes|toutes mes) (?:coordonnées|données)',
    ),
    confidence: 0.95,
  },
  {
    id: 'fr-unsub-ne-plus',
    label: 'unsubscribe',
    language: 'fr',
    pattern: w(
      'ne (?:me|nous) (?:contactez|écrivez|sollicitez|envoyez|recontactez) plus|ne plus (?:me |nous )?(?:contacter|recevoir|solliciter)|ne (?:veux|souhaite|désire) plus (?:recevoir|être contacté)',
    ),
    confidence: 0.95,
  },
  {
    id: 'fr-left',
    label: 'left_company',
    language: 'fr',
    pattern: w(
      "ne fait plus partie|ne travaille plus (?:chez|pour|au sein|dans)|(?:a|ai) quitté (?:la société|l'entreprise|le groupe|notre|nos|(?!le bureau|mon bureau)[\\p{L}\\p{N}&.-]{2,40})|(?:a|ai) pris (?:sa|ma) retraite|(?:est|suis) (?:parti|partie) à la retraite|n'est plus (?:en poste|chez)",
    ),
    confidence: 0.95,
  },
  {
    id: 'fr-ooo',
    label: 'out_of_office',
    language: 'fr',
    pattern: w(
      "absente? (?:du bureau|jusqu)|(?:en|de) congés?|en vacances|accès limité|de retour le|en déplacement|hors du bureau|absence du bureau|message d'absence",
    ),
    confidence: 0.92,
  },
  {
    id: 'fr-wrong',
    label: 'wrong_person',
    language: 'fr',
    pattern: w("(?:pas|plus) la bonne personne|pas le bon (?:interlocuteur|contact)|ne (?:m'occupe|gère) pas|voyez (?:plutôt )?avec|adressez-vous à"),
    confidence: 0.88,
  },
  {
    id: 'fr-neg',
    label: 'negative',
    language: 'fr',
    pattern: w(
      "non,? merci|pas intéressée?s?|ne (?:nous|m') intéresse pas|ne nous intéresse pas|ne m'intéresse pas|pas d'intérêt|avons déjà (?:une solution|un outil|un prestataire)|pas pour nous",
    ),
    confidence: 0.9,
  },
  {
    id: 'fr-meet',
    label: 'meeting_intent',
    language: 'fr',
    pattern: w(
      "s'appeler|se voir|prenons rendez-vous|(?:un|une) (?:appel|rendez-vous|visio|réunion) (?:lundi|mardi|mercredi|jeudi|vendredi|la semaine)|(?:lundi|mardi|mercredi|jeudi|vendredi) à \\d+",
    ),
    confidence: 0.85,
  },
  {
    id: 'fr-pos',
    label: 'positive',
    language: 'fr',
    pattern: w("(?:ça|cela) m'intéresse|plus d'informations|envoyez-moi (?:des|plus de) (?:détails|infos)|intéressant"),
    confidence: 0.8,
  },
];

import { w } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The Italian rules (it). */
export const IT_RULES: readonly ReplyRule[] = [
  {
    id: 'it-unsub-cancellare',
    label: 'unsubscribe',
    language: 'it',
    pattern: w(
      'cancellar(?:mi|ci)|rimuover(?:mi|ci)|rimuovetemi|cancellatemi|toglietemi|eliminatemi|disiscriver(?:mi|ci)|disiscrizione|cancellami|rimuovimi|toglimi',
    ),
    confidence: 0.95,
  },
  {
    id: 'it-unsub-non-contattare',
    label: 'unsubscribe',
    language: 'it',
    pattern: w(
      'non (?:mi|ci) (?:contattate|contattare|scrivete|scrivere|inviate) più|non (?:contattatemi|scrivetemi|mandatemi|inviatemi|cercatemi) più|non (?:voglio|desidero) più ricevere|smettete(?:la)? di (?:scrivermi|inviarmi|contattarmi)',
    ),
    confidence: 0.95,
  },
  {
    id: 'it-left',
    label: 'left_company',
    language: 'it',
    pattern: w(
      "non (?:lavora|lavoro) più|non (?:fa|faccio) più parte|(?:ha|ho) lasciato (?:l'azienda|la società|il gruppo)|(?:è|sono) (?:andat[oaie]) in pensione",
    ),
    confidence: 0.95,
  },
  {
    id: 'it-ooo',
    label: 'out_of_office',
    language: 'it',
    pattern: w("fuori (?:ufficio|sede)|in ferie|in vacanza|accesso limitato|assente (?:dall'ufficio|fino)|rientrerò|in maternità|in congedo"),
    confidence: 0.92,
  },
  {
    id: 'it-wrong',
    label: 'wrong_person',
    language: 'it',
    pattern: w('non sono la persona giusta|non sono il referente|se ne occupa (?:il mio collega|la mia collega)|non me ne occupo|non è di mia competenza'),
    confidence: 0.88,
  },
  {
    id: 'it-neg',
    label: 'negative',
    language: 'it',
    pattern: w('no,? grazie|non (?:siamo|sono) interessat[oiae]|non (?:ci|mi) interessa|abbiamo già (?:una|un)'),
    confidence: 0.9,
  },
  {
    id: 'it-meet',
    label: 'meeting_intent',
    language: 'it',
    pattern: w(
      'ci sentiamo|(?:una )?(?:chiamata|call|riunione) (?:lunedì|martedì|mercoledì|giovedì|venerdì)|(?:lunedì|martedì|mercoledì|giovedì|venerdì) alle \\d+|fissiamo (?:una|un)',
    ),
    confidence: 0.85,
  },
  {
    id: 'it-pos',
    label: 'positive',
    language: 'it',
    pattern: w('interessante|maggiori informazioni|mi interessa'),
    confidence: 0.8,
  },
];

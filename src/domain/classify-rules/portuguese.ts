import { w } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The Portuguese rules (pt). */
export const PT_RULES: readonly ReplyRule[] = [
  {
    id: 'pt-unsub-remover',
    label: 'unsubscribe',
    language: 'pt',
    pattern: w(
      'remov(?:am|a|er)-me|(?:me )?(?:remova|removam|retire|retirem|exclua|excluam|tirem) da (?:sua |vossa )?(?:lista|base)|descadastr(?:e|ar|em)(?:-me)?|cancelar (?:a )?(?:minha )?inscrição',
    ),
    confidence: 0.95,
  },
  {
    id: 'pt-unsub-nao-enviem',
    label: 'unsubscribe',
    language: 'pt',
    pattern: w(
      'não (?:me|nos) (?:enviem|envie|mandem|mande|contactem|contacte|contatem|contate|escrevam) mais|(?:parem|pare) de (?:me )?(?:enviar|mandar|contactar|contatar|escrever)|não quero (?:mais )?receber',
    ),
    confidence: 0.95,
  },
  {
    id: 'pt-left',
    label: 'left_company',
    language: 'pt',
    pattern: w(
      '(?:já )?não (?:trabalha|trabalho) mais|já não (?:trabalha|trabalho)|não (?:faz|faço) mais parte|(?:deixou|deixei) a empresa|se aposentou|aposentou-se|(?:está|estou) aposentad[oa]',
    ),
    confidence: 0.95,
  },
  {
    id: 'pt-ooo',
    label: 'out_of_office',
    language: 'pt',
    pattern: w('fora do escritório|de férias|acesso limitado|ausente (?:do escritório|até)|em licença|estarei de volta'),
    confidence: 0.92,
  },
  {
    id: 'pt-wrong',
    label: 'wrong_person',
    language: 'pt',
    pattern: w('não sou a pessoa (?:certa|indicada|responsável)|fale com (?:o meu|a minha|meu|minha) colega|não (?:cuido|trato) disso'),
    confidence: 0.88,
  },
  {
    id: 'pt-neg',
    label: 'negative',
    language: 'pt',
    pattern: w('não,? obrigad[oa]|não (?:temos|tenho) interesse|sem interesse|não (?:nos|me) interessa|já (?:temos|usamos) (?:uma|um)'),
    confidence: 0.9,
  },
  {
    id: 'pt-meet',
    label: 'meeting_intent',
    language: 'pt',
    pattern: w('marcar uma (?:reunião|call|conversa)|(?:segunda|terça|quarta|quinta|sexta)(?:-feira)? às \\d+|podemos (?:conversar|falar)'),
    confidence: 0.85,
  },
  {
    id: 'pt-pos',
    label: 'positive',
    language: 'pt',
    pattern: w('tenho interesse|mais informações'),
    confidence: 0.8,
  },
];

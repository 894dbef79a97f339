import { w } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The Spanish rules (es). */
export const ES_RULES: readonly ReplyRule[] = [
  {
    id: 'es-unsub-baja',
    label: 'unsubscribe',
    language: 'es',
    pattern: w(
      'dar(?:me|nos|se) de baja|(?:denme|déme|deme|den|dé) de baja|(?:elimínenme|elimíneme|elimíname|bórrenme|bórreme|quítenme|quíteme|sáquenme|sáqueme)|(?:eliminar|borrar|quitar|sacar)(?:me|nos) de (?:su|la|esta|vuestra) (?:lista|base)|cancelar (?:mi )?suscripción',
    ),
    confidence: 0.95,
    note: '"estoy de baja (médica)" is sick leave, not a stop request: only "dar(me) de baja" counts',
  },
  {
    id: 'es-unsub-no-escriban',
    label: 'unsubscribe',
    language: 'es',
    pattern: w(
      'no (?:me|nos) (?:vuelvan|vuelva|vuelvas) a (?:escribir|contactar|enviar|llamar)|no (?:me|nos) (?:escriban|contacten|envíen|manden) más|(?:deje|dejen|deja) de (?:enviarme|escribirme|contactarme|mandarme)|no quiero recibir más',
    ),
    confidence: 0.95,
  },
  {
    id: 'es-left',
    label: 'left_company',
    language: 'es',
    pattern: w(
      'ya no (?:trabaja|trabajo|forma parte|formo parte|pertenece)|(?:ha|he) dejado (?:la empresa|de trabajar)|(?:se ha|me he) jubilado|(?:se ha|me he) ido de la empresa',
    ),
    confidence: 0.95,
  },
  {
    id: 'es-ooo',
    label: 'out_of_office',
    language: 'es',
    pattern: w(
      'fuera de (?:la )?oficina|de vacaciones|acceso limitado|ausente (?:de la oficina|hasta)|de baja (?:médica|por maternidad|por paternidad)|estaré de vuelta',
    ),
    confidence: 0.92,
  },
  {
    id: 'es-wrong',
    label: 'wrong_person',
    language: 'es',
    pattern: w(
      'no soy la persona (?:adecuada|indicada|correcta)|hable con mi (?:compañer[oa]|colega)|no (?:me encargo|llevo) (?:de )?(?:esto|este tema)|no es mi área',
    ),
    confidence: 0.88,
  },
  {
    id: 'es-neg',
    label: 'negative',
    language: 'es',
    pattern: w('no,? gracias|no (?:nos|me) interesa|no (?:estamos|estoy) interesad[oa]s?|ya (?:tenemos|contamos con) (?:una|un)'),
    confidence: 0.9,
  },
  {
    id: 'es-meet',
    label: 'meeting_intent',
    language: 'es',
    pattern: w(
      'hablamos el|(?:una )?(?:llamada|reunión) (?:el|esta|para)|(?:lunes|martes|miércoles|jueves|viernes) a las \\d+|agendar|podemos (?:hablar|reunirnos|vernos)',
    ),
    confidence: 0.85,
  },
  {
    id: 'es-pos',
    label: 'positive',
    language: 'es',
    pattern: w('me interesa|cuént(?:a|e)me más|más información|suena (?:bien|interesante)'),
    confidence: 0.8,
  },
];

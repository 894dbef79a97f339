/**
 * The reply classifier's rules, as data (issue 38 §4): one entry per phrase family, per language. classify.ts runs
 * every entry's `pattern` on the normalized, lower-cased reply (normalizeReplyText, at most the first 4,000
 * characters) and decides from the hits; test/domain/classify-set.test.ts walks this table and fails when an entry is
 * malformed or when no item of the labelled set (test/fixtures/replies/labelled.json) exercises it.
 *
 * Sources: the phrases are the ones people and mail servers write, as collected in the labelled set and the real
 * cases (test/fixtures/inbound/k11…k15, /work/shared/cases); Outlook/Exchange, Gmail and Apple Mail auto-reply and
 * leaver-notice wordings for the out-of-office and left-company families; SMS/X keyword conventions (STOP, STOPP,
 * ARRÊT, BAJA, 退订) for whole-message stop words (docs/opt-out.md).
 *
 * Rules of writing a rule:
 * - patterns are linear: no nested unbounded quantifiers; gaps are bounded (`[^.!?]{0,40}`);
 * - words are delimited with Unicode-aware boundaries (`w()`), since `\b` is ASCII-only; Japanese and Chinese, which
 *   have no spaces, use bare patterns (`cjk()`);
 * - `confidence` ≥ CONFIDENCE_FLOOR (classify.ts) only for unambiguous phrases: an opt-out from text alone acts at once,
 *   so an ambiguous stop phrase ("stop" inside a sentence, "remove" alone) stays below the floor and goes to a person;
 * - `notIn` lists languages in which the phrase means something else: when tinyld is confident the text is in one of
 *   them the rule does not run (short replies defeat detection; then every rule runs);
 * - `effect: 'negate'` marks a guard: hits of `label` that lie inside the guard's match are discarded ("I don't want
 *   to unsubscribe"), and the verdict's confidence is lowered.
 */
/** Reply classifications, most decisive first: between labels with confident evidence, the earlier one wins. */
export const CLASSIFICATIONS = [
  'unsubscribe',
  'left_company',
  'out_of_office',
  'wrong_person',
  'negative',
  'meeting_intent',
  'question',
  'positive',
  'other',
] as const;
export type Classification = (typeof CLASSIFICATIONS)[number];

export interface ReplyRule {
  /** Stable id, `<language|any>-<label short>-<what>`; reported in ReplyEvidence.rule. */
  id: string;
  label: Classification;
  /** ISO 639-1 code of the language the phrase belongs to, or null for any language. */
  language: string | null;
  /** Run on normalized, lower-cased text; Unicode flag, never global or sticky. */
  pattern: RegExp;
  /** 0..1: how sure a hit of this rule alone makes the label. */
  confidence: number;
  /** Languages (ISO 639-1) in which the phrase means something else: skipped when tinyld confidently detects one. */
  notIn?: readonly string[];
  /** A guard: discards hits of `label` inside its own match instead of voting for `label`. */
  effect?: 'negate';
  note?: string;
}

/** Languages every stop-request, refusal, out-of-office and leaver family covers. */
export const RULE_LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'da', 'sv', 'no', 'fi', 'pl', 'ja', 'zh'] as const;

const B = '(?<![\\p{L}\\p{N}])';
const E = '(?![\\p{L}\\p{N}])';
/** A phrase delimited by Unicode word boundaries. */
function w(src: string): RegExp {
  return new RegExp(`${B}(?:${src})${E}`, 'u');
}
/** A phrase in a script written without spaces (Japanese, Chinese). */
function cjk(src: string): RegExp {
  return new RegExp(src, 'u');
}
/** The whole message (punctuation and emoji around it ignored). */
function whole(src: string): RegExp {
  return new RegExp(`^[^\\p{L}\\p{N}]*(?:${src})[^\\p{L}\\p{N}]*$`, 'u');
}

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

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const DAYS_EN = '(?:mon|tues|wednes|thurs|fri)day';

/**
 * The table. Order inside a label does not matter; classify.ts decides between labels in CLASSIFICATIONS order
 * (unsubscribe > left_company > out_of_office > wrong_person > negative > meeting_intent > question > positive).
 */
export const REPLY_RULES: readonly ReplyRule[] = [
  // ─────────────── any language ───────────────
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

  // ─────────────── English ───────────────
  {
    id: 'en-unsub-word',
    label: 'unsubscribe',
    language: 'en',
    pattern: w("unsubscribe|unsub|(?:i've|i have|i had|already) unsubscribed"),
    confidence: 0.95,
  },
  {
    id: 'en-unsub-negated',
    label: 'unsubscribe',
    language: 'en',
    effect: 'negate',
    pattern: w(
      "(?:don't|do not|didn't|did not|never) (?:want|mean|wish|need) to (?:unsubscribe|opt out|be removed)|no need to (?:unsubscribe|remove me)|not (?:trying|asking|looking) to (?:unsubscribe|opt out)",
    ),
    confidence: 0,
    note: '"I don\'t want to unsubscribe, just fewer emails": the stop phrase inside is not a stop request',
  },
  {
    id: 'en-unsub-partial',
    label: 'unsubscribe',
    language: 'en',
    effect: 'negate',
    pattern: w('(?:unsubscribe|opt out) (?:me )?(?:from|of) (?:just|only) [^.!?]{0,60}(?:but|and) (?:keep|still)'),
    confidence: 0,
    note: '"unsubscribe from just the newsletter but keep the updates" asks about one list, not to stop everything',
  },
  {
    id: 'en-unsub-remove-me',
    label: 'unsubscribe',
    language: 'en',
    pattern: w(
      '(?:remove|delete|erase|drop) (?:me|us|(?:all )?(?:of )?my (?:personal )?(?:e-?mail(?: address)?|address|name|details|data|contact(?: details)?|info(?:rmation)?))',
    ),
    confidence: 0.96,
  },
  {
    id: 'en-unsub-take-off',
    label: 'unsubscribe',
    language: 'en',
    pattern: w('take (?:me|us|my (?:name|e-?mail|address)) off'),
    confidence: 0.96,
  },
  {
    id: 'en-unsub-dont-contact',
    label: 'unsubscribe',
    language: 'en',
    pattern: w("(?:do not|don't|dont|never|stop trying to) (?:ever )?(?:contact|e-?mail|message|dm|write to|reach out to|spam|bother|pester|mail) (?:me|us)"),
    confidence: 0.96,
    note: '"don\'t call me" is not here: "don\'t call me, e-mail me instead" is not a stop request',
  },
  {
    id: 'en-unsub-stop-verb',
    label: 'unsubscribe',
    language: 'en',
    pattern: w(
      "stop (?:e-?mailing|messaging|contacting|writing(?: to)?|sending|spamming|pinging|bugging|bothering|texting|reaching out|following up|dm'?ing|dming|calling)",
    ),
    confidence: 0.96,
  },
  {
    id: 'en-unsub-opt-out',
    label: 'unsubscribe',
    language: 'en',
    pattern: w('opt(?:[- ]?out| me out| us out)'),
    confidence: 0.93,
  },
  {
    id: 'en-unsub-no-more',
    label: 'unsubscribe',
    language: 'en',
    pattern: w(
      'no (?:more|further) (?:e-?mails|mails|messages|contact|follow-?ups)|leave (?:me|us) alone|refrain from (?:contacting|e-?mailing|messaging|writing)',
    ),
    confidence: 0.93,
  },
  {
    id: 'en-left-no-longer',
    label: 'left_company',
    language: 'en',
    pattern: w(
      '(?:is|am|are) no longer (?:with|at|employed|part of|an employee|working (?:at|for))|no longer works? (?:at|for|with)|no longer employed (?:by|at|with)',
    ),
    confidence: 0.95,
  },
  {
    id: 'en-left-has-left',
    label: 'left_company',
    language: 'en',
    pattern: new RegExp(
      `${B}(?:(?:has|have|had) (?:now )?left|(?:i|she|he|they|pat) left) (?:the (?:company|business|firm|organi[sz]ation)${E}|(?!the |a |an |my |you |it |this |some |for |early|work|here|now|me |us )[\\p{L}\\p{N}&.-]{2,40}(?:$|[.,;!]| (?:in|on|as of|at the end|last)${E}))`,
      'u',
    ),
    confidence: 0.9,
  },
  {
    id: 'en-left-retired',
    label: 'left_company',
    language: 'en',
    pattern: w('(?:has|have|had) (?:now )?retired|(?:is|am) (?:now )?retired|retired (?:from|as of|at the end)'),
    confidence: 0.92,
  },
  {
    id: 'en-left-last-day',
    label: 'left_company',
    language: 'en',
    pattern: w(
      '(?:today|friday|yesterday|this) (?:is|was) my last day|my last day (?:at|with)|took over (?:her|his|their) (?:accounts|role|responsibilities|clients|portfolio)',
    ),
    confidence: 0.86,
  },
  {
    id: 'en-left-mailbox-closed',
    label: 'left_company',
    language: 'en',
    pattern: w('(?:mailbox|address|account|inbox) (?:is|will be) (?:no longer (?:monitored|active|in use)|deactivated|closed|disabled)'),
    confidence: 0.75,
    note: 'a closed mailbox usually means the person left; a shared inbox may say it too',
  },
  {
    id: 'en-ooo-out-of-office',
    label: 'out_of_office',
    language: 'en',
    pattern: w('out of (?:the )?office|ooo|away from (?:the|my) (?:office|desk)|automatic reply|auto-?reply'),
    confidence: 0.93,
  },
  {
    id: 'en-ooo-leave',
    label: 'out_of_office',
    language: 'en',
    pattern: w(
      'on (?:annual |parental |maternity |paternity |sick |medical |study |compassionate )?leave|on (?:vacation|holiday|holidays|pto|sabbatical)|closed for the holidays|(?:office|we) (?:is|are|will be) closed (?:for|until|from)',
    ),
    confidence: 0.9,
  },
  {
    id: 'en-ooo-limited-access',
    label: 'out_of_office',
    language: 'en',
    pattern: w(
      "(?:limited|intermittent|restricted|no) access to (?:my )?(?:e-?mail|messages|inbox)|(?:will|i'll) (?:reply|respond) when i(?:'m| am)? (?:back|return)",
    ),
    confidence: 0.88,
  },
  {
    id: 'en-ooo-travelling',
    label: 'out_of_office',
    language: 'en',
    pattern: w("(?:i'm|i am) (?:currently )?(?:travell?ing|at a conference|on a business trip)"),
    confidence: 0.6,
    note: 'a person writes it in a real answer too ("Not next week, I am travelling"): below the floor, a person reads it',
  },
  {
    id: 'en-wrong-not-right-person',
    label: 'wrong_person',
    language: 'en',
    pattern: w(
      "(?:not|n't) (?:the )?(?:right|correct|best|appropriate|relevant) (?:person|contact)|wrong (?:person|contact|department|team)|(?:you have|you've got|you got) the wrong|not the decision ?maker|not the (?:person|one) (?:who|that) (?:handles|deals with|looks after|manages|decides|makes)",
    ),
    confidence: 0.9,
  },
  {
    id: 'en-wrong-not-my-area',
    label: 'wrong_person',
    language: 'en',
    pattern: w(
      "(?:i|we) (?:don't|do not) (?:handle|deal with|look after|manage|own|decide on) (?:this|that|these|it)|(?:not|isn't) (?:my|our) (?:area|department|call|decision|responsibility|remit)|not responsible for|(?:i'm|i am) not (?:involved in|in charge of)",
    ),
    confidence: 0.88,
  },
  {
    id: 'en-wrong-colleague',
    label: 'wrong_person',
    language: 'en',
    pattern: new RegExp(
      `${B}(?:(?:talk|speak|reach out|write|get in touch) (?:to|with) (?:my|our) (?:colleague|coworker|co-worker|manager|boss|cto|ceo|cfo|head of)|my (?:colleague|coworker|co-worker) [\\p{L}.'-]{2,30}(?: [\\p{L}.'-]{2,30})? (?:handles|is responsible|looks after|owns|manages|deals with)|(?:you should|you'll want to|better to|best to) (?:speak|talk|reach out|write)|would be the (?:one|person) to ask|is the (?:right|best) person)${E}`,
      'u',
    ),
    confidence: 0.85,
  },
  {
    id: 'en-neg-not-interested',
    label: 'negative',
    language: 'en',
    pattern: w(
      "not (?:really |at all |currently |very )?interested|no interest|(?:we're|we are|i'm|i am) not looking|not looking (?:for|at|to)|no,? thanks?(?: you)?|thanks,? but no|(?:we'll|we will|we're going to|i'll|going to) pass|^pass",
    ),
    confidence: 0.9,
  },
  {
    id: 'en-neg-all-set',
    label: 'negative',
    language: 'en',
    pattern: w(
      "(?:we're|we are) (?:all )?(?:set|good|covered|sorted)|already (?:have|use|using|work with|signed with|chose|went with)|(?:decided|chose|going) (?:to go )?with (?:another|a different|someone else|a competitor)|happy with (?:our|what we|the current)|(?:built|build|building|do|handle|developed) (?:this|it|that|our own|one) in-house|(?:built|have|use) our own (?:tool|solution|system|platform)",
    ),
    confidence: 0.88,
  },
  {
    id: 'en-neg-no-fit',
    label: 'negative',
    language: 'en',
    pattern: w(
      "not (?:a (?:good )?fit|for us|relevant (?:for|to) us|a priority)|no (?:budget|need)|(?:don't|do not) (?:have|need) (?:budget|a need|the budget|a call|this)|not (?:right )?now|not this (?:year|quarter)",
    ),
    confidence: 0.85,
  },
  {
    id: 'en-meet-schedule',
    label: 'meeting_intent',
    language: 'en',
    pattern: w(
      '(?:set up|schedule|book|arrange|have|hop on|jump on|grab) (?:a |an |some )?(?:quick |short |brief |\\d+ ?(?:-| )?min(?:ute)?s? )?(?:call|meeting|chat|demo|zoom|slot|time)|book \\d+ minutes|(?:send|share) (?:me |over )?(?:a |an )?(?:calendar )?(?:invite|invitation|zoom link|teams link|meeting link)|calendar invite|zoom link|up for a (?:demo|call|chat)',
    ),
    confidence: 0.85,
  },
  {
    id: 'en-meet-lets-talk',
    label: 'meeting_intent',
    language: 'en',
    pattern: w(
      `(?:let's|lets|happy to|glad to|can we|could we|shall we|we could) (?:meet|chat|talk|speak|connect|hop on)|let's do ${DAYS_EN}|(?:stop|drop|swing|come) by (?:our|my) (?:booth|stand|office|table)|(?:call|ring) me (?:tomorrow|today|on|at|next)|talk (?:on )?${DAYS_EN}`,
    ),
    confidence: 0.82,
  },
  {
    id: 'en-meet-time',
    label: 'meeting_intent',
    language: 'en',
    pattern: w(
      `${DAYS_EN} (?:at |@ )?\\d+|\\d{1,2}(?::\\d\\d)? ?(?:am|pm)|works for me|(?:i'm|i am) free (?:on|at|this|next)|free on ${DAYS_EN}|(?:my|your) (?:availability|calendar)|\\d+ minutes on ${DAYS_EN}`,
    ),
    confidence: 0.8,
  },
  {
    id: 'en-pos-interested',
    label: 'positive',
    language: 'en',
    pattern: w(
      "(?:i'm|i am|we're|we are|sounds|very|definitely|i'd be|would be) (?:very |definitely |quite |really )?interest(?:ed|ing)|sounds (?:good|great)|interesting timing|(?:yes|yeah|yep|sure),? (?:i'm|i am|we're|please)|tell me more|send (?:me |over )?(?:more |some )?(?:info|information|details|the deck|the one-pager|a deck)|(?:keen|happy|love|eager) to (?:learn|hear|see) more|timing is (?:actually )?good|looks (?:great|good|interesting)|love it|send (?:me )?more|^interesting",
    ),
    confidence: 0.8,
  },

  // ─────────────── German ───────────────
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

  // ─────────────── French ───────────────
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

  // ─────────────── Spanish ───────────────
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

  // ─────────────── Italian ───────────────
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

  // ─────────────── Portuguese ───────────────
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

  // ─────────────── Dutch ───────────────
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

  // ─────────────── Danish ───────────────
  {
    id: 'da-unsub-afmeld',
    label: 'unsubscribe',
    language: 'da',
    pattern: w('afmeld(?: mig| os)?|frameld(?: mig)?|fjern (?:mig|os|min e-?mail(?:adresse)?) fra'),
    confidence: 0.95,
  },
  {
    id: 'da-unsub-ikke-flere',
    label: 'unsubscribe',
    language: 'da',
    pattern: w(
      '(?:ønsker|vil) ikke (?:at )?modtage flere|kontakt (?:mig|os) ikke (?:igen|mere)|ikke kontakte (?:mig|os) (?:igen|mere)|ingen flere (?:e-?mails|mails|henvendelser)|stop med at (?:sende|skrive|kontakte)',
    ),
    confidence: 0.95,
  },
  {
    id: 'da-left',
    label: 'left_company',
    language: 'da',
    pattern: w(
      'ikke længere ansat|ikke længere (?:hos|i|ved)|(?:har|er) (?:forladt|fratrådt|stoppet i) (?:virksomheden|firmaet|selskabet)|fratrådt|gået på pension',
    ),
    confidence: 0.95,
  },
  {
    id: 'da-ooo',
    label: 'out_of_office',
    language: 'da',
    pattern: w('(?:er )?på ferie|ikke på kontoret|begrænset adgang|fraværende|på barsel'),
    confidence: 0.9,
    note: 'shared with Norwegian for "på ferie" / "ikke på kontoret"',
  },
  {
    id: 'da-wrong',
    label: 'wrong_person',
    language: 'da',
    pattern: w('ikke mig,? der (?:står for|tager mig af|håndterer)|ikke den rette (?:person|kontakt)|(?:skriv|tal) (?:til|med) min kollega'),
    confidence: 0.88,
  },
  {
    id: 'da-neg',
    label: 'negative',
    language: 'da',
    pattern: w('nej tak|ikke interesserede?|ingen interesse'),
    confidence: 0.9,
  },
  {
    id: 'da-meet',
    label: 'meeting_intent',
    language: 'da',
    pattern: w('(?:tage|holde|aftale) et møde|mødes (?:på|i)'),
    confidence: 0.85,
  },
  {
    id: 'da-pos',
    label: 'positive',
    language: 'da',
    pattern: w('lyder interessant|mere information|send gerne'),
    confidence: 0.8,
  },

  // ─────────────── Swedish ───────────────
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

  // ─────────────── Norwegian ───────────────
  {
    id: 'no-unsub-meld-av',
    label: 'unsubscribe',
    language: 'no',
    pattern: w(
      'meld (?:meg|oss) av|avmeld(?: meg)?|fjern (?:meg|oss|min e-?post(?:adresse)?) fra|(?:ønsker|vil) ikke (?:å )?motta flere|ikke kontakt (?:meg|oss) (?:igjen|mer)|ikke send (?:meg|oss) (?:flere|mer)|send (?:meg|oss) ikke flere|ingen flere e-?poster|slutt å (?:sende|kontakte|skrive)',
    ),
    confidence: 0.95,
  },
  {
    id: 'no-left',
    label: 'left_company',
    language: 'no',
    pattern: w('(?:jobber|arbeider) ikke lenger|ikke lenger ansatt|(?:har )?sluttet (?:i|hos|ved)|gått av med pensjon|pensjonert'),
    confidence: 0.95,
  },
  {
    id: 'no-ooo',
    label: 'out_of_office',
    language: 'no',
    pattern: w('ferie til|begrenset tilgang|i permisjon|fraværende|ikke på kontoret før|tilbake på kontoret'),
    confidence: 0.9,
  },
  {
    id: 'no-wrong',
    label: 'wrong_person',
    language: 'no',
    pattern: w('ikke (?:rett|riktig) person|(?:snakk|ta kontakt) med (?:kollegaen min|min kollega)'),
    confidence: 0.88,
  },
  {
    id: 'no-neg',
    label: 'negative',
    language: 'no',
    pattern: w('nei,? takk|ikke interessert|ingen interesse'),
    confidence: 0.9,
  },
  {
    id: 'no-meet',
    label: 'meeting_intent',
    language: 'no',
    pattern: w('ta et møte|(?:møtes|ses) på|(?:mandag|tirsdag|onsdag|torsdag|fredag) kl'),
    confidence: 0.85,
  },
  {
    id: 'no-pos',
    label: 'positive',
    language: 'no',
    pattern: w('høres interessant ut|mer informasjon|send meg gjerne'),
    confidence: 0.8,
  },

  // ─────────────── Finnish ───────────────
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

  // ─────────────── Polish ───────────────
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

  // ─────────────── Japanese ───────────────
  {
    id: 'ja-unsub',
    label: 'unsubscribe',
    language: 'ja',
    pattern: cjk(
      '配信停止|配信を停止|配信解除|送らないでください|送信しないでください|送付不要|(?:ご)?連絡(?:は)?不要|(?:リスト|名簿|データベース|配信先)から(?:削除|外して)|連絡しないでください',
    ),
    confidence: 0.95,
  },
  {
    id: 'ja-left',
    label: 'left_company',
    language: 'ja',
    pattern: cjk('退職(?:いたしました|致しました|しました|しております)|既に退職|退社(?:いたしました|しました)'),
    confidence: 0.95,
  },
  {
    id: 'ja-ooo',
    label: 'out_of_office',
    language: 'ja',
    pattern: cjk('不在にしております|不在のため|休暇(?:のため|中|をいただいて)|外出(?:中|しております)|出張(?:中|のため)|戻り次第|確認ができません'),
    confidence: 0.92,
  },
  {
    id: 'ja-wrong',
    label: 'wrong_person',
    language: 'ja',
    pattern: cjk('担当ではありません|担当者ではありません|担当外|私の担当では'),
    confidence: 0.88,
  },
  {
    id: 'ja-neg',
    label: 'negative',
    language: 'ja',
    pattern: cjk('見送らせて|興味(?:は|が)?(?:ありません|ない)|必要ありません|間に合っております'),
    confidence: 0.9,
  },
  {
    id: 'ja-meet',
    label: 'meeting_intent',
    language: 'ja',
    pattern: cjk('打ち合わせ|ミーティング|面談|日程調整'),
    confidence: 0.85,
  },
  {
    id: 'ja-pos',
    label: 'positive',
    language: 'ja',
    pattern: cjk('興味があります|資料を(?:送って|お送り)'),
    confidence: 0.8,
  },

  // ─────────────── Chinese ───────────────
  {
    id: 'zh-unsub',
    label: 'unsubscribe',
    language: 'zh',
    pattern: cjk('退订|退訂|取消订阅|取消訂閱|不要再(?:给|給|向)我|不要再(?:发|發|寄)|别再(?:给|發|发)|(?:列表|名单)中?删除|不再接收'),
    confidence: 0.95,
  },
  {
    id: 'zh-left',
    label: 'left_company',
    language: 'zh',
    pattern: cjk('已离职|已離職|离职了|已离开公司|已退休|不在[^。，,.]{0,12}工作了'),
    confidence: 0.95,
  },
  {
    id: 'zh-ooo',
    label: 'out_of_office',
    language: 'zh',
    pattern: cjk('休假|不在办公室|不在辦公室|出差|返回办公室|年假'),
    confidence: 0.92,
  },
  {
    id: 'zh-wrong',
    label: 'wrong_person',
    language: 'zh',
    pattern: cjk('我不负责|我不負責|不是负责人|不归我管'),
    confidence: 0.88,
  },
  {
    id: 'zh-neg',
    label: 'negative',
    language: 'zh',
    pattern: cjk('不用了|不感兴趣|不感興趣|没有兴趣|不需要'),
    confidence: 0.9,
  },
  {
    id: 'zh-meet',
    label: 'meeting_intent',
    language: 'zh',
    pattern: cjk('开个会|开会|會議|会议|通话|见面'),
    confidence: 0.85,
  },
  {
    id: 'zh-pos',
    label: 'positive',
    language: 'zh',
    pattern: cjk('很感兴趣|了解更多|(?:发|發)[^。]{0,6}资料'),
    confidence: 0.8,
  },
];

/**
 * Localized auto-reply subject prefixes (issue 38 §4): Outlook/Exchange, Gmail, Apple Mail and the big webmailers in
 * each language. Matched at the start of the subject (after an optional bracket), case-insensitively, on the
 * normalized subject. `language` null when the prefix is shared by several languages ("Autosvar").
 */
export const AUTO_REPLY_SUBJECTS: readonly { phrase: string; label: 'out_of_office' | 'left_company'; language: string | null }[] = [
  // en
  { phrase: 'automatic reply', label: 'out_of_office', language: 'en' },
  { phrase: 'auto reply', label: 'out_of_office', language: 'en' },
  { phrase: 'auto-reply', label: 'out_of_office', language: 'en' },
  { phrase: 'autoreply', label: 'out_of_office', language: 'en' },
  { phrase: 'auto response', label: 'out_of_office', language: 'en' },
  { phrase: 'automatic response', label: 'out_of_office', language: 'en' },
  { phrase: 'out of office', label: 'out_of_office', language: 'en' },
  { phrase: 'out of the office', label: 'out_of_office', language: 'en' },
  { phrase: 'ooo', label: 'out_of_office', language: 'en' },
  { phrase: 'away from the office', label: 'out_of_office', language: 'en' },
  { phrase: 'auto:', label: 'out_of_office', language: 'en' },
  { phrase: 'no longer with', label: 'left_company', language: 'en' },
  { phrase: 'no longer at', label: 'left_company', language: 'en' },
  { phrase: 'mailbox no longer monitored', label: 'left_company', language: 'en' },
  // de
  { phrase: 'automatische antwort', label: 'out_of_office', language: 'de' },
  { phrase: 'autom. antwort', label: 'out_of_office', language: 'de' },
  { phrase: 'abwesenheitsnotiz', label: 'out_of_office', language: 'de' },
  { phrase: 'abwesenheitsmeldung', label: 'out_of_office', language: 'de' },
  { phrase: 'abwesend', label: 'out_of_office', language: 'de' },
  { phrase: 'nicht im büro', label: 'out_of_office', language: 'de' },
  { phrase: 'nicht mehr im unternehmen', label: 'left_company', language: 'de' },
  // fr
  { phrase: 'réponse automatique', label: 'out_of_office', language: 'fr' },
  { phrase: "message d'absence", label: 'out_of_office', language: 'fr' },
  { phrase: 'absence du bureau', label: 'out_of_office', language: 'fr' },
  { phrase: 'absent du bureau', label: 'out_of_office', language: 'fr' },
  { phrase: 'absent(e) du bureau', label: 'out_of_office', language: 'fr' },
  // es
  { phrase: 'respuesta automática', label: 'out_of_office', language: 'es' },
  { phrase: 'fuera de la oficina', label: 'out_of_office', language: 'es' },
  { phrase: 'fuera de oficina', label: 'out_of_office', language: 'es' },
  // it
  { phrase: 'risposta automatica', label: 'out_of_office', language: 'it' },
  { phrase: 'fuori sede', label: 'out_of_office', language: 'it' },
  { phrase: 'fuori ufficio', label: 'out_of_office', language: 'it' },
  // pt
  { phrase: 'resposta automática', label: 'out_of_office', language: 'pt' },
  { phrase: 'resposta automatica', label: 'out_of_office', language: 'pt' },
  { phrase: 'fora do escritório', label: 'out_of_office', language: 'pt' },
  { phrase: 'ausência temporária', label: 'out_of_office', language: 'pt' },
  // nl
  { phrase: 'automatisch antwoord', label: 'out_of_office', language: 'nl' },
  { phrase: 'afwezig', label: 'out_of_office', language: 'nl' },
  { phrase: 'niet aanwezig', label: 'out_of_office', language: 'nl' },
  { phrase: 'afwezigheidsbericht', label: 'out_of_office', language: 'nl' },
  // da / no / sv
  { phrase: 'autosvar', label: 'out_of_office', language: null },
  { phrase: 'automatisk svar', label: 'out_of_office', language: null },
  { phrase: 'fraværende', label: 'out_of_office', language: null },
  { phrase: 'fravær', label: 'out_of_office', language: 'no' },
  { phrase: 'ikke på kontoret', label: 'out_of_office', language: null },
  { phrase: 'automatiskt svar', label: 'out_of_office', language: 'sv' },
  { phrase: 'frånvaro', label: 'out_of_office', language: 'sv' },
  { phrase: 'frånvarande', label: 'out_of_office', language: 'sv' },
  { phrase: 'inte på kontoret', label: 'out_of_office', language: 'sv' },
  // fi
  { phrase: 'automaattinen vastaus', label: 'out_of_office', language: 'fi' },
  { phrase: 'poissaoloilmoitus', label: 'out_of_office', language: 'fi' },
  { phrase: 'poissa toimistolta', label: 'out_of_office', language: 'fi' },
  // pl
  { phrase: 'automatyczna odpowiedź', label: 'out_of_office', language: 'pl' },
  { phrase: 'odpowiedź automatyczna', label: 'out_of_office', language: 'pl' },
  { phrase: 'poza biurem', label: 'out_of_office', language: 'pl' },
  { phrase: 'nieobecność', label: 'out_of_office', language: 'pl' },
  // ja
  { phrase: '自動応答', label: 'out_of_office', language: 'ja' },
  { phrase: '自動返信', label: 'out_of_office', language: 'ja' },
  { phrase: '不在通知', label: 'out_of_office', language: 'ja' },
  { phrase: '不在のお知らせ', label: 'out_of_office', language: 'ja' },
  { phrase: '不在', label: 'out_of_office', language: 'ja' },
  // zh
  { phrase: '自动回复', label: 'out_of_office', language: 'zh' },
  { phrase: '自動回覆', label: 'out_of_office', language: 'zh' },
  { phrase: '自動回復', label: 'out_of_office', language: 'zh' },
  { phrase: '外出', label: 'out_of_office', language: null },
  { phrase: '休假中', label: 'out_of_office', language: 'zh' },
];

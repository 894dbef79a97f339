import { B, E, w } from './patterns.js';
import type { ReplyRule } from './types.js';

const DAYS_EN = '(?:mon|tues|wednes|thurs|fri)day';

/** The English rules (en). */
export const EN_RULES: readonly ReplyRule[] = [
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
];

/** Reply classifications, most decisive first: the first rule that matches wins. */
export const CLASSIFICATIONS = ['unsubscribe', 'out_of_office', 'negative', 'meeting_intent', 'question', 'positive', 'other'] as const;
export type Classification = (typeof CLASSIFICATIONS)[number];

const RULES: [Classification, RegExp][] = [
  [
    'unsubscribe',
    /\b(unsubscribe|remove me|opt[\s-]?out|take me off|stop (e-?mailing|messaging|contacting|writing)|do not (contact|email|message)|don'?t (contact|email|message))\b/i,
  ],
  [
    'out_of_office',
    /\b(out of (the )?office|on (annual |parental |maternity |paternity )?leave|on vacation|on holiday|away until|back on|auto-?reply|automatic reply|limited access to (my )?e-?mail)\b/i,
  ],
  [
    'negative',
    /\b(not interested|no thanks|no thank you|not a (good )?fit|not for us|we'?re (all )?set|already (have|use|using)|not looking|no need|not right now|please stop)\b/i,
  ],
  [
    'meeting_intent',
    /\b(meet|meeting|call|chat|calendar|schedule|book|demo|zoom|teams|available|availability|free (on|at)|next week|tomorrow|(mon|tues|wednes|thurs|fri)day)\b/i,
  ],
  ['question', /\?/],
  ['positive', /\b(interested|sounds (good|great|interesting)|tell me more|love to|happy to|keen|yes|sure|great|thanks|thank you)\b/i],
];

/**
 * Whole messages that ask to stop, as SMS and X automation rules read them (STOP, UNSUBSCRIBE, CANCEL, …): compared
 * case-insensitively, trimmed, without punctuation. A message that only says one of these is an unsubscribe on every
 * channel, to be honoured at once (docs/opt-out.md).
 */
const STOP_WORDS: ReadonlySet<string> = new Set([
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
]);

/** Whether the whole text is a stop word (see STOP_WORDS). */
export function isStopWord(text: string | null): boolean {
  if (!text) return false;
  const words = text
    .toLowerCase()
    .replace(/['’]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
  return STOP_WORDS.has(words);
}

export function classifyReply(text: string | null): Classification {
  if (!text) return 'other';
  if (isStopWord(text)) return 'unsubscribe';
  for (const [label, re] of RULES) if (re.test(text)) return label;
  return 'other';
}

/** Coarse sentiment kept on the lead (`replySentiment`), which the funnel reads. */
export function sentimentOf(c: Classification): 'positive' | 'negative' | 'neutral' {
  if (c === 'meeting_intent' || c === 'positive' || c === 'question') return 'positive';
  if (c === 'negative' || c === 'unsubscribe') return 'negative';
  return 'neutral';
}

/** The workspace's reply templates: built in, with the booking link when the prospect wants to meet. */
export function draftReply(c: Classification, input: { firstName: string | null; bookingLink: string | null }): string {
  const hi = `Hi ${input.firstName ?? 'there'},`;
  switch (c) {
    case 'meeting_intent':
      return input.bookingLink
        ? `${hi} great to hear. Here is my calendar, pick any time that suits you: ${input.bookingLink}`
        : `${hi} great to hear. Which times work for you this week or next?`;
    case 'positive':
      return `${hi} thanks for getting back to me. Would a short call next week be useful?`;
    case 'question':
      return `${hi} good question. Happy to explain; would a quick call be easier, or shall I write it up here?`;
    case 'negative':
      return `${hi} understood, thanks for letting me know. I won't follow up.`;
    case 'out_of_office':
      return `${hi} thanks, I'll get back in touch when you're back.`;
    case 'unsubscribe':
      return `${hi} understood. You won't hear from us again.`;
    default:
      return `${hi} thanks for your reply.`;
  }
}

/** The spec's funnel object of a workspace (or sequence) with nothing in it: every count and rate 0, never null. */
export const ZERO_FUNNEL = {
  leads: 0,
  invited: 0,
  accepted: 0,
  messaged: 0,
  replied: 0,
  meetingsBooked: 0,
  repliesPositive: 0,
  repliesNegative: 0,
  acceptRate: 0,
  replyRate: 0,
} as const;

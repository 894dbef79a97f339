/**
 * One definition of every funnel count, shared by GET /progress and GET /reports/funnel (and documented
 * in docs/cross-channel.md), so the same lead is counted the same way in every report.
 *
 * Counts are per lead and lifetime: a lead is counted once per milestone it has a saved timestamp for,
 * whatever its current stage (a lead that failed after being invited still counts as invited).
 */

/**
 * Reply classifications that make a replied lead positive or negative when the lead has no stored
 * sentiment; the same split as the engine's sentimentOf (src/engine/classify.ts), plus common synonyms
 * that seeded data may carry.
 */
export const POSITIVE_CLASSIFICATIONS = ['meeting_intent', 'positive', 'question', 'interested'] as const;
export const NEGATIVE_CLASSIFICATIONS = ['negative', 'unsubscribe', 'not_interested', 'opt_out'] as const;

/** Meeting outcomes that take a booked meeting out of `meetingsQualifying`. */
export const NO_SHOW_OR_CANCELLED_OUTCOMES = ['no_show', 'cancelled', 'canceled'] as const;
export const DISQUALIFIED_OUTCOMES = ['disqualified', 'not_qualified', 'unqualified'] as const;

export interface FunnelCountsRow {
  leads: number | string;
  invited: number | string;
  accepted: number | string;
  messaged: number | string;
  replied: number | string;
  meetings_booked: number | string;
  replies_positive: number | string;
  replies_negative: number | string;
  meetings_qualifying: number | string;
  meetings_no_show_or_cancelled: number | string;
}

// Four decimals: enough to tell arms apart, stable across engines whose float printing differs.
const rate = (num: number, den: number) => (den === 0 ? 0 : Math.round((num / den) * 10_000) / 10_000);

export function toFunnel(row: FunnelCountsRow | undefined) {
  const n = (v: number | string | undefined) => Number(v ?? 0);
  const invited = n(row?.invited);
  const accepted = n(row?.accepted);
  const messaged = n(row?.messaged);
  const replied = n(row?.replied);
  return {
    leads: n(row?.leads),
    invited,
    accepted,
    messaged,
    replied,
    meetingsBooked: n(row?.meetings_booked),
    repliesPositive: n(row?.replies_positive),
    repliesNegative: n(row?.replies_negative),
    acceptRate: rate(accepted, invited),
    replyRate: rate(replied, messaged),
  };
}

export function toProgressFunnel(row: FunnelCountsRow | undefined) {
  return {
    ...toFunnel(row),
    meetingsQualifying: Number(row?.meetings_qualifying ?? 0),
    meetingsNoShowOrCancelled: Number(row?.meetings_no_show_or_cancelled ?? 0),
  };
}

export type Funnel = ReturnType<typeof toFunnel>;
export type ProgressFunnel = ReturnType<typeof toProgressFunnel>;

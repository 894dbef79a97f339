import { Type } from 'typebox';
import { Nullable, Uuid } from '../../app/schemas.js';

const Count = (description?: string) => Type.Integer({ minimum: 0, ...(description && { description }) });
const Rate = (description: string) => Type.Number({ minimum: 0, description });

const funnelFields = {
  leads: Count('every lead of the workspace'),
  invited: Count('leads with a connection request sent (invitedAt set)'),
  accepted: Count('leads that accepted the connection (connectedAt set)'),
  messaged: Count('leads sent at least one message (messagedAt set)'),
  replied: Count('leads that replied (repliedAt set)'),
  meetingsBooked: Count('leads with a booked meeting (meetingBookedAt set)'),
  repliesPositive: Count('replied leads whose sentiment is positive: stored replySentiment, else the classification of the latest reply'),
  repliesNegative: Count('replied leads whose sentiment is negative, by the same rule'),
  acceptRate: Rate('accepted / invited, 0 when invited is 0; four decimals'),
  replyRate: Rate('replied / messaged, 0 when messaged is 0; four decimals'),
};

export const Funnel = Type.Object(funnelFields, { description: 'Lifetime counts over every lead of the workspace (all of its accounts).' });

export const ProgressFunnel = Type.Object(
  {
    ...funnelFields,
    meetingsQualifying: Count('booked meetings whose outcome is not a no-show, cancellation or disqualification (no outcome yet counts)'),
    meetingsNoShowOrCancelled: Count('booked meetings whose outcome is no_show, cancelled or canceled'),
  },
  { description: 'The funnel plus meeting quality; lifetime.' },
);

export const GROUP_BY = ['sequence', 'account'] as const;

export const FunnelReportQuery = Type.Object(
  {
    group_by: Type.Optional(
      Type.Union([Type.Literal('sequence'), Type.Literal('account')], { default: 'sequence', description: 'sequence (default) or account' }),
    ),
  },
  { additionalProperties: true },
);

export const FunnelReportResponse = Type.Object({
  groupBy: Type.Union([Type.Literal('sequence'), Type.Literal('account')]),
  total: Funnel,
  groups: Type.Array(
    Type.Object({
      id: Nullable(Type.String({ description: 'sequence uuid or messaging-account onb_ id; null groups the leads without one' })),
      name: Nullable(Type.String()),
      funnel: Funnel,
    }),
    { description: 'Every sequence (or messaging account) of the workspace in creation order, then the null group when it has leads.' },
  ),
  experimentArms: Type.Array(
    Type.Object({
      sequenceId: Uuid(),
      variantKey: Type.String(),
      sent: Count('arm leads whose variant step went out: invitedAt for a variant on a connect step, messagedAt otherwise'),
      accepted: Count(),
      replied: Count(),
      meetingsBooked: Count(),
    }),
    { description: 'One arm per sequence and variant key: every key the steps define (zeros until used) and every key assigned to a lead.' },
  ),
  excludedWarmupAccounts: Type.Array(Type.String(), { maxItems: 0, description: 'Always empty; kept for older clients.' }),
});

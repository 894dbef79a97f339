import { Type } from 'typebox';
import { Nullable, Timestamp, UserId, Uuid } from '../../app/schemas.js';
import { LEAD_STAGES, inWords } from '../../domain/vocabulary.js';

/** The spec's full social-network lead object: saved observations, never a live provider probe. */
export const XLead = Type.Object(
  {
    id: Uuid(),
    xUserId: Nullable(UserId()),
    username: Nullable(Type.String()),
    accountUserId: Nullable(UserId()),
    playId: Nullable(Uuid()),
    sequenceId: Nullable(Uuid()),
    stage: Type.String({ description: inWords(LEAD_STAGES) }),
    automationStopped: Type.Boolean({ description: 'true when the sequence is done or stopped; does not say which' }),
    currentStep: Type.Integer(),
    nextActionAt: Nullable(Timestamp()),
    followedAt: Nullable(Timestamp()),
    followedBackAt: Nullable(Timestamp()),
    messagedAt: Nullable(Timestamp()),
    repliedAt: Nullable(Timestamp()),
    optedOutAt: Nullable(Timestamp()),
    deliveryGuaranteed: Type.Literal(false),
  },
  { additionalProperties: false },
);

export const LeadIdParams = Type.Object({ id: Uuid({ description: 'Lead uuid' }) });

export const GetXLeadResponse = Type.Object({ lead: XLead });

export const StopXLeadResponse = Type.Object({
  ok: Type.Literal(true),
  lead: Nullable(XLead),
  scope: Type.Literal('lead_automation'),
  permanentSuppression: Type.Literal(false),
  note: Type.String(),
});

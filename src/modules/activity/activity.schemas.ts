import { Type } from 'typebox';
import { MessagingAccountId, Nullable, Timestamp, Uuid } from '../../app/schemas.js';
import { ACTIVITY_ACTIONS, ACTIVITY_OUTCOMES } from '../../domain/vocabulary.js';

const Outcome = Type.Enum([...ACTIVITY_OUTCOMES]);

export const ActivityQuery = Type.Object(
  {
    account: Type.Optional(MessagingAccountId()),
    action: Type.Optional(Type.String({ maxLength: 2000, description: `comma-separated actions; each must be one of: ${ACTIVITY_ACTIONS.join(', ')}` })),
    outcome: Type.Optional(Outcome),
    sinceDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, description: 'entries of the last N days (1 to 365)' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 200, description: 'page size, 1 to 1000 (default 200)' })),
  },
  { additionalProperties: true },
);

export const ActivityEntry = Type.Object({
  id: Uuid(),
  createdAt: Timestamp(),
  action: Type.Enum([...ACTIVITY_ACTIONS]),
  outcome: Outcome,
  units: Type.Integer(),
  detail: Type.String({ description: 'free text or a JSON string; never message text' }),
  account: Nullable(MessagingAccountId()),
  lead: Type.Object(
    { id: Nullable(Uuid()), person: Nullable(Type.String()), company: Nullable(Type.String()), linkedinUrl: Nullable(Type.String()) },
    { description: 'always an object; every field is null for an entry that concerns no lead' },
  ),
});

export const ActivityResponse = Type.Object({
  count: Type.Integer({ minimum: 0, description: 'exact number of entries matching the filters' }),
  returned: Type.Integer({ minimum: 0 }),
  actions: Type.Array(ActivityEntry, { description: 'newest first' }),
});

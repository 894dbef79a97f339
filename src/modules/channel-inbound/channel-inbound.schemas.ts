import { Type } from 'typebox';
import { Uuid } from '../../app/schemas.js';

// POST /channels/{channel}/inbound (docs/channels.md "Push inbound"), an extension of the spec.

/** The largest pushed request read, in bytes: a platform's webhook carries a few messages, never a mailbox. */
export const PUSH_BODY_LIMIT = 256 * 1024;

export const PushParams = Type.Object({
  channel: Type.String({ pattern: '^[a-z][a-z0-9_]{0,39}$', description: 'the channel the platform belongs to (its descriptor’s `channel`)' }),
});

export const PushQuery = Type.Object(
  { workspace: Uuid({ description: 'the workspace whose leads the pushed items concern (given to the platform with the webhook URL)' }) },
  { additionalProperties: true },
);

const Count = (description: string) => Type.Integer({ minimum: 0, description });

export const PushResponse = Type.Object(
  {
    channel: Type.String(),
    received: Count('observations the request carried'),
    applied: Count('recorded: a reply, an acceptance, a follow-back, an auto-reply’s snooze, a leaver’s stop'),
    unchanged: Count('the lead was already past it (a redelivery of the same item)'),
    unmatched: Count('not a lead of the workspace, or an observation of another channel'),
    failed: Count('refused by the observation path; nothing of it was kept, and the other items were applied'),
  },
  { additionalProperties: false },
);

/** The 401 of this route: the platform's signature, not a key, is what it checks. */
export const UnverifiedPush = Type.Object(
  { error: Type.Optional(Type.String()), message: Type.Optional(Type.String()) },
  { additionalProperties: true, description: '`unverified_push`: the request is not signed by the channel’s platform; nothing changed' },
);

import { Type } from 'typebox';
import { MessagingAccountId, Nullable, Timestamp, Uuid, WorkspaceClientHeader } from '../../app/schemas.js';

export const DECISIONS = ['send', 'invite', 'booking_link', 'snooze', 'start_sequence', 'meeting_booked', 'dismiss', 'opt_out'] as const;
export type Decision = (typeof DECISIONS)[number];

export const SNOOZE_DEFAULT_DAYS = 7;
export const SNOOZE_MAX_DAYS = 90;

/** An `invite` decision's meeting length in minutes (docs/meetings.md "Invitations"). */
export const MEETING_MINUTES_DEFAULT = 30;
export const MEETING_MINUTES_MIN = 15;
export const MEETING_MINUTES_MAX = 240;

const DecisionSchema = Type.Enum([...DECISIONS]);

export const RepliesQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'queue size, 1 to 200 (default 50)' })) },
  { additionalProperties: true },
);

const ReplyLead = Type.Object({
  id: Uuid(),
  person: Nullable(Type.String()),
  company: Nullable(Type.String()),
  title: Nullable(Type.String()),
  linkedinUrl: Nullable(Type.String()),
  email: Nullable(Type.String()),
});

export const PendingReply = Type.Object({
  id: Uuid({ description: 'the draft id that POST /replies/{id}/decide takes' }),
  channel: Type.String({ description: 'linkedin, email, x or instagram; x rows are answered on the network itself' }),
  lead: ReplyLead,
  account: Nullable(MessagingAccountId()),
  sequenceId: Nullable(Uuid()),
  classification: Type.String(),
  theirMessage: Nullable(Type.String({ description: 'null when the stored text cannot be decrypted' })),
  theirMessageTruncated: Type.Optional(
    Type.Boolean({
      'x-extension': true,
      description: 'present (true) when the stored text was cut at 20,000 characters, as reply.received says of its own copy',
    }),
  ),
  confidence: Type.Optional(
    Type.Number({
      'x-extension': true,
      minimum: 0,
      maximum: 1,
      description: 'the classifier’s confidence in `classification` (docs/email.md "Reading replies"); absent on replies from before it',
    }),
  ),
  needsReview: Type.Optional(
    Type.Literal(true, {
      'x-extension': true,
      description: 'present when the confidence is below the floor: nothing automatic happened (no opt-out, snooze or stop); a person decides',
    }),
  ),
  draft: Type.Optional(Nullable(Type.String({ description: 'absent on x rows; null when the stored text cannot be decrypted' }))),
  repliedAt: Timestamp(),
  snoozedUntil: Nullable(Timestamp({ description: 'set when the reply came back from a snooze' })),
  allowedDecisions: Type.Optional(Type.Array(DecisionSchema, { description: 'absent on x rows; already filtered by the rules' })),
});

export const RepliesResponse = Type.Object({ replies: Type.Array(PendingReply, { description: 'pending replies, oldest first' }) });

export const ReplyIdParams = Type.Object({ id: Uuid({ description: 'reply (draft) uuid' }) });

export const DecideBody = Type.Object(
  {
    decision: DecisionSchema,
    text: Type.Optional(
      Type.String({ minLength: 1, maxLength: 10_000, pattern: '^[^\\x00]*$', description: 'send only: replaces the draft and is what goes out' }),
    ),
    days: Type.Optional(
      Type.Integer({ minimum: 1, maximum: SNOOZE_MAX_DAYS, description: `snooze only: whole days, 1 to ${SNOOZE_MAX_DAYS} (default ${SNOOZE_DEFAULT_DAYS})` }),
    ),
    by: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\x00]*$', description: 'audit-trail label (default api)' })),
    meetingAt: Type.Optional(
      Timestamp({
        'x-extension': true,
        description: 'invite only: a future start; e-mail sends an iCalendar invitation (without it, the booking link)',
      }),
    ),
    meetingMinutes: Type.Optional(
      Type.Integer({
        'x-extension': true,
        minimum: MEETING_MINUTES_MIN,
        maximum: MEETING_MINUTES_MAX,
        description: `with meetingAt: minutes (default ${MEETING_MINUTES_DEFAULT})`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const DecideHeaders = Type.Object(
  {
    ...WorkspaceClientHeader.properties,
    'idempotency-key': Type.Optional(
      Type.String({
        pattern: '^[\\x21-\\x7e]{1,200}$',
        description: 'A retry with the same key and body returns the first answer; the same key with a different body answers 409 idempotency_key_reused.',
      }),
    ),
  },
  { additionalProperties: true },
);

export const DecideResponse = Type.Object({
  ok: Type.Literal(true),
  replyId: Uuid(),
  leadId: Uuid(),
  decision: DecisionSchema,
  state: Type.Union([Type.Literal('decided'), Type.Literal('snoozed')], { description: 'snoozed replies return to the queue when due' }),
  by: Type.String(),
  decidedAt: Timestamp(),
  snoozedUntil: Nullable(Timestamp()),
  messaged: Type.Boolean({ description: 'true when the decision sent a message to the prospect (send, invite, booking_link)' }),
  sequenceId: Nullable(Uuid({ description: "the lead's sequence after the decision" })),
  optedOutLeadIds: Type.Array(Uuid(), { description: 'opt_out: every lead of the identity now suppressed; empty otherwise' }),
  taskId: Type.Optional(
    Uuid({
      description:
        'send, invite or booking_link on a LinkedIn account set to tasks: the task that carries the answer for a person to send (GET /api/v1/tasks). messaged stays false until it is completed.',
      'x-extension': true,
    }),
  ),
});

/** POST /replies/{id}/handled (extension): an X reply closed once it was answered on X (docs/cross-channel.md "X replies: marked handled"). */
export const MarkHandledResponse = Type.Object({
  ok: Type.Literal(true),
  replyId: Uuid(),
  leadId: Uuid(),
  decision: Type.Enum([...DECISIONS], { description: 'dismiss: the reply left the queue as dismissed (activity reply_dismissed)' }),
  state: Type.Literal('decided'),
  by: Type.String({ description: 'who closed it: `api:<key id>`, `mcp:<key id>`, `console`, … (the first close on a repeat)' }),
  decidedAt: Timestamp(),
  alreadyHandled: Type.Boolean({ description: 'true when it was closed before: nothing changed, the first close is answered' }),
});

/** Each replies operation's schemas, as the HTTP routes and the MCP tools both describe it. */
export const ReplyOperations = {
  list: { query: RepliesQuery, response: RepliesResponse },
  decide: { params: ReplyIdParams, headers: DecideHeaders, body: DecideBody, response: DecideResponse },
  markHandled: { params: ReplyIdParams, response: MarkHandledResponse },
} as const;

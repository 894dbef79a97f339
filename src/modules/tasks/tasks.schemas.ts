import { Type } from 'typebox';
import { MessagingAccountId, Nullable, OneOf, Timestamp, UserId, Uuid } from '../../app/schemas.js';
import { CHANNELS, STEP_KINDS, TASK_STATUSES } from '../../domain/vocabulary.js';

// GET /tasks and POST /tasks/{id}/complete|skip|mark-sent|send-anyway (docs/tasks.md). Every operation is an extension
// of the spec.

export const TASK_KINDS = [...STEP_KINDS, 'reply', 'leaver'] as const;
export const TASKS_LIMIT_DEFAULT = 100;
export const TASKS_LIMIT_MAX = 200;
export const TASK_SOURCES = ['step', 'reply', 'uncertain', 'leaver'] as const;

const TaskStatus = OneOf(TASK_STATUSES, {
  description: '`open` (to do), `done` (a person did it), `skipped` (a person chose not to), `cancelled` (it no longer applies)',
});
const TaskSource = OneOf(TASK_SOURCES, {
  description:
    '`step` (a sequence step a platform keeps from automation), `reply` (a reply decision’s answer), `uncertain` (a send a crash ' +
    'left in flight that no driver could confirm: a person decides whether it arrived), `leaver` (a leaver notice named someone to ' +
    'contact instead: a person decides; nothing is sent automatically)',
});

export const TasksQuery = Type.Object(
  {
    status: Type.Optional(OneOf(TASK_STATUSES, { default: 'open', description: 'default open' })),
    account: Type.Optional(
      Type.String({
        pattern: '^(onb_[0-9a-fA-F-]{36}|[1-9][0-9]{0,19})$',
        description: 'a messaging account id (onb_…) or an X account user id',
      }),
    ),
    kind: Type.Optional(OneOf(TASK_KINDS, { description: 'a step kind, or reply' })),
    source: Type.Optional(OneOf(TASK_SOURCES, { description: 'only tasks of this source (uncertain: the uncertain sends)' })),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: TASKS_LIMIT_MAX,
        default: TASKS_LIMIT_DEFAULT,
        description: `page size, 1 to ${TASKS_LIMIT_MAX} (default ${TASKS_LIMIT_DEFAULT})`,
      }),
    ),
    after: Type.Optional(Uuid({ description: 'the previous page’s nextCursor; omit for the first page' })),
  },
  { additionalProperties: true },
);

const TaskLead = Type.Object({
  id: Uuid(),
  person: Nullable(Type.String()),
  company: Nullable(Type.String()),
  linkedinUrl: Nullable(Type.String()),
  username: Nullable(Type.String({ description: 'the X or Instagram handle, when the lead has one' })),
});

const TaskAction = Type.Object({
  type: Type.String({ description: 'follow, like, comment, endorse, view_profile, …' }),
  count: Nullable(Type.Integer()),
  reaction: Nullable(Type.String()),
});

export const Task = Type.Object({
  id: Uuid(),
  status: TaskStatus,
  source: TaskSource,
  // Open text on the way out: a task of a channel registered at run time (docs/channels.md) carries that channel's
  // own step kind and name.
  kind: Type.String({
    description:
      'the step kind the task does (one of the spec’s, or of a channel registered at run time), `reply` for a reply decision’s ' +
      'answer, or `leaver` for a leaver notice’s replacement',
  }),
  channel: Type.String({ description: `${CHANNELS.join(', ')}, or a channel registered at run time` }),
  action: Type.String({ description: 'the ledger action completing it writes (invite, message, follow_up, reply_sent, …)' }),
  reason: Type.String({
    description:
      'why a person must do it (docs/policy.md): x_dm_not_invited, x_engage_by_person, linkedin_tasks, linkedin_engage_by_person, ' +
      'instagram_no_cold_dm; uncertain_delivery for an uncertain send (docs/tasks.md)',
  }),
  lead: TaskLead,
  account: Nullable(MessagingAccountId()),
  accountName: Nullable(Type.String()),
  xAccount: Nullable(UserId({ description: 'the connected X account’s user id, for an X task' })),
  sequenceId: Nullable(Uuid({ description: 'a step task’s sequence; null for a reply task' })),
  step: Nullable(Type.Integer({ minimum: 0, description: 'a step task’s step index' })),
  replyId: Nullable(Uuid({ description: 'a reply task’s reply' })),
  decision: Nullable(Type.String({ description: 'a reply task’s decision: send, invite or booking_link' })),
  subject: Nullable(Type.String()),
  text: Nullable(Type.String({ description: 'the rendered message to send; null for actions without text or when it cannot be decrypted' })),
  actions: Type.Array(TaskAction, { description: 'an engage task’s actions' }),
  profileUrl: Nullable(Type.String({ description: 'where the person does it: the LinkedIn, X or Instagram profile' })),
  dueAt: Timestamp(),
  overdue: Type.Boolean({ description: 'open more than a day after it fell due' }),
  createdAt: Timestamp(),
  closedAt: Nullable(Timestamp()),
  closedBy: Nullable(Type.String()),
  closedReason: Nullable(
    Type.String({
      description:
        'a cancelled task’s reason: lead_stopped, opted_out, replied, sequence_changed, sequence_archived, no_longer_applies; ' +
        'send_failed for an uncertain e-mail sent anyway that the mail server refused for good',
    }),
  ),
});

export const TasksResponse = Type.Object({
  tasks: Type.Array(Task, { description: 'soonest due first (then by id)' }),
  nextCursor: Nullable(Uuid({ description: 'pass as `after` for the next page; null on the last page' })),
});

export const TaskIdParams = Type.Object({ id: Uuid({ description: 'task uuid' }) });

export const CloseTaskBody = Type.Object(
  { by: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\x00]*$', description: 'audit-trail label (default api)' })) },
  { additionalProperties: false },
);

export const CloseTaskResponse = Task;

import { Type } from 'typebox';
import { AppError, conflict } from '../../lib/errors.js';
import { ReplyOperations as Op, type RepliesService } from '../../modules/replies/index.js';
import { DryRunFlag, READ_ONLY_SAFETY, defineTool } from './types.js';

const MESSAGING = new Set(['send', 'invite', 'booking_link']);
const PENDING_MAX = 200;

const RepliesInput = Type.Object({ ...Op.list.query.properties }, { additionalProperties: false });
const DecideInput = Type.Object(
  {
    replyId: Op.decide.params.properties.id,
    ...Op.decide.body.properties,
    idempotencyKey: Type.Optional(Op.decide.headers.properties['idempotency-key']),
    dryRun: DryRunFlag,
  },
  { additionalProperties: false },
);
const HandledInput = Type.Object({ replyId: Op.markHandled.params.properties.id, dryRun: DryRunFlag }, { additionalProperties: false });

const WOULD_DO: Record<string, string> = {
  send: 'message the prospect with the draft (or the given text) through the reply’s channel',
  invite: 'message the prospect with a meeting invitation through the reply’s channel',
  booking_link: 'message the prospect with the draft and the workspace booking link through the reply’s channel',
  snooze: 'hide the reply for the given days, then return it to the queue',
  start_sequence: 'enroll the lead in the workspace’s follow-up sequence',
  meeting_booked: 'record a booked meeting for the lead',
  dismiss: 'close the reply without answering',
  opt_out: 'permanently suppress every lead of this identity (cannot be undone)',
};

export const repliesTools = [
  defineTool<{ replies: RepliesService }, typeof RepliesInput>({
    name: 'list_replies',
    action: 'read',
    title: 'List pending replies',
    description:
      'The pending-reply queue, oldest first (limit default 50, max 200), each with its drafted answer and allowedDecisions. X rows ' +
      `carry channel x and no draft or allowedDecisions: answered on X, then closed with mark_reply_handled. ${READ_ONLY_SAFETY}`,
    input: RepliesInput,
    output: Op.list.response,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/replies' },
    run: ({ services, auth }, args) => services.replies.listPending(auth.workspaceId, args.limit ?? 50),
  }),
  defineTool<{ replies: RepliesService }, typeof DecideInput>({
    name: 'decide_reply',
    action: 'replies.decide',
    title: 'Decide a pending reply (can message the prospect)',
    description:
      'Applies one of the reply’s allowedDecisions: send (text replaces the draft), invite, booking_link, snooze (days 1 to 90), ' +
      'start_sequence, meeting_booked, dismiss, opt_out. 409 decision_not_allowed, reply_already_decided, answered_on_x (see ' +
      'mark_reply_handled); 404 reply not found. idempotencyKey: a retry answers the first answer. Safety: contacts a prospect: ' +
      'YES. send, invite and booking_link message the prospect at once; the only tool that does. opt_out is permanent. Use ' +
      'dryRun: true first: it sends nothing.',
    input: DecideInput,
    output: Op.decide.response,
    dryRun: 'preview',
    contactsProspects: true,
    readOnly: false,
    openWorld: true,
    mirrors: { method: 'POST', url: '/api/v1/replies/:id/decide', params: { id: 'replyId' }, headers: { 'idempotency-key': 'idempotencyKey' } },
    run: async ({ services, auth }, { replyId, idempotencyKey, dryRun: _dryRun, ...body }) => {
      const outcome = await services.replies.decide(auth.workspaceId, replyId, body, idempotencyKey);
      // A replayed idempotent answer keeps the status it was first given; anything but 200 is an error to the agent.
      if (outcome.statusCode !== 200) {
        const { error, message, ...rest } = outcome.body as { error?: string; message?: string };
        throw new AppError(outcome.statusCode, error ?? 'request_failed', message, rest);
      }
      return outcome.body;
    },
    preview: async ({ services, auth }, { replyId, decision, text, days }) => {
      const { replies } = await services.replies.listPending(auth.workspaceId, PENDING_MAX);
      const reply = replies.find((r) => r.id === replyId.toLowerCase());
      if (!reply) {
        throw new AppError(404, 'reply not found', 'no pending reply with this id (decided, snoozed, of another workspace or unknown)');
      }
      const refusal = services.replies.answeredOnPlatformError(reply.channel);
      if (refusal) throw refusal;
      const allowed: string[] = 'allowedDecisions' in reply ? reply.allowedDecisions : [];
      if (!allowed.includes(decision)) {
        throw conflict('decision_not_allowed', `the ${decision} decision does not apply to this reply`, { allowedDecisions: allowed });
      }
      const contacts = MESSAGING.has(decision);
      return {
        dryRun: true,
        operation: 'decide_reply',
        wouldDo: `${WOULD_DO[decision]}${decision === 'snooze' ? ` (${days ?? 7} days)` : ''}`,
        contactsProspect: contacts,
        blockers: [],
        reply,
        ...(contacts && { message: decision === 'send' && text !== undefined ? text : 'draft' in reply ? reply.draft : null, channel: reply.channel }),
      };
    },
  }),
  defineTool<{ replies: RepliesService }, typeof HandledInput>({
    name: 'mark_reply_handled',
    action: 'replies.decide',
    title: 'Mark an X reply handled',
    description:
      'For an X reply answered on X itself: takes it off the queue (reply_dismissed). A repeat answers alreadyHandled: true. 409 ' +
      'reply_has_decisions for other channels (use decide_reply). Safety: contacts a prospect: no. Sends nothing. dryRun: true changes nothing.',
    input: HandledInput,
    output: Op.markHandled.response,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    idempotent: true,
    mirrors: { method: 'POST', url: '/api/v1/replies/:id/handled', params: { id: 'replyId' } },
    run: async ({ services, auth }, { replyId, dryRun }) => {
      const { outcome: _outcome, ...body } = await services.replies.markHandled(auth.workspaceId, replyId, `mcp:${auth.keyId}`, { dryRun });
      return body;
    },
  }),
];

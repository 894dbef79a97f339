import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { RepliesService } from './replies.service.js';
import { ReplyOperations as Op, SNOOZE_DEFAULT_DAYS, SNOOZE_MAX_DAYS } from './replies.schemas.js';

/** Who acts through the API: the key's id, as the lead twins record it (`api:<key id>`). */
const apiActor = (keyId: string) => `api:${keyId}`;

export async function repliesRoutes(app: AppInstance, opts: { replies: RepliesService }) {
  app.get(
    '/replies',
    {
      schema: {
        summary: 'The pending-reply queue, oldest first',
        description:
          'A bounded queue, not an archive: undecided replies, plus snoozed replies once their snooze is due. Social-network rows ' +
          'carry `channel: x` and no `draft` or `allowedDecisions` (they are answered on the network). Message text is stored ' +
          'encrypted and is null when it cannot be decrypted. Honors X-Workspace-Client.',
        tags: ['replies'],
        headers: WorkspaceClientHeader,
        querystring: Op.list.query,
        response: { 200: Op.list.response, ...errorResponses() },
      },
    },
    async (req) => opts.replies.listPending(req.auth.workspaceId, req.query.limit ?? 50),
  );

  app.post(
    '/replies/:id/decide',
    {
      config: { action: 'replies.decide' },
      schema: {
        summary: 'Apply one decision to a pending reply',
        description:
          '`send`, `invite` and `booking_link` message the prospect through the reply’s channel (the only operation that contacts a ' +
          'prospect) and emit lead.messaged; `snooze` hides the reply for `days` whole days (1 to ' +
          `${SNOOZE_MAX_DAYS}, default ${SNOOZE_DEFAULT_DAYS}) and then returns it to the queue; \`start_sequence\` enrolls the lead ` +
          'in the workspace’s follow-up sequence; `meeting_booked` records the meeting and emits lead.meeting_booked; `dismiss` ' +
          'closes the reply; `opt_out` permanently suppresses every lead of the identity (same e-mail, LinkedIn profile or ' +
          'social-network user). Each writes its activity entry in the same transaction. A decision not in the reply’s ' +
          'allowedDecisions answers 409 decision_not_allowed, a reply already decided 409 reply_already_decided, an X reply 409 ' +
          'answered_on_x (X replies are answered on X; close them with POST /replies/{id}/handled); of two ' +
          'concurrent decisions exactly one wins. With `Idempotency-Key`, a retry with the same key and body returns the ' +
          'first answer (header `Idempotent-Replayed: true`). A channel failure answers 503 channel_send_failed (429 when ' +
          'the channel is rate limited) and leaves the reply pending. Honors X-Workspace-Client.',
        tags: ['replies'],
        headers: Op.decide.headers,
        params: Op.decide.params,
        body: Op.decide.body,
        response: { 200: Op.decide.response, ...errorResponses(404, 409, 503) },
      },
    },
    async (req, reply) => {
      const key = req.headers['idempotency-key'];
      const result = await opts.replies.decide(req.auth.workspaceId, req.params.id, req.body, typeof key === 'string' ? key : undefined);
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      return reply.status(result.statusCode as 200).send(result.body as never);
    },
  );

  app.post(
    '/replies/:id/handled',
    {
      config: { action: 'replies.decide' },
      schema: {
        'x-extension': true,
        summary: 'Mark an X reply handled once it was answered on X (extension: not in the spec)',
        description:
          'X replies carry no allowedDecisions: they are answered on X itself. Once answered there, this closes the row: it leaves ' +
          'the pending queue as a dismissed reply (state decided, decision dismiss) and the lead gets a `reply_dismissed` activity ' +
          'entry with detail `{replyId, decision, by, via: "api"}`. Nothing is sent. Recorded with who did it (`api:<key id>`); the ' +
          'console’s Mark handled and the MCP tool mark_reply_handled do the same. A repeat changes nothing and answers the first ' +
          'close (`alreadyHandled: true`). 404 `reply not found` for an id of no reply of this workspace; 409 `reply_has_decisions` ' +
          'for a reply of another channel (answer it with POST /replies/{id}/decide). Takes no body. Honors X-Workspace-Client.',
        tags: ['replies'],
        headers: WorkspaceClientHeader,
        params: Op.markHandled.params,
        response: { 200: Op.markHandled.response, ...errorResponses(404, 409) },
      },
    },
    async (req) => {
      const { outcome: _outcome, ...body } = await opts.replies.markHandled(req.auth.workspaceId, req.params.id, apiActor(req.auth.keyId));
      return body;
    },
  );
}

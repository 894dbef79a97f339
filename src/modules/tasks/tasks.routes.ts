import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { TasksService } from './tasks.service.js';
import { CloseTaskBody, CloseTaskResponse, TaskIdParams, TASKS_LIMIT_DEFAULT, TasksQuery, TasksResponse } from './tasks.schemas.js';

const RECORDS_ONLY =
  'Records only: it says that a person did it themselves, on X, LinkedIn or Instagram. Nothing is sent and no platform is ' +
  'contacted; the reply decision stays the only API operation that contacts a prospect.';
const CLOSE_ERRORS =
  '404 `task not found` for an id of another workspace or none; 409 `task_closed` (with its `status`) when the task is no ' +
  'longer open (done, skipped, cancelled, or its lead moved on); of two concurrent calls on one task exactly one wins.';

export async function tasksRoutes(app: AppInstance, opts: { tasks: TasksService }) {
  const { tasks } = opts;

  app.get(
    '/tasks',
    {
      schema: {
        'x-extension': true,
        summary: 'The task queue: what a person must do (extension: not in the spec)',
        description:
          'A task is a due action for a person, opened where a platform’s rules keep the engine from acting alone (docs/policy.md): ' +
          'an X DM to someone who never wrote first, an X follow or like, any step of a LinkedIn account set to tasks, an ' +
          'Instagram DM, or a reply decision’s answer on a LinkedIn tasks account. Soonest due first; pass `nextCursor` as `after` ' +
          'until it is null. Open tasks of a paused sequence are hidden until it resumes. `overdue`: open more than a day after ' +
          'it fell due. Honors X-Workspace-Client.',
        tags: ['tasks'],
        headers: WorkspaceClientHeader,
        querystring: TasksQuery,
        response: { 200: TasksResponse, ...errorResponses() },
      },
    },
    async (req) =>
      tasks.list(req.auth.workspaceId, {
        status: req.query.status ?? 'open',
        account: req.query.account,
        kind: req.query.kind,
        source: req.query.source,
        limit: req.query.limit ?? TASKS_LIMIT_DEFAULT,
        after: req.query.after,
      }),
  );

  // The body is optional: a bare POST (no body, or an empty one) records the task as done by `api`.
  const closeOptions = (summary: string, description: string) => ({
    config: { action: 'tasks.work' as const },
    preValidation: async (req: { body: unknown }) => {
      if (req.body === undefined || req.body === null) req.body = {};
    },
    schema: {
      'x-extension': true,
      summary,
      description,
      tags: ['tasks'],
      headers: WorkspaceClientHeader,
      params: TaskIdParams,
      body: CloseTaskBody,
      response: { 200: CloseTaskResponse, ...errorResponses(404, 409) },
    },
  });

  app.post(
    '/tasks/:id/complete',
    closeOptions(
      'Record a task as done by a person (extension: not in the spec)',
      `${RECORDS_ONLY} The step is recorded as the engine’s own send of it would be: the same ledger entry and webhook event, ` +
        'with `detail.via = "task"` and no units, and the sequence goes on (a reply task writes reply_sent or meeting_invited ' +
        `and lead.messaged). Optional body \`{by}\` labels who did it (default api). ${CLOSE_ERRORS} Honors X-Workspace-Client.`,
    ),
    async (req) => tasks.complete(req.auth.workspaceId, req.params.id, req.body?.by ?? 'api'),
  );

  app.post(
    '/tasks/:id/skip',
    closeOptions(
      'Skip a task (extension: not in the spec)',
      'A person chose not to do it: the step is recorded `skipped` (reason task_skipped) and the sequence goes on; a reply ' +
        'task writes its reply_sent entry with outcome skipped; an uncertain send is left as recorded (Leave it). Nothing is sent.' +
        ` On an uncertain send the lead’s lastError clears unless another uncertain send of it is open. Optional body \`{by}\` (default api). ${CLOSE_ERRORS} ` +
        'Honors X-Workspace-Client.',
    ),
    async (req) => tasks.skip(req.auth.workspaceId, req.params.id, req.body?.by ?? 'api'),
  );

  app.post(
    '/tasks/:id/mark-sent',
    closeOptions(
      'Mark an uncertain send as sent (extension: not in the spec)',
      'For a task of source `uncertain` (a send a crash left in flight that no driver could confirm): a person says it ' +
        'arrived. Nothing is sent. The ledger gets one entry for the step’s action, outcome ok, no units, with ' +
        '`detail.recovered = "marked_sent"` and `detail.by`; the channel treats the send as sent (e-mail: later steps thread on ' +
        'it); a first contact sets the lead’s milestone. The lead’s lastError (`uncertain_delivery`) clears unless another ' +
        'uncertain send of it is open. Same as complete on such a task. 400 `task_not_uncertain` for another task. ' +
        `${CLOSE_ERRORS} Honors X-Workspace-Client.`,
    ),
    async (req) => tasks.markSent(req.auth.workspaceId, req.params.id, req.body?.by ?? 'api'),
  );

  app.post(
    '/tasks/:id/send-anyway',
    closeOptions(
      'Send an uncertain e-mail again (extension: not in the spec)',
      'Contacts a prospect: for a task of source `uncertain` on e-mail, the task’s subject and text are sent again to the ' +
        'lead from its account’s mailbox, under a fresh key (`<step key>:again:<task id>`), so with a fresh Message-ID. The ' +
        'ledger gets one entry for the step’s action with `detail.recovered = "sent_anyway"` and `detail.by`: outcome ok, or ' +
        'failed with the mail server’s final refusal (the task then closes with closedReason send_failed). A refusal that may ' +
        'pass later records nothing and leaves the task open: 429 `channel_rate_limited` or 503 `channel_send_failed`. 400 ' +
        '`task_not_sendable` for an uncertain send on another channel (only e-mail is sent anyway), `task_not_uncertain` for ' +
        `another task. The lead’s lastError clears as with mark-sent. ${CLOSE_ERRORS} Honors X-Workspace-Client.`,
    ),
    async (req) => tasks.sendAnyway(req.auth.workspaceId, req.params.id, req.body?.by ?? 'api'),
  );
}

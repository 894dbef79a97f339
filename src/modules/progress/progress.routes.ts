import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { ProgressService } from './progress.service.js';
import { ProgressQuery, ProgressResponse } from './progress.schemas.js';

export async function progressRoutes(app: AppInstance, opts: { progress: ProgressService }) {
  app.get(
    '/progress',
    {
      schema: {
        summary: 'Funnel, queue, recent ledger activity and per-account pacing',
        description:
          'Funnel counts are lifetime; `recentActions` (ledger entries with outcome ok) and `recentFailures` (outcome failed) cover ' +
          'the last `sinceDays` days (1 to 90, default 7; 400 outside). One pacing entry per messaging account, as the engine ' +
          'enforces it; a task a person completed counts on its budgets like the automated step. Extensions on each entry: ' +
          '`openTasks` (GET /api/v1/tasks) and `linkedinGateway` (its delivery and the gateway’s last refusal). Honors X-Workspace-Client.',
        tags: ['funnel'],
        headers: WorkspaceClientHeader,
        querystring: ProgressQuery,
        response: { 200: ProgressResponse, ...errorResponses() },
      },
    },
    async (req) => opts.progress.progress(req.auth.workspaceId, req.query.sinceDays ?? 7),
  );
}

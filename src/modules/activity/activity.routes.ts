import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { ActivityService } from './activity.service.js';
import { ActivityQuery, ActivityResponse } from './activity.schemas.js';

export async function activityRoutes(app: AppInstance, opts: { activity: ActivityService }) {
  app.get(
    '/activity',
    {
      schema: {
        summary: 'Read the append-only activity ledger, newest first, with an exact count',
        description:
          'Filters combine with AND. `action` is a comma-separated list; an unknown name answers 400 `invalid_action` naming it. ' +
          'Confirmed social-network sends: `action=x_dm&outcome=ok`. Connections sent in a period: `action=invite&outcome=ok&sinceDays=<n>`, ' +
          'reading `count`. Entries are never changed; a retention job removes entries older than 180 days by default. ' +
          'Honors X-Workspace-Client.',
        tags: ['activity'],
        headers: WorkspaceClientHeader,
        querystring: ActivityQuery,
        response: { 200: ActivityResponse, ...errorResponses() },
      },
    },
    async (req) => opts.activity.listActivity(req.auth.workspaceId, req.query),
  );
}

import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { LeadsService } from './leads.service.js';
import { LeadsQuery, LeadsResponse } from './leads.schemas.js';

export async function leadsRoutes(app: AppInstance, opts: { leads: LeadsService }) {
  app.get(
    '/leads',
    {
      schema: {
        summary: 'List cross-channel leads with an exact count',
        description:
          'Filters combine with AND. There is no cursor: `count` is the exact number matching, `returned` the size of this page ' +
          '(newest first, at most `limit`); narrow the filters to see more. Honors X-Workspace-Client.',
        tags: ['leads'],
        headers: WorkspaceClientHeader,
        querystring: LeadsQuery,
        response: { 200: LeadsResponse, ...errorResponses() },
      },
    },
    async (req) => opts.leads.listLeads(req.auth.workspaceId, req.query),
  );
}

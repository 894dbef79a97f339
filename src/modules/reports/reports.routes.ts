import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { ReportsService } from './reports.service.js';
import { FunnelReportQuery, FunnelReportResponse } from './reports.schemas.js';

export async function reportsRoutes(app: AppInstance, opts: { reports: ReportsService }) {
  app.get(
    '/reports/funnel',
    {
      schema: {
        summary: 'Lifetime funnel of the workspace, grouped by sequence or messaging account, with experiment arms',
        description:
          'Counts are per lead and lifetime, defined once for every report (see each field). `group_by` is `sequence` (default) or ' +
          '`account`; any other value answers 400. Honors X-Workspace-Client.',
        tags: ['funnel'],
        headers: WorkspaceClientHeader,
        querystring: FunnelReportQuery,
        response: { 200: FunnelReportResponse, ...errorResponses() },
      },
    },
    async (req) => opts.reports.funnelReport(req.auth.workspaceId, req.query.group_by ?? 'sequence'),
  );
}

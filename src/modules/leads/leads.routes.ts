import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { LeadsService } from './leads.service.js';
import { leadTwinsRoutes } from './leads.twins.routes.js';
import { ImportLeadsBody, ImportLeadsResponse, LeadsQuery, LeadsResponse } from './leads.schemas.js';

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

  app.post(
    '/leads/import',
    {
      // A CSV of the largest size allowed (512 KiB) stays under this limit once written as a JSON string.
      bodyLimit: 2 * 1024 * 1024,
      config: { action: 'leads.write' },
      schema: {
        'x-extension': true,
        summary: 'Import cross-channel leads from a CSV (extension: not in the spec)',
        description:
          'Each row is `invalid` (a malformed e-mail or URL, or no email, linkedinUrl or xUsername: `reason` says which, `row` where), ' +
          '`suppressed` (the person opted out through any of their leads, or the address is on the suppression list), `duplicate` ' +
          '(the same person as an existing lead or an earlier row: same e-mail or LinkedIn URL, case-insensitive) or `new`, which is ' +
          'saved. With `sequenceId` the new leads join that sequence queued and due at once; with `accountId` they are put on that ' +
          'account, whose mailbox sends their e-mail steps. `dryRun: true` answers the same and saves nothing. 404 `sequence not found` ' +
          'or `account not found` for an id of no sequence or account of this workspace; 409 `archived_sequence_is_read_only`. ' +
          'Honors X-Workspace-Client.',
        tags: ['leads'],
        headers: WorkspaceClientHeader,
        body: ImportLeadsBody,
        response: { 200: ImportLeadsResponse, ...errorResponses(404, 409) },
      },
    },
    async (req) => {
      const { dryRun, ...input } = req.body;
      return opts.leads.importLeads(req.auth.workspaceId, input, { dryRun, role: req.auth.role });
    },
  );

  // Two leads, one person: GET /leads/twins, POST /leads/twins/merge and /leads/twins/distinct (leads.twins.routes.ts).
  await leadTwinsRoutes(app, opts);
}

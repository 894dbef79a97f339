import { Type } from 'typebox';
import { ProgressQuery, ProgressResponse, type ProgressService } from '../../modules/progress/index.js';
import { FunnelReportQuery, FunnelReportResponse, type ReportsService } from '../../modules/reports/index.js';
import { LeadsQuery, LeadsResponse, type LeadsService } from '../../modules/leads/index.js';
import { ActivityQuery, ActivityResponse, type ActivityService } from '../../modules/activity/index.js';
import { READ_ONLY_SAFETY, defineTool } from './types.js';

// Query strings tolerate unknown parameters; tool inputs are closed so a misspelt filter is an error, not silently ignored.
const ProgressInput = Type.Object({ ...ProgressQuery.properties }, { additionalProperties: false });
const FunnelInput = Type.Object({ ...FunnelReportQuery.properties }, { additionalProperties: false });
const LeadsInput = Type.Object({ ...LeadsQuery.properties }, { additionalProperties: false });
const ActivityInput = Type.Object({ ...ActivityQuery.properties }, { additionalProperties: false });

export const reportingTools = [
  defineTool<{ progress: ProgressService }, typeof ProgressInput>({
    name: 'get_progress',
    action: 'read',
    title: 'Progress: funnel, queue, recent activity, pacing',
    description:
      'Lifetime funnel counts, queued leads, ledger actions and failures of the last sinceDays days (1 to 90, default 7) and each ' +
      `messaging account’s pacing (invites sent today against today’s cap). ${READ_ONLY_SAFETY}`,
    input: ProgressInput,
    output: ProgressResponse,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/progress' },
    run: ({ services, auth }, args) => services.progress.progress(auth.workspaceId, args.sinceDays ?? 7),
  }),
  defineTool<{ reports: ReportsService }, typeof FunnelInput>({
    name: 'get_funnel_report',
    action: 'read',
    title: 'Funnel report',
    description:
      'Lifetime funnel of the workspace grouped by sequence (default) or messaging account, with experiment arms (variant keys). ' + READ_ONLY_SAFETY,
    input: FunnelInput,
    output: FunnelReportResponse,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/reports/funnel' },
    run: ({ services, auth }, args) => services.reports.funnelReport(auth.workspaceId, args.group_by ?? 'sequence'),
  }),
  defineTool<{ leads: LeadsService }, typeof LeadsInput>({
    name: 'list_leads',
    action: 'read',
    title: 'List cross-channel leads',
    description:
      'Leads with an exact count, newest first; filters stage (cumulative), q (name, company, title), engaged, booked, sinceDays, ' +
      `limit (default 200, max 500). No cursor: narrow the filters to see more. ${READ_ONLY_SAFETY}`,
    input: LeadsInput,
    output: LeadsResponse,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/leads' },
    run: ({ services, auth }, args) => services.leads.listLeads(auth.workspaceId, args),
  }),
  defineTool<{ activity: ActivityService }, typeof ActivityInput>({
    name: 'list_activity',
    action: 'read',
    title: 'Read the activity ledger',
    description:
      'The append-only ledger, newest first, with an exact count. Filters: account, action (comma-separated), outcome, sinceDays, ' +
      `limit. Invitations sent in n days: action invite, outcome ok, sinceDays n, read count. ${READ_ONLY_SAFETY}`,
    input: ActivityInput,
    output: ActivityResponse,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/activity' },
    run: ({ services, auth }, args) => services.activity.listActivity(auth.workspaceId, args),
  }),
];

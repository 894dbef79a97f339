import { Type } from 'typebox';
import { ListWorkspacesResponse, type WorkspacesService } from '../../modules/workspaces/index.js';
import {
  EligibilityBody,
  EligibilityResponse,
  ReadinessResponse,
  ResolveBody,
  ResolveResponse,
  type PublicDataService,
  type ReadinessService,
} from '../../modules/publicdata/index.js';
import { ListPlaysResponse, ListXAccountsResponse, type PlaysService } from '../../modules/plays/index.js';
import { GetXLeadResponse, LeadIdParams, StopXLeadResponse, type XLeadsService } from '../../modules/x-leads/index.js';
import { DryRunFlag, READ_ONLY_SAFETY, defineTool } from './types.js';

const Empty = Type.Object({}, { additionalProperties: false });
const LeadId = LeadIdParams.properties.id;
const GetLeadInput = Type.Object({ leadId: LeadId }, { additionalProperties: false });
const StopLeadInput = Type.Object({ leadId: LeadId, dryRun: DryRunFlag }, { additionalProperties: false });

export const xTools = [
  defineTool<{ workspaces: WorkspacesService }, typeof Empty>({
    name: 'list_workspaces',
    action: 'read',
    title: 'List workspaces',
    description:
      'The workspaces this key may use: its home workspace and permitted Team workspaces. Another one is selected for the ' +
      `whole connection with the X-Workspace-Client header. ${READ_ONLY_SAFETY}`,
    input: Empty,
    output: ListWorkspacesResponse,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/workspaces' },
    run: async ({ services, auth }) => ({ workspaces: await services.workspaces.listWorkspaces(auth.homeWorkspaceId, auth.homeRole) }),
  }),
  defineTool<{ readiness: ReadinessService }, typeof Empty>({
    name: 'get_readiness',
    action: 'read',
    title: 'Readiness snapshot',
    description:
      'Accounts, billing and energy, each with a state (complete, partial, unavailable) and issues. The provider is not contacted ' +
      `and delivery is not guaranteed. ${READ_ONLY_SAFETY}`,
    input: Empty,
    output: ReadinessResponse,
    xChannel: true,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/x/readiness' },
    run: ({ services, auth }) => services.readiness.snapshot(auth.workspaceId),
  }),
  defineTool<{ plays: PlaysService }, typeof Empty>({
    name: 'list_x_accounts',
    action: 'read',
    title: 'List connected X accounts',
    description: `Saved connected X identities (userId, handle); no provider health check. ${READ_ONLY_SAFETY}`,
    input: Empty,
    output: ListXAccountsResponse,
    xChannel: true,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/x/accounts' },
    run: ({ services, auth }) => services.plays.listAccounts(auth.workspaceId),
  }),
  defineTool<{ publicData: PublicDataService }, typeof ResolveBody>({
    name: 'resolve_x_user',
    action: 'publicdata.lookup',
    title: 'Resolve a handle to a user id',
    description:
      'One exact, case-insensitive handle lookup through the public-data provider; no fuzzy matching. A provider read costs energy. ' +
      'An unverifiable profile or an unavailable provider is a tool error with status unknown. Safety: contacts a prospect: no. ' +
      'Reads public data only; never sends, enrolls or changes anything.',
    input: ResolveBody,
    output: ResolveResponse,
    xChannel: true,
    contactsProspects: false,
    readOnly: true,
    openWorld: true,
    mirrors: { method: 'POST', url: '/api/v1/x/users/resolve' },
    run: ({ services, auth }, args) => services.publicData.resolve(auth.workspaceId, args.username),
  }),
  defineTool<{ publicData: PublicDataService }, typeof EligibilityBody>({
    name: 'check_eligibility',
    action: 'publicdata.lookup',
    title: 'Check whether leads follow a connected account',
    description:
      'For 1 to 100 leads (handle or user id each), whether the lead follows the connected account. null means unknown: inspect ' +
      'every result and its reason. Sequential and time-bounded; small batches are better. Costs energy. Safety: contacts a ' +
      'prospect: no. Reads public data only; never enrolls, sends or changes anything.',
    input: EligibilityBody,
    output: EligibilityResponse,
    xChannel: true,
    contactsProspects: false,
    readOnly: true,
    openWorld: true,
    mirrors: { method: 'POST', url: '/api/v1/x/eligibility' },
    run: ({ services, auth }, args) => services.publicData.eligibility(auth.workspaceId, args),
  }),
  defineTool<{ plays: PlaysService }, typeof Empty>({
    name: 'list_plays',
    action: 'read',
    title: 'List Plays',
    description:
      'Every Play of the workspace with its revision, sequence, sender account, review API flag and autopilot flag (archived ones ' +
      `included). ${READ_ONLY_SAFETY}`,
    input: Empty,
    output: ListPlaysResponse,
    xChannel: true,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/x/plays' },
    run: ({ services, auth }) => services.plays.listPlays(auth.workspaceId),
  }),
  defineTool<{ xLeads: XLeadsService }, typeof GetLeadInput>({
    name: 'get_lead',
    action: 'read',
    title: 'Read one lead’s progress',
    description:
      'The saved progress of one lead of this workspace (stage, milestones, automationStopped). Saved observations, not a live ' +
      `probe; deliveryGuaranteed is always false. ${READ_ONLY_SAFETY}`,
    input: GetLeadInput,
    output: GetXLeadResponse,
    xChannel: true,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/x/leads/:id', params: { id: 'leadId' } },
    run: async ({ services, auth }, args) => ({ lead: await services.xLeads.getLead(auth.workspaceId, args.leadId) }),
  }),
  defineTool<{ xLeads: XLeadsService }, typeof StopLeadInput>({
    name: 'stop_lead',
    action: 'leads.write',
    title: 'Stop one lead’s future automation',
    description:
      'Stops every sequence lane of the lead’s identity; uncontacted queued lanes become skipped; contacted history is kept. ' +
      'Idempotent, and works while the X channel is disabled. Safety: contacts a prospect: no. Never recalls actions already ' +
      'dispatched, never deletes history and never suppresses the identity permanently.',
    input: StopLeadInput,
    output: StopXLeadResponse,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    idempotent: true,
    mirrors: { method: 'POST', url: '/api/v1/x/leads/:id/stop', params: { id: 'leadId' } },
    run: ({ services, auth }, args) => services.xLeads.stopLead(auth.workspaceId, args.leadId, { dryRun: args.dryRun }),
  }),
];

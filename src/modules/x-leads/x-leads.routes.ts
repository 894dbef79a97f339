import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { XLeadsService } from './x-leads.service.js';
import { GetXLeadResponse, LeadIdParams, StopXLeadResponse } from './x-leads.schemas.js';

export async function xLeadsRoutes(app: AppInstance, opts: { xLeads: XLeadsService }) {
  app.get(
    '/x/leads/:id',
    {
      config: { xChannel: true },
      schema: {
        summary: "Read one lead's saved progress",
        description:
          'Tenant-owned leads only: an unknown id and an id of another workspace both answer 404 `lead not found`. Stage and milestones ' +
          'are saved observations, not a live provider probe; `deliveryGuaranteed` is always false.',
        tags: ['x'],
        headers: WorkspaceClientHeader,
        params: LeadIdParams,
        response: { 200: GetXLeadResponse, ...errorResponses(404) },
      },
    },
    async (req) => ({ lead: await opts.xLeads.getLead(req.auth.workspaceId, req.params.id) }),
  );

  // Deliberately not gated on the X channel: stopping automation must stay possible after the channel is turned off.
  app.post(
    '/x/leads/:id/stop',
    {
      config: { action: 'leads.write' },
      schema: {
        summary: "Stop one lead's future automation",
        description:
          'No body. Idempotent. Stops every sequence lane of the lead (all leads of the workspace with the same xUserId), keeps contacted ' +
          'history, turns uncontacted queued lanes into `skipped`. Works while the social-network channel is disabled. Dispatched ' +
          'actions are not recalled and the identity is not permanently suppressed.',
        tags: ['x'],
        headers: WorkspaceClientHeader,
        params: LeadIdParams,
        response: { 200: StopXLeadResponse, ...errorResponses(404) },
      },
    },
    async (req) => opts.xLeads.stopLead(req.auth.workspaceId, req.params.id),
  );
}

// The x-leads module's (X leads) public face: code outside src/modules/x-leads imports from here only.
export { xLeadsRoutes } from './x-leads.routes.js';
export { createXLeadsService, type XLeadsService } from './x-leads.service.js';
export { GetXLeadResponse, LeadIdParams, StopXLeadResponse } from './x-leads.schemas.js';

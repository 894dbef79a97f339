// The leads module's (cross-channel leads) public face: code outside src/modules/leads imports from here only.
export { leadsRoutes } from './leads.routes.js';
export { createLeadsService, type LeadsService } from './leads.service.js';
export { LeadsQuery, LeadsResponse } from './leads.schemas.js';

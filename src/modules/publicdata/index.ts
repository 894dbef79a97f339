// The publicdata module's public face: code outside src/modules/publicdata imports from here only.
export { publicDataRoutes } from './publicdata.routes.js';
export { createPublicDataService, type PublicDataService } from './publicdata.service.js';
export { createConfiguredProvider } from './publicdata.provider.js';
export { createReadinessService, type ReadinessService } from './readiness.service.js';
export { EligibilityBody, EligibilityResponse, ReadinessResponse, ResolveBody, ResolveResponse } from './publicdata.schemas.js';
export { initialsOf } from './avatars.js';

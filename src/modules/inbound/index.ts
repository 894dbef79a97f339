// The inbound module's public face: code outside src/modules/inbound imports from here only.
export { createInboundService, type InboundService, type SuppressionView } from './inbound.service.js';
export { inboundRoutes } from './inbound.routes.js';
export { INBOUND_LIMIT_DEFAULT } from './inbound.schemas.js';

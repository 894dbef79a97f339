// The unsubscribe module's public face: code outside src/modules/unsubscribe imports from here only.
export { unsubscribeRoutes } from './unsubscribe.routes.js';
export { createUnsubscribeService, type UnsubscribeService } from './unsubscribe.service.js';

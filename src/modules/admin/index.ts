// The admin module's public face: code outside src/modules/admin imports from here only.
export { adminRoutes } from './admin.routes.js';

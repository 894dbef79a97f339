// The audit module's public face: code outside src/modules/audit imports from here only.
export { createAuditService, MAX_AUDIT_PAGE, type AuditService, type AuditEntry } from './audit.service.js';
export { auditRoutes } from './audit.routes.js';

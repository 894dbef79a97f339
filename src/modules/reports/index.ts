// The reports module's public face: code outside src/modules/reports imports from here only.
export { reportsRoutes } from './reports.routes.js';
export { createReportsService, listMessagingAccounts, workspaceProgressFunnel, type ReportsService } from './reports.service.js';
export { FunnelReportQuery, FunnelReportResponse, ProgressFunnel } from './reports.schemas.js';

// The reports module's public face: code outside src/modules/reports imports from here only.
export { reportsRoutes } from './reports.routes.js';
export {
  createReportsService,
  DAILY_ACTIONS,
  listMessagingAccounts,
  workspaceProgressFunnel,
  type DailyPoint,
  type ReportsService,
} from './reports.service.js';
export { FunnelReportQuery, FunnelReportResponse, ProgressFunnel } from './reports.schemas.js';

// The leads module's (cross-channel leads) public face: code outside src/modules/leads imports from here only.
export { leadsRoutes } from './leads.routes.js';
export { createLeadsService, type LeadsService } from './leads.service.js';
export { CrossChannelLead, LeadsQuery, LeadsResponse } from './leads.schemas.js';
export { type ImportLeadsInput, type ImportLeadsResult, type EnrollLeadsResult, type ImportRowStatus } from './leads.import.js';
export { IMPORT_LIMITS, IMPORT_LIMITS_TEXT, LEAD_FIELDS, defaultColumns, type LeadField } from './leads.import.rules.js';
export {
  TWINS_LIMIT_DEFAULT,
  TWINS_LIMIT_MAX,
  type TwinPair,
  type TwinLead,
  type TwinsPage,
  type MergeTwinsResult,
  type DistinctTwinsResult,
} from './leads.twins.js';
export { createLeadDetailService, type LeadDetailService, type LeadDetail, type LeadPageInput } from './leads.detail.js';
export { HELD_ALERT_MINUTES, type HeldBy, type HeldGroup } from './leads.held.js';
export {
  readCsv,
  readLeadCsv,
  leadRowsOf,
  decodeCsvBytes,
  sniffDelimiter,
  tokenizeCsv,
  xHandleOf,
  type CsvTable,
  type FieldSources,
  type LeadRow,
} from './csv/index.js';

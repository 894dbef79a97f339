// The fields of an imported lead, below both the CSV reader (csv/) and the import's rules (leads.import.rules.ts).

/** The spec's cross-channel lead fields a file may carry, plus `xUsername` (stored as the lead's X handle). */
export const LEAD_FIELDS = ['person', 'company', 'title', 'email', 'linkedinUrl', 'xUsername'] as const;
export type LeadField = (typeof LEAD_FIELDS)[number];
export type LeadValues = Record<LeadField, string | null>;

import type { Command } from 'commander';
import { registerLeadsImport } from './leads-import.js';
import { registerLeadTwins } from './leads-twins.js';

/** Registers `outreach leads`: `import` (leads-import.ts) and `twins` (leads-twins.ts), both through the API. */
export function registerLeads(program: Command) {
  const leads = program.command('leads').description('cross-channel leads (person, company, e-mail, LinkedIn URL) through the API');
  // `outreach leads twins` (list, merge, distinct): two leads that are one person (leads-twins.ts).
  registerLeadTwins(leads);
  registerLeadsImport(leads);
}

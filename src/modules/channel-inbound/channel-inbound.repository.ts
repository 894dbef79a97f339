import type { Database } from '../../db/database.js';
import type { ObservedLead } from '../../channels/types.js';
import { observedLeadQuery } from '../../channels/observed-lead.js';

/**
 * The lead an observation names, as the engine's observation path needs it (channels/types.ts ObservedLead), when it
 * is a lead of `workspaceId`; null otherwise (another workspace's lead, or no lead).
 */
export async function observedLeadOf(db: Database, workspaceId: string, leadId: string): Promise<ObservedLead | null> {
  const row = await observedLeadQuery(db).where('l.workspace_id', '=', workspaceId).where('l.id', '=', leadId).executeTakeFirst();
  return row ?? null;
}

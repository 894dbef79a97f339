import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import type { ChannelRegistry } from '../../channels/descriptor.js';
import { claimedLeadColumns, CLAIMED_LEAD_FROM, LEAD_ACCOUNT_USER } from './claimDue.js';
import { senderDeliverySql } from './senders.js';
import type { ClaimedRow } from './rows.js';

/**
 * The lead of a step task, locked, with the columns a claim reads (its admission `stop` columns answered false: a
 * person already acted, or chose to skip). Null when the lead is gone or no longer in that workspace.
 */
export async function readTaskLead(trx: Database, channels: ChannelRegistry, workspaceId: string, leadId: string): Promise<ClaimedRow | null> {
  const { rows } = await sql<ClaimedRow>`
    ${claimedLeadColumns(LEAD_ACCOUNT_USER, senderDeliverySql(channels))}, false AS identity_opted_out, false AS address_suppressed
    ${CLAIMED_LEAD_FROM}
    WHERE l.id = ${leadId}::uuid AND l.workspace_id = ${workspaceId}::uuid
    FOR UPDATE OF l`.execute(trx);
  return rows[0] ?? null;
}

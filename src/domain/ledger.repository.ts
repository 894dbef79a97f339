import type { Database } from '../db/database.js';

/**
 * One entry of the append-only activity ledger, in the caller's transaction: what opting out, delivery reports and
 * the other single-entry writers record (the engine writes its batches through engine/sql/insertActivities.ts).
 */
export async function insertLedgerEntry(
  trx: Database,
  row: {
    id: string;
    workspaceId: string;
    at: Date;
    action: string;
    outcome: 'ok' | 'failed' | 'skipped';
    detail: Record<string, unknown>;
    accountId: string | null;
    leadId: string;
  },
): Promise<void> {
  await trx
    .insertInto('activity')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      created_at: row.at,
      action: row.action,
      outcome: row.outcome,
      units: 0,
      detail: JSON.stringify(row.detail),
      account_id: row.accountId,
      lead_id: row.leadId,
    })
    .execute();
}

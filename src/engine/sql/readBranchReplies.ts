import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/** A reply as a branch's edges read it (domain/branches.ts ReplyFact), with its lead. */
export interface BranchReplyRow {
  lead_id: string;
  replied_at: Date;
  channel: string;
  classification: string;
  needs_review: boolean;
}

/**
 * Every reply on record of the leads waiting at a branch (each read by its workspace and lead: the `replies_lead`
 * index). One read per claimed batch.
 */
export async function readBranchReplies(trx: Database, leads: { workspace_id: string; id: string }[]): Promise<BranchReplyRow[]> {
  if (leads.length === 0) return [];
  const { rows } = await sql<BranchReplyRow>`
    SELECT r.lead_id, r.replied_at, r.channel, r.classification, r.needs_review FROM replies r
    WHERE (r.workspace_id, r.lead_id) IN (${sql.join(leads.map((l) => sql`(${l.workspace_id}::uuid, ${l.id}::uuid)`))})
    ORDER BY r.lead_id, r.replied_at`.execute(trx);
  return rows;
}

import { sql } from 'kysely';
import type { Database } from '../../db/database.js';

/** A reply as a branch's edges read it (domain/branches.ts ReplyFact), with its lead. */
export interface BranchReplyRow {
  lead_id: string;
  replied_at: Date;
  channel: string;
  classification: string;
  needs_review: boolean;
  /** The step it answers (migration 0052); null: none. */
  answers_sequence_id: string | null;
  answers_step: number | null;
  answer_match: string | null;
}

/**
 * Every reply on record of the leads waiting at a branch (each read by its workspace and lead: the `replies_lead`
 * index). One read per claimed batch; the batch travels as one jsonb document (a long row-IN list would nest deeply).
 */
export async function readBranchReplies(trx: Database, leads: { workspace_id: string; id: string }[]): Promise<BranchReplyRow[]> {
  if (leads.length === 0) return [];
  const { rows } = await sql<BranchReplyRow>`
    SELECT r.lead_id, r.replied_at, r.channel, r.classification, r.needs_review, r.answers_sequence_id, r.answers_step, r.answer_match
    FROM jsonb_to_recordset(${JSON.stringify(leads.map((l) => ({ workspace_id: l.workspace_id, id: l.id })))}::jsonb) AS v(workspace_id uuid, id uuid)
    JOIN replies r ON r.workspace_id = v.workspace_id AND r.lead_id = v.id
    ORDER BY r.lead_id, r.replied_at`.execute(trx);
  return rows;
}

import { sql, type ExpressionBuilder, type Expression, type SqlBool } from 'kysely';
import type { Database } from '../../db/database.js';
import type { DB, LeadStage } from '../../db/schema.js';

export interface LeadFilters {
  /** Stages at or past the requested one (cumulative) or the one exact terminal stage. */
  stages?: LeadStage[];
  /** Milestone columns any of which also proves the requested stage was reached. */
  milestones?: ('invited_at' | 'connected_at' | 'messaged_at' | 'replied_at')[];
  /** Already escaped for LIKE with `\` as the escape character. */
  pattern?: string;
  engaged?: boolean;
  engagedSince?: Date;
  booked?: boolean;
}

// When the lead last did or received something; GREATEST skips nulls, so null means never engaged.
const engagedAt = sql<Date | null>`GREATEST(invited_at, connected_at, messaged_at, replied_at, last_activity_at)`;

const searchable = sql`(coalesce(person, '') || E'\\n' || coalesce(company, '') || E'\\n' || coalesce(title, ''))`;

export function where(workspaceId: string, f: LeadFilters) {
  return (eb: ExpressionBuilder<DB, 'leads'>) => {
    const and: Expression<SqlBool>[] = [eb('workspace_id', '=', workspaceId)];
    if (f.stages) {
      const reached: Expression<SqlBool>[] = [eb('stage', 'in', f.stages)];
      for (const m of f.milestones ?? []) reached.push(eb(m, 'is not', null));
      and.push(eb.or(reached));
    }
    // One ILIKE over the three fields joined by a newline costs a third of three ILIKEs; q may not contain
    // control characters (validated), so a match can never span two fields.
    if (f.pattern !== undefined) and.push(sql<SqlBool>`${searchable} ILIKE ${f.pattern} ESCAPE '\\'`);
    if (f.engaged) and.push(sql<SqlBool>`${engagedAt} IS NOT NULL`);
    if (f.engagedSince) and.push(sql<SqlBool>`${engagedAt} >= ${f.engagedSince}`);
    if (f.booked) and.push(eb('meeting_booked_at', 'is not', null));
    return eb.and(and);
  };
}

/** The columns a lead list row reads (GET /leads, the console's pages). */
export const LEAD_LIST_COLUMNS = [
  'id',
  'person',
  'company',
  'title',
  'email',
  'linkedin_url',
  'account_id',
  'sequence_id',
  'strategy_id',
  'strategy_run_id',
  'invite_priority',
  'stage',
  'current_step',
  'next_action_at',
  'automation_stopped',
  'invited_at',
  'connected_at',
  'messaged_at',
  'replied_at',
  'meeting_booked_at',
  'meeting_outcome',
  'meeting_response',
  'snoozed_until',
  'opted_out_at',
  'reply_sentiment',
  'last_error',
] as const;

/** One pass: the page and, through a window count, the exact number of matches. */
export async function listLeads(db: Database, workspaceId: string, f: LeadFilters, limit: number) {
  return db
    .selectFrom('leads')
    .select((eb) => eb.fn.countAll<number>().over().as('total'))
    .select(LEAD_LIST_COLUMNS)
    .where(where(workspaceId, f))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export type CrmLeadRow = Awaited<ReturnType<typeof listLeads>>[number];

/** The edges these leads took in branching sequences (lead_paths), oldest first: one indexed read for a page. */
export async function listLeadPaths(db: Database, workspaceId: string, leadIds: string[]) {
  if (leadIds.length === 0) return [];
  return db
    .selectFrom('lead_paths')
    .select(['lead_id', 'sequence_id', 'from_step', 'edge', 'goto', 'to_step', 'outcome', 'values', 'taken_at'])
    .where('workspace_id', '=', workspaceId)
    .where('lead_id', 'in', leadIds)
    .orderBy('lead_id')
    .orderBy('ordinal')
    .execute();
}

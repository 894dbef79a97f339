import type { Database } from '../../db/database.js';
import type { LeadStage } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import * as repo from './crm-leads.repository.js';
import { LEAD_STAGES } from './crm-leads.schemas.js';

const DAY_MS = 86_400_000;
const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The spec's stage order up to `replied`; `failed` and `skipped` sit outside it and match exactly. */
const ORDERED: LeadStage[] = ['queued', 'resolving', 'invited', 'accepted', 'messaged', 'followed_up', 'replied'];
const MILESTONE_RANK = [
  { column: 'invited_at', rank: 2 },
  { column: 'connected_at', rank: 3 },
  { column: 'messaged_at', rank: 4 },
  { column: 'replied_at', rank: 6 },
] as const;

export function stageFilter(stage: LeadStage): Pick<repo.LeadFilters, 'stages' | 'milestones'> {
  const rank = ORDERED.indexOf(stage);
  if (rank < 0) return { stages: [stage], milestones: [] };
  return {
    stages: ORDERED.slice(rank),
    milestones: MILESTONE_RANK.filter((m) => m.rank >= rank).map((m) => m.column),
  };
}

/** Wildcards typed by the caller are literal: `50%` finds "50%", not "500". */
export const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export function toCrossChannelLead(row: repo.CrmLeadRow) {
  return {
    id: row.id,
    person: row.person,
    company: row.company,
    title: row.title,
    email: row.email,
    linkedinUrl: row.linkedin_url,
    account: row.account_id,
    sequenceId: row.sequence_id,
    strategyId: row.strategy_id,
    strategyRunId: row.strategy_run_id,
    invitePriority: row.invite_priority,
    stage: row.stage,
    currentStep: row.current_step,
    nextActionAt: iso(row.next_action_at),
    sequenceDone: row.automation_stopped,
    invitedAt: iso(row.invited_at),
    connectedAt: iso(row.connected_at),
    messagedAt: iso(row.messaged_at),
    repliedAt: iso(row.replied_at),
    meetingBookedAt: iso(row.meeting_booked_at),
    meetingOutcome: row.meeting_outcome,
    snoozedUntil: iso(row.snoozed_until),
    optedOutAt: iso(row.opted_out_at),
    replySentiment: row.reply_sentiment,
    lastError: row.last_error,
  };
}

export interface ListLeadsInput {
  stage?: (typeof LEAD_STAGES)[number];
  q?: string;
  engaged?: boolean;
  booked?: boolean;
  sinceDays?: number;
  limit: number;
}

export function createCrmLeadsService(deps: { db: Database; clock: Clock }) {
  const { db, clock } = deps;

  async function listLeads(workspaceId: string, input: ListLeadsInput) {
    const q = input.q?.trim();
    const filters: repo.LeadFilters = {
      ...(input.stage && stageFilter(input.stage)),
      ...(q && { pattern: `%${escapeLike(q)}%` }),
      engaged: input.engaged || input.sinceDays !== undefined,
      ...(input.sinceDays !== undefined && { engagedSince: new Date(clock.now().getTime() - input.sinceDays * DAY_MS) }),
      booked: input.booked,
    };
    const rows = await repo.listLeads(db, workspaceId, filters, input.limit);
    return { count: Number(rows[0]?.total ?? 0), returned: rows.length, leads: rows.map(toCrossChannelLead) };
  }

  return { listLeads };
}

export type CrmLeadsService = ReturnType<typeof createCrmLeadsService>;

import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { toCrossChannelLeadView } from '../../domain/lead-views.js';
import { PROGRESS_STAGES, type LeadStage } from '../../domain/vocabulary.js';
import * as repo from './leads.repository.js';
import { createLeadImports } from './leads.import.js';
import { createLeadTwins } from './leads.twins.js';
import type { TextCipher } from '../../lib/crypto.js';
import type { Config } from '../../config/config.js';
import { createHeldLeads } from './leads.held.js';

const DAY_MS = 86_400_000;

/** The saved time that proves a lead reached a stage, even after its stage moved on to failed or skipped. */
const MILESTONES = [
  { column: 'invited_at', stage: 'invited' },
  { column: 'connected_at', stage: 'accepted' },
  { column: 'messaged_at', stage: 'messaged' },
  { column: 'replied_at', stage: 'replied' },
] as const;

export function stageFilter(stage: LeadStage): Pick<repo.LeadFilters, 'stages' | 'milestones'> {
  // failed and skipped sit outside the progress order and match exactly.
  const rank = PROGRESS_STAGES.indexOf(stage);
  if (rank < 0) return { stages: [stage], milestones: [] };
  return {
    stages: PROGRESS_STAGES.slice(rank),
    milestones: MILESTONES.filter((m) => PROGRESS_STAGES.indexOf(m.stage) >= rank).map((m) => m.column),
  };
}

/** Wildcards typed by the caller are literal: `50%` finds "50%", not "500". */
export const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The filters as GET /leads (and the console and list_leads) take them: flags are '1' for yes; limit 200 unless given. */
export interface ListLeadsInput {
  stage?: LeadStage;
  q?: string;
  engaged?: '0' | '1';
  booked?: '0' | '1';
  sinceDays?: number;
  limit?: number;
}

/**
 * The edges each lead took in the sequence it is in, oldest first, and the outcome its run ended with (goal, exit):
 * only leads with a path have an entry, so a linear sequence's lead reads as the spec's object.
 */
export async function pathsOf(db: Database, workspaceId: string, leads: { id: string; sequence_id: string | null }[]) {
  const out = new Map<string, { path: LeadPathView[]; outcome?: 'goal' | 'exit' }>();
  const rows = await repo.listLeadPaths(
    db,
    workspaceId,
    leads.map((l) => l.id),
  );
  const seqOf = new Map(leads.map((l) => [l.id, l.sequence_id]));
  for (const r of rows) {
    if (r.sequence_id !== seqOf.get(r.lead_id)) continue;
    const entry = out.get(r.lead_id) ?? { path: [] };
    entry.path.push({ fromStep: r.from_step, edge: r.edge, goto: r.goto, toStep: r.to_step, values: r.values, takenAt: r.taken_at.toISOString() });
    if (r.outcome) entry.outcome = r.outcome;
    out.set(r.lead_id, entry);
  }
  return out;
}

export interface LeadPathView {
  fromStep: number;
  edge: number | null;
  goto: string;
  toStep: number | null;
  values: Record<string, unknown>;
  takenAt: string;
}

export function createLeadsService(deps: { db: Database; clock: Clock; cipher: TextCipher; config: Pick<Config, 'engine'> }) {
  const { db, clock } = deps;
  const held = createHeldLeads(deps);

  async function listLeads(workspaceId: string, input: ListLeadsInput) {
    const q = input.q?.trim();
    const filters: repo.LeadFilters = {
      ...(input.stage && stageFilter(input.stage)),
      ...(q && { pattern: `%${escapeLike(q)}%` }),
      engaged: input.engaged === '1' || input.sinceDays !== undefined,
      ...(input.sinceDays !== undefined && { engagedSince: new Date(clock.now().getTime() - input.sinceDays * DAY_MS) }),
      booked: input.booked === '1',
    };
    const rows = await repo.listLeads(db, workspaceId, filters, input.limit ?? 200);
    // Why a due lead waits (leads.held.ts), answered only for a held lead: any other reads as the spec's object.
    const ids = rows.map((r) => r.id);
    // A branching sequence's path and outcome (docs/sequences-and-leads.md "Branches"): one read for the page.
    const [heldBy, paths] = await Promise.all([held.heldByLeads(workspaceId, ids), pathsOf(db, workspaceId, rows)]);
    const leads = rows.map((r) => {
      const reason = heldBy.get(r.id);
      const view = { ...toCrossChannelLeadView(r), ...paths.get(r.id) };
      return reason ? { ...view, heldBy: reason } : view;
    });
    return { count: Number(rows[0]?.total ?? 0), returned: rows.length, leads };
  }

  // Importing leads and enrolling them into a sequence, and deciding on two leads that are one person (leads.twins.ts):
  // one home for the console, the API and the CLI.
  /** One lead's path in the branching sequence it is in, and its outcome (the lead page); empty for a linear one. */
  async function leadPath(workspaceId: string, lead: { id: string; sequenceId: string | null }) {
    const paths = await pathsOf(db, workspaceId, [{ id: lead.id, sequence_id: lead.sequenceId }]);
    return paths.get(lead.id) ?? { path: [] };
  }

  return { listLeads, leadPath, heldSummary: held.heldSummary, ...createLeadImports(deps), ...createLeadTwins(deps) };
}

export type LeadsService = ReturnType<typeof createLeadsService>;

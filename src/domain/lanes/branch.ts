import { sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { newId } from '../../lib/ids.js';
import { uncontactedSql } from '../uncontacted.js';

// The lane transitions of a branching sequence (domain/branches.ts): a lead waiting at a branching step takes an edge
// (to another step, or to the end of its run with the outcome goal or exit), or keeps waiting for an edge's window; a
// reply a person dismissed lets a lead frozen at a branch be decided again.

/** An edge a lead takes, as the engine's claim decided it (domain/branches.ts decideBranch). */
export interface EdgeTaken {
  leadId: string;
  workspaceId: string;
  sequenceId: string;
  fromStep: number;
  /** The edge's index in the step's `next`; null: `else`, the booking goal, or the end past the last step. */
  edge: number | null;
  goto: string;
  /** The step the lead goes to; null: its run ends. */
  toStep: number | null;
  outcome: 'goal' | 'exit' | null;
  values: Record<string, unknown>;
  /** When the target step is due (ISO 8601: the edge's time plus the step's delayDays); null when the run ends. */
  nextAt: string | null;
}

/**
 * Moves each lead (locked by the caller, still waiting at its branch) along the edge decided for it, and records the
 * edge in `lead_paths` with the values that decided it and the sequence's revision. A run that ends (goal, exit, or
 * past the last step) stops automation as the last step of a linear sequence does: an uncontacted lane ends `skipped`.
 * Answers the ids it moved; a lead no longer at a branch (a stop or a reply meanwhile) is left alone.
 */
export async function takeEdges(trx: Database, edges: EdgeTaken[], now: Date): Promise<string[]> {
  if (edges.length === 0) return [];
  const at = now.toISOString();
  const wire = edges.map((e) => ({ id: e.leadId, to_step: e.toStep, next_at: e.nextAt }));
  const { rows } = await sql<{ id: string }>`
    UPDATE leads l SET
      current_step = COALESCE(v.to_step, l.current_step),
      next_action_at = CASE WHEN v.to_step IS NULL OR l.automation_stopped THEN NULL ELSE v.next_at END,
      automation_stopped = l.automation_stopped OR v.to_step IS NULL,
      stage = CASE WHEN v.to_step IS NULL AND ${uncontactedSql('l')} THEN 'skipped' ELSE l.stage END,
      waiting_for = NULL, branch_at = NULL, branch_allowed = NULL, step_attempts = 0, step_waits = 0,
      updated_at = ${at}::timestamptz
    FROM jsonb_to_recordset(${JSON.stringify(wire)}::jsonb) AS v(id uuid, to_step int, next_at timestamptz)
    WHERE l.id = v.id AND l.waiting_for = 'branch'
    RETURNING l.id`.execute(trx);
  const moved = new Set(rows.map((r) => r.id));
  await insertPath(
    trx,
    edges.filter((e) => moved.has(e.leadId)),
    now,
  );
  return [...moved];
}

/**
 * A run already stopped (a reply froze it, a booking stopped it) ends with an outcome while the lead stands at a
 * branch: the edge is recorded in its path and the branch is no longer pending, so nothing can release it again.
 * Answers the ids it recorded; a lead with an outcome already on record for its sequence is left alone.
 */
export async function recordEndOfRun(trx: Database, edges: EdgeTaken[], now: Date): Promise<string[]> {
  if (edges.length === 0) return [];
  const { rows } = await sql<{ id: string }>`
    UPDATE leads l SET branch_at = NULL, branch_allowed = NULL, waiting_for = NULL, next_action_at = NULL, automation_stopped = true,
      updated_at = ${now.toISOString()}::timestamptz
    WHERE l.id IN (${sql.join(edges.map((e) => sql`${e.leadId}::uuid`))})
      AND NOT ${HAS_OUTCOME}
    RETURNING l.id`.execute(trx);
  const done = new Set(rows.map((r) => r.id));
  await insertPath(
    trx,
    edges.filter((e) => done.has(e.leadId)),
    now,
  );
  return [...done];
}

/** Lead `l` already ended its run in its sequence with an outcome (goal or exit). */
const HAS_OUTCOME = sql<boolean>`EXISTS (SELECT 1 FROM lead_paths p WHERE p.workspace_id = l.workspace_id AND p.lead_id = l.id
  AND p.sequence_id = l.sequence_id AND p.outcome IS NOT NULL)`;

/**
 * A booking is the goal of every branching sequence (docs/sequences-and-leads.md "Branches"): each of these lanes (the
 * person's, just stopped by the booking: modules/meetings) that runs a sequence with a branching step ends with the
 * outcome `goal`, recorded in its path from the step it stood at. A linear sequence's lane records nothing.
 */
export async function recordBookingGoal(trx: Database, p: { workspaceId: string; leadIds: string[]; now: Date }): Promise<void> {
  if (p.leadIds.length === 0) return;
  const { rows } = await sql<{ id: string; workspace_id: string; sequence_id: string; current_step: number }>`
    UPDATE leads l SET branch_at = NULL, branch_allowed = NULL, waiting_for = NULL
    FROM sequences s
    WHERE l.workspace_id = ${p.workspaceId}::uuid AND l.id IN (${sql.join(p.leadIds.map((id) => sql`${id}::uuid`))})
      AND s.id = l.sequence_id AND NOT ${HAS_OUTCOME}
      AND EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(s.steps) = 'array' THEN s.steps ELSE '[]'::jsonb END) st
        WHERE jsonb_typeof(st) = 'object' AND (jsonb_typeof(st -> 'next') = 'array' OR jsonb_typeof(st -> 'else') = 'string'))
    RETURNING l.id, l.workspace_id, l.sequence_id, l.current_step`.execute(trx);
  await insertPath(
    trx,
    rows.map((r) => ({
      leadId: r.id,
      workspaceId: r.workspace_id,
      sequenceId: r.sequence_id,
      fromStep: r.current_step,
      edge: null,
      goto: 'goal',
      toStep: null,
      outcome: 'goal' as const,
      values: { meetingBooked: true, reason: 'meeting_booked' },
      nextAt: null,
    })),
    p.now,
  );
}

async function insertPath(trx: Database, taken: EdgeTaken[], now: Date): Promise<void> {
  if (taken.length === 0) return;
  const at = now.toISOString();
  // Numbered per lead in the order taken (a batch holds one edge per lead; the caller holds the lead's row lock).
  await sql`INSERT INTO lead_paths (id, workspace_id, lead_id, ordinal, sequence_id, revision, from_step, edge, goto, to_step, outcome, "values", taken_at)
    SELECT v.id, v.workspace_id, v.lead_id,
      (SELECT COALESCE(max(p.ordinal), 0) + 1 FROM lead_paths p WHERE p.workspace_id = v.workspace_id AND p.lead_id = v.lead_id),
      v.sequence_id, COALESCE(s.revision, 1), v.from_step, v.edge, v.goto, v.to_step, v.outcome, v.values, ${at}::timestamptz
    FROM jsonb_to_recordset(${JSON.stringify(
      taken.map((e) => ({
        id: newId(),
        workspace_id: e.workspaceId,
        lead_id: e.leadId,
        sequence_id: e.sequenceId,
        from_step: e.fromStep,
        edge: e.edge,
        goto: e.goto,
        to_step: e.toStep,
        outcome: e.outcome,
        values: e.values,
      })),
    )}::jsonb) AS v(id uuid, workspace_id uuid, lead_id uuid, sequence_id uuid, from_step int, edge int, goto text, to_step int, outcome text, values jsonb)
    LEFT JOIN sequences s ON s.id = v.sequence_id`.execute(trx);
}

/** Leads whose branch cannot be decided yet wait until the first open window closes (`at`: ISO 8601). */
export async function holdAtBranch(trx: Database, rows: { id: string; at: string }[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`UPDATE leads l SET next_action_at = v.at
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(id uuid, at timestamptz)
    WHERE l.id = v.id AND l.waiting_for = 'branch'`.execute(trx);
}

/**
 * A person dismissed the reply that froze a lead waiting at a branch: the run resumes and its edges are decided at
 * once with the reply on record (a reply edge is read when a person's decision releases the lead). False when the
 * lead was not frozen at a branch of the sequence it is in.
 */
export async function releaseBranch(trx: Database, p: { workspaceId: string; leadId: string; now: Date }): Promise<boolean> {
  const at = p.now.toISOString();
  const res = await sql`UPDATE leads SET automation_stopped = false, waiting_for = 'branch', next_action_at = ${at}::timestamptz,
      updated_at = ${at}::timestamptz
    WHERE workspace_id = ${p.workspaceId}::uuid AND id = ${p.leadId}::uuid AND branch_at IS NOT NULL AND sequence_id IS NOT NULL
      AND automation_stopped AND replied_at IS NOT NULL AND opted_out_at IS NULL`.execute(trx);
  return Number(res.numAffectedRows ?? 0) > 0;
}

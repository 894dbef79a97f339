import type { Json, Timestamp } from './schema-columns.js';

// The path a lead takes through a branching sequence (migration 0049, domain/branches.ts), kept apart from schema.ts.

/** One edge a lead took in a branching sequence (migration 0049, domain/branches.ts). */
export interface LeadPathsTable {
  id: string;
  workspace_id: string;
  lead_id: string;
  /** The edge's place in the lead's path: 1, 2, … in the order taken. */
  ordinal: number;
  sequence_id: string;
  revision: number;
  /** The step the lead left (its index in the flat list). */
  from_step: number;
  /** The edge taken (its index in the step's `next`); null: `else`, or the booking goal. */
  edge: number | null;
  /** The edge's target as written: a step id, goal or exit (or `done` past the last step). */
  goto: string;
  to_step: number | null;
  /** `goal` or `exit` when the edge ended the run; null otherwise. */
  outcome: 'goal' | 'exit' | null;
  values: Json<Record<string, unknown>>;
  taken_at: Timestamp;
}

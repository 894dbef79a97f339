import type { SequenceStepRow } from '../db/schema.js';

/** One step as stored in `sequences.steps` / `approved_steps`: written by the service, but read defensively. */
export type StoredStep = Partial<SequenceStepRow> & Record<string, unknown>;

/**
 * The one decoder of a sequence's stored steps JSON. jsonb comes back parsed; JSON text is read too (an older
 * driver setting, a hand-edited row). Anything that is not an array of objects reads as no steps, so a damaged
 * row can never make a reader throw.
 */
export function storedSteps(value: unknown): StoredStep[] {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(parsed)) return [];
  return parsed.filter((s): s is StoredStep => typeof s === 'object' && s !== null && !Array.isArray(s));
}

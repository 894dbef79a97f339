import { CHANNEL_LABELS, metrics, oneOf, type StepOutcomeLabel } from '../lib/metrics.js';
import type { Outcome } from './outcomes.js';
import type { ChannelRegistry } from '../channels/descriptor.js';
import { channelOfKind } from './steps.js';

/**
 * The `outcome` label of a recorded step (docs/metrics.md), from the engine's own decision, never from its text:
 * ok (went out), needs_person (became a task), skipped, rate_limited (the provider's limit; the step waits), waiting
 * (the account cannot act now; the step waits), failed (a retry or a final failure, an uncertain delivery), other.
 * Null for an outcome that is no step's (a sequence that ended).
 */
export function stepOutcomeLabel(o: Outcome): StepOutcomeLabel | null {
  if (o.task) return 'needs_person';
  switch (o.tally) {
    case 'actions':
      return 'ok';
    case 'skipped':
      return 'skipped';
    case 'failed':
      if (o.record.last_error === 'rate_limited') return 'rate_limited';
      // A wait is counted in step_waits, a failure in step_attempts (outcomes.ts resultOutcome).
      return o.record.step_waits > o.row.step_waits ? 'waiting' : 'failed';
    case null:
      return null;
    default:
      return 'other';
  }
}

/** Counts committed step outcomes into `outreach_steps_total{channel,outcome}`; call it after their transaction. */
export function countStepOutcomes(channels: ChannelRegistry, recorded: readonly Outcome[]): void {
  if (recorded.length === 0) return;
  const steps = metrics().steps;
  for (const o of recorded) {
    const outcome = stepOutcomeLabel(o);
    if (outcome === null) continue;
    const kind = o.row.steps[o.row.current_step]?.kind;
    steps.inc({ channel: kind ? oneOf(CHANNEL_LABELS, channelOfKind(channels, kind).channel) : 'other', outcome });
  }
}

import type { LeadStage, SequenceStepRow } from '../db/schema.js';
import type { ChannelDescriptor, ChannelRegistry, StepEvent } from '../channels/descriptor.js';
import type { PacingBucket } from './pacing.js';
import { LEAD_STAGES, MESSAGE_KINDS } from '../domain/vocabulary.js';
import type { StepAction } from '../domain/ledger.js';

const MESSAGE_KIND_LIST: readonly string[] = MESSAGE_KINDS;

export type Step = SequenceStepRow;

/** Cross-channel stage order; a step only ever moves a lead forward along it. */
export const STAGE_ORDER: readonly LeadStage[] = LEAD_STAGES;
const rank = (s: LeadStage) => STAGE_ORDER.indexOf(s);

export function forward(current: LeadStage, target: LeadStage): LeadStage {
  if (current === 'replied' || current === 'failed' || current === 'skipped') return current;
  return rank(target) > rank(current) ? target : current;
}

/**
 * What the engine knows of a step kind's channel when no channel carries it (a stored step of a kind since removed):
 * its ledger action is `error`, it raises no event and draws no budget.
 */
const NO_CHANNEL: ChannelDescriptor = {
  channel: 'unknown',
  stepKinds: [],
  labels: { name: 'unknown' },
  createDriver: () => {
    throw new Error('no channel carries this step kind');
  },
  actionOf: () => 'error',
  eventOf: () => null,
};

/** The channel that carries step kind `kind` (its descriptor in the registry). */
export function channelOfKind(channels: ChannelRegistry, kind: string): ChannelDescriptor {
  return channels.ofStepKind(kind) ?? NO_CHANNEL;
}

/** Whether a step of this channel delivers text to the person (a message-like step: the channel's `messageKinds`). */
export function isMessageStep(ch: ChannelDescriptor, step: Step): boolean {
  return (ch.messageKinds ?? MESSAGE_KIND_LIST).includes(step.kind);
}

/** The step goes out through a platform account of the lead (or its Play), not a messaging account. */
export const sendsAsAccountUser = (ch: ChannelDescriptor) => ch.sendsFrom === 'account_user';

/** Budget a step draws from on its messaging account at claim (engine/pacing.ts); null: unpaced. */
export function bucketOf(ch: ChannelDescriptor, step: Step): PacingBucket | null {
  return ch.accountBudgetOf?.(step) ?? null;
}

/** The ledger action (spec activity enum) one attempt of this step is written under. */
export function activityActionOf(ch: ChannelDescriptor, step: Step, alreadyMessaged: boolean): StepAction {
  return ch.actionOf(step, alreadyMessaged) as StepAction;
}

/** The step is its channel's invitation (a LinkedIn invite, an X follow). */
export const invites = (ch: ChannelDescriptor, step: Step) => ch.invites?.(step) ?? false;

/** Stage a successful step moves the lead to (an invitation moves it to `invited`). */
export function stageAfter(ch: ChannelDescriptor, step: Step, current: LeadStage, alreadyMessaged: boolean): LeadStage {
  if (invites(ch, step)) return forward(current, 'invited');
  if (isMessageStep(ch, step)) return forward(current, alreadyMessaged ? 'followed_up' : 'messaged');
  return current;
}

/** True when the step reaches the person (so the engine starts watching for their answer). */
export function contacts(ch: ChannelDescriptor, step: Step): boolean {
  return invites(ch, step) || isMessageStep(ch, step);
}

/** The webhook event a sent step raises (null: none). */
export function eventOf(ch: ChannelDescriptor, step: Step): StepEvent | null {
  return ch.eventOf(step);
}

export function delayMs(step: Step | undefined): number {
  const days = Number(step?.delayDays ?? 0);
  return Number.isFinite(days) && days > 0 ? days * 86_400_000 : 0;
}

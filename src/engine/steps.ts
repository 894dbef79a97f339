import type { LeadStage, SequenceStepRow } from '../db/schema.js';
import { CHANNEL_OF_STEP, type Channel, type StepKind } from '../channels/types.js';
import type { PacingBucket } from './pacing.js';
import { LEAD_STAGES, MESSAGE_KINDS as MESSAGE_KIND_LIST } from '../domain/vocabulary.js';

export type Step = SequenceStepRow;

/** Cross-channel stage order; a step only ever moves a lead forward along it. */
export const STAGE_ORDER: readonly LeadStage[] = LEAD_STAGES;
const rank = (s: LeadStage) => STAGE_ORDER.indexOf(s);

export function forward(current: LeadStage, target: LeadStage): LeadStage {
  if (current === 'replied' || current === 'failed' || current === 'skipped') return current;
  return rank(target) > rank(current) ? target : current;
}

export const MESSAGE_KINDS: ReadonlySet<StepKind> = new Set(MESSAGE_KIND_LIST);
export const X_KINDS: ReadonlySet<StepKind> = new Set(['x_dm', 'x_engage']);

export function channelOf(kind: StepKind): Channel {
  return CHANNEL_OF_STEP[kind] ?? 'linkedin';
}

/** Budget a step draws from on its messaging account; X steps go through the Play's X account, unpaced. */
export function bucketOf(kind: StepKind): PacingBucket | null {
  if (X_KINDS.has(kind)) return null;
  if (kind === 'connect') return 'invites';
  if (MESSAGE_KINDS.has(kind)) return 'messages';
  return 'actions';
}

const ENGAGE_ACTION: Record<string, string> = {
  like: 'like',
  like_last_post: 'like',
  react: 'like',
  comment: 'comment',
  endorse: 'endorse',
  view_profile: 'view_profile',
  view: 'view_profile',
};
const X_ENGAGE_ACTION: Record<string, string> = { follow: 'x_follow', like: 'x_like', like_last_post: 'x_like', react: 'x_like' };

/** The ledger action (spec activity enum) one attempt of this step is written under. */
export function activityActionOf(step: Step, alreadyMessaged: boolean): string {
  const first = (step.actions ?? [])[0]?.type?.toLowerCase() ?? '';
  switch (step.kind) {
    case 'connect':
      return 'invite';
    case 'message':
    case 'instagram_dm':
      return alreadyMessaged ? 'followup' : 'message';
    case 'engage':
      return ENGAGE_ACTION[first] ?? 'like';
    case 'email':
      return 'email_sent';
    case 'x_dm':
      return 'x_dm';
    case 'x_engage':
      return X_ENGAGE_ACTION[first] ?? 'x_like';
    default:
      return 'error';
  }
}

export const isXFollow = (step: Step) => step.kind === 'x_engage' && (step.actions ?? []).some((a) => a?.type?.toLowerCase() === 'follow');

/** Stage a successful step moves the lead to (social-network lane: a follow is its "invite"). */
export function stageAfter(step: Step, current: LeadStage, alreadyMessaged: boolean): LeadStage {
  if (step.kind === 'connect' || isXFollow(step)) return forward(current, 'invited');
  if (MESSAGE_KINDS.has(step.kind)) return forward(current, alreadyMessaged ? 'followed_up' : 'messaged');
  return current;
}

/** True when the step reaches the person (so the engine starts watching for their answer). */
export function contacts(step: Step): boolean {
  return step.kind === 'connect' || MESSAGE_KINDS.has(step.kind) || isXFollow(step);
}

export function eventOf(step: Step): { event: 'lead.invited' | 'lead.messaged' | 'lead.emailed'; channel?: 'x' } | null {
  if (step.kind === 'connect') return { event: 'lead.invited' };
  if (step.kind === 'message' || step.kind === 'instagram_dm') return { event: 'lead.messaged' };
  if (step.kind === 'x_dm') return { event: 'lead.messaged', channel: 'x' };
  if (step.kind === 'email') return { event: 'lead.emailed' };
  return null;
}

export function delayMs(step: Step | undefined): number {
  const days = Number(step?.delayDays ?? 0);
  return Number.isFinite(days) && days > 0 ? days * 86_400_000 : 0;
}

import type { Channel } from './vocabulary.js';
import { linkedinCanonicalUrlOf } from './linkedin-profile.js';

// A task is a due action for a person (docs/tasks.md): a step the platform policy (domain/policy.ts) keeps from the
// engine, a reply decision's answer on a `tasks` LinkedIn account, or a send a crash left uncertain (source `uncertain`). The engine and the reply decisions open them
// (tasks.repository.ts); the tasks module lists, completes and skips them.

export type TaskSource = 'step' | 'reply' | 'uncertain' | 'leaver';

/** An uncertain task's key prefix: `uncertain:<the interrupted step's key>` (the e-mail driver stores the send under the step key). */
export const UNCERTAIN_KEY_PREFIX = 'uncertain:';
export const uncertainTaskKey = (stepKey: string) => `${UNCERTAIN_KEY_PREFIX}${stepKey}`;
export const stepKeyOfUncertain = (taskKey: string) => taskKey.slice(UNCERTAIN_KEY_PREFIX.length);

/** An uncertain send's reason, and the lead's `last_error` while a person has not answered it (docs/tasks.md). */
export const UNCERTAIN_DELIVERY = 'uncertain_delivery';

export interface NewTask {
  id: string;
  workspaceId: string;
  leadId: string;
  source: TaskSource;
  sequenceId: string | null;
  stepIndex: number | null;
  variantKey: string | null;
  replyId: string | null;
  decision: string | null;
  kind: string;
  channel: Channel;
  /** The ledger action completing it writes. */
  action: string;
  accountId: string | null;
  xAccountUserId: string | null;
  subject: string | null;
  /** Plain here; encrypted when stored. */
  text: string | null;
  actions: { type: string; count: number | null; reaction: string | null }[];
  profileUrl: string | null;
  reason: string;
  /** One open task per key: the step's key (lead:sequence:step), `reply:<reply id>` or `uncertain:<step key>`. */
  idempotencyKey: string;
  dueAt: Date;
}

/** What a channel reads to say where a person is found on it (channels/descriptor.ts `profileUrl`). */
export interface ProfileRefs {
  linkedin_url: string | null;
  username: string | null;
  x_user_id: string | null;
}

/**
 * Where the person does a task: the channel's own profile address (its descriptor's `profileUrl`: the X or Instagram
 * profile), else the LinkedIn profile, canonical (never the URL as typed: a look-alike host or a Sales Navigator link
 * opens nothing). Null when the lead has none.
 */
export function profileUrlOf(channelProfileUrl: ((lead: ProfileRefs) => string | null) | undefined, lead: ProfileRefs): string | null {
  return channelProfileUrl ? channelProfileUrl(lead) : linkedinCanonicalUrlOf(lead.linkedin_url);
}

/** A step task as the engine ends it (engine/tasks.ts) and the tasks service hands it over. */
export interface StepTaskRef {
  id: string;
  workspaceId: string;
  leadId: string;
  sequenceId: string;
  stepIndex: number;
  variantKey: string | null;
  idempotencyKey: string;
}

/** An uncertain send's task as the engine records a person's answer to it (engine/tasks.ts). */
export interface UncertainTaskRef {
  id: string;
  workspaceId: string;
  leadId: string;
  stepIndex: number | null;
  kind: string;
  channel: string;
  /** The ledger action of the interrupted step. */
  action: string;
  accountId: string | null;
  actions: { type: string; count: number | null; reaction: string | null }[];
  /** The interrupted step's key (the task's key without `uncertain:`). */
  stepKey: string;
}

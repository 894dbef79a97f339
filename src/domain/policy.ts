import type { Channel, LinkedinDeliveryMode, StepKind } from './vocabulary.js';

// Platform rules are product rules (docs/policy.md cites each rule with its source and date). This is their one home:
// for each step kind (or a reply decision's answer) and the way its sending account is connected, whether the engine
// may act alone or a person must act, as a task (docs/tasks.md). The engine's claim, the reply decisions and the
// channel drivers all ask here; nothing else decides it.

/**
 * How the account that carries an action reaches its platform:
 * - `sandbox`: simulated, nothing leaves (a LinkedIn account without a delivery, an X account never connected);
 * - `tasks`: a LinkedIn account whose every action a person performs;
 * - `gateway`: a LinkedIn account linked to the LinkedIn gateway (Unipile);
 * - `x_connected`: an X account connected with OAuth 2.0 (the real X API).
 */
export type AccountDelivery = LinkedinDeliveryMode | 'x_connected';

/** The delivery of a sender that reaches no platform (a simulation); a channel's sender has it unless its channel says otherwise. */
export const SANDBOX_DELIVERY = 'sandbox' satisfies AccountDelivery;

/** Why a person must act (a task's `reason`); each one is a row of docs/policy.md. */
export const PERSON_REASONS = [
  /** X Developer Guidelines: automated DMs only after the person has DMed the account first. */
  'x_dm_not_invited',
  /** X Developer Guidelines: automated follows and any automated like are prohibited. */
  'x_engage_by_person',
  /** The LinkedIn account is set to tasks: LinkedIn's User Agreement prohibits automated activity. */
  'linkedin_tasks',
  /** A gateway account: likes, comments, endorsements and profile views are a person's, never the gateway's. */
  'linkedin_engage_by_person',
  /** Meta's Instagram messaging API allows no message a person did not start: no cold DMs. */
  'instagram_no_cold_dm',
] as const;
export type PersonReason = (typeof PERSON_REASONS)[number];

export type Delivery =
  /** The engine (or the reply decision) acts through the channel driver. */
  | { by: 'engine' }
  /** The engine may act only if the person wrote to the account first; the driver looks, else it is a task. */
  | { by: 'engine_if_they_wrote_first'; otherwise: PersonReason }
  | { by: 'person'; reason: PersonReason };

const ENGINE: Delivery = { by: 'engine' };
const person = (reason: PersonReason): Delivery => ({ by: 'person', reason });

/**
 * The policy table (docs/policy.md § "The table"). `kind` is a step kind, or `reply` for a reply decision's answer on
 * `channel`; `account` is the sender's delivery (AccountDelivery; the claim reads it from its channel's `delivery`).
 * A sandbox account is always the engine's: it is a simulation and nothing reaches a platform. A channel this table
 * has no row for (one registered at run time) is the engine's.
 */
export function deliveryOf(kind: StepKind | 'reply' | (string & {}), channel: Channel | (string & {}), account: AccountDelivery | (string & {})): Delivery {
  if (account === 'sandbox' || channel === 'email') return ENGINE;
  if (channel === 'x') {
    if (account !== 'x_connected') return ENGINE;
    // A reply decision answers someone who wrote first by definition (their DM is the reply).
    if (kind === 'reply') return ENGINE;
    if (kind === 'x_dm') return { by: 'engine_if_they_wrote_first', otherwise: 'x_dm_not_invited' };
    return person('x_engage_by_person');
  }
  if (channel === 'instagram') return person('instagram_no_cold_dm');
  if (channel !== 'linkedin') return ENGINE;
  // LinkedIn.
  if (account === 'tasks') return person('linkedin_tasks');
  if (account === 'gateway') return kind === 'engage' ? person('linkedin_engage_by_person') : ENGINE;
  return ENGINE;
}

/** The sending account's delivery as the engine's claim reads it: the LinkedIn account's setting, X's connection. */
export function accountDeliveryOf(channel: Channel, linkedinDelivery: LinkedinDeliveryMode | null, xConnected: boolean): AccountDelivery {
  if (channel === 'x') return xConnected ? 'x_connected' : 'sandbox';
  if (channel === 'email') return 'sandbox';
  return linkedinDelivery ?? 'sandbox';
}

/**
 * Whether the sandbox may invent what a person did on `channel` (acceptances, replies) for a lead of this account:
 * only on a sandbox account. A `tasks` account has no watcher (the person sees LinkedIn), a `gateway` account is heard
 * by the gateway's watcher; simulated answers there would be made-up data about real people.
 */
export function simulatesObservations(channel: Channel, linkedinDelivery: LinkedinDeliveryMode | null): boolean {
  if (channel !== 'linkedin' && channel !== 'instagram') return true;
  return (linkedinDelivery ?? 'sandbox') === 'sandbox';
}

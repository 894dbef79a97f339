import type { LeadsTable } from '../db/schema.js';

/**
 * Lanes: a lead's place in its sequence and what is due on it, in one owner. A lane is one lead row seen as one run
 * through one sequence; the functions re-exported here are the only code that sets its columns (LANE_COLUMNS), each a
 * named transition taking the caller's transaction (or, where the engine composes the statement, an SQL fragment, as
 * domain/admission.ts does). test/lint/lanes-owner.test.ts fails on a write of a lane column anywhere else in src/
 * (migrations, and the inserts that create a lead, aside: a new lead takes `enteringLane`'s values).
 *
 * The transitions, by who calls them:
 * - entering a sequence: `enteringLane` (every caller), `enterSequence` (enroll), `switchSequence` (reply decision
 *   `start_sequence`);
 * - the engine's step pass: `markInflight`, `reschedule`, `waitForAccept`, `holdForTask`, `advance` (the outcomes);
 * - what is heard: `rewatchSql` (the watch claim) and `postponeWatch` (its sandbox people quiet till later), `watchAfterContact` and `snooze` (reply decisions), `markAccepted`,
 *   `markFollowedBack`, `markFirstContact`, `markReplied`, `snoozeForAutoReply`;
 * - the end of a lane: `stop`, `optOut`, `stopForLeaver`, `failBounced`;
 * - a branch: `takeEdges`, `holdAtBranch` (the engine's claim), `releaseBranch` (a dismissed reply).
 *
 * Closing the open tasks of a lane that no longer applies stays the database trigger `leads_cancel_tasks` (migration
 * 0027): it reacts to `sequence_id`, `automation_stopped`, `replied_at` and `opted_out_at`, all written here.
 */

/**
 * The lane columns of `leads`, each here because it places the lead in its sequence or says what is due:
 * - `sequence_id`: the sequence the lane runs; `current_step`: the index of its next step; `variant_key`: the A/B arm
 *   it runs (drawn at its first claim, kept until it enters another sequence);
 * - `stage`: where the lane stands (queued, invited, accepted, messaged, replied, failed, skipped, …), moved only by a
 *   transition (an outcome, an acceptance, a reply, a stop);
 * - `next_action_at`: when its next step is due (null: nothing is); `automation_stopped`: the lane ended (a stop, an
 *   answer, the last step); `waiting_for`: what it waits on instead of a time (`accept`, `task`); `snoozed_until`: no
 *   step before then (a reply decision, an out-of-office);
 * - `step_attempts`, `step_waits`: the tries of the current step (failures, and waits on the sending side);
 * - `inflight_key`, `inflight_step`, `inflight_at`, `inflight_release`: the step in flight (claimed, not yet recorded)
 *   and the pacing reservation it holds;
 * - `observe_next_at`, `observe_until`, `last_message_channel`: the watch after a contact (when the drivers next look
 *   for an answer, until when, on which channel).
 *
 * Not lane columns: the person's facts and milestones (`email`, `invited_at`, `replied_at`, `opted_out_at`, …), the
 * sender (`account_id`, `account_user_id`, `mailbox_id`), `last_error` and `last_activity_at`; transitions write some
 * of them too, but so may their own owners.
 */
export const LANE_COLUMNS = [
  'sequence_id',
  'current_step',
  'variant_key',
  'stage',
  'next_action_at',
  'automation_stopped',
  'waiting_for',
  'snoozed_until',
  'step_attempts',
  'step_waits',
  'inflight_key',
  'inflight_step',
  'inflight_at',
  'inflight_release',
  'observe_next_at',
  'observe_until',
  'last_message_channel',
  'branch_at',
  'branch_allowed',
] as const satisfies readonly (keyof LeadsTable)[];

export type LaneColumn = (typeof LANE_COLUMNS)[number];

export { enteringLane, enterSequence, switchSequence, type EnteringLane } from './lanes/enter.js';
export { advance, holdForTask, markInflight, reschedule, waitForAccept, type AdvancedLead, type LaneLead, type StepRecord } from './lanes/send.js';
export {
  FROZEN_BY_ANSWER,
  type HeardAnswer,
  markAccepted,
  markFirstContact,
  markFollowedBack,
  markReplied,
  postponeWatch,
  rewatchSql,
  snooze,
  snoozeForAutoReply,
  watchAfterContact,
} from './lanes/hear.js';
export { failBounced, optOut, stop, stopForLeaver } from './lanes/end.js';
export { holdAtBranch, recordBookingGoal, recordEndOfRun, releaseBranch, takeEdges, type EdgeTaken } from './lanes/branch.js';

// The engine's SQL, one statement family a file; these files are the only engine code that writes SQL.
// Bulk writes go through jsonb_to_recordset so a batch of leads is one statement. The send budget ledger's SQL,
// which the channel drivers share, is src/domain/budgets.repository.ts.
export * from './answeredStep.js';
export * from './assignSenders.js';
export * from './claimDue.js';
export * from './claimDueDiscovery.js';
export * from './claimWatched.js';
export * from './existingCandidateIds.js';
export * from './insertDiscoveryBatch.js';
export * from './insertReply.js';
export * from './lockWorkspaceEnergy.js';
export * from './readBranchReplies.js';
export * from './readTaskLead.js';
export * from './refundEnergy.js';
export type * from './rows.js';
export * from './scheduleDiscovery.js';
export * from './uncertainAnswers.js';
export * from './writeWorkspaceEnergy.js';
export * from './readPacingAccounts.js';
// The lane transitions the engine makes (a lead's place in its sequence and what is due) are domain/lanes.ts's, the
// one writer of the lane columns; the engine calls them here with the rest of its SQL.
export {
  advance,
  holdAtBranch,
  recordEndOfRun,
  takeEdges,
  markAccepted,
  type HeardAnswer,
  markFirstContact,
  markFollowedBack,
  markInflight,
  markReplied,
  postponeWatch,
  reschedule,
  snoozeForAutoReply,
  stopForLeaver,
  waitForAccept,
} from '../../domain/lanes.js';

// The engine's SQL, one statement family a file; these files are the only engine code that writes SQL.
// Bulk writes go through jsonb_to_recordset so a batch of leads is one statement. The send budget ledger's SQL,
// which the channel drivers share, is src/domain/budgets.repository.ts.
export * from './assignSenders.js';
export * from './claimDue.js';
export * from './claimDueDiscovery.js';
export * from './claimWatched.js';
export * from './existingCandidateIds.js';
export * from './insertActivities.js';
export * from './insertDiscoveryBatch.js';
export * from './insertReply.js';
export * from './lockWorkspaceEnergy.js';
export * from './markAccepted.js';
export * from './markFollowedBack.js';
export * from './markInflight.js';
export * from './markReplied.js';
export * from './readTaskLead.js';
export * from './recordLeads.js';
export * from './refundEnergy.js';
export * from './reschedule.js';
export type * from './rows.js';
export * from './scheduleDiscovery.js';
export * from './setWaitingForAccept.js';
export * from './snoozeForAutoReply.js';
export * from './stopForLeaver.js';
export * from './uncertainAnswers.js';
export * from './writeWorkspaceEnergy.js';
export * from './readPacingAccounts.js';

// The sequences module's public face: code outside src/modules/sequences imports from here only.
export { sequencesRoutes } from './sequences.routes.js';
export {
  channelsWithoutSender,
  createSequencesService,
  requiredChannels,
  senderLanes,
  type SenderLane,
  toStep,
  type ExecutionBlockReason,
  type SequencesService,
  type Step,
  type StepChange,
} from './sequences.service.js';
export { ListSequencesResponse, SequenceIdParams, SetSequenceStatusBody, SetSequenceStatusResponse, StepKind } from './sequences.schemas.js';
export { BranchEdge, Condition, StepBranchProperties } from './branch.schemas.js';
// Authoring and Play enrollment lock a sequence in their own transaction, the way its status change does.
export { lockSequence, lockSequenceForShare, sequenceColumns, type LockedSequence } from './sequences.locks.js';

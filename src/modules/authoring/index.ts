// The authoring module's public face: code outside src/modules/authoring imports from here only.
export { createAuthoringService, type AuthoringService } from './authoring.service.js';
export {
  ApproveSequenceInput,
  CreatePlayInput,
  CreateSequenceInput,
  EditPlayInput,
  PlayResult,
  ReplaceStepsInput,
  SequenceResult,
  SetPlayReviewApiInput,
  SetPlayStatusInput,
} from './authoring.schemas.js';

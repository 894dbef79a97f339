// The replies module's public face: code outside src/modules/replies imports from here only.
export { repliesRoutes } from './replies.routes.js';
export { createRepliesService, type RepliesService } from './replies.service.js';
export { DECISIONS, ReplyOperations, type Decision } from './replies.schemas.js';
export { closeRepliesByBooking } from './replies.repository.js';

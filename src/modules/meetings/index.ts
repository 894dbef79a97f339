// The meetings module's public face: code outside src/modules/meetings imports from here only.
export { createMeetingsService, type EndpointCommand, type MeetingsService, type ReceivedEvent } from './meetings.service.js';
export {
  applyMeetingChange,
  MEETING_OUTCOMES,
  MEETING_RESPONSES,
  type MeetingChange,
  type MeetingChangeRequest,
  type MeetingOutcome,
  type MeetingResponse,
} from './meetings.effects.js';
export { bookingOf, upsertBooking } from './meetings.repository.js';
export { BOOKING_TOOLS, type BookingTool } from './tools/types.js';
export type { EndpointView, EndpointWithSecret } from './meetings.steps.js';
export { meetingsInboundRoutes, meetingsRoutes } from './meetings.routes.js';
export { MAX_NOTE as MAX_MEETING_NOTE, RecordMeetingBody, RecordMeetingResponse } from './meetings.schemas.js';

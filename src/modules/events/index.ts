// The events module's public face: code outside src/modules/events imports from here only.
export { eventsRoutes } from './events.routes.js';

// The activity module's public face: code outside src/modules/activity imports from here only.
export { activityRoutes } from './activity.routes.js';
export { createActivityService, type ActivityService } from './activity.service.js';
export { ActivityQuery, ActivityResponse } from './activity.schemas.js';

// The progress module's public face: code outside src/modules/progress imports from here only.
export { progressRoutes } from './progress.routes.js';
export { createProgressService, type ProgressService } from './progress.service.js';
export { ProgressQuery, ProgressResponse } from './progress.schemas.js';
